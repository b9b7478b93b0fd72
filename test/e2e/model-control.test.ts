import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { simpleConfig } from '../helpers/simple-model.js';

const simpleRequest = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(2) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
  ],
};
const slowRequest = { inputs: [{ name: 'INPUT0', shape: [3], datatype: 'FP32', data: [1, 2, 3] }] };

type IndexEntry = { name: string; version?: string; state: string; reason?: string };
const index = async (server: TestServer): Promise<IndexEntry[]> => (await (await server.post('/v2/repository/index', '')).json()) as IndexEntry[];

describe('model control mode NONE', () => {
  test("load and unload answer Triton's 503 with the mode", async () => {
    const server = await startTestServer({ modelRepositories: [EXAMPLES] });
    try {
      for (const action of ['load', 'unload']) {
        const response = await server.post(`/v2/repository/models/simple/${action}`, '');
        assert.equal(response.status, 503);
        assert.deepEqual(await response.json(), {
          error: `explicit model load / unload is not allowed if polling is enabled; cannot ${action} models: the model control mode is NONE; start the server with --model-control-mode=explicit to load and unload through the API`,
        });
      }
    } finally {
      await server.close();
    }
  });
});

describe('model control mode EXPLICIT', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
  });
  after(() => server.close());

  test('only --load-model models load at start; the others are listed as unloaded', async () => {
    const entries = await index(server);
    assert.deepEqual(entries.find((e) => e.name === 'simple'), { name: 'simple', version: '1', state: 'READY' });
    assert.deepEqual(entries.find((e) => e.name === 'digits'), { name: 'digits', state: 'UNAVAILABLE', reason: 'unloaded' });
    assert.equal((await server.get('/v2/models/digits/ready')).status, 400);
  });

  test('load, infer, unload, and a new request is refused', async () => {
    const load = await server.post('/v2/repository/models/identity_bytes/load', '');
    assert.equal(load.status, 200);
    assert.equal(await load.text(), '');
    const infer = await server.post('/v2/models/identity_bytes/infer', { inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'BYTES', data: ['hi'] }] });
    assert.equal(infer.status, 200);
    assert.equal((await server.post('/v2/repository/models/identity_bytes/unload', { parameters: { unload_dependents: false } })).status, 200);
    const after = await server.post('/v2/models/identity_bytes/infer', { inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'BYTES', data: ['hi'] }] });
    assert.equal(after.status, 503);
    assert.deepEqual((await index(server)).find((e) => e.name === 'identity_bytes'), { name: 'identity_bytes', state: 'UNAVAILABLE', reason: 'unloaded' });
  });

  test('unknown names are clear errors', async () => {
    const unknown = await server.post('/v2/repository/models/nope/load', '');
    assert.equal(unknown.status, 400);
    assert.match(((await unknown.json()) as { error: string }).error, /^failed to load 'nope', failed to poll from model repository; no model folder of that name in /);
  });

  test('a config override replaces config.pbtxt', async () => {
    const config = simpleConfig('simple', 2);
    const load = await server.post('/v2/repository/models/simple/load', { parameters: { config: JSON.stringify(config) } });
    assert.equal(load.status, 200, await load.clone().text());
    assert.equal(((await (await server.get('/v2/models/simple/config')).json()) as { max_batch_size: number }).max_batch_size, 2);
    const three = { inputs: simpleRequest.inputs.map((input) => ({ ...input, shape: [3, 16], data: Array(48).fill(1) })) };
    const refused = await server.post('/v2/models/simple/infer', three);
    assert.equal(refused.status, 400);
    const bad = await server.post('/v2/repository/models/simple/load', { parameters: { config: '{"max_batch_size": "two"}' } });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /^load failed for model 'simple': load parameter 'config' of 'simple'/);
    assert.equal((await server.post('/v2/models/simple/infer', simpleRequest)).status, 200, 'a failed reload keeps the loaded version');
  });

  test('file overrides make a model in a private folder; paths cannot escape it', async () => {
    const onnx = readFileSync(join(EXAMPLES, 'simple', '1', 'model.onnx')).toString('base64');
    const config = JSON.stringify(simpleConfig('uploaded', 8));
    const load = await server.post('/v2/repository/models/uploaded/load', { parameters: { config, 'file:1/model.onnx': onnx } });
    assert.equal(load.status, 200, await load.clone().text());
    const infer = await server.post('/v2/models/uploaded/infer', simpleRequest);
    assert.deepEqual(((await infer.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, Array(16).fill(3));
    assert.equal(existsSync(join(EXAMPLES, 'uploaded')), false, 'nothing is written into the repository');
    for (const path of ['../../escaped.onnx', '/tmp/absolute.onnx', '1/../../escaped.onnx', 'model.onnx']) {
      const response = await server.post('/v2/repository/models/evil/load', { parameters: { config, [`file:${path}`]: onnx } });
      assert.equal(response.status, 400, path);
      assert.match(((await response.json()) as { error: string }).error, /^load parameter 'file:.*' is not a file inside a version folder of the model/);
    }
    assert.equal(existsSync(join(tmpdir(), 'escaped.onnx')), false);
    const privateFolders = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('nereid-model-'));
    const before = privateFolders().length;
    assert.equal((await server.post('/v2/repository/models/uploaded/unload', '')).status, 200);
    assert.equal(privateFolders().length, before - 1, 'unloading removes the private folder');
    const filesOnly = await server.post('/v2/repository/models/uploaded/load', { parameters: { 'file:1/model.onnx': onnx } });
    assert.equal(filesOnly.status, 400);
    assert.deepEqual(await filesOnly.json(), {
      error: "load parameters 'file:...' need a 'config' parameter too: the configuration of the model the files make up",
    });
  });
});

