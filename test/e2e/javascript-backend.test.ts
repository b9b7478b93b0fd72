import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { FIXED_TYPES, STRINGS, VALUES, serializeStrings } from '../helpers/edge-values.js';
import { EXAMPLES, type TestServer, binaryBody, binaryOutputs, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));

const textInput = (name: string, text: string) => ({ inputs: [{ name, datatype: 'BYTES', shape: [1], data: [text] }] });

/** What js_bls_caller answers for the targets every model-calling setup has (worker or inline); returns the caller for more. */
async function assertModelCallAnswers(server: TestServer): Promise<(target: string) => Promise<string>> {
  const result = async (target: string): Promise<string> => {
    const response = await server.post('/v2/models/js_bls_caller/infer', textInput('TARGET', target));
    return ((await response.json()) as { outputs: Array<{ data: string[] }> }).outputs[0]!.data[0]!;
  };
  assert.equal(await result('js_add'), 'js_add:11,22,33,44');
  assert.equal(await result('simple'), 'simple:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16');
  assert.equal(await result('parallel'), 'parallel:8');
  assert.equal(await result('stream'), 'stream:a|b|c');
  assert.equal(await result('no_such_model'), "error:INVALID_ARG:Request for unknown model: 'no_such_model' is not found");
  return result;
}

/** Reads a server-sent event stream into its `data:` payloads. */
async function readEvents(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => JSON.parse(event.slice('data: '.length)) as unknown);
}

