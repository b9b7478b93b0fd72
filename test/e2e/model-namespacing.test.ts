// --model-namespacing, replaying Triton's qa/L0_model_namespacing with its layouts: two repositories,
// addsub_repo and subadd_repo, whose ensembles run composing models that may share a name. The
// composing models of the POLL tests are Python models as Triton's test has them (no config.pbtxt, a
// model.py importing the shared module from $TRITON_QA_PYTHON_MODEL_DIR, auto-completed); the others
// are JavaScript models, which load faster.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import type { StartOptions } from '../../src/server.js';
import { GrpcClient } from '../../src/client/index.js';

type Kind = 'addsub' | 'subadd';
type Language = 'python' | 'javascript';

const INPUT = Array.from({ length: 16 }, (_, index) => index);
const SUM = INPUT.map((value) => value + value);
const DIFFERENCE = INPUT.map(() => 0);

/** The shared Python modules, as Triton's python_addsub and python_subadd: auto-completed INT32 [16] tensors. */
const pythonModule = (kind: Kind): string => `import json
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        if config.as_dict()["input"] or config.as_dict()["output"]:
            return config
        for name in ("INPUT0", "INPUT1"):
            config.add_input({"name": name, "data_type": "TYPE_INT32", "dims": [16]})
        for name in ("OUTPUT0", "OUTPUT1"):
            config.add_output({"name": name, "data_type": "TYPE_INT32", "dims": [16]})
        return config

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy().astype(np.int32)
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy().astype(np.int32)
            first, second = ${kind === 'addsub' ? '(a + b, a - b)' : '(a - b, a + b)'}
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", first), pb_utils.Tensor("OUTPUT1", second)]))
        return responses
`;

const javascriptModel = (kind: Kind): string => `export default class ${kind === 'addsub' ? 'AddSub' : 'SubAdd'} {
  execute(requests) {
    return requests.map((request) => {
      const a = request.input('INPUT0').data;
      const b = request.input('INPUT1').data;
      const sum = a.map((value, index) => value + b[index]);
      const difference = a.map((value, index) => value - b[index]);
      const [first, second] = ${kind === 'addsub' ? '[sum, difference]' : '[difference, sum]'};
      return { outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [16], data: first }, { name: 'OUTPUT1', datatype: 'INT32', shape: [16], data: second }] };
    });
  }
}
`;

const TENSORS = `input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
`;

/** Triton's test ensembles: no name, every version, one step mapping the four tensors through. */
const ensembleConfig = (step: string): string => `platform: "ensemble"
max_batch_size: 0
version_policy: { all { } }
${TENSORS}ensemble_scheduling { step [ {
  model_name: "${step}"
  model_version: -1
  input_map { key: "INPUT0" value: "INPUT0" }
  input_map { key: "INPUT1" value: "INPUT1" }
  output_map { key: "OUTPUT0" value: "OUTPUT0" }
  output_map { key: "OUTPUT1" value: "OUTPUT1" }
} ] }
`;

async function writeEnsemble(repository: string, name: string, step: string): Promise<void> {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await writeFile(join(repository, name, 'config.pbtxt'), ensembleConfig(step));
}

async function writeComposing(repository: string, name: string, kind: Kind, language: Language): Promise<void> {
  await mkdir(join(repository, name, '1'), { recursive: true });
  if (language === 'python') {
    const stub = `import os\nimport sys\n\nsys.path.append(os.environ["TRITON_QA_PYTHON_MODEL_DIR"])\nfrom python_${kind} import *  # noqa: F401,F403\n`;
    await writeFile(join(repository, name, '1', 'model.py'), stub);
    return;
  }
  await writeFile(join(repository, name, 'config.pbtxt'), `backend: "javascript"\nmax_batch_size: 0\n${TENSORS}`);
  await writeFile(join(repository, name, '1', 'model.js'), javascriptModel(kind));
}