describe('an unload bounded by --model-unload-timeout-secs', () => {
  test('past the bound, the requests still queued or running fail instead of holding the unload', async () => {
    const server = await startTestServer({ modelRepositories: [FIXTURES], modelControlMode: 'explicit', startupModels: ['slow'], modelUnloadTimeoutMs: 0 });
    try {
      const requests = Array.from({ length: 6 }, () => server.post('/v2/models/slow/infer', slowRequest));
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await server.post('/v2/repository/models/slow/unload', '')).status, 200);
      const statuses = await Promise.all(requests.map(async (request) => (await request).status));
      assert.ok(statuses.every((status) => status === 200 || status === 503), statuses.join());
      assert.ok(statuses.includes(503), `queued requests fail once the bound is passed: ${statuses.join()}`);
      assert.equal((await server.post('/v2/models/slow/infer', slowRequest)).status, 503);
    } finally {
      await server.close();
    }
  });
});

describe('load and unload over gRPC', () => {
  test('RepositoryModelLoad with a config and bytes files, then RepositoryModelUnload', async () => {
    const server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit' });
    const Client = loadGrpcServices().inference;
    const client = new Client(server.grpcUrl!, credentials.createInsecure()) as unknown as Record<string, (request: object, callback: (error: Error | null) => void) => void>;
    const call = (method: string, request: object): Promise<void> =>
      new Promise((resolve, reject) => client[method]!(request, (error) => (error !== null ? reject(error) : resolve())));
    try {
      await call('RepositoryModelLoad', {
        model_name: 'grpc_uploaded',
        parameters: {
          config: { string_param: JSON.stringify(simpleConfig('grpc_uploaded', 8)) },
          'file:1/model.onnx': { bytes_param: readFileSync(join(EXAMPLES, 'simple', '1', 'model.onnx')) },
        },
      });
      const infer = await server.post('/v2/models/grpc_uploaded/infer', simpleRequest);
      assert.deepEqual(((await infer.json()) as { outputs: Array<{ data: number[] }> }).outputs[1]!.data, Array(16).fill(1));
      await call('RepositoryModelUnload', { model_name: 'grpc_uploaded' });
      assert.equal((await server.get('/v2/models/grpc_uploaded/ready')).status, 400);
      // JSON.parse's message quotes the text cut inside an emoji: the status used to crash the server (found by test/fuzz).
      await assert.rejects(call('RepositoryModelLoad', { model_name: 'grpc_emoji', parameters: { config: { string_param: '😀'.repeat(20) }, 'file:1/model.onnx': { bytes_param: Buffer.from([1]) } } }), (error: { code: number; details: string }) => {
        assert.equal(error.code, 3);
        assert.match(error.details, /^load failed for model 'grpc_emoji': load parameter 'config' of 'grpc_emoji': invalid JSON: Unexpected token '\uFFFD'/);
        return true;
      });
      assert.equal((await server.get('/v2/health/live')).status, 200);
      // Triton's words (grpc_server.cc RepositoryModelLoad) for a parameter of the wrong kind or name.
      for (const [parameters, details] of [
        [{ config: { bytes_param: Buffer.from('{}') } }, "invalid value type for load parameter 'config', expected string_param."],
        [{ 'file:1/model.onnx': { string_param: 'AAAA' } }, "invalid value type for load parameter 'file:1/model.onnx', expected bytes_param."],
        [{ unknown: { bool_param: true } }, "unrecognized load parameter 'unknown'."],
      ] as const) {
        await assert.rejects(call('RepositoryModelLoad', { model_name: 'simple', parameters }), { code: 3, details });
      }
    } finally {
      (client as unknown as { close(): void }).close();
      await server.close();
    }
  });
});