describe('JavaScript models (backend "javascript")', () => {
  let server: TestServer;
  /** A crashed instance restarts at once; requests meanwhile are refused, so wait for it (the test runner's timeout bounds this). */
  const waitUntilReady = async (model: string): Promise<void> => {
    while ((await server.get(`/v2/models/${model}/ready`)).status !== 200) await sleep(20);
  };
  const faulty = async (mode: string): Promise<{ status: number; body: { error?: string; outputs?: Array<{ data: number[] }> } }> => {
    const response = await server.post('/v2/models/js_faulty/infer', textInput('MODE', mode));
    return { status: response.status, body: (await response.json()) as { error?: string; outputs?: Array<{ data: number[] }> } };
  };
  before(async () => {
    server = await startTestServer({ modelRepositories: [JS_REPOSITORY, EXAMPLES] });
  });
  after(() => server.close());

  test('a model computes its outputs from typed-array inputs, several requests batched into one execute()', async () => {
    const body = {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] },
        { name: 'INPUT1', datatype: 'FP32', shape: [2, 4], data: [10, 20, 30, 40, 50, 60, 70, 80] },
      ],
    };
    const responses = await Promise.all(Array.from({ length: 6 }, () => server.post('/v2/models/js_add/infer', body)));
    for (const response of responses) {
      assert.equal(response.status, 200);
      const json = (await response.json()) as { outputs: Array<{ name: string; shape: number[]; data: number[] }> };
      assert.deepEqual(json.outputs, [
        { name: 'OUTPUT0', datatype: 'FP32', shape: [2, 4], data: [11, 22, 33, 44, 55, 66, 77, 88] },
        { name: 'OUTPUT1', datatype: 'FP32', shape: [2, 4], data: [-9, -18, -27, -36, -45, -54, -63, -72] },
      ]);
    }
    const stats = (await (await server.get('/v2/models/js_add/stats')).json()) as { model_stats: Array<{ inference_count: number }> };
    assert.equal(stats.model_stats[0]!.inference_count, 12);
  });

  test('every data type crosses into the model and back byte for byte, BYTES included', async () => {
    const strings = serializeStrings([...STRINGS, '\u0000binary\u00ff']);
    const tensors = [...FIXED_TYPES.map((type) => bytesOf(VALUES[type].array)), strings];
    const { body, headers } = binaryBody(
      {
        inputs: [
          ...FIXED_TYPES.map((type, i) => ({ name: `INPUT_${type}`, datatype: type, shape: [1, 3], parameters: { binary_data_size: tensors[i]!.byteLength } })),
          { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 4], parameters: { binary_data_size: strings.byteLength } },
        ],
        parameters: { binary_data_output: true },
      },
      tensors,
    );
    const response = await server.post('/v2/models/js_types/infer', body, { headers });
    assert.equal(response.status, 200, await response.clone().text());
    const { json, binary } = await readInferResponse(response);
    const byName = binaryOutputs(json, binary);
    FIXED_TYPES.forEach((type, i) => assert.deepEqual(byName.get(`OUTPUT_${type}`), tensors[i], type));
    assert.deepEqual(byName.get('OUTPUT_BYTES'), strings);
  });

  test('a static autoCompleteConfig() hook fills in the configuration', async () => {
    const config = (await (await server.get('/v2/models/js_autocomplete/config')).json()) as Record<string, unknown>;
    assert.equal(config.max_batch_size, 4);
    assert.deepEqual((config.input as Array<{ name: string; data_type: string; dims: number[] }>).map((i) => [i.name, i.data_type, i.dims]), [['X', 'TYPE_INT32', [2]]]);
    const response = await server.post('/v2/models/js_autocomplete/infer', { inputs: [{ name: 'X', datatype: 'INT32', shape: [1, 2], data: [3, -4] }] });
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [6, -8]);
  });

  test("errors the model returns or throws fail that request, with the model's status when it names one", async () => {
    assert.deepEqual(await faulty('error'), { status: 400, body: { error: 'MODE asked for an error' } });
    assert.deepEqual(await faulty('throw'), { status: 500, body: { error: 'execute threw' } });
    assert.deepEqual(await faulty('bad_type'), { status: 500, body: { error: "model 'js_faulty' output 'OUT' is INT32, but the configuration declares FP32" } });
    assert.deepEqual(await faulty('bad_shape'), { status: 500, body: { error: "model 'js_faulty' output 'OUT' has shape [2], but the configuration expects [1]" } });
    assert.equal((await faulty('ok')).status, 200);
  });

  test('a hanging execute() fails after execute_timeout_ms, the instance restarts and serves again', async () => {
    const hung = await faulty('hang');
    assert.equal(hung.status, 503);
    assert.equal(
      hung.body.error,
      "instance 'js_faulty_0' of model 'js_faulty' did not finish executing within 1500 ms (config parameter execute_timeout_ms); the instance is restarted",
    );
    await waitUntilReady('js_faulty');
    assert.deepEqual((await faulty('ok')).body.outputs?.[0]?.data, [1]);
  });

  test('a worker that exits or throws outside execute() fails its request; a new worker serves the next ones', async () => {
    const crashed = await faulty('crash');
    assert.equal(crashed.status, 500);
    assert.equal(crashed.body.error, "instance 'js_faulty_0' of model 'js_faulty': the worker thread exited with code 7 while running the request");
    await waitUntilReady('js_faulty');
    const uncaught = await faulty('uncaught');
    assert.equal(uncaught.status, 500);
    assert.equal(
      uncaught.body.error,
      "instance 'js_faulty_0' of model 'js_faulty': the worker thread exited with code 1 (uncaught error: thrown outside execute) while running the request",
    );
    await waitUntilReady('js_faulty');
    assert.deepEqual((await faulty('ok')).body.outputs?.[0]?.data, [1]);
    assert.equal((await server.get('/v2/models/js_faulty/ready')).status, 200);
    // Other models were never affected.
    assert.equal((await server.post('/v2/models/js_add/infer', { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 1, 1, 1] }, { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [1, 1, 1, 1] }] })).status, 200);
  });

  test('model-to-model calls: ONNX and JavaScript targets, many at once, a decoupled target streamed, errors as values', async () => {
    const result = await assertModelCallAnswers(server);
    assert.equal(
      await result('js_words'),
      // The inputs given, in the order Triton's core keeps them (src/kernel/triton-input-order.ts).
      "error:INVALID_ARG:expected 1 inputs but got 2 inputs for model 'js_words'. Got input(s) ['INPUT1','INPUT0'], but missing required input(s) ['TEXT']. Please provide all required input(s).",
    );
  });

  test('a decoupled model streams its responses over generate_stream, one event each, then ends', async () => {
    const response = await server.post('/v2/models/js_words/generate_stream', { TEXT: 'one two three' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.deepEqual(await readEvents(response), ['one', 'two', 'three'].map((word) => ({ model_name: 'js_words', model_version: '1', WORD: word })));
  });

  test("generate_stream: a model's error is an error event, whose status is the reply's when it comes first, and the stream goes on after an error response not marked final; a refused request is a JSON error", async () => {
    const midway = await server.post('/v2/models/js_words/generate_stream', { TEXT: 'one fail two' });
    assert.equal(midway.status, 200);
    assert.deepEqual(await readEvents(midway), [{ model_name: 'js_words', model_version: '1', WORD: 'one' }, { error: 'the text said fail' }]);
    const skipped = await server.post('/v2/models/js_words/generate_stream', { TEXT: 'one skip two' });
    assert.equal(skipped.status, 200);
    assert.deepEqual(await readEvents(skipped), [
      { model_name: 'js_words', model_version: '1', WORD: 'one' },
      { error: 'the text said skip' },
      { model_name: 'js_words', model_version: '1', WORD: 'two' },
    ]);
    const early = await server.post('/v2/models/js_words/generate_stream', { TEXT: 'fail' });
    assert.equal(early.status, 500);
    assert.equal(early.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(await early.text(), 'data: {"error":"the text said fail"}\n\n');
    const unknown = await server.post('/v2/models/js_words/generate_stream', { TEXTS: 'one' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers.get('content-type'), 'application/json');
  });

  test('generate answers with exactly one response; infer refuses a decoupled model', async () => {
    const one = await server.post('/v2/models/js_words/generate', { TEXT: 'single' });
    assert.deepEqual(await one.json(), { model_name: 'js_words', model_version: '1', WORD: 'single' });
    const two = await server.post('/v2/models/js_words/generate', { TEXT: 'a b' });
    assert.equal(two.status, 400);
    assert.deepEqual(await two.json(), {
      error: 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
    });
    const infer = await server.post('/v2/models/js_words/infer', textInput('TEXT', 'a b'));
    assert.equal(infer.status, 501);
    assert.match(((await infer.json()) as { error: string }).error, /model 'js_words' is decoupled/);
  });

  test('classification applies to a JavaScript model output', async () => {
    const response = await server.post('/v2/models/js_add/infer', {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 9, 3, 4] },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [0, 0, 0, 0] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { classification: 2 } }],
    });
    const json = (await response.json()) as { outputs: Array<{ datatype: string; data: string[] }> };
    assert.deepEqual(json.outputs[0]!.data, ['9.000000:1', '4.000000:3']);
  });
});

