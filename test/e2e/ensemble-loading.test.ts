import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { credentials, status } from '@grpc/grpc-js';
import { GrpcClient } from '../../src/client/index.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const { inference: InferenceClient } = loadGrpcServices();

const REPOSITORY = fileURLToPath(new URL('../fixtures/ensemble_repository', import.meta.url));
const CONFIG = (name: string): string => `${REPOSITORY}/${name}/config.pbtxt`;

type IndexEntry = { name: string; state: string; reason?: string };

describe('ensembles are checked against their composing models when they load', () => {
  let server: TestServer;
  let index: Map<string, IndexEntry>;
  before(async () => {
    server = await startTestServer({ modelRepositories: [REPOSITORY] });
    index = new Map(((await (await server.post('/v2/repository/index', {})).json()) as IndexEntry[]).map((entry) => [entry.name, entry]));
  });
  after(() => server.close());

  const REASONS: Record<string, string> = {
    ens_unknown_model: "ensemble 'ens_unknown_model' step 0 (model 'no_such_model'): the model cannot be served: Request for unknown model: 'no_such_model' is not found",
    ens_unknown_version: "ensemble 'ens_unknown_version' step 0 (model 'plus_one'): the model cannot be served: Request for unknown model: 'plus_one' version 7 is not found",
    ens_bad_input_name: "ensemble 'ens_bad_input_name' step 0 (model 'plus_one'): input_map names 'WRONG', which is not an input of the model (inputs: 'X')",
    ens_bad_output_name: "ensemble 'ens_bad_output_name' step 0 (model 'plus_one'): output_map names 'WRONG', which is not an output of the model (outputs: 'Y')",
    ens_type_mismatch: "ensemble 'ens_type_mismatch': tensor 'X' is INT32 (ensemble input 'X') but input 'X' of step 0 expects FP32",
    ens_shape_mismatch: "ensemble 'ens_shape_mismatch': tensor 'X' has shape [-1,3] (ensemble input 'X') but input 'X' of step 0 expects [-1,4]",
    ens_batch_too_large:
      "ensemble 'ens_batch_too_large' step 0 (model 'plus_one'): the ensemble's max_batch_size is 8 but the model's is 4; expected every composing model to take batches at least as large as the ensemble's",
    ens_unfed_input: "ensemble 'ens_unfed_input' step 0 (model 'pair'): the model's required input(s) 'B' are not in the step's input_map",
    ens_cycle: `${CONFIG('ens_cycle')}: output[0] 'Y' cannot be computed from the ensemble inputs because ensemble tensor 'Y' depends on itself (a cycle: 'Y' <- 't2' <- 'Y'); expected every step input to come from an ensemble input or another step`,
    ens_double_write: `${CONFIG('ens_double_write')}: ensemble_scheduling.step[1].output_map writes ensemble tensor 'Y', which another output already writes; expected each ensemble tensor written once`,
  };
  for (const [name, reason] of Object.entries(REASONS)) {
    test(`${name} is UNAVAILABLE with the reason`, () => {
      // A configuration error fails the whole model, before any version is read.
      const version = reason.startsWith(REPOSITORY) ? {} : { version: '1' };
      assert.deepEqual(index.get(name), { name, ...version, state: 'UNAVAILABLE', reason });
    });
  }

  test('ensembles that run each other fail to load instead of waiting for each other forever', () => {
    const loop = ['ens_loop_a', 'ens_loop_b'].map((name) => index.get(name)!);
    assert.deepEqual(loop.map((entry) => entry.state), ['UNAVAILABLE', 'UNAVAILABLE']);
    assert.ok(
      loop.some((entry) => /models 'ens_loop_[ab]' and 'ens_loop_[ab]' depend on each other; expected the models an ensemble runs not to run the ensemble/.test(entry.reason!)),
      JSON.stringify(loop),
    );
  });

  test('valid ensembles load and compute through their steps, the others serve on', async () => {
    assert.equal(index.get('ens_ok')!.state, 'READY');
    const x = [1, 2, 3, 4];
    const run = async (model: string): Promise<number[]> => {
      const response = await server.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 4], data: x }] });
      return ((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data;
    };
    assert.deepEqual(await run('ens_ok'), [2, 3, 4, 5]);
    assert.deepEqual(await run('ens_two_steps'), [3, 5, 7, 9]);
  });
});

