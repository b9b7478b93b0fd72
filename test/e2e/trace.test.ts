import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials, status } from '@grpc/grpc-js';
import { DEFAULT_TRACE_SETTINGS } from '../../src/kernel/trace-settings.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

// The trace extension in Triton's mode (docs/protocol/extension_trace.md, docs/user_guide/trace.md).
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

type TraceRecord = {
  id: number;
  model_name?: string;
  model_version?: number;
  request_id?: string;
  parent_id?: number;
  timestamps?: Array<{ name: string; ns: number }>;
  activity?: string;
  tensor?: { name: string; data: string; shape: string; dtype: string };
};

const ones = Array.from({ length: 16 }, () => 1);
const simpleRequest = (id: string) => ({
  id,
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: ones },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: ones },
  ],
});
const int32Raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);

/** The records of each trace, by id, in file order. */
function tracesIn(records: TraceRecord[]): Map<number, TraceRecord[]> {
  const byId = new Map<number, TraceRecord[]>();
  for (const record of records) byId.set(record.id, [...(byId.get(record.id) ?? []), record]);
  return byId;
}
const timestampNames = (records: TraceRecord[]): string[] => records.flatMap((record) => record.timestamps?.map((t) => t.name) ?? []);
const nsOf = (records: TraceRecord[], name: string): number => records.flatMap((record) => record.timestamps ?? []).find((t) => t.name === name)!.ns;

