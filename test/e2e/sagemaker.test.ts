// Triton's SageMaker front end (server src/sagemaker_server.cc), started as SageMaker's container entry
// starts tritonserver (--allow-sagemaker=true --allow-http=false --model-control-mode=explicit) and spoken
// to as qa/L0_sagemaker's tests speak to it: /ping, /invocations and the multi-model endpoint's /models.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { environmentWithout } from '../helpers/environment.js';
import { EXAMPLES, bytesOf } from '../helpers/server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const BINARY_MIME = 'application/vnd.sagemaker-triton.binary+json;json-header-size=';

const INPUT = Array.from({ length: 16 }, (_, index) => index);
const SUM = INPUT.map((value) => value * 2);
const DIFFERENCE = INPUT.map(() => 0);

/** A copy of an example model under another name, its config's name changed to match. */
function copyModel(example: string, to: string, name: string): void {
  cpSync(join(EXAMPLES, example), to, { recursive: true });
  const config = join(to, 'config.pbtxt');
  writeFileSync(config, readFileSync(config, 'utf8').replace(`name: "${example}"`, `name: "${name}"`));
}

interface RunningNereid {
  readonly output: () => string;
  /** `http://127.0.0.1:PORT`, the SageMaker port. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `nereid serve` with the SageMaker front end only, as SageMaker's `serve` script starts tritonserver; resolves once it listens. */
async function startNereid(args: readonly string[], env: Record<string, string>): Promise<RunningNereid> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'serve', '--allow-sagemaker=true', '--allow-http=false', '--allow-grpc=false', '--allow-metrics=false', '--sagemaker-port=0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: environmentWithout('SAGEMAKER_', env) },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', () => {
      const match = /Started Sagemaker HTTPService at 0\.0\.0\.0:(\d+)/.exec(output);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`nereid exited with ${code} before listening:\n${output}`)));
  });
  return {
    output: () => output,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** sagemaker_test.py's request: INPUT0 and INPUT1 are 0..15, OUTPUT0 asked for as binary data when `binaryOutput`. */
const simpleRequest = (binaryOutput = false): string =>
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: INPUT },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: INPUT },
    ],
    ...(binaryOutput ? { outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }, { name: 'OUTPUT1', parameters: { binary_data: false } }] } : {}),
  });

const expectedResponse = (model: string): unknown => ({
  model_name: model,
  model_version: '1',
  outputs: [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: SUM },
    { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: DIFFERENCE },
  ],
});