/** Triton's layouts, by test: the two repositories' ensembles and the composing models they run. */
async function writeLayout(root: string, layout: 'no_duplication' | 'duplication' | 'ensemble_duplication', language: Language): Promise<[string, string]> {
  const addsub = join(root, 'addsub_repo');
  const subadd = join(root, 'subadd_repo');
  if (layout === 'no_duplication') {
    await writeEnsemble(addsub, 'simple_addsub', 'composing_addsub');
    await writeComposing(addsub, 'composing_addsub', 'addsub', language);
    await writeEnsemble(subadd, 'simple_subadd', 'composing_subadd');
    await writeComposing(subadd, 'composing_subadd', 'subadd', language);
  } else if (layout === 'duplication') {
    await writeEnsemble(addsub, 'simple_addsub', 'composing_model');
    await writeComposing(addsub, 'composing_model', 'addsub', language);
    await writeEnsemble(subadd, 'simple_subadd', 'composing_model');
    await writeComposing(subadd, 'composing_model', 'subadd', language);
  } else {
    await writeEnsemble(addsub, 'simple_ensemble', 'composing_addsub');
    await writeComposing(addsub, 'composing_addsub', 'addsub', language);
    await writeEnsemble(subadd, 'simple_ensemble', 'composing_subadd');
    await writeComposing(subadd, 'composing_subadd', 'subadd', language);
  }
  return [addsub, subadd];
}

const inferBody = {
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [16], data: INPUT },
    { name: 'INPUT1', datatype: 'INT32', shape: [16], data: INPUT },
  ],
};

/** What the model computes, from a real request: 'addsub' (OUTPUT0 the sum) or 'subadd'. */
async function behaviourOf(server: TestServer, model: string): Promise<Kind> {
  const response = await server.post(`/v2/models/${encodeURIComponent(model)}/infer`, inferBody);
  const body = (await response.json()) as { outputs?: Array<{ name: string; data: number[] }>; error?: string };
  assert.equal(response.status, 200, `${model}: ${body.error}`);
  const output = (name: string): number[] => body.outputs!.find((tensor) => tensor.name === name)!.data;
  if (JSON.stringify(output('OUTPUT0')) === JSON.stringify(SUM) && JSON.stringify(output('OUTPUT1')) === JSON.stringify(DIFFERENCE)) return 'addsub';
  assert.deepEqual([output('OUTPUT0'), output('OUTPUT1')], [DIFFERENCE, SUM], `${model} computes neither`);
  return 'subadd';
}

async function assertAmbiguous(server: TestServer, model: string, keys: readonly string[]): Promise<void> {
  const response = await server.post(`/v2/models/${model}/infer`, inferBody);
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), {
    error: `There are ${keys.length} identifiers of model '${model}' in global map, model namespace must be provided to resolve ambiguity. (Nereid: a request may name one of them as ${keys.map((key) => `'${key}'`).join(' or ')})`,
  });
}

const load = async (server: TestServer, model: string): Promise<void> => {
  const response = await server.post(`/v2/repository/models/${model}/load`, {});
  assert.equal(response.status, 200, await response.text());
};

