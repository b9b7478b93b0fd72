import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync, gzipSync, deflateSync } from 'node:zlib';
import { request } from 'node:http';
import { EXAMPLES, type TestServer, binaryBody, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';
import { SIMPLE_METADATA } from '../helpers/simple-model.js';

/** A request through node:http, which (unlike fetch) leaves Accept-Encoding and the body as they are. */
function rawRequest(url: string, path: string, acceptEncoding: string, body?: string): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const INPUT0 = Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Array.from({ length: 16 }, () => 1);
const SUM = INPUT0.map((v, i) => v + INPUT1[i]!);
const DIFF = INPUT0.map((v, i) => v - INPUT1[i]!);

const jsonRequest = {
  id: 'request-42',
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: INPUT0 },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: INPUT1 },
  ],
};

describe('simple (add/sub) over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES] });
  });
  after(() => server.close());

  test('server metadata lists only the implemented extensions', async () => {
    const response = await server.get('/v2');
    assert.equal(response.status, 200);
    const body = (await response.json()) as { name: string; version: string; extensions: string[] };
    assert.equal(body.name, 'nereid');
    assert.match(body.version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(body.extensions, [
      'classification',
      'sequence',
      'model_repository',
      'model_repository(unload_dependents)',
      'schedule_policy',
      'model_configuration',
      'binary_tensor_data',
      'parameters',
      'statistics',
      'trace',
      'logging',
    ]);
  });

  test('health endpoints answer 200 with an empty body', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready', '/v2/models/simple/ready', '/v2/models/simple/versions/1/ready']) {
      const response = await server.get(path);
      assert.equal(response.status, 200, path);
      assert.equal(await response.text(), '');
    }
  });

  test('model metadata has the batch dimension in shapes', async () => {
    const response = await server.get('/v2/models/simple');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), SIMPLE_METADATA);
    const versioned = await server.get('/v2/models/simple/versions/1');
    assert.equal(versioned.status, 200);
  });

  test('JSON inference returns sums and differences and echoes the id', async () => {
    const response = await server.post('/v2/models/simple/infer', jsonRequest);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.deepEqual(await response.json(), {
      model_name: 'simple',
      model_version: '1',
      id: 'request-42',
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: SUM },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: DIFF },
      ],
    });
  });

  test('nested data, a batch of two and one requested output', async () => {
    const response = await server.post('/v2/models/simple/versions/1/infer', {
      inputs: [
        { name: 'INPUT0', shape: [2, 16], datatype: 'INT32', data: [INPUT0, INPUT0.map((v) => v * 10)] },
        { name: 'INPUT1', shape: [2, 16], datatype: 'INT32', data: [INPUT1, INPUT1] },
      ],
      outputs: [{ name: 'OUTPUT1' }],
      parameters: { note: 'passes through', priority: 0 },
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { id?: string; outputs: unknown[] };
    assert.equal(body.id, undefined);
    assert.deepEqual(body.outputs, [
      { name: 'OUTPUT1', datatype: 'INT32', shape: [2, 16], data: [...DIFF, ...INPUT0.map((v) => v * 10 - 1)] },
    ]);
  });

  test('binary inputs and outputs (the binary data extension)', async () => {
    const { body, headers } = binaryBody(
      {
        inputs: [
          { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
          { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
        ],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }, { name: 'OUTPUT1' }],
      },
      [bytesOf(new Int32Array(INPUT0)), bytesOf(new Int32Array(INPUT1))],
    );
    const response = await server.post('/v2/models/simple/infer', body, { headers });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    const { json, binary } = await readInferResponse(response);
    assert.deepEqual(json.outputs, [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: DIFF },
    ]);
    assert.deepEqual([...new Int32Array(binary.buffer.slice(binary.byteOffset, binary.byteOffset + 64))], SUM);
  });

  test('binary_data_output makes every output binary unless an output says otherwise', async () => {
    const response = await server.post('/v2/models/simple/infer', {
      ...jsonRequest,
      parameters: { binary_data_output: true },
      outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1', parameters: { binary_data: false } }],
    });
    const { json, binary } = await readInferResponse(response);
    assert.equal(json.outputs[0]!.parameters!.binary_data_size, 64);
    assert.deepEqual(json.outputs[1]!.data, DIFF);
    assert.equal(binary.byteLength, 64);
  });

  test('gzip and deflate request bodies; gzip response when accepted', async () => {
    const gz = await server.post('/v2/models/simple/infer', gzipSync(JSON.stringify(jsonRequest)), {
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(gz.status, 200);
    assert.deepEqual(((await gz.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, SUM);
    const deflated = await server.post('/v2/models/simple/infer', deflateSync(JSON.stringify(jsonRequest)), {
      headers: { 'content-encoding': 'deflate' },
    });
    assert.equal(deflated.status, 200);

    const raw = await rawRequest(server.url, '/v2/models/simple/infer', 'gzip, deflate', JSON.stringify(jsonRequest));
    assert.equal(raw.status, 200);
    assert.equal(raw.encoding, 'gzip');
    assert.deepEqual((JSON.parse(gunzipSync(raw.body).toString()) as { outputs: Array<{ data: number[] }> }).outputs[1]!.data, DIFF);
    const deflatedReply = await rawRequest(server.url, '/v2/models/simple/infer', 'gzip;q=0, deflate', JSON.stringify(jsonRequest));
    assert.equal(deflatedReply.encoding, 'deflate');
  });

  test('only successful inference replies are compressed, as in Triton', async () => {
    const metadata = await rawRequest(server.url, '/v2/models/simple', 'gzip, deflate');
    assert.equal(metadata.status, 200);
    assert.equal(metadata.encoding, undefined);
    assert.equal((JSON.parse(metadata.body.toString()) as { name: string }).name, 'simple');
    const failed = await rawRequest(server.url, '/v2/models/simple/infer', 'gzip, deflate', '{"inputs": 5}');
    assert.equal(failed.status, 400);
    assert.equal(failed.encoding, undefined);
    assert.deepEqual(JSON.parse(failed.body.toString()), { error: "the inference request needs an 'inputs' array" });
  });

  test('classification: the top classes of an output as "value:index"', async () => {
    const response = await server.post('/v2/models/simple/infer', {
      ...jsonRequest,
      outputs: [{ name: 'OUTPUT0', parameters: { classification: 3 } }],
    });
    assert.equal(response.status, 200);
    assert.deepEqual(((await response.json()) as { outputs: unknown[] }).outputs, [
      { name: 'OUTPUT0', datatype: 'BYTES', shape: [1, 3], data: ['16:15', '15:14', '14:13'] },
    ]);
  });

  test('an unsupported Content-Encoding is 501 with the accepted encodings', async () => {
    const response = await server.post('/v2/models/simple/infer', JSON.stringify(jsonRequest), { headers: { 'content-encoding': 'br' } });
    assert.equal(response.status, 501);
    assert.equal(response.headers.get('accept-encoding'), 'gzip, deflate');
    assert.deepEqual(await response.json(), { error: "unsupported Content-Encoding 'br'; this server accepts gzip and deflate" });
  });

  test('config returns the configuration with defaults filled in', async () => {
    const response = await server.get('/v2/models/simple/config');
    assert.equal(response.status, 200);
    const config = (await response.json()) as Record<string, unknown>;
    assert.equal(config.name, 'simple');
    assert.equal(config.platform, 'onnxruntime_onnx');
    assert.equal(config.backend, 'onnxruntime');
    assert.equal(config.max_batch_size, 8);
    assert.deepEqual(config.version_policy, { latest: { num_versions: 1 } });
    assert.equal((config.input as Array<{ name: string; data_type: string }>)[0]!.data_type, 'TYPE_INT32');
    assert.equal((config.instance_group as Array<{ kind: string; count: number }>)[0]!.kind, 'KIND_CPU');
  });
});