describe('decoupled models over gRPC ModelStreamInfer', () => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startTestServer({ modelRepositories: [JS_REPOSITORY, EXAMPLES] });
    client = new (loadGrpcServices().inference)(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  type Reply = { error_message: string; infer_response: { id: string; parameters: Record<string, { bool_param?: boolean }>; raw_output_contents: Buffer[] } };

  async function stream(requests: object[]): Promise<Reply[]> {
    const call = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(m: object): void } }).ModelStreamInfer();
    const replies: Reply[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (reply: Reply) => replies.push(reply));
      call.on('end', resolve);
      call.on('error', reject);
    });
    for (const request of requests) call.write(request);
    call.end();
    await ended;
    return replies;
  }

  const wordsRequest = (id: string, text: string, parameters: object = {}) => {
    const bytes = Buffer.from(text);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.byteLength);
    return { model_name: 'js_words', id, inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1] }], raw_input_contents: [Buffer.concat([length, bytes])], parameters };
  };
  const word = (reply: Reply): string => reply.infer_response.raw_output_contents[0]!.subarray(4).toString();

  test('each response arrives with its request id; the empty final response comes when asked for', async () => {
    const replies = await stream([wordsRequest('a', 'x y z'), wordsRequest('b', 'p q', { triton_enable_empty_final_response: { bool_param: true } })]);
    const a = replies.filter((reply) => reply.infer_response.id === 'a');
    const b = replies.filter((reply) => reply.infer_response.id === 'b');
    assert.deepEqual(a.map(word), ['x', 'y', 'z']);
    assert.ok(a.every((reply) => reply.infer_response.parameters.triton_final_response?.bool_param === false));
    assert.deepEqual(b.slice(0, 2).map(word), ['p', 'q']);
    assert.equal(b.length, 3);
    assert.equal(b[2]!.infer_response.parameters.triton_final_response?.bool_param, true);
    assert.deepEqual(b[2]!.infer_response.raw_output_contents, []);
  });

  test('an error ends that request in the stream with error_message', async () => {
    const replies = await stream([wordsRequest('c', 'one fail')]);
    assert.deepEqual(replies.map((reply) => reply.error_message), ['', 'the text said fail']);
  });
});

