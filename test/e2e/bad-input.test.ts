import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, type TestServer, binaryBody, bytesOf, startTestServer } from '../helpers/server.js';

const ones = (n: number): number[] => Array.from({ length: n }, () => 1);
const input = (name: string, shape: number[], data: unknown, datatype = 'INT32') => ({ name, shape, datatype, data });
const good = [input('INPUT0', [1, 16], ones(16)), input('INPUT1', [1, 16], ones(16))];

/** Each bad request, the status Triton would answer, and our message. */
const CASES: Array<{ title: string; path?: string; body: unknown; headers?: Record<string, string>; status: number; error: string }> = [
  {
    title: 'unknown model',
    path: '/v2/models/nope/infer',
    body: { inputs: good },
    status: 400,
    error: "Request for unknown model: 'nope' is not found",
  },
  {
    title: 'unknown version',
    path: '/v2/models/simple/versions/7/infer',
    body: { inputs: good },
    status: 404,
    error: "Request for unknown model: 'simple' version 7 is not found",
  },
  {
    title: 'missing input',
    body: { inputs: [good[0]] },
    status: 400,
    error:
      "expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).",
  },
  {
    title: 'extra input',
    body: { inputs: [...good, input('INPUT2', [1, 16], ones(16))] },
    status: 400,
    error:
      // The inputs in the order Triton's core keeps them (src/kernel/triton-input-order.ts).
      "expected 2 inputs but got 3 inputs for model 'simple'. Got input(s) ['INPUT2','INPUT1','INPUT0'], but missing required input(s) []. Please provide all required input(s).",
  },
  {
    title: 'wrong datatype',
    body: { inputs: [input('INPUT0', [1, 16], ones(16), 'FP32'), good[1]] },
    status: 400,
    error: "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
  },
  {
    title: 'shape that does not match the dims',
    body: { inputs: [input('INPUT0', [1, 15], ones(15)), good[1]] },
    status: 400,
    error: "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
  },
  {
    title: 'shape without the batch dimension: its first dimension is taken for the batch size, as in Triton',
    body: { inputs: [input('INPUT0', [16], ones(16)), input('INPUT1', [16], ones(16))] },
    status: 400,
    error: "inference request batch-size must be <= 8 for 'simple'; the request's batch size is 16",
  },
  {
    title: 'shape without the batch dimension, its first dimension within max_batch_size (Triton names the second input)',
    body: { inputs: [input('INPUT0', [4], ones(4)), input('INPUT1', [4], ones(4))] },
    status: 400,
    error:
      "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [4]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
  },
  {
    title: 'batch larger than max_batch_size',
    body: { inputs: [input('INPUT0', [9, 16], ones(144)), input('INPUT1', [9, 16], ones(144))] },
    status: 400,
    error: "inference request batch-size must be <= 8 for 'simple'; the request's batch size is 9",
  },
  {
    title: 'inputs of different batch sizes: Triton names the first sent, its core having taken the batch size of the second',
    body: { inputs: [input('INPUT0', [2, 16], ones(32)), input('INPUT1', [1, 16], ones(16))] },
    status: 400,
    error: "input 'INPUT0' batch size does not match other inputs for 'simple'",
  },
  {
    title: 'an input with no shape for a batching model',
    body: { inputs: [input('INPUT0', [], [1]), good[1]] },
    status: 400,
    error: "input 'INPUT0' has no shape but model requires batch dimension for 'simple'",
  },
  {
    title: 'a priority that is not an unsigned integer',
    body: { inputs: good, parameters: { priority: 1.5 } },
    status: 400,
    error: "Unable to parse 'priority': attempt to access JSON non-unsigned-integer as unsigned-integer",
  },
  {
    title: 'a timeout that is not an unsigned integer',
    body: { inputs: good, parameters: { timeout: -1 } },
    status: 400,
    error: "Unable to parse 'timeout': attempt to access JSON non-unsigned-integer as unsigned-integer",
  },
  {
    title: 'a binary_data_output that is not a boolean',
    body: { inputs: good, parameters: { binary_data_output: 'yes' } },
    status: 400,
    error: "Unable to parse 'binary_data_output': attempt to access JSON non-boolean as boolean",
  },
  {
    title: 'a request parameter that is neither a string, a number nor a boolean',
    body: { inputs: good, parameters: { custom: { nested: true } } },
    status: 400,
    error: "parameter 'custom' has invalid type. It should be either 'int', 'bool', or 'string'.",
  },
  {
    title: 'element count that does not match the shape',
    body: { inputs: [input('INPUT0', [1, 16], ones(15)), good[1]] },
    status: 400,
    error: "Unable to parse 'data': Shape does not match true shape of 'data' field",
  },
  {
    title: 'value out of the type range',
    body: { inputs: [input('INPUT0', [1, 16], [...ones(15), 2 ** 31]), good[1]] },
    status: 400,
    error: "input 'INPUT0': element 15 is 2147483648, but INT32 data must be integers from -2147483648 to 2147483647",
  },
  {
    title: 'unknown requested output',
    body: { inputs: good, outputs: [{ name: 'OUTPUT9' }] },
    status: 400,
    error: "unexpected inference output 'OUTPUT9' for model 'simple'; the model's outputs are 'OUTPUT0', 'OUTPUT1'",
  },
  {
    title: 'malformed JSON',
    body: '{"inputs": [',
    status: 400,
    error: 'failed to parse the request JSON buffer: Invalid value. at 12 (the inference request is not JSON)',
  },
  {
    title: 'unknown datatype',
    body: { inputs: [input('INPUT0', [1, 16], ones(16), 'INT33'), good[1]] },
    status: 400,
    error:
      'input \'INPUT0\': unknown datatype "INT33"; expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16',
  },
  {
    title: 'FP16 as JSON',
    body: { inputs: [input('INPUT0', [1, 16], ones(16), 'FP16'), good[1]] },
    status: 400,
    error: 'receiving FP16 data via JSON is not supported. Please use the binary data format for input INPUT0 (its bytes after the JSON header, their count in parameters.binary_data_size)',
  },
  {
    title: 'an input in shared memory on a server started without --allow-client-shm',
    body: { inputs: [{ name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { shared_memory_region: 'r', shared_memory_byte_size: 64 } }, good[1]] },
    status: 503,
    error: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.",
  },
  {
    title: 'an output to shared memory on a server started without --allow-client-shm',
    body: { inputs: good, outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false, shared_memory_region: 'r', shared_memory_byte_size: 64 } }] },
    status: 503,
    error: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.",
  },
  {
    title: "a request parameter in Triton's reserved namespace",
    body: { inputs: good, parameters: { triton_enable_everything: true } },
    status: 400,
    error: "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: triton_enable_empty_final_response (request parameter 'triton_enable_everything')",
  },
  {
    title: 'classification of a BYTES output',
    path: '/v2/models/identity_bytes/infer',
    body: { inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'BYTES', data: ['a'] }], outputs: [{ name: 'OUTPUT0', parameters: { classification: 2 } }] },
    status: 400,
    error: "class result not available for output 'OUTPUT0' due to unsupported type 'BYTES'; classification needs a numeric output",
  },
  {
    title: 'a classification count that is not an unsigned integer',
    body: { inputs: good, outputs: [{ name: 'OUTPUT0', parameters: { classification: -1 } }] },
    status: 400,
    error: "Unable to set 'classification': attempt to access JSON non-unsigned-integer as unsigned-integer",
  },
  {
    title: 'a binary_data output parameter that is not a boolean',
    body: { inputs: good, outputs: [{ name: 'OUTPUT0', parameters: { binary_data: 1 } }] },
    status: 400,
    error: "Unable to parse 'binary_data': attempt to access JSON non-boolean as boolean",
  },
  {
    title: 'a version in the path that is not a number',
    path: '/v2/models/simple/versions/latest/infer',
    body: { inputs: good },
    status: 400,
    error: "model version in the path must be a number, got 'latest'",
  },
];