describe('--model-namespacing in POLL mode, with Python composing models as Triton tests them', () => {
  let root: string;
  let server: TestServer;
  let addsub: string;
  let subadd: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'nereid-namespacing-'));
    const modules = join(root, 'modules');
    for (const kind of ['addsub', 'subadd'] as const) {
      await mkdir(join(modules, `python_${kind}`), { recursive: true });
      await writeFile(join(modules, `python_${kind}`, '__init__.py'), pythonModule(kind));
    }
    process.env.TRITON_QA_PYTHON_MODEL_DIR = modules;
    [addsub, subadd] = await writeLayout(join(root, 'test_dir'), 'duplication', 'python');
    server = await startTestServer({ modelRepositories: [addsub, subadd], isModelNamespacing: true, modelControlMode: 'poll', repositoryPollMs: 500 });
  });
  after(async () => {
    await server?.close();
    delete process.env.TRITON_QA_PYTHON_MODEL_DIR;
    await rm(root, { recursive: true, force: true });
  });

  test('test_duplication: each ensemble runs the composing model of its own repository; the shared name is ambiguous', async () => {
    assert.equal((await server.get('/v2/health/ready')).status, 200);
    assert.equal(await behaviourOf(server, 'simple_addsub'), 'addsub');
    assert.equal(await behaviourOf(server, 'simple_subadd'), 'subadd');
    await assertAmbiguous(server, 'composing_model', [`${addsub}::composing_model`, `${subadd}::composing_model`]);
    // Nereid's way to name one of them: its key, which the ambiguity error gives.
    assert.equal(await behaviourOf(server, `${subadd}::composing_model`), 'subadd');
    // An ambiguous model is not ready, as in Triton, and has no single metadata.
    const ready = await server.get('/v2/models/composing_model/ready');
    assert.equal(ready.status, 400);
    assert.deepEqual(await ready.json(), { error: 'Model version not ready' });
    assert.equal((await server.get('/v2/models/composing_model')).status, 400);
    // The index lists both, by namespace then name, without the namespace (Triton's RepositoryIndex).
    const index = (await (await server.post('/v2/repository/index', {})).json()) as Array<{ name: string; version: string; state: string }>;
    assert.deepEqual(
      index.map(({ name, version, state }) => `${name}:${version}:${state}`),
      ['composing_model:1:READY', 'simple_addsub:1:READY', 'composing_model:1:READY', 'simple_subadd:1:READY'],
    );
    // The metrics tell them apart by Triton's namespace label.
    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.match(metrics, new RegExp(`nv_inference_request_success\\{model="composing_model",version="1",namespace="${addsub}"\\} 1\\n`));
    assert.match(metrics, new RegExp(`nv_inference_request_success\\{model="composing_model",version="1",namespace="${subadd}"\\} 2\\n`));
  });

  test('test_dynamic_resolution: an ensemble turns to the only model of its step\'s name when its own goes, and back when it returns', async () => {
    const inAddsub = join(addsub, 'composing_model');
    const aside = join(root, 'test_dir', 'composing_model');
    await rename(inAddsub, aside);
    await eventually('simple_addsub runs subadd_repo\'s composing_model', async () => (await behaviourOf(server, 'simple_addsub').catch(() => undefined)) === 'subadd');
    assert.equal(await behaviourOf(server, 'simple_subadd'), 'subadd');
    assert.equal(await behaviourOf(server, 'composing_model'), 'subadd');
    await rename(aside, inAddsub);
    await eventually('simple_addsub runs its own composing_model again', async () => (await behaviourOf(server, 'simple_addsub').catch(() => undefined)) === 'addsub');
    assert.equal(await behaviourOf(server, 'simple_subadd'), 'subadd');
    await assertAmbiguous(server, 'composing_model', [`${addsub}::composing_model`, `${subadd}::composing_model`]);
  });
});