describe('JavaScript model lifecycle', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [JS_REPOSITORY], modelControlMode: 'explicit' });
  });
  after(() => server.close());

  test('initialize() gets the args; unloading calls finalize() on every instance', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'nereid-js-')), 'finalized.txt');
    const config = {
      backend: 'javascript',
      max_batch_size: 0,
      input: [{ name: 'X', data_type: 'TYPE_INT32', dims: [1] }],
      output: [{ name: 'ARGS', data_type: 'TYPE_STRING', dims: [1] }],
      instance_group: [{ count: 2, kind: 'KIND_CPU' }],
      parameters: { marker_file: { string_value: marker } },
    };
    const loaded = await server.post('/v2/repository/models/js_lifecycle/load', { parameters: { config: JSON.stringify(config) } });
    assert.equal(loaded.status, 200, await loaded.clone().text());
    const response = await server.post('/v2/models/js_lifecycle/infer', { inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [0] }] });
    const args = JSON.parse(((await response.json()) as { outputs: Array<{ data: string[] }> }).outputs[0]!.data[0]!) as Record<string, unknown>;
    assert.deepEqual({ ...args, modelInstanceName: undefined }, {
      modelName: 'js_lifecycle',
      modelVersion: 1,
      modelRepository: join(JS_REPOSITORY, 'js_lifecycle'),
      modelInstanceName: undefined,
      modelInstanceKind: 'CPU',
      maxBatchSize: 0,
      hasInfer: true,
    });
    assert.match(args.modelInstanceName as string, /^js_lifecycle_0_[01]$/);
    assert.equal((await server.post('/v2/repository/models/js_lifecycle/unload', {})).status, 200);
    assert.deepEqual(readFileSync(marker, 'utf8').split('\n').filter(Boolean).sort(), ['finalized js_lifecycle_0_0', 'finalized js_lifecycle_0_1']);
  });
});

describe('JavaScript model files inside a CommonJS project', () => {
  let server: TestServer;
  before(async () => {
    // A repository under a package.json that makes .js files CommonJS, as most projects' do.
    const project = mkdtempSync(join(tmpdir(), 'nereid-cjs-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-commonjs-project', type: 'commonjs' }));
    cpSync(join(JS_REPOSITORY, 'js_add'), join(project, 'repository', 'js_add'), { recursive: true });
    cpSync(join(JS_REPOSITORY, 'js_add'), join(project, 'repository', 'js_add_cjs'), { recursive: true });
    writeFileSync(
      join(project, 'repository', 'js_add_cjs', '1', 'model.js'),
      `module.exports = class {
  execute(requests) {
    return requests.map((request) => {
      const a = request.input('INPUT0');
      const b = request.input('INPUT1');
      return { outputs: [
        { name: 'OUTPUT0', datatype: 'FP32', shape: a.shape, data: a.data.map((v, i) => v + b.data[i]) },
        { name: 'OUTPUT1', datatype: 'FP32', shape: a.shape, data: a.data.map((v, i) => v - b.data[i]) },
      ] };
    });
  }
};
`,
    );
    // What tsc writes for `export default class` with "module": "commonjs".
    cpSync(join(project, 'repository', 'js_add_cjs'), join(project, 'repository', 'js_add_tsc'), { recursive: true });
    const cjs = readFileSync(join(project, 'repository', 'js_add_cjs', '1', 'model.js'), 'utf8');
    writeFileSync(
      join(project, 'repository', 'js_add_tsc', '1', 'model.js'),
      `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\n${cjs.replace('module.exports = class', 'exports.default = class')}`,
    );
    server = await startTestServer({ modelRepositories: [join(project, 'repository')] });
  });
  after(() => server.close());

  const KINDS: Record<string, string> = { js_add: 'an ES module', js_add_cjs: 'a CommonJS module', js_add_tsc: 'TypeScript compiled to CommonJS' };
  for (const [model, kind] of Object.entries(KINDS)) {
    test(`${kind}: model.js loads and serves`, async () => {
      const response = await server.post(`/v2/models/${model}/infer`, {
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [1, 1, 1, 1] },
        ],
      });
      assert.equal(response.status, 200, await response.clone().text());
      assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs.map((o) => o.data), [[2, 3, 4, 5], [0, 1, 2, 3]]);
    });
  }
});

