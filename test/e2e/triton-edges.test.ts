import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials, status } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, type TestServer, binaryBody, readInferResponse, startTestServer } from '../helpers/server.js';

// Each answer below is Triton's status and text (core src/infer_request.cc, src/server.cc,
// src/model_repository_manager/model_repository_manager.cc; server src/http_server.cc), over HTTP and gRPC.
const EDGES = fileURLToPath(new URL('../fixtures/edges_repository', import.meta.url));
const { inference: InferenceClient } = loadGrpcServices();

type Callback = (error: { code: number; details: string } | null, response: Record<string, unknown>) => void;
function call(client: Client, method: string, request: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (request: object, callback: Callback) => void>)[method]!(request, (error, response) =>
      error !== null ? reject(error) : resolve(response),
    );
  });
}

const errorOf = async (response: Response): Promise<{ status: number; error: string }> => ({
  status: response.status,
  error: ((await response.json()) as { error: string }).error,
});
const ones = Array.from({ length: 16 }, () => 1);
const simpleInputs = [
  { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: ones },
  { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: ones },
];
const int32Raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
const bytesLayout = (elements: string[]): Buffer =>
  Buffer.concat(elements.flatMap((element) => [Buffer.from(new Uint32Array([Buffer.byteLength(element)]).buffer), Buffer.from(element)]));
const RAW = { 'inference-header-content-length': '0' };