describe('the trace extension, Triton mode', () => {
  let folder: string;
  let server: TestServer;
  let client: Client;
  let file: string;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'nereid-trace-'));
    file = join(folder, 'trace.json');
    server = await startTestServer({
      modelRepositories: [EXAMPLES, EDGES],
      modelControlMode: 'explicit',
      startupModels: ['simple', 'text_length', 'length_pipeline', 'length_caller', 'length_caller_py'],
      traceSettings: { ...DEFAULT_TRACE_SETTINGS, level: { timestamps: true, tensors: false }, rate: 1, file },
    });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test("'trace' is in the server's extensions, and the settings read as Triton writes them, over HTTP and gRPC", async () => {
    assert.ok(((await (await server.get('/v2')).json()) as { extensions: string[] }).extensions.includes('trace'));
    const expected = { trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_count: '-1', log_frequency: '0', trace_file: file };
    assert.deepEqual(await (await server.get('/v2/trace/setting')).json(), expected);
    assert.deepEqual(await call(client, 'TraceSetting', {}), {
      settings: Object.fromEntries(Object.entries(expected).map(([key, value]) => [key, { value: Array.isArray(value) ? value : [value] }])),
    });
  });

  test('bad settings get Triton’s texts; the trace file cannot be moved through the API', async () => {
    const refusals: Array<[object, number, string]> = [
      [{ trace_level: ['OFF', 'TIMESTAMPS'] }, 400, "Expect only one trace level 'OFF' is specified"],
      [{ trace_count: '-2' }, 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-2"],
      [{ trace_rate: 'often' }, 400, "Unable to parse 'trace_rate', got: often"],
      [{ log_frequency: '99999999999' }, 400, "Unable to parse 'log_frequency', value is out of range [ 0, 4294967295 ], got: 99999999999"],
      [{ trace_file: '/tmp/elsewhere.json' }, 501, 'trace file location can not be updated through network protocol'],
    ];
    for (const [body, code, error] of refusals) {
      const response = await server.post('/v2/trace/setting', body);
      assert.deepEqual({ status: response.status, body: await response.json() }, { status: code, body: { error } }, JSON.stringify(body));
    }
    await assert.rejects(call(client, 'TraceSetting', { settings: { trace_count: { value: ['-5'] } } }), {
      code: status.INVALID_ARGUMENT,
      details: "Unable to parse 'trace_count'. Expecting value >= -1, got:-5",
    });
    const unknown = await server.get('/v2/models/nope/trace/setting');
    assert.deepEqual({ status: unknown.status, body: await unknown.json() }, { status: 400, body: { error: 'Request for unknown model : nope' } });
    assert.deepEqual(await (await server.get('/v2/trace/setting')).json(), {
      trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_count: '-1', log_frequency: '0', trace_file: file,
    }, 'nothing refused was applied');
  });

  test("per-model settings override the server's, follow it where they do not, and null falls back", async () => {
    const post = async (path: string, body: object): Promise<unknown> => (await server.post(path, body)).json();
    assert.deepEqual(await post('/v2/models/text_length/trace/setting', { trace_rate: '5' }), {
      trace_level: ['TIMESTAMPS'], trace_rate: '5', trace_count: '-1', log_frequency: '0', trace_file: file,
    });
    assert.equal(((await (await server.get('/v2/trace/setting')).json()) as { trace_rate: string }).trace_rate, '1', "the server's rate is unchanged");
    await post('/v2/trace/setting', { trace_level: ['TIMESTAMPS', 'TENSORS'] });
    assert.deepEqual(((await (await server.get('/v2/models/text_length/trace/setting')).json()) as { trace_level: string[] }).trace_level, ['TIMESTAMPS', 'TENSORS'], "a level it does not override follows the server's");
    const grpc = await call(client, 'TraceSetting', { model_name: 'text_length', settings: { trace_rate: { value: [] } } });
    assert.deepEqual((grpc.settings as Record<string, { value: string[] }>).trace_rate, { value: ['1'] }, "an empty value list over gRPC clears the model's rate");
    assert.deepEqual(await post('/v2/trace/setting', { trace_level: null }), {
      trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_count: '-1', log_frequency: '0', trace_file: file,
    }, "null resets the server's level to its start-up value");
  });

  test('HTTP and gRPC requests leave Triton’s timestamps; an ensemble step and model-to-model calls (JavaScript, Python BLS) are child traces; rate and count are honoured', async () => {
    assert.equal((await server.post('/v2/models/simple/infer', simpleRequest('over-http'))).status, 200);
    await call(client, 'ModelInfer', {
      model_name: 'simple',
      id: 'over-grpc',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
      ],
      raw_input_contents: [int32Raw(ones), int32Raw(ones)],
    });
    const pipeline = await server.post('/v2/models/length_pipeline/infer', { id: 'ensemble', inputs: [{ name: 'TEXT', shape: [1, 1], datatype: 'BYTES', data: ['four'] }] });
    assert.equal(pipeline.status, 200);
    const caller = await server.post('/v2/models/length_caller/infer', { id: 'caller', inputs: [{ name: 'TEXT', shape: [1], datatype: 'BYTES', data: ['seven'] }] });
    assert.equal(caller.status, 200, await caller.clone().text());
    const python = await server.post('/v2/models/length_caller_py/infer', { id: 'python-caller', inputs: [{ name: 'TEXT', shape: [1], datatype: 'BYTES', data: ['eleven'] }] });
    assert.deepEqual(((await python.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [6]);
    // TENSORS for one model only, then a rate of 2 with a count of 2: of five requests, the 2nd and 4th are traced.
    await server.post('/v2/models/simple/trace/setting', { trace_level: ['TIMESTAMPS', 'TENSORS'] });
    await server.post('/v2/models/simple/trace/setting', { trace_rate: '2', trace_count: '2' });
    for (let i = 1; i <= 5; i++) assert.equal((await server.post('/v2/models/simple/infer', simpleRequest(`sampled-${i}`))).status, 200);
    assert.equal(((await (await server.get('/v2/models/simple/trace/setting')).json()) as { trace_count: string }).trace_count, '0', 'the count left');

    await server.close();
    const records = JSON.parse(readFileSync(file, 'utf8')) as TraceRecord[];
    const traces = [...tracesIn(records).values()];
    const byRequest = (id: string): TraceRecord[] => traces.find((trace) => trace[0]!.request_id === id && trace[0]!.parent_id === undefined)!;

    const http = byRequest('over-http');
    assert.deepEqual(http[0], { id: http[0]!.id, model_name: 'simple', model_version: 1, request_id: 'over-http' });
    const core = ['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'INFER_RESPONSE_COMPLETE', 'REQUEST_END'];
    assert.deepEqual(timestampNames(http), ['HTTP_RECV_START', 'HTTP_RECV_END', ...core, 'HTTP_SEND_START', 'HTTP_SEND_END']);
    const order = ['HTTP_RECV_START', 'HTTP_RECV_END', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END', 'HTTP_SEND_START', 'HTTP_SEND_END'];
    for (let i = 1; i < order.length; i++) assert.ok(nsOf(http, order[i - 1]!) <= nsOf(http, order[i]!), `${order[i - 1]} before ${order[i]}`);
    assert.deepEqual(timestampNames(byRequest('over-grpc')), ['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', ...core, 'GRPC_SEND_START', 'GRPC_SEND_END']);

    const ensemble = byRequest('ensemble');
    assert.equal(ensemble[0]!.model_name, 'length_pipeline');
    const step = traces.find((trace) => trace[0]!.parent_id === ensemble[0]!.id)!;
    assert.deepEqual(step[0], { id: step[0]!.id, model_name: 'text_length', model_version: 1, request_id: 'ensemble', parent_id: ensemble[0]!.id });
    assert.deepEqual(timestampNames(step), core);
    const calling = byRequest('caller');
    assert.equal(calling[0]!.model_name, 'length_caller');
    const called = traces.find((trace) => trace[0]!.parent_id === calling[0]!.id)!;
    assert.deepEqual(called[0], { id: called[0]!.id, model_name: 'text_length', model_version: 1, parent_id: calling[0]!.id }, 'a model-to-model call naming its parent request is a child trace');
    assert.deepEqual(timestampNames(called), core);
    const pythonCalling = byRequest('python-caller');
    assert.equal(pythonCalling[0]!.model_name, 'length_caller_py');
    const pythonCalled = traces.filter((trace) => trace[0]!.parent_id === pythonCalling[0]!.id);
    assert.deepEqual(
      pythonCalled.map((trace) => trace[0]),
      [{ id: pythonCalled[0]![0]!.id, model_name: 'text_length', model_version: 1, parent_id: pythonCalling[0]!.id }],
      "a Python model's BLS call made with trace=request.trace() is a child trace",
    );
    assert.deepEqual(timestampNames(pythonCalled[0]!), core);

    assert.deepEqual(
      traces.map((trace) => trace[0]!.request_id).filter((id) => id?.startsWith('sampled-')),
      ['sampled-2', 'sampled-4'],
    );
    const tensors = byRequest('sampled-2').filter((record) => record.activity !== undefined);
    assert.deepEqual(
      tensors.map((record) => [record.activity, record.tensor!.name, record.tensor!.shape, record.tensor!.dtype, record.tensor!.data]),
      [
        ['TENSOR_QUEUE_INPUT', 'INPUT0', '1,16', 'INT32', ones.join(',')],
        ['TENSOR_QUEUE_INPUT', 'INPUT1', '1,16', 'INT32', ones.join(',')],
        ['TENSOR_BACKEND_OUTPUT', 'OUTPUT0', '1,16', 'INT32', Array(16).fill(2).join(',')],
        ['TENSOR_BACKEND_OUTPUT', 'OUTPUT1', '1,16', 'INT32', Array(16).fill(0).join(',')],
      ],
    );
  });
});

describe('--trace-config log-frequency', () => {
  test('every N traces are written to <file>.<n> as they are collected', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'nereid-trace-'));
    const file = join(folder, 'trace.json');
    const server = await startTestServer({
      modelRepositories: [EXAMPLES],
      modelControlMode: 'explicit',
      startupModels: ['simple'],
      traceSettings: { ...DEFAULT_TRACE_SETTINGS, level: { timestamps: true, tensors: false }, rate: 1, logFrequency: 2, file },
    });
    try {
      for (let i = 1; i <= 5; i++) assert.equal((await server.post('/v2/models/simple/infer', simpleRequest(`r${i}`))).status, 200);
    } finally {
      await server.close();
    }
    const idsIn = (name: string): string[] =>
      (JSON.parse(readFileSync(join(folder, name), 'utf8')) as TraceRecord[]).flatMap((record) => (record.request_id !== undefined ? [record.request_id] : []));
    assert.deepEqual([idsIn('trace.json.0'), idsIn('trace.json.1'), idsIn('trace.json.2')], [['r1', 'r2'], ['r3', 'r4'], ['r5']]);
    rmSync(folder, { recursive: true, force: true });
  });
});