describe('JavaScript models run inline (config parameter run_inline)', () => {
  let server: TestServer;
  let repository: string;
  const INLINE = '\nparameters { key: "run_inline" value { string_value: "true" } }\n';
  const addBody = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }, { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [1, 1, 1, 1] }] };
  const load = async (model: string): Promise<void> => {
    const response = await server.post(`/v2/repository/models/${model}/load`, {});
    assert.equal(response.status, 200, await response.clone().text());
  };
  before(async () => {
    repository = mkdtempSync(join(tmpdir(), 'nereid-js-inline-'));
    for (const model of ['js_bls_caller', 'js_add', 'js_words', 'js_faulty']) {
      cpSync(join(JS_REPOSITORY, model), join(repository, model), { recursive: true });
      if (model !== 'js_words') writeFileSync(join(repository, model, 'config.pbtxt'), readFileSync(join(repository, model, 'config.pbtxt'), 'utf8') + INLINE);
    }
    cpSync(join(EXAMPLES, 'simple'), join(repository, 'simple'), { recursive: true });
    server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit' });
    for (const model of ['js_add', 'js_words', 'js_faulty', 'simple', 'js_bls_caller']) await load(model);
  });
  after(() => server.close());

  test('an inline model calls inline, worker and ONNX models, many at once and streamed, with the same answers', async () => {
    await assertModelCallAnswers(server);
    const responses = await Promise.all(Array.from({ length: 16 }, () => server.post('/v2/models/js_add/infer', addBody)));
    for (const response of responses) assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs.map((o) => o.data), [[2, 3, 4, 5], [0, 1, 2, 3]]);
  });

  test('errors fail their request; a hanging execute() times out and the instance restarts; the server keeps serving', async () => {
    const faulty = async (mode: string): Promise<{ status: number; body: { error?: string } }> => {
      const response = await server.post('/v2/models/js_faulty/infer', textInput('MODE', mode));
      return { status: response.status, body: (await response.json()) as { error?: string } };
    };
    assert.deepEqual(await faulty('error'), { status: 400, body: { error: 'MODE asked for an error' } });
    assert.deepEqual(await faulty('throw'), { status: 500, body: { error: 'execute threw' } });
    const hung = await faulty('hang');
    assert.equal(hung.status, 503);
    assert.equal(
      hung.body.error,
      "instance 'js_faulty_0' of model 'js_faulty' did not finish executing within 1500 ms (config parameter execute_timeout_ms); the instance is restarted",
    );
    while ((await server.get('/v2/models/js_faulty/ready')).status !== 200) await sleep(20);
    assert.equal((await faulty('ok')).status, 200);
    assert.equal((await server.post('/v2/models/js_add/infer', addBody)).status, 200);
  });

  test('run_inline takes only true or false', async () => {
    writeFileSync(join(repository, 'js_add', 'config.pbtxt'), readFileSync(join(repository, 'js_add', 'config.pbtxt'), 'utf8').replace('"true"', '"yes"'));
    const response = await server.post('/v2/repository/models/js_add/load', {});
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: string }).error, /parameter run_inline is 'yes'; expected 'true' or 'false'/);
  });
});
