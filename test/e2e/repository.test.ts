import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { startServer } from '../../src/server.js';
import type { Logger } from '../../src/logging/logger.js';

const fp32 = (data: number[]) => ({ inputs: [{ name: 'INPUT0', shape: [1, data.length], datatype: 'FP32', data }] });

async function outputData(response: Response): Promise<unknown> {
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { outputs: Array<{ data: unknown }> }).outputs[0]!.data;
}

describe('model repository: versions, auto-complete and broken models', () => {
  let server: TestServer;
  const warnings: string[] = [];
  const errors: string[] = [];
  before(async () => {
    const logger: Logger = {
      info() {},
      verbose() {},
      warning: (_component, message) => void warnings.push(message),
      error: (_component, message) => void errors.push(message),
    };
    server = await startTestServer({ modelRepositories: [FIXTURES], logger });
  });
  after(() => server.close());

  test('version_policy specific serves versions 1 and 3, not 2; unversioned requests get the highest', async () => {
    assert.deepEqual(await outputData(await server.post('/v2/models/versioned/versions/1/infer', fp32([1, 2, 3, 4]))), [1, 2, 3, 4]);
    assert.deepEqual(await outputData(await server.post('/v2/models/versioned/versions/3/infer', fp32([1, 2, 3, 4]))), [3, 6, 9, 12]);
    assert.deepEqual(await outputData(await server.post('/v2/models/versioned/infer', fp32([1, 2, 3, 4]))), [3, 6, 9, 12]);
    const two = await server.post('/v2/models/versioned/versions/2/infer', fp32([1, 2, 3, 4]));
    assert.equal(two.status, 404);
    assert.equal((await server.get('/v2/models/versioned/versions/2/ready')).status, 400);
    assert.equal((await server.get('/v2/models/versioned/versions/3/ready')).status, 200);
    const metadata = (await (await server.get('/v2/models/versioned')).json()) as { versions: string[] };
    assert.deepEqual(metadata.versions, ['1', '3']);
  });

  test('the default policy serves only the latest version', async () => {
    const metadata = (await (await server.get('/v2/models/versioned_latest')).json()) as { versions: string[] };
    assert.deepEqual(metadata.versions, ['3']);
    assert.equal((await server.post('/v2/models/versioned_latest/versions/1/infer', fp32([1, 1, 1, 1]))).status, 404);
  });

  test("a folder that is not a version is ignored with Triton's warning (qa/L0_lifecycle greps the log for it)", () => {
    for (const warning of [
      "ignore version directory 'notes' which fails to convert to integral number (model 'versioned'; version folders are named 1, 2, ...)",
      "ignore version directory '03' which contains leading zeros in its directory name (model 'versioned')",
    ]) {
      assert.ok(warnings.includes(warning), `${warning}\n${warnings.join('\n')}`);
    }
  });

  test('a model without config.pbtxt is completed from the ONNX file', async () => {
    const config = (await (await server.get('/v2/models/autocomplete_none/config')).json()) as Record<string, unknown>;
    assert.equal(config.name, 'autocomplete_none');
    assert.equal(config.backend, 'onnxruntime');
    assert.equal(config.platform, 'onnxruntime_onnx');
    assert.equal(config.max_batch_size, 4);
    assert.deepEqual(
      (config.input as Array<{ name: string; data_type: string; dims: unknown[] }>).map(({ name, data_type, dims }) => ({ name, data_type, dims })),
      [{ name: 'x', data_type: 'TYPE_FP32', dims: [3] }],
    );
    const response = await server.post('/v2/models/autocomplete_none/infer', {
      inputs: [{ name: 'x', shape: [2, 3], datatype: 'FP32', data: [1, 2, 3, 4, 5, 6] }],
    });
    assert.deepEqual(await outputData(response), [2, 3, 4, 5, 6, 7]);
  });

  test('a partial config keeps max_batch_size 0 for a graph that cannot batch and gets its tensors filled', async () => {
    const metadata = await (await server.get('/v2/models/autocomplete_partial')).json();
    assert.deepEqual(metadata, {
      name: 'autocomplete_partial',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'a', datatype: 'INT64', shape: [2] }],
      outputs: [{ name: 'b', datatype: 'INT64', shape: [2] }],
    });
  });

  test('variable dims without batching', async () => {
    const response = await server.post('/v2/models/nobatch_fp32/infer', {
      inputs: [{ name: 'INPUT0', shape: [2, 3], datatype: 'FP32', data: [[1, 2, 3], [4, 5, 6]] }],
    });
    assert.deepEqual(await outputData(response), [2, 4, 6, 8, 10, 12]);
    const other = await server.post('/v2/models/nobatch_fp32/infer', {
      inputs: [{ name: 'INPUT0', shape: [1, 5], datatype: 'FP32', data: [1, 1, 1, 1, 1] }],
    });
    assert.deepEqual(await outputData(other), [2, 2, 2, 2, 2]);
  });

  test('default_model_filename names the model file', async () => {
    const response = await server.post('/v2/models/custom_filename/infer', {
      inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [1.5, -4] }],
    });
    assert.deepEqual(await outputData(response), [3, -8]);
    const config = (await (await server.get('/v2/models/custom_filename/config')).json()) as { default_model_filename: string };
    assert.equal(config.default_model_filename, 'doubler.onnx');
  });

  test('the repository index lists every version with its state, and the reason when not READY', async () => {
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; version?: string; state: string; reason?: string }>;
    assert.deepEqual(
      index.filter((entry) => entry.name.startsWith('versioned')),
      [
        { name: 'versioned', version: '1', state: 'READY' },
        { name: 'versioned', version: '3', state: 'READY' },
        { name: 'versioned_latest', version: '3', state: 'READY' },
      ],
    );
    const broken = index.find((entry) => entry.name === 'broken_model')!;
    assert.equal(broken.state, 'UNAVAILABLE');
    assert.match(broken.reason!, /Protobuf parsing failed/);
    assert.equal(broken.version, undefined);
    const ready = (await (await server.post('/v2/repository/index', { ready: true })).json()) as Array<{ state: string }>;
    assert.ok(ready.length > 0 && ready.every((entry) => entry.state === 'READY'));
    assert.equal(ready.length, index.filter((entry) => entry.state === 'READY').length);
    const bad = await server.post('/v2/repository/index', { ready: 'yes' });
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: `'ready' must be true or false, got "yes"` });
  });

  test('model_warmup runs before a version is READY; a failing sample makes it UNAVAILABLE with the reason', async () => {
    assert.equal((await server.get('/v2/models/warmup_ok/ready')).status, 200);
    assert.deepEqual(await outputData(await server.post('/v2/models/warmup_ok/infer', fp32([1, 2, 3, 4]))), [2, 4, 6, 8]);
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
    assert.deepEqual(index.find((entry) => entry.name === 'warmup_bad'), {
      name: 'warmup_bad',
      version: '1',
      state: 'UNAVAILABLE',
      reason: "model 'warmup_bad': warmup sample 'wrong_shape': unexpected shape for input 'INPUT0' for model 'warmup_bad'. Expected [-1,4], got [1,5]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
    });
  });

  test('KIND_GPU fails to load with the reason', async () => {
    assert.equal((await server.get('/v2/models/kind_gpu/ready')).status, 400);
    const response = await server.post('/v2/models/kind_gpu/infer', { inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [1] }] });
    assert.equal(response.status, 503);
    assert.equal(
      ((await response.json()) as { error: string }).error,
      `Request for unknown model: 'kind_gpu' has no available versions: ${FIXTURES}/kind_gpu/config.pbtxt: instance group kind_gpu_0 of model kind_gpu has kind KIND_GPU but server does not support GPUs (instance_group[0] 'kind_gpu_0': Nereid runs models on the CPU; use KIND_CPU, KIND_AUTO or KIND_MODEL)`,
    );
  });

  test('NaN and Infinity travel as bare JSON tokens, as Python clients write them', async () => {
    const response = await server.post('/v2/models/nobatch_fp32/infer', '{"inputs":[{"name":"INPUT0","shape":[1,3],"datatype":"FP32","data":[NaN,Infinity,-Infinity]}]}');
    assert.equal(response.status, 200);
    assert.match(await response.text(), /"data":\[NaN,Infinity,-Infinity\]/);
  });

  test('a broken model and a bad config are UNAVAILABLE with their reasons while the rest serve', async () => {
    assert.equal((await server.get('/v2/models/broken_model/ready')).status, 400);
    assert.equal((await server.get('/v2/models/bad_config/ready')).status, 400);
    const broken = await server.post('/v2/models/broken_model/infer', fp32([1, 2, 3, 4]));
    assert.equal(broken.status, 503);
    assert.match(((await broken.json()) as { error: string }).error, /^Request for unknown model: 'broken_model' has no available versions/);
    const badConfig = await server.post('/v2/models/bad_config/infer', fp32([1]));
    assert.equal(badConfig.status, 503);
    const message = ((await badConfig.json()) as { error: string }).error;
    assert.match(message, /bad_config\/config\.pbtxt:3:17: invalid value 'eight' in field 'max_batch_size'; expected an integer$/);
    assert.ok(errors.some((line) => /^failed to load 'broken_model': .*Protobuf parsing failed/.test(line)), errors.join('\n'));
    assert.ok(errors.some((line) => line.startsWith("failed to load 'bad_config': ")), errors.join('\n'));
    // With --strict-readiness (the default) the server is not ready while a model is unavailable.
    assert.equal((await server.get('/v2/health/ready')).status, 400);
    assert.equal((await server.get('/v2/health/live')).status, 200);
  });
});