describe('reloading while requests flow', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [FIXTURES], modelControlMode: 'explicit', startupModels: ['slow', 'versioned'], isStrictReadiness: false });
  });
  after(() => server.close());

  test('a reload drops no request: the old version finishes what it accepted, the new one takes the rest', async () => {
    const before = Array.from({ length: 4 }, () => server.post('/v2/models/slow/infer', slowRequest));
    const reload = server.post('/v2/repository/models/slow/load', '');
    const during = Array.from({ length: 4 }, () => server.post('/v2/models/slow/infer', slowRequest));
    assert.equal((await reload).status, 200);
    const afterReload = Array.from({ length: 2 }, () => server.post('/v2/models/slow/infer', slowRequest));
    for (const response of await Promise.all([...before, ...during, ...afterReload])) {
      assert.equal(response.status, 200, await response.clone().text());
      assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [1, 2, 3]);
    }
  });

  test('a failed load keeps nothing half-loaded and reports the reason, in the index too', async () => {
    const response = await server.post('/v2/repository/models/broken_model/load', '');
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: string }).error, /^load failed for model 'broken_model': .*Protobuf parsing failed/);
    const entry = (await index(server)).find((e) => e.name === 'broken_model')!;
    assert.equal(entry.state, 'UNAVAILABLE');
    assert.match(entry.reason!, /Protobuf parsing failed/, 'the index shows why the load failed');
    assert.equal((await server.get('/v2/models/versioned/versions/3/ready')).status, 200);
  });

  test('concurrent loads and unloads of one model run one at a time and all succeed', async () => {
    const calls = [
      server.post('/v2/repository/models/versioned/unload', ''),
      server.post('/v2/repository/models/versioned/load', ''),
      server.post('/v2/repository/models/versioned/unload', ''),
      server.post('/v2/repository/models/versioned/load', ''),
    ];
    for (const response of await Promise.all(calls)) assert.equal(response.status, 200);
    assert.equal((await server.post('/v2/repository/models/versioned/load', '')).status, 200);
    assert.equal((await server.get('/v2/models/versioned/versions/1/ready')).status, 200);
    assert.equal((await server.get('/v2/models/versioned/versions/3/ready')).status, 200);
  });
});