describe("Triton's answers at the edges (EXPLICIT mode)", () => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES, EDGES], modelControlMode: 'explicit' });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test('with no model loaded yet, the server is ready: strict readiness counts only the models loaded or loading', async () => {
    assert.equal((await server.get('/v2/health/ready')).status, 200);
    assert.deepEqual(await call(client, 'ServerReady', {}), { ready: true });
  });

  test('a load of a model no repository holds, and an unload of one, as Triton answers them', async () => {
    const polled = "failed to load 'nope', failed to poll from model repository";
    const http = await errorOf(await server.post('/v2/repository/models/nope/load', ''));
    assert.equal(http.status, 400);
    assert.ok(http.error.startsWith(polled), http.error);
    await assert.rejects(call(client, 'RepositoryModelLoad', { model_name: 'nope' }), (error: { code: number; details: string }) => {
      assert.equal(error.code, status.INVALID_ARGUMENT);
      assert.ok(error.details.startsWith(polled), error.details);
      return true;
    });
    // Triton finds no version to unload and answers success.
    assert.equal((await server.post('/v2/repository/models/nope/unload', '')).status, 200);
    assert.deepEqual(await call(client, 'RepositoryModelUnload', { model_name: 'nope' }), {});
  });

  test("names Triton refuses to load fail with its text (core ValidateModelName)", async () => {
    for (const [name, details] of [
      ['', 'model name must not be empty'],
      [' \t', 'model name must not contain only whitespace characters'],
      ['..', "invalid model name '..', model name must not contain path traversal characters"],
      ['simple/../simple', "invalid model name 'simple/../simple', model name must not contain path traversal characters"],
      ['a/b', "invalid model name 'a/b', model name must not contain path traversal characters"],
    ] as const) {
      await assert.rejects(call(client, 'RepositoryModelLoad', { model_name: name }), { code: status.INVALID_ARGUMENT, details });
    }
    assert.deepEqual(await errorOf(await server.post(`/v2/repository/models/${encodeURIComponent(' \t')}/load`, '')), {
      status: 400,
      error: 'model name must not contain only whitespace characters',
    });
  });

  test('a model that fails to load answers "load failed for model" with the version and its state', async () => {
    const answer = await errorOf(await server.post('/v2/repository/models/failing_init/load', ''));
    assert.equal(answer.status, 400);
    assert.match(answer.error, /^load failed for model 'failing_init': version 1 is at UNAVAILABLE state: .*this model never starts.*;\n$/);
    await assert.rejects(call(client, 'RepositoryModelLoad', { model_name: 'failing_init' }), (error: { code: number; details: string }) => {
      assert.equal(error.code, status.INVALID_ARGUMENT);
      assert.match(error.details, /^load failed for model 'failing_init': version 1 is at UNAVAILABLE state: /);
      return true;
    });
    assert.equal((await server.get('/v2/health/ready')).status, 400, 'a model that failed to load counts for strict readiness');
    assert.equal((await server.post('/v2/repository/models/failing_init/unload', '')).status, 200);
    assert.equal((await server.get('/v2/health/ready')).status, 200, 'once unloaded, it no longer counts');
  });

  describe('once the models are loaded', () => {
    before(async () => {
      for (const name of ['simple', 'identity_bytes', 'text_length', 'matrix_total', 'string_pair']) {
        assert.equal((await server.post(`/v2/repository/models/${name}/load`, '')).status, 200, name);
      }
    });

    test('the same output requested twice is computed and returned once, as Triton keeps requested outputs in a set', async () => {
      const response = await server.post('/v2/models/simple/infer', {
        inputs: simpleInputs,
        outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0', parameters: { binary_data: true } }],
      });
      assert.equal(response.status, 200);
      const { json } = await readInferResponse(response);
      assert.deepEqual(
        json.outputs.map((output) => [output.name, output.data]),
        [['OUTPUT0', Array(16).fill(2)]],
        'the first request of the output decides how it comes back (JSON here)',
      );
      const grpc = await call(client, 'ModelInfer', {
        model_name: 'simple',
        inputs: simpleInputs.map(({ name, shape, datatype }) => ({ name, shape, datatype })),
        raw_input_contents: [int32Raw(ones), int32Raw(ones)],
        outputs: [{ name: 'OUTPUT1' }, { name: 'OUTPUT1' }],
      });
      assert.deepEqual((grpc.outputs as Array<{ name: string }>).map((output) => output.name), ['OUTPUT1']);
      assert.deepEqual([...new Int32Array(new Uint8Array((grpc.raw_output_contents as Uint8Array[])[0]!).buffer)], Array(16).fill(0));
    });

    test("an input given twice is Triton's 'already exists in request'", async () => {
      assert.deepEqual(await errorOf(await server.post('/v2/models/simple/infer', { inputs: [...simpleInputs, simpleInputs[0]] })), {
        status: 400,
        error: "input 'INPUT0' already exists in request",
      });
    });

    test("a negative dimension is Triton's 'Unable to parse 'shape''", async () => {
      const inputs = [{ ...simpleInputs[0], shape: [1, -16] }, simpleInputs[1]];
      assert.deepEqual(await errorOf(await server.post('/v2/models/simple/infer', { inputs })), {
        status: 400,
        error: "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer (input 'INPUT0': 'shape' must be an array of non-negative integers, got [1,-16])",
      });
    });

    test("shapes whose element count or byte size overflow int64 get Triton's texts (qa/L0_http test_buffer_size_overflow)", async () => {
      const request = (first: number): Promise<Response> =>
        server.post('/v2/models/simple/infer', `{"inputs":[{"name":"INPUT0","shape":[${first},1152921504606846978],"datatype":"INT32","data":[1]}]}`);
      assert.deepEqual(await errorOf(await request(16)), {
        status: 400,
        error: "input 'INPUT0' with shape [16,1152921504606846978] causes total element count to exceed maximum size of 9223372036854775807",
      });
      assert.deepEqual(await errorOf(await request(4)), {
        status: 400,
        error: "byte size overflow for input 'INPUT0': 4611686018427387912 INT32 elements take more than 9223372036854775807 bytes",
      });
    });

    test("tensor data nested past 100 levels is Triton's 'JSON nesting depth exceeds maximum allowed limit (100)' (qa/L0_http)", async () => {
      const nested = (depth: number): unknown => Array.from({ length: depth }).reduce<unknown>((value) => [value], 'hello');
      const request = (depth: number): Promise<Response> =>
        server.post('/v2/models/identity_bytes/infer', { inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: nested(depth) }] });
      assert.deepEqual(await errorOf(await request(120)), { status: 400, error: 'JSON nesting depth exceeds maximum allowed limit (100)' });
      const shallow = await request(50);
      assert.equal(shallow.status, 200);
      assert.deepEqual((await readInferResponse(shallow)).json.outputs[0]!.data, ['hello']);
    });

    test('raw binary requests: the shape deduced as Triton does, or its text when it cannot be', async () => {
      assert.deepEqual(await errorOf(await server.post('/v2/models/simple/infer', new Uint8Array(128), { headers: RAW })), {
        status: 400,
        error: "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'simple' model configuration",
      });
      assert.deepEqual(await errorOf(await server.post('/v2/models/matrix_total/infer', new Uint8Array(16), { headers: RAW })), {
        status: 400,
        error: "The shape of the raw input 'MATRIX' can not be deduced because there are more than one variable-sized dimension",
      });
      assert.deepEqual(await errorOf(await server.post('/v2/models/identity_bytes/infer', Buffer.from('hello'), { headers: RAW })), {
        status: 400,
        error: "For BYTE datatype raw input 'INPUT0', the model must have input shape [1]",
      });
      // A BYTES input of shape [1] takes the whole body as its one element; the outputs come back binary.
      const response = await server.post('/v2/models/text_length/infer', Buffer.from('héllo wörld'), { headers: RAW });
      assert.equal(response.status, 200);
      const { json, binary } = await readInferResponse(response);
      assert.deepEqual(json.outputs, [{ name: 'LENGTH', datatype: 'INT32', shape: [1, 1], parameters: { binary_data_size: 4 } }]);
      assert.equal(binary.readInt32LE(0), 13);
    });

    test("a BYTES input whose element count does not match its shape: Triton's texts over HTTP (JSON and binary) and gRPC", async () => {
      const fewer = "expected 3 string elements for inference input 'INPUT0' for model 'identity_bytes', got 2";
      const more = "unexpected number of string elements 4 for inference input 'INPUT0' for model 'identity_bytes', expecting 3";
      assert.deepEqual(
        await errorOf(await server.post('/v2/models/identity_bytes/infer', { inputs: [{ name: 'INPUT0', shape: [1, 3], datatype: 'BYTES', data: ['a', 'b'] }] })),
        { status: 400, error: fewer },
      );
      const five = bytesLayout(['a', 'b', 'c', 'd', 'e']);
      const { body, headers } = binaryBody({ inputs: [{ name: 'INPUT0', shape: [1, 3], datatype: 'BYTES', parameters: { binary_data_size: five.byteLength } }] }, [five]);
      assert.deepEqual(await errorOf(await server.post('/v2/models/identity_bytes/infer', body, { headers })), { status: 400, error: more });
      const input = { name: 'INPUT0', shape: [1, 3], datatype: 'BYTES' };
      await assert.rejects(call(client, 'ModelInfer', { model_name: 'identity_bytes', inputs: [{ ...input, contents: { bytes_contents: [Buffer.from('a')] } }] }), {
        code: status.INVALID_ARGUMENT,
        details: "expected 3 string elements for inference input 'INPUT0' for model 'identity_bytes', got 1",
      });
      await assert.rejects(call(client, 'ModelInfer', { model_name: 'identity_bytes', inputs: [input], raw_input_contents: [five] }), {
        code: status.INVALID_ARGUMENT,
        details: more,
      });
    });

    test("BYTES data that ends inside an element: Triton's texts over HTTP binary data and gRPC raw contents", async () => {
      const lengthOf = (length: number): Buffer => Buffer.from(new Uint32Array([length]).buffer);
      const cases: Array<[Buffer, string]> = [
        // Two bytes where the third element's length should be.
        [
          Buffer.concat([bytesLayout(['a', 'b']), Buffer.from([1, 0])]),
          "incomplete string length indicator for inference input 'INPUT0' for model 'identity_bytes', expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer.",
        ],
        // Bytes left after the three elements the shape asks for.
        [Buffer.concat([bytesLayout(['a', 'b', 'c']), Buffer.from([1])]), "unexpected number of string elements 4 for inference input 'INPUT0' for model 'identity_bytes', expecting 3"],
        // A second element that gives itself 10 bytes and has 3: Triton's core counts it.
        [Buffer.concat([bytesLayout(['a']), lengthOf(10), Buffer.from('xyz')]), "expected 3 string elements for inference input 'INPUT0' for model 'identity_bytes', got 2"],
        // The same as the third element: the core lets it through, and Triton's backends refuse it.
        [
          Buffer.concat([bytesLayout(['a', 'b']), lengthOf(10), Buffer.from('xyz')]),
          "incomplete string data for inference input 'INPUT0', expecting string of length 10 but only 3 bytes available",
        ],
      ];
      const input = { name: 'INPUT0', shape: [1, 3], datatype: 'BYTES' };
      for (const [data, message] of cases) {
        const { body, headers } = binaryBody({ inputs: [{ ...input, parameters: { binary_data_size: data.byteLength } }] }, [data]);
        assert.deepEqual(await errorOf(await server.post('/v2/models/identity_bytes/infer', body, { headers })), { status: 400, error: message });
        await assert.rejects(call(client, 'ModelInfer', { model_name: 'identity_bytes', inputs: [input], raw_input_contents: [data] }), {
          code: status.INVALID_ARGUMENT,
          details: message,
        });
      }
    });

    test("of two wrong inputs, Triton names the one its core's map of inputs yields first: the second sent (qa/L0_input_validation)", async () => {
      // test_input_string_shape_validation: both inputs' element counts wrong.
      const strings = (count: number): string[] => Array.from({ length: count }, (_, i) => String(i));
      const pair = (count: number) => ['INPUT0', 'INPUT1'].map((name) => ({ name, shape: [1, 16], datatype: 'BYTES', data: strings(count) }));
      const fewer = "expected 16 string elements for inference input 'INPUT1' for model 'string_pair', got 14";
      const more = "unexpected number of string elements 17 for inference input 'INPUT1' for model 'string_pair', expecting 16";
      assert.deepEqual(await errorOf(await server.post('/v2/models/string_pair/infer', { inputs: pair(14) })), { status: 400, error: fewer });
      assert.deepEqual(await errorOf(await server.post('/v2/models/string_pair/infer', { inputs: pair(18) })), { status: 400, error: more });
      for (const [count, details] of [
        [14, fewer],
        [18, more],
      ] as const) {
        const inputs = pair(count).map(({ name, shape, datatype }) => ({ name, shape, datatype }));
        const raw = [bytesLayout(strings(count)), bytesLayout(strings(count))];
        await assert.rejects(call(client, 'ModelInfer', { model_name: 'string_pair', inputs, raw_input_contents: raw }), { code: status.INVALID_ARGUMENT, details });
      }
      // The batch size is the first input's in that order: INPUT1's here, so INPUT0 is the one that differs.
      const batches = { model_name: 'simple', inputs: [{ name: 'INPUT0', shape: [2, 16], datatype: 'INT32' }, { name: 'INPUT1', shape: [1, 16], datatype: 'INT32' }] };
      await assert.rejects(call(client, 'ModelInfer', { ...batches, raw_input_contents: [int32Raw([...ones, ...ones]), int32Raw(ones)] }), {
        code: status.INVALID_ARGUMENT,
        details: "input 'INPUT0' batch size does not match other inputs for 'simple'",
      });
      const shapes = [
        { name: 'INPUT0', shape: [1, 15], datatype: 'INT32', data: ones.slice(1) },
        { name: 'INPUT1', shape: [1, 14], datatype: 'INT32', data: ones.slice(2) },
      ];
      assert.deepEqual(await errorOf(await server.post('/v2/models/simple/infer', { inputs: shapes })), {
        status: 400,
        error:
          "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,14]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
      });
      await assert.rejects(
        call(client, 'ModelInfer', {
          model_name: 'simple',
          inputs: [{ name: 'INPUT0', shape: [], datatype: 'INT32' }, simpleInputs[1]!].map(({ name, shape, datatype }) => ({ name, shape, datatype })),
          raw_input_contents: [int32Raw([1]), int32Raw(ones)],
        }),
        { code: status.INVALID_ARGUMENT, details: "input 'INPUT0' has no shape but model requires batch dimension for 'simple'" },
      );
    });
  });
});