describe('server options around the repository', () => {
  test('--strict-readiness=false: ready although a model failed', async () => {
    const server = await startTestServer({ modelRepositories: [FIXTURES], isStrictReadiness: false });
    try {
      assert.equal((await server.get('/v2/health/ready')).status, 200);
    } finally {
      await server.close();
    }
  });

  test('--exit-on-error (Triton\'s default, true): start-up fails in Triton\'s words and names the failed models', async () => {
    await assert.rejects(
      startServer({ modelRepositories: [FIXTURES], httpPort: 0, metricsPort: 0, grpcPort: 0, logger: { info() {}, warning() {}, error() {}, verbose() {} } }),
      (error: Error) =>
        error.message.startsWith('error: creating server: Internal - failed to load all models (4 model(s) failed to load: ') &&
        /'bad_config'/.test(error.message) &&
        /'broken_model'/.test(error.message) &&
        error.message.endsWith('; --exit-on-error=false serves the others)'),
    );
  });

  test('several repositories serve together; a name in two of them is unavailable', async () => {
    const server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false });
    try {
      assert.equal((await server.get('/v2/models/simple/ready')).status, 200);
      assert.equal((await server.get('/v2/models/versioned/ready')).status, 200);
    } finally {
      await server.close();
    }
    const twice = await startTestServer({ modelRepositories: [EXAMPLES, EXAMPLES] });
    try {
      const response = await twice.get('/v2/models/simple');
      assert.equal(response.status, 503);
      assert.equal(
        ((await response.json()) as { error: string }).error,
        `Request for unknown model: 'simple' has no available versions: model 'simple' appears in more than one repository (${EXAMPLES}/simple, ${EXAMPLES}/simple); model names must be unique`,
      );
    } finally {
      await twice.close();
    }
  });

  test('--disable-auto-complete-config: a model without config fails to load', async () => {
    const server = await startTestServer({ modelRepositories: [FIXTURES], isAutoCompleteEnabled: false });
    try {
      assert.equal((await server.get('/v2/models/autocomplete_none/ready')).status, 400);
      assert.equal((await server.get('/v2/models/versioned/ready')).status, 200);
    } finally {
      await server.close();
    }
  });
});