describe('EXPLICIT mode: loading an ensemble loads its composing models, unload_dependents unloads them', () => {
  let server: TestServer;
  let grpc: GrpcClient;
  before(async () => {
    server = await startTestServer({ modelRepositories: [REPOSITORY], modelControlMode: 'explicit' });
    grpc = new GrpcClient(server.grpcUrl!);
  });
  after(async () => {
    await grpc.close();
    await server.close();
  });
  const MODELS = ['ens_two_steps', 'ens_ok', 'plus_one', 'pair'];
  const readyModels = async (): Promise<string[]> => {
    const statuses = await Promise.all(MODELS.map(async (name) => (await server.get(`/v2/models/${name}/ready`)).status));
    return MODELS.filter((_, i) => statuses[i] === 200);
  };
  const load = async (name: string): Promise<void> => {
    const loaded = await server.post(`/v2/repository/models/${name}/load`, {});
    assert.equal(loaded.status, 200, await loaded.text());
  };
  const unload = async (name: string, body: unknown): Promise<Response> => server.post(`/v2/repository/models/${name}/unload`, body);

  test('load ens_two_steps: plus_one and pair are loaded with it', async () => {
    assert.deepEqual(await readyModels(), []);
    await load('ens_two_steps');
    assert.deepEqual(await readyModels(), ['ens_two_steps', 'plus_one', 'pair']);
  });

  // Triton's qa/L0_lifecycle test_model_control_ensemble.
  test('HTTP unload with unload_dependents: the composing models go with the ensemble; without it they stay', async () => {
    assert.equal((await unload('ens_two_steps', { parameters: { unload_dependents: true } })).status, 200);
    assert.deepEqual(await readyModels(), []);
    await load('ens_two_steps');
    assert.equal((await unload('ens_two_steps', {})).status, 200);
    assert.deepEqual(await readyModels(), ['plus_one', 'pair']);
  });

  test('gRPC unload with unload_dependents keeps a composing model another loaded ensemble runs', async () => {
    await load('ens_two_steps');
    await load('ens_ok');
    await grpc.unloadModel('ens_two_steps', { unloadDependents: true });
    assert.deepEqual(await readyModels(), ['ens_ok', 'plus_one']);
  });

  test('a composing model a load named is not unloaded with the ensemble', async () => {
    await load('plus_one');
    await grpc.unloadModel('ens_ok', { unloadDependents: true });
    assert.deepEqual(await readyModels(), ['plus_one']);
  });

  test("an unload_dependents that is not a boolean is refused in Triton's words", async () => {
    const refused = await unload('plus_one', { parameters: { unload_dependents: 'yes' } });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: "Unable to parse 'unload_dependents': attempt to access JSON non-boolean as boolean" });
    const client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    try {
      type Unload = (request: object, callback: (error: Error | null) => void) => void;
      const rejected = new Promise<void>((resolve, reject) =>
        (client as unknown as { RepositoryModelUnload: Unload }).RepositoryModelUnload(
          { model_name: 'plus_one', parameters: { unload_dependents: { string_param: 'yes' } } },
          (error) => (error === null ? resolve() : reject(error)),
        ),
      );
      await assert.rejects(rejected, { code: status.INVALID_ARGUMENT, details: "invalid value type for 'unload_dependents' parameter, expected bool_param." });
    } finally {
      client.close();
    }
    assert.deepEqual(await readyModels(), ['plus_one']);
  });
});