describe('bad input gets Triton status codes and clear messages', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], httpMaxInputBytes: 4096 });
  });
  after(() => server.close());

  for (const bad of CASES) {
    test(bad.title, async () => {
      const response = await server.post(bad.path ?? '/v2/models/simple/infer', bad.body, bad.headers ? { headers: bad.headers } : {});
      assert.equal(response.status, bad.status);
      assert.deepEqual(await response.json(), { error: bad.error });
    });
  }

  test('a classification count of 0 asks for no classification, as in Triton', async () => {
    const response = await server.post('/v2/models/simple/infer', { inputs: good, outputs: [{ name: 'OUTPUT0', parameters: { classification: 0 } }] });
    assert.equal(response.status, 200);
    const { outputs } = (await response.json()) as { outputs: Array<{ name: string; datatype: string; shape: number[]; data: number[] }> };
    assert.deepEqual(outputs, [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: ones(16).map(() => 2) }]);
  });

  test('binary sizes that do not add up', async () => {
    const header = {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
      ],
    };
    const short = binaryBody(header, [bytesOf(new Int32Array(16)), bytesOf(new Int32Array(15))]);
    let response = await server.post('/v2/models/simple/infer', short.body, { headers: short.headers });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: "unexpected size for input 'INPUT1', expecting 4 additional bytes for model 'simple' (binary_data_size 64, 60 bytes of binary data remain)",
    });
    const long = binaryBody(header, [bytesOf(new Int32Array(16)), bytesOf(new Int32Array(17))]);
    response = await server.post('/v2/models/simple/infer', long.body, { headers: long.headers });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: "unexpected additional input data for model 'simple' (the request body has 132 bytes of binary data but the inputs' binary_data_size add up to 128)",
    });
    const wrongSize = binaryBody(
      { inputs: [{ ...header.inputs[0], parameters: { binary_data_size: 60 } }, header.inputs[1]] },
      [bytesOf(new Int32Array(15)), bytesOf(new Int32Array(16))],
    );
    response = await server.post('/v2/models/simple/infer', wrongSize.body, { headers: wrongSize.headers });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60 (shape [1,16] of INT32; binary_data_size is 60)",
    });
  });

  test('BYTES elements ONNX Runtime cannot hold: a NUL byte, invalid UTF-8', async () => {
    const element = (bytes: number[]): Buffer => Buffer.concat([Buffer.from(new Uint32Array([bytes.length]).buffer), Buffer.from(bytes)]);
    for (const [bytes, error] of [
      [[0x61, 0x00, 0x62], "input 'INPUT0': BYTES element 1 holds a NUL byte, which ONNX Runtime string tensors cannot carry"],
      [[0xff, 0xfe], "input 'INPUT0': BYTES element 1 is not valid UTF-8, which ONNX Runtime string tensors require"],
    ] as const) {
      const data = Buffer.concat([element([0x6f, 0x6b]), element([...bytes])]);
      const { body, headers } = binaryBody(
        { inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'BYTES', parameters: { binary_data_size: data.byteLength } }] },
        [data],
      );
      const response = await server.post('/v2/models/identity_bytes/infer', body, { headers });
      assert.equal(response.status, 400);
      assert.deepEqual(await response.json(), { error });
    }
  });

  test("an Inference-Header-Content-Length that does not parse or does not fit the body, in Triton's words", async () => {
    for (const [value, error] of [
      ['abc', 'Unable to parse Inference-Header-Content-Length, got: abc'],
      ['100', 'inference header size should be in range (0, 2), got: 100'],
      ['-1', 'inference header size should be in range (0, 2), got: -1'],
    ]) {
      const response = await server.post('/v2/models/simple/infer', '{}', { headers: { 'inference-header-content-length': value! } });
      assert.equal(response.status, 400);
      assert.deepEqual(await response.json(), { error });
    }
  });

  test('a body over the maximum size: JSON, and binary data or raw bytes', async () => {
    const response = await server.post('/v2/models/simple/infer', Buffer.alloc(5000, 32));
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: 'Request JSON size of 5000 bytes exceeds the maximum allowed value of 4096 bytes. Use --http-max-input-size to increase the limit.',
    });
    const raw = await server.post('/v2/models/simple/infer', Buffer.alloc(5000), { headers: { 'inference-header-content-length': '0' } });
    assert.equal(raw.status, 400);
    assert.deepEqual(await raw.json(), {
      error: 'Request size of 5000 bytes exceeds the maximum allowed value of 4096 bytes. Use --http-max-input-size to increase the limit.',
    });
  });

  test('unknown paths are 404 and wrong methods 405', async () => {
    let response = await server.get('/v2/nothing');
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { error: "no endpoint at '/v2/nothing'; see the KServe v2 paths under /v2" });
    response = await server.get('/v2/models/simple/infer');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  });

  test('model endpoints for an unknown model', async () => {
    const ready = await server.get('/v2/models/nope/ready');
    assert.equal(ready.status, 400);
    assert.deepEqual(await ready.json(), { error: 'Model version not ready' });
    const metadata = await server.get('/v2/models/nope');
    assert.equal(metadata.status, 400);
    assert.deepEqual(await metadata.json(), { error: "Request for unknown model: 'nope' is not found" });
  });

  test('the server still serves correct answers after all of that', async () => {
    const requests = Array.from({ length: 8 }, (_, i) =>
      server.post('/v2/models/simple/infer', {
        inputs: [input('INPUT0', [1, 16], ones(16).map((v) => v * i)), input('INPUT1', [1, 16], ones(16))],
        outputs: [{ name: 'OUTPUT0' }],
      }),
    );
    const bodies = await Promise.all(requests.map(async (r) => ((await (await r).json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data));
    bodies.forEach((data, i) => assert.deepEqual(data, ones(16).map(() => i + 1)));
  });
});