describe('the SageMaker front end', () => {
  const root = mkdtempSync(join(tmpdir(), 'nereid-sagemaker-'));
  const repository = join(root, 'model');
  const mmeRoot = join(root, 'models');
  const model1Url = join(mmeRoot, '123456789abcdefghi', 'model');
  const model2Url = join(mmeRoot, '987654321ihgfedcba', 'model');
  copyModel('simple', join(repository, 'sm_model'), 'sm_model');
  copyModel('simple', model1Url, 'sm_mme_model_1');
  copyModel('identity_bytes', model2Url, 'sm_mme_model_2');
  // SageMaker names a load by a hash, whatever the model's config calls it.
  const unrenamedUrl = join(mmeRoot, 'c0ffee', 'model');
  cpSync(join(EXAMPLES, 'simple'), unrenamedUrl, { recursive: true });
  const ensembleUrl = join(mmeRoot, '123456789ensemble');
  const secondEnsembleUrl = join(mmeRoot, '987654321ensemble');
  for (const url of [ensembleUrl, secondEnsembleUrl]) {
    for (const model of ['digits_pipeline', 'digits_preprocess', 'digits', 'digits_postprocess']) cpSync(join(EXAMPLES, model), join(url, model), { recursive: true });
  }
  mkdirSync(join(root, 'elsewhere'));
  copyModel('simple', join(root, 'elsewhere', 'model'), 'outside');
  after(() => rmSync(root, { recursive: true, force: true }));

  describe('a single-model endpoint with the multi-model routes', () => {
    let nereid: RunningNereid;
    const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${nereid.url}${path}`, { method: 'POST', body, headers });

    before(async () => {
      nereid = await startNereid(['--model-control-mode=explicit', '--load-model=sm_model', `--model-repository=${repository}`, `--sagemaker-mme-root=${mmeRoot}`], {
        SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'sm_model',
      });
    });
    after(() => nereid.stop());

    test('/ping answers 200 with an empty body while the server is ready, and takes GET only', async () => {
      const ping = await fetch(`${nereid.url}/ping`);
      assert.equal(ping.status, 200);
      assert.equal(await ping.text(), '');
      const posted = await post('/ping', '');
      assert.equal(posted.status, 405);
      assert.deepEqual(await posted.json(), { error: 'Method Not Allowed' });
    });

    test('/invocations infers on SAGEMAKER_TRITON_DEFAULT_MODEL_NAME, in JSON', async () => {
      const response = await post('/invocations', simpleRequest(), { 'content-type': 'application/json' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.deepEqual(await response.json(), expectedResponse('sm_model'));
    });

    test("a binary request gives its JSON header's length in SageMaker's Content-Type", async () => {
      const header = Buffer.from(
        JSON.stringify({
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: INPUT },
          ],
        }),
      );
      const body = Buffer.concat([header, bytesOf(Int32Array.from(INPUT))]);
      const response = await post('/invocations', body, { 'content-type': `${BINARY_MIME}${header.byteLength}` });
      assert.deepEqual(await response.json(), expectedResponse('sm_model'));
      const refusal = async (contentType: string): Promise<{ status: number; error: string }> => {
        const refused = await post('/invocations', body, { 'content-type': contentType });
        return { status: refused.status, error: ((await refused.json()) as { error: string }).error };
      };
      const misplaced = `additional-string/${BINARY_MIME}${header.byteLength}`;
      assert.deepEqual(await refusal(misplaced), { status: 400, error: `expect MIME type for binary data starts with '${BINARY_MIME}', got: ${misplaced}` });
      assert.deepEqual(await refusal(`${BINARY_MIME}-123`), { status: 400, error: `inference header size should be in range (0, ${body.byteLength}), got: -123` });
      assert.deepEqual(await refusal(`${BINARY_MIME}12345`), { status: 400, error: `inference header size should be in range (0, ${body.byteLength}), got: 12345` });
      assert.equal((await refusal(`${BINARY_MIME}additional-string${header.byteLength}`)).status, 400);
    });

    test("binary outputs follow the JSON, its length in SageMaker's Content-Type (no Inference-Header-Content-Length)", async () => {
      const response = await post('/invocations', simpleRequest(true), { 'content-type': 'application/json' });
      assert.equal(response.status, 200);
      const contentType = response.headers.get('content-type')!;
      assert.ok(contentType.startsWith(BINARY_MIME), contentType);
      assert.equal(response.headers.get('inference-header-content-length'), null);
      const headerLength = Number(contentType.slice(BINARY_MIME.length));
      const body = Buffer.from(await response.arrayBuffer());
      const json = JSON.parse(body.subarray(0, headerLength).toString()) as { outputs: Array<{ name: string; data?: number[]; parameters?: { binary_data_size: number } }> };
      assert.equal(json.outputs[0]!.parameters?.binary_data_size, 64);
      assert.deepEqual(json.outputs[1]!.data, DIFFERENCE);
      const binary = body.subarray(headerLength);
      assert.deepEqual(Array.from(new Int32Array(binary.buffer.slice(binary.byteOffset, binary.byteOffset + 64))), SUM);
    });

    test('/invocations takes POST only; paths SageMaker does not define are answered 400 with an empty body', async () => {
      const got = await fetch(`${nereid.url}/invocations`);
      assert.equal(got.status, 405);
      assert.deepEqual(await got.json(), { error: 'Method Not Allowed' });
      for (const path of ['/v2', '/v2/health/ready', '/models/a/b', '/metrics']) {
        const response = await fetch(`${nereid.url}${path}`);
        assert.equal(response.status, 400, path);
        assert.equal(await response.text(), '', path);
      }
    });

    test('the multi-model endpoint loads, lists, describes, invokes and unloads models', async () => {
      const load = (name: string, url: string): Promise<Response> => post('/models', JSON.stringify({ model_name: name, url }));
      assert.equal((await load('sm_mme_model_1', model1Url)).status, 200);
      const again = await load('sm_mme_model_1', model1Url);
      assert.equal(again.status, 409);
      assert.deepEqual(await again.json(), { error: `model repository '${join(mmeRoot, '123456789abcdefghi')}' has already been registered` });
      assert.equal((await load('sm_mme_model_2', model2Url)).status, 200);

      const list = (await (await fetch(`${nereid.url}/models`)).json()) as { models: Array<{ modelName: string; modelUrl: string }> };
      assert.deepEqual(
        list.models.sort((a, b) => a.modelName.localeCompare(b.modelName)),
        [
          { modelName: 'sm_mme_model_1', modelUrl: join(mmeRoot, '123456789abcdefghi') },
          { modelName: 'sm_mme_model_2', modelUrl: join(mmeRoot, '987654321ihgfedcba') },
        ],
      );
      assert.deepEqual(await (await fetch(`${nereid.url}/models/sm_mme_model_1`)).json(), { modelName: 'sm_mme_model_1', modelUrl: join(mmeRoot, '123456789abcdefghi') });
      const unknown = await fetch(`${nereid.url}/models/sm_non_loaded_model`);
      assert.equal(unknown.status, 404);
      assert.equal(await unknown.text(), '');

      const invoked = await post('/models/sm_mme_model_1/invoke', simpleRequest(), { 'content-type': 'application/json' });
      assert.deepEqual(await invoked.json(), expectedResponse('sm_mme_model_1'));
      const strings = await post('/models/sm_mme_model_2/invoke', JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['sage', 'maker'] }] }));
      assert.deepEqual(((await strings.json()) as { outputs: Array<{ data: string[] }> }).outputs[0]!.data, ['sage', 'maker']);
      const badInput = await post('/models/sm_mme_model_1/invoke', JSON.stringify({ inputs: [{ name: 'NOPE', datatype: 'INT32', shape: [1, 16], data: INPUT }] }));
      assert.equal(badInput.status, 400);
      assert.equal((await post('/models/sm_non_loaded_model/invoke', simpleRequest())).status, 404);

      assert.equal((await fetch(`${nereid.url}/models/sm_mme_model_1`, { method: 'DELETE' })).status, 200);
      assert.equal((await fetch(`${nereid.url}/models/sm_mme_model_2`, { method: 'DELETE' })).status, 200);
      assert.equal((await fetch(`${nereid.url}/models/sm_non_loaded_model`, { method: 'DELETE' })).status, 404);
      assert.deepEqual(await (await fetch(`${nereid.url}/models`)).json(), { models: [] });
      const gone = await post('/models/sm_mme_model_1/invoke', simpleRequest());
      assert.equal(gone.status, 404);
      // Unloaded and unregistered: the same folder loads again.
      assert.equal((await load('sm_mme_model_1', model1Url)).status, 200);
      assert.equal((await fetch(`${nereid.url}/models/sm_mme_model_1`, { method: 'DELETE' })).status, 200);
    });

    test("a folder of models loads its ensemble, the ensemble's steps with it, and unloads them all", async () => {
      const loaded = await post('/models', JSON.stringify({ model_name: 'digits_pipeline', url: ensembleUrl }));
      assert.equal(loaded.status, 200, await loaded.text());
      const image = Array.from({ length: 64 }, (_, index) => (index % 8 === 3 ? 16 : 0));
      const invoked = await post('/models/digits_pipeline/invoke', JSON.stringify({ inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: image }] }));
      assert.equal(invoked.status, 200);
      const outputs = ((await invoked.json()) as { outputs: Array<{ name: string; datatype: string; shape: number[]; data: unknown[] }> }).outputs;
      assert.deepEqual(
        outputs.map(({ name, datatype, shape }) => ({ name, datatype, shape })),
        [
          { name: 'LABEL', datatype: 'BYTES', shape: [1, 1] },
          { name: 'SCORE', datatype: 'FP32', shape: [1, 1] },
        ],
      );
      assert.ok(['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'].includes(outputs[0]!.data[0] as string));
      // A second folder with the same steps: its ensemble would run the first one's, so it does not load (the
      // steps are required together: whichever is checked first is named).
      const second = await post('/models', JSON.stringify({ model_name: 'pipeline-b', url: secondEnsembleUrl }), { 'X-Amzn-SageMaker-Target-Model': 'digits_pipeline_b' });
      assert.equal(second.status, 400);
      assert.match(((await second.json()) as { error: string }).error, /model '(digits_preprocess|digits|digits_postprocess)' appears in more than one repository .*; model names must be unique/);
      assert.equal((await post('/models/digits_pipeline/invoke', JSON.stringify({ inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: image }] }))).status, 200);
      assert.equal((await fetch(`${nereid.url}/models/digits_pipeline`, { method: 'DELETE' })).status, 200);
      assert.equal((await post('/models/digits_pipeline/invoke', '{}')).status, 404);
    });

    test("a model loads under the load's name whatever its config calls it; a second load of that name, or a second unload at once, is refused", async () => {
      const loaded = await post('/models', JSON.stringify({ model_name: 'c0ffee.tar.gz', url: unrenamedUrl }));
      assert.equal(loaded.status, 200, await loaded.text());
      const invoked = await post('/models/c0ffee.tar.gz/invoke', simpleRequest());
      assert.deepEqual(await invoked.json(), expectedResponse('c0ffee.tar.gz'));
      const twice = await post('/models', JSON.stringify({ model_name: 'c0ffee.tar.gz', url: model1Url }));
      assert.equal(twice.status, 409);
      assert.deepEqual(await twice.json(), { error: "failed to register 'c0ffee.tar.gz', there is a conflicting mapping for 'c0ffee.tar.gz'" });
      // The same load name for another model (X-Amzn-SageMaker-Target-Model) is refused too, its registration undone.
      const renamed = await post('/models', JSON.stringify({ model_name: 'c0ffee.tar.gz', url: model1Url }), { 'X-Amzn-SageMaker-Target-Model': 'other' });
      assert.equal(renamed.status, 409);
      assert.deepEqual(await renamed.json(), {
        error: `model 'c0ffee.tar.gz' is already loaded by the multi-model endpoint, from '${join(mmeRoot, 'c0ffee')}'; unload it first`,
      });
      const deletes = await Promise.all([0, 1].map(() => fetch(`${nereid.url}/models/c0ffee.tar.gz`, { method: 'DELETE' })));
      const statuses = deletes.map((response) => response.status).sort();
      assert.ok(JSON.stringify(statuses) === '[200,404]' || JSON.stringify(statuses) === '[200,409]', JSON.stringify(statuses));
      // The other folder's registration was undone: it loads.
      assert.equal((await post('/models', JSON.stringify({ model_name: 'sm_mme_model_1', url: model1Url }))).status, 200);
      assert.equal((await fetch(`${nereid.url}/models/sm_mme_model_1`, { method: 'DELETE' })).status, 200);
    });

    test('a web page cannot load, unload or infer: a request with an Origin is refused (403)', async () => {
      const origin = { origin: 'http://evil.example', 'content-type': 'text/plain' };
      for (const [path, body] of [['/models', JSON.stringify({ model_name: 'x', url: model1Url })], ['/invocations', simpleRequest()]] as const) {
        const refused = await post(path, body, origin);
        assert.equal(refused.status, 403, path);
        assert.deepEqual(await refused.json(), { error: "requests from web pages (Origin 'http://evil.example') are refused on the SageMaker port: only SageMaker calls it" });
      }
      // Reading is not refused: a page cannot see the answer of another origin anyway.
      const listed = await fetch(`${nereid.url}/models`, { headers: { origin: 'http://evil.example' } });
      assert.equal(listed.status, 200);
      assert.deepEqual(await listed.json(), { models: [] });
    });

    test('X-Amzn-SageMaker-Target-Model names the model a load and an invoke are for', async () => {
      const loaded = await post('/models', JSON.stringify({ model_name: 'by-hash', url: model1Url }), { 'X-Amzn-SageMaker-Target-Model': 'sm_mme_model_1' });
      assert.equal(loaded.status, 200);
      const invoked = await post('/models/by-hash/invoke', simpleRequest(), { 'X-Amzn-SageMaker-Target-Model': 'sm_mme_model_1' });
      assert.deepEqual(await invoked.json(), expectedResponse('sm_mme_model_1'));
      assert.equal((await fetch(`${nereid.url}/models/by-hash`, { method: 'DELETE', headers: { 'X-Amzn-SageMaker-Target-Model': 'sm_mme_model_1' } })).status, 200);
    });

    test('a load is refused outside --sagemaker-mme-root, from /proc, with a body that is not JSON, and for a folder without a model', async () => {
      const outside = await post('/models', JSON.stringify({ model_name: 'outside', url: join(root, 'elsewhere', 'model') }));
      assert.equal(outside.status, 400);
      assert.match(((await outside.json()) as { error: string }).error, /is outside .*, the folder the multi-model endpoint loads models from/);
      const system = await post('/models', JSON.stringify({ model_name: 'x', url: '/proc/self' }));
      assert.equal(system.status, 400);
      assert.equal(await system.text(), '');
      const junk = await post('/models', 'junk');
      assert.equal(junk.status, 400);
      assert.match(((await junk.json()) as { error: string }).error, /^failed to parse the request JSON buffer: Invalid value\. at 0 \(the load request is not JSON\)$/);
      mkdirSync(join(mmeRoot, 'empty'), { recursive: true });
      const empty = await post('/models', JSON.stringify({ model_name: 'empty', url: join(mmeRoot, 'empty') }));
      assert.equal(empty.status, 400);
      assert.deepEqual(await (await fetch(`${nereid.url}/models`)).json(), { models: [] });
    });
  });

  test("with --model-namespacing (the container script's default, as Triton's), two folders whose ensembles share step names load side by side", async () => {
    const nereid = await startNereid(['--model-control-mode=explicit', '--model-namespacing=true', `--model-repository=${repository}`, `--sagemaker-mme-root=${mmeRoot}`], {});
    try {
      const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${nereid.url}${path}`, { method: 'POST', body, headers });
      assert.equal((await post('/models', JSON.stringify({ model_name: 'digits_pipeline', url: ensembleUrl }))).status, 200);
      const second = await post('/models', JSON.stringify({ model_name: 'pipeline-b', url: secondEnsembleUrl }), { 'X-Amzn-SageMaker-Target-Model': 'digits_pipeline_b' });
      assert.equal(second.status, 200, await second.text());
      const image = JSON.stringify({ inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: Array.from({ length: 64 }, (_, index) => (index % 8 === 3 ? 16 : 0)) }] });
      const first = await post('/models/digits_pipeline/invoke', image);
      const other = await post('/models/pipeline-b/invoke', image, { 'X-Amzn-SageMaker-Target-Model': 'digits_pipeline_b' });
      assert.equal(first.status, 200);
      assert.equal(other.status, 200);
      const labels = async (response: Response): Promise<unknown> => ((await response.json()) as { outputs: Array<{ data: unknown[] }> }).outputs[0]!.data;
      assert.deepEqual(await labels(other), await labels(first), 'the same models in both folders answer alike');
      assert.equal((await fetch(`${nereid.url}/models/digits_pipeline`, { method: 'DELETE' })).status, 200);
      const deleted = await fetch(`${nereid.url}/models/pipeline-b`, { method: 'DELETE', headers: { 'X-Amzn-SageMaker-Target-Model': 'digits_pipeline_b' } });
      assert.equal(deleted.status, 200);
      assert.deepEqual(await (await fetch(`${nereid.url}/models`)).json(), { models: [] });
    } finally {
      await nereid.stop();
    }
  });

  describe('SAGEMAKER_TRITON_INFERENCE_TYPE', () => {
    test('generate: /invocations answers with the generate extension', async () => {
      const nereid = await startNereid([`--model-repository=${repository}`], { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'sm_model', SAGEMAKER_TRITON_INFERENCE_TYPE: 'generate' });
      try {
        const response = await fetch(`${nereid.url}/invocations`, { method: 'POST', body: JSON.stringify({ INPUT0: INPUT, INPUT1: INPUT }) });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), 'application/json');
        assert.deepEqual(await response.json(), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE, model_name: 'sm_model', model_version: '1' });
      } finally {
        await nereid.stop();
      }
    });

    test("any other type is refused per request in Triton's words; no default model name is Triton's placeholder", async () => {
      const nereid = await startNereid([`--model-repository=${repository}`], { SAGEMAKER_TRITON_INFERENCE_TYPE: 'incorrect_inference_type' });
      try {
        const response = await fetch(`${nereid.url}/invocations`, { method: 'POST', body: simpleRequest() });
        assert.equal(response.status, 400);
        assert.deepEqual(await response.json(), {
          error: "Server has invalid inference type 'incorrect_inference_type'. Must be one of: infer, generate, generate_stream.",
        });
      } finally {
        await nereid.stop();
      }
      const unnamed = await startNereid([`--model-repository=${repository}`], {});
      try {
        const response = await fetch(`${unnamed.url}/invocations`, { method: 'POST', body: 'dummy' });
        assert.notEqual(response.status, 200);
        assert.match(await response.text(), /Request for unknown model: 'unspecified_SAGEMAKER_TRITON_DEFAULT_MODEL_NAME' is not found/);
      } finally {
        await unnamed.stop();
      }
    });
  });
});