describe('--model-namespacing in EXPLICIT mode', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'nereid-namespacing-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  let layouts = 0;
  /** A server (EXPLICIT mode, namespacing on unless `options` says otherwise) over Triton's `layout` in JavaScript models, for `body`. */
  async function withLayout(
    layout: Parameters<typeof writeLayout>[1],
    options: Partial<StartOptions>,
    body: (server: TestServer, addsub: string, subadd: string) => Promise<void>,
  ): Promise<void> {
    const [addsub, subadd] = await writeLayout(join(root, String(++layouts)), layout, 'javascript');
    const server = await startTestServer({ modelRepositories: [addsub, subadd], isModelNamespacing: true, modelControlMode: 'explicit', ...options });
    try {
      await body(server, addsub, subadd);
    } finally {
      await server.close();
    }
  }

  test('test_duplication and test_dynamic_resolution: loads link each ensemble to the model its step finds at that moment', async () => {
    await withLayout('duplication', {}, async (server, addsub, subadd) => {
      assert.equal((await server.get('/v2/health/ready')).status, 200);
      // Triton's step 1: addsub_repo's composing_model is gone before anything loads.
      const inAddsub = join(addsub, 'composing_model');
      const aside = join(addsub, '..', 'composing_model');
      await rename(inAddsub, aside);
      await load(server, 'simple_addsub');
      await load(server, 'simple_subadd');
      for (const model of ['simple_subadd', 'simple_addsub', 'composing_model']) assert.equal(await behaviourOf(server, model), 'subadd', model);
      // Step 2: it is back; loading simple_addsub alone links it to its own again.
      await rename(aside, inAddsub);
      await load(server, 'simple_addsub');
      assert.equal(await behaviourOf(server, 'simple_addsub'), 'addsub');
      assert.equal(await behaviourOf(server, 'simple_subadd'), 'subadd');
      await assertAmbiguous(server, 'composing_model', [`${addsub}::composing_model`, `${subadd}::composing_model`]);
      // An unload of a name unloads it in every namespace; the ensembles are then left without their step.
      assert.equal((await server.post('/v2/repository/models/composing_model/unload', {})).status, 200);
      const index = (await (await server.post('/v2/repository/index', { ready: true }, {})).json()) as Array<{ name: string }>;
      assert.deepEqual(index.map(({ name }) => name), ['simple_addsub', 'simple_subadd']);
      const unloaded = await server.post('/v2/models/composing_model/infer', inferBody);
      assert.equal(unloaded.status, 404);
      assert.deepEqual(await unloaded.json(), {
        error: `Identifier of model 'composing_model' is not found in global map (Nereid: none of the models of that name is loaded: '${addsub}::composing_model', '${subadd}::composing_model')`,
    });
    });
  });

  test('test_ensemble_duplication: a load of a shared name loads it in both namespaces; each runs its own step', async () => {
    await withLayout('ensemble_duplication', {}, async (server, addsub, subadd) => {
      await load(server, 'simple_ensemble');
      assert.equal(await behaviourOf(server, 'composing_addsub'), 'addsub');
      assert.equal(await behaviourOf(server, 'composing_subadd'), 'subadd');
      await assertAmbiguous(server, 'simple_ensemble', [`${addsub}::simple_ensemble`, `${subadd}::simple_ensemble`]);
      // A client may name each by its key, over gRPC too.
      const client = new GrpcClient(server.grpcUrl!);
      try {
        const result = await client.infer(`${subadd}::simple_ensemble`, [
          { name: 'INPUT0', datatype: 'INT32', shape: [16], data: Int32Array.from(INPUT) },
          { name: 'INPUT1', datatype: 'INT32', shape: [16], data: Int32Array.from(INPUT) },
        ]);
        assert.equal(result.modelName, 'simple_ensemble');
        assert.deepEqual([...result.data('OUTPUT1', 'INT32')], SUM);
      } finally {
        await client.close();
      }
    });
  });

  test('test_no_duplication: namespacing changes nothing for repositories whose names are unique', async () => {
    await withLayout('no_duplication', {}, async (server) => {
      await load(server, 'simple_addsub');
      await load(server, 'simple_subadd');
      for (const model of ['simple_addsub', 'composing_addsub']) assert.equal(await behaviourOf(server, model), 'addsub', model);
      for (const model of ['simple_subadd', 'composing_subadd']) assert.equal(await behaviourOf(server, model), 'subadd', model);
      const missing = await server.post('/v2/models/nothing/infer', inferBody);
      assert.equal(missing.status, 400);
      assert.deepEqual(await missing.json(), { error: "Request for unknown model: 'nothing' is not found" });
    });
  });

  test('with --load-on-demand: an ensemble loads the step it links to; a model of a shared name loads when named by its key', async () => {
    await withLayout('duplication', { isLoadOnDemand: true, modelControlMode: 'none' }, async (server, addsub, subadd) => {
      assert.equal(await behaviourOf(server, 'simple_addsub'), 'addsub');
      // Only addsub_repo's composing_model is loaded: the name is that one.
      assert.equal(await behaviourOf(server, 'composing_model'), 'addsub');
      assert.equal(await behaviourOf(server, `${subadd}::composing_model`), 'subadd');
      await assertAmbiguous(server, 'composing_model', [`${addsub}::composing_model`, `${subadd}::composing_model`]);
      assert.equal(await behaviourOf(server, 'simple_subadd'), 'subadd');
    });
  });

  test('without namespacing, the same repositories keep a shared name from loading, as before', async () => {
    await withLayout('duplication', { isModelNamespacing: false }, async (server) => {
      const response = await server.post('/v2/repository/models/simple_addsub/load', {});
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: string }).error, /model 'composing_model' appears in more than one repository/);
    });
  });
});

