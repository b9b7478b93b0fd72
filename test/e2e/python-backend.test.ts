import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import type { Logger } from '../../src/logging/logger.js';
import { HAS_TORCH, PYTHON_FIXTURES, copyRepository, inferJson, outputData } from '../helpers/python-models.js';
import { EXAMPLES, type TestServer, binaryBody, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

const addSubRequest = {
  inputs: [
    { name: 'INPUT0', shape: [2, 16], datatype: 'INT32', data: range(0, 32) },
    { name: 'INPUT1', shape: [2, 16], datatype: 'INT32', data: Array(32).fill(1) },
  ],
};

describe('Python backend: Triton model.py models', () => {
  let server: TestServer;
  let grpc: Client;
  const logged: string[] = [];
  const logger: Logger = {
    info: (component, message) => logged.push(`I ${component}] ${message}`),
    warning: (component, message) => logged.push(`W ${component}] ${message}`),
    error: (component, message) => logged.push(`E ${component}] ${message}`),
    verbose: (level, component, message) => logged.push(`V${level} ${component}] ${message}`),
  };
  const repository = copyRepository([
    { from: PYTHON_FIXTURES, models: ['add_sub', 'interface', 'errors', 'all_types', 'auto_complete', 'auto_complete_conflict', 'reshaped'] },
    { from: EXAMPLES, models: ['digits_resize', 'digits'] },
  ]);
  before(async () => {
    server = await startTestServer({ modelRepositories: [repository.path], modelControlMode: 'explicit', startupModels: ['*'], isStrictReadiness: false, logger });
    const { inference: InferenceClient } = loadGrpcServices();
    grpc = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    grpc.close();
    await server.close();
    repository.remove();
  });

  test("add_sub, in the shape of Triton's example, gives its documented results over HTTP and gRPC", async () => {
    const { status, json } = await inferJson(server, 'add_sub', addSubRequest);
    assert.equal(status, 200);
    assert.deepEqual(json.outputs, [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [2, 16], data: range(1, 32) },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [2, 16], data: range(-1, 32) },
    ]);
    const raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
    const reply = await new Promise<{ raw_output_contents: Buffer[] }>((resolve, reject) =>
      (grpc as unknown as Record<string, (request: object, callback: (error: Error | null, response: { raw_output_contents: Buffer[] }) => void) => void>).ModelInfer!(
        {
          model_name: 'add_sub',
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
          ],
          raw_input_contents: [raw(range(10, 16)), raw(Array(16).fill(3))],
        },
        (error, response) => (error !== null ? reject(error) : resolve(response)),
      ),
    );
    const int32 = (buffer: Buffer): number[] => [...new Int32Array(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength))];
    assert.deepEqual(int32(reply.raw_output_contents[0]!), range(13, 16));
    assert.deepEqual(int32(reply.raw_output_contents[1]!), range(7, 16));
  });

  test("initialize() receives Triton's args, and requests answer with their id, parameters, correlation id and flags", async () => {
    const { status, json } = await inferJson(server, 'interface', {
      id: 'req-7',
      parameters: { custom: 'x', count: 5, flag: true, sequence_id: 42, sequence_start: true },
      inputs: [{ name: 'IN', shape: [2, 3], datatype: 'FP32', data: range(0, 6) }],
      outputs: [{ name: 'REQUEST' }, { name: 'ARGS' }],
    });
    assert.equal(status, 200, JSON.stringify(json));
    const args = JSON.parse(outputData(json, 'ARGS')[0] as string) as Record<string, string>;
    assert.deepEqual(Object.keys(args).sort(), [
      'model_config',
      'model_instance_device_id',
      'model_instance_kind',
      'model_instance_name',
      'model_name',
      'model_repository',
      'model_version',
    ]);
    assert.equal(args.model_name, 'interface');
    assert.equal(args.model_version, '1');
    assert.equal(args.model_instance_kind, 'CPU');
    assert.equal(args.model_instance_name, 'interface_0');
    assert.equal(args.model_instance_device_id, '0');
    assert.equal(args.model_repository, join(repository.path, 'interface'));
    const config = JSON.parse(args.model_config!) as Record<string, unknown>;
    assert.equal(config.name, 'interface');
    assert.equal(config.backend, 'python');
    assert.equal(config.max_batch_size, 4);
    assert.deepEqual(config.parameters, { custom_key: { string_value: 'custom_value' } });
    assert.deepEqual(JSON.parse(outputData(json, 'REQUEST')[1] as string), {
      request_id: 'req-7',
      correlation_id: 42,
      flags: 1,
      parameters: { custom: 'x', count: 5, flag: true },
      requested_output_names: ['REQUEST', 'ARGS'],
      is_cancelled: false,
      inputs: ['IN'],
      batch: 2,
    });
  });

  test('pb_utils.Logger writes to the server log at its level, marked with the file and line', async () => {
    assert.ok(logged.includes("I model.py:13] instance 'interface_0' of model 'interface': initialized interface version 1"), logged.join('\n'));
    assert.ok(logged.includes("I model.py:24] model 'auto_complete': auto_complete_config filled in the configuration"), logged.join('\n'));
    await inferJson(server, 'interface', { id: 'logged-1', inputs: [{ name: 'IN', shape: [1, 1], datatype: 'FP32', data: [0] }] });
    assert.ok(logged.includes("V1 model.py:29] instance 'interface_0' of model 'interface': request logged-1"), logged.join('\n'));
  });

  test('every data type travels through pb_utils.Tensor, BYTES included', async () => {
    const values: Record<string, unknown[]> = {
      BOOL: [true, false, true],
      UINT8: [0, 128, 255],
      UINT16: [0, 1, 65535],
      UINT32: [0, 1, 4294967295],
      UINT64: [0, 1, 18446744073709551615n],
      INT8: [-128, 0, 127],
      INT16: [-32768, 0, 32767],
      INT32: [-2147483648, 0, 2147483647],
      INT64: [-9223372036854775808n, 0, 9223372036854775807n],
      FP32: [1.5, -0.25, 3.4028234663852886e38],
      FP64: [Math.PI, -1e-300, 1e300],
      BYTES: ['', 'hello', 'héllo wörld'],
    };
    // Integers beyond 2^53 must travel exactly, so the body is written by hand.
    const data = (list: unknown[]): string => `[${list.map((value) => (typeof value === 'string' ? JSON.stringify(value) : String(value))).join(',')}]`;
    const inputs = Object.entries(values).map(([type, list]) => `{"name":"IN_${type}","shape":[3],"datatype":"${type}","data":${data(list)}}`);
    const response = await server.post('/v2/models/all_types/infer', `{"inputs":[${inputs.join(',')}]}`);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    for (const [type, list] of Object.entries(values)) {
      assert.ok(text.includes(`{"name":"OUT_${type}","datatype":"${type}","shape":[3],"data":${data(list)}}`), `OUT_${type} in ${text}`);
    }
  });

  test('a 48 MiB tensor goes to the model and back whole: no shared memory is involved', async () => {
    const values = new Float32Array(12 * 1024 * 1024).map((_, i) => i % 1000);
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: 'IN_FP32', shape: [values.length], datatype: 'FP32', parameters: { binary_data_size: values.byteLength } }],
        outputs: [{ name: 'OUT_FP32', parameters: { binary_data: true } }],
      },
      [bytesOf(values)],
    );
    const response = await server.post('/v2/models/all_types/infer', body, { headers });
    assert.equal(response.status, 200);
    const { binary } = await readInferResponse(response);
    assert.ok(binary.equals(bytesOf(values)));
  });

  test('FP16 and arbitrary BYTES travel as binary data, byte for byte', async () => {
    const fp16 = new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001]);
    const elements = [Buffer.from([0, 1, 2]), Buffer.from([0xff, 0xfe]), Buffer.alloc(0)];
    const bytes = Buffer.concat(elements.flatMap((element) => [Buffer.from(new Uint32Array([element.byteLength]).buffer), element]));
    const { body, headers } = binaryBody(
      {
        inputs: [
          { name: 'IN_FP16', shape: [4], datatype: 'FP16', parameters: { binary_data_size: 8 } },
          { name: 'IN_BYTES', shape: [3], datatype: 'BYTES', parameters: { binary_data_size: bytes.byteLength } },
        ],
        outputs: [
          { name: 'OUT_FP16', parameters: { binary_data: true } },
          { name: 'OUT_BYTES', parameters: { binary_data: true } },
        ],
      },
      [bytesOf(fp16), bytes],
    );
    const response = await server.post('/v2/models/all_types/infer', body, { headers });
    assert.equal(response.status, 200);
    const { binary } = await readInferResponse(response);
    assert.deepEqual(binary, Buffer.concat([bytesOf(fp16), bytes]));
  });

  test('BF16 reaches torch through DLPack and comes back unchanged', { skip: !HAS_TORCH && 'torch is not installed for /usr/bin/python3' }, async () => {
    const bf16 = new Uint16Array([0x3f80, 0xc000, 0x7f7f, 0x0000]);
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: 'IN_BF16', shape: [4], datatype: 'BF16', parameters: { binary_data_size: 8 } }],
        outputs: [{ name: 'OUT_BF16', parameters: { binary_data: true } }],
      },
      [bytesOf(bf16)],
    );
    const response = await server.post('/v2/models/all_types/infer', body, { headers });
    assert.equal(response.status, 200);
    const { json, binary } = await readInferResponse(response);
    assert.deepEqual(json.outputs[0]!.shape, [4]);
    assert.deepEqual(binary, bytesOf(bf16));
  });

  test('the model sees inputs with the config reshape, and the client gets outputs with the config dims', async () => {
    const { status, json } = await inferJson(server, 'reshaped', { inputs: [{ name: 'IN', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(json.outputs, [
      { name: 'OUT', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] },
      { name: 'SHAPE', datatype: 'INT64', shape: [1, 3], data: [1, 2, 2] },
    ]);
  });

  test('a response error fails only its own request, with the status of its TritonError code', async () => {
    const mode = (value: string): unknown => ({ inputs: [{ name: 'MODE', shape: [1], datatype: 'BYTES', data: [value] }] });
    const cases: Array<[string, number]> = [
      ['invalid', 400],
      ['not_found', 404],
      ['unavailable', 503],
    ];
    for (const [value, status] of cases) {
      const result = await inferJson(server, 'errors', mode(value));
      assert.equal(result.status, status);
      assert.deepEqual(result.json, { error: `mode ${value} was asked for` });
    }
    const ok = await inferJson(server, 'errors', mode('ok'));
    assert.equal(ok.status, 200);
    assert.deepEqual(outputData(ok.json, 'OUT'), [1]);
  });

  test('a broken execute fails its requests with a message that says what was wrong', async () => {
    const mode = (value: string): unknown => ({ inputs: [{ name: 'MODE', shape: [1], datatype: 'BYTES', data: [value] }] });
    const cases: Array<[string, string]> = [
      ['raise', "Failed to process the request(s) for model instance 'errors_0', message: TritonModelException: the model gave up"],
      // The backend's own checks of what execute returned, in Triton's words (its Stub::ProcessReturnedResponses).
      [
        'count',
        "Failed to process the request(s) for model instance 'errors_0', message: Number of InferenceResponse objects do not match the number of InferenceRequest objects. InferenceRequest(s) size is:1, and InferenceResponse(s) size is:0\n",
      ],
      [
        'not_a_response',
        "Failed to process the request(s) for model instance 'errors_0', message: Expected an 'InferenceResponse' object in the execute function return list, found type '<class 'str'>'.",
      ],
      ['tuple', "Failed to process the request(s) for model instance 'errors_0', message: Expected a list in the execute return, found type '<class 'tuple'>'."],
    ];
    for (const [value, message] of cases) {
      const result = await inferJson(server, 'errors', mode(value));
      assert.equal(result.status, 500, value);
      assert.deepEqual(result.json, { error: message });
    }
    assert.equal((await inferJson(server, 'errors', mode('ok'))).status, 200);
  });

  test("as in Triton, an output reaches the client with the data type and shape the model gave it, with one warning per output", async () => {
    const mode = { inputs: [{ name: 'MODE', shape: [1], datatype: 'BYTES', data: ['dtype'] }] };
    for (let round = 0; round < 2; round++) {
      const { status, json } = await inferJson(server, 'errors', mode);
      assert.equal(status, 200, JSON.stringify(json));
      assert.deepEqual(json.outputs, [{ name: 'OUT', datatype: 'FP64', shape: [1], data: [1.5] }]);
    }
    const { json } = await inferJson(server, 'errors', { inputs: [{ name: 'MODE', shape: [1], datatype: 'BYTES', data: ['shape'] }] });
    assert.deepEqual(json.outputs, [{ name: 'OUT', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] }]);
    const warnings = logged.filter((line) => line.startsWith("W python] model 'errors' output 'OUT'"));
    assert.deepEqual(warnings, [
      "W python] model 'errors' output 'OUT' is FP64, but the configuration declares INT32; convert it (for example with numpy's astype) before making the pb_utils.Tensor; the client receives it as the model returned it, as Triton's Python backend passes it on (logged once per output)",
    ]);
  });

  test('as in Triton, outputs a response leaves out are missing from the answer', async () => {
    const result = await inferJson(server, 'errors', { inputs: [{ name: 'MODE', shape: [1], datatype: 'BYTES', data: ['missing'] }] });
    assert.equal(result.status, 200);
    assert.deepEqual(result.json.outputs, []);
  });

  test('auto_complete_config fills in a model that has no config.pbtxt', async () => {
    const config = (await (await server.get('/v2/models/auto_complete/config')).json()) as Record<string, unknown>;
    assert.equal(config.backend, 'python');
    assert.equal(config.max_batch_size, 4);
    assert.ok(config.dynamic_batching !== undefined);
    assert.deepEqual(
      (config.input as Array<Record<string, unknown>>).map(({ name, data_type, dims, optional }) => ({ name, data_type, dims, optional })),
      [
        { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4], optional: false },
        { name: 'INPUT1', data_type: 'TYPE_FP32', dims: [4], optional: true },
      ],
    );
    const only = await inferJson(server, 'auto_complete', { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
    assert.deepEqual(outputData(only.json, 'OUTPUT0'), [1, 2, 3, 4]);
    const both = await inferJson(server, 'auto_complete', {
      inputs: [
        { name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] },
        { name: 'INPUT1', shape: [1, 4], datatype: 'FP32', data: [10, 10, 10, 10] },
      ],
    });
    assert.deepEqual(outputData(both.json, 'OUTPUT0'), [11, 12, 13, 14]);
  });

  test('an auto_complete_config that contradicts config.pbtxt fails the load, naming both values', async () => {
    const index = (await (await server.post('/v2/repository/index', {})).json()) as Array<{ name: string; state: string; reason: string }>;
    const entry = index.find((candidate) => candidate.name === 'auto_complete_conflict')!;
    assert.equal(entry.state, 'UNAVAILABLE');
    assert.match(
      entry.reason,
      /auto_complete_config failed: ValueError: configuration specified max_batch_size 2, but auto_complete_config for model 'auto_complete_conflict' specified max_batch_size 4/,
    );
  });

  test('digits_resize (examples) turns any image into the classifier input, and digits reads it', async () => {
    const samples = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][]; labels: number[] };
    const pixels = samples.images[3]!.map((value) => Math.round((value * 255) / 16));
    // Each pixel becomes a 2x2 block of a 16x16 image, which the model averages back.
    const image = range(0, 256).map((i) => pixels[Math.floor(i / 32) * 8 + Math.floor((i % 16) / 2)]!);
    const resized = await inferJson(server, 'digits_resize', { inputs: [{ name: 'IMAGE', shape: [16, 16], datatype: 'UINT8', data: image }] });
    assert.equal(resized.status, 200);
    const input = outputData(resized.json, 'INPUT') as number[];
    assert.deepEqual(input, pixels.map((pixel) => Math.fround(pixel * (16 / 255))));
    const classified = await inferJson(server, 'digits', { inputs: [{ name: 'INPUT', shape: [1, 64], datatype: 'FP32', data: input }] });
    const probabilities = outputData(classified.json, 'PROBABILITIES') as number[];
    assert.equal(probabilities.indexOf(Math.max(...probabilities)), samples.labels[3]);
    const small = await inferJson(server, 'digits_resize', { inputs: [{ name: 'IMAGE', shape: [4, 4], datatype: 'UINT8', data: Array(16).fill(0) }] });
    assert.equal(small.status, 400);
    assert.deepEqual(small.json, { error: 'IMAGE must be at least 8x8 pixels, got 4x4' });
  });

  test('finalize() runs when the model unloads', async () => {
    const marker = join(repository.path, 'interface', 'finalized');
    assert.equal(existsSync(marker), false);
    const response = await server.post('/v2/repository/models/interface/unload', '');
    assert.equal(response.status, 200);
    assert.equal(readFileSync(marker, 'utf8'), 'finalize() was called');
  });
});
