import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GrpcClient } from '../../src/client/index.js';
import { parseServeArgs } from '../../src/config/server-options.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const DELAY_MS = 300;

/** FP32 INPUT0 and BYTES INPUT1, both [-1], behind a dynamic batcher (QA's identity_cache, batching). */
const PAIRS = `max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_STRING dims: [ -1 ] } ]
dynamic_batching { }`;

const INT_PAIR = `input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]`;

const MODELS: Record<string, string> = {
  identity_cache: `${PAIRS}\nresponse_cache { enable: true }\nparameters [ { key: "execute_delay_ms" value: { string_value: "${DELAY_MS}" } } ]`,
  identity_fast: PAIRS,
  identity_batch: `max_batch_size: 8\n${INT_PAIR}\ndynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 5000000 }`,
  // Two instances that share the one unit of resource R: their executions take turns.
  identity_limited: `${INT_PAIR}
instance_group [ { count: 2 kind: KIND_CPU rate_limiter { resources [ { name: "R" count: 1 } ] } } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${DELAY_MS}" } } ]`,
  identity_sequence: `max_batch_size: 4\n${INT_PAIR}
sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }`,
  identity_decoupled: `max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
model_transaction_policy { decoupled: true }`,
  // QA's L0_response_cache decoupled_cache, which Triton refuses to load.
  decoupled_cache: `max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
model_transaction_policy { decoupled: True }
response_cache { enable: True }`,
  bad_pairs: `input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]`,
  bad_name: INT_PAIR.replace('"INPUT0"', '"IN0"'),
  // bad_type and bad_shape change the input, the first of the pair, which Triton's messages name first.
  bad_type: INT_PAIR.replace('data_type: TYPE_INT32 dims: [ 2 ] } ]\n', 'data_type: TYPE_INT64 dims: [ 2 ] } ]\n'),
  bad_shape: INT_PAIR.replace('dims: [ 2 ] } ]\n', 'dims: [ -1 ] } ]\n'),
  bad_parameter: `${INT_PAIR}\nparameters [ { key: "execute_delay" value: { string_value: "10" } } ]`,
  bad_delay: `${INT_PAIR}\nparameters [ { key: "execute_delay_ms" value: { string_value: "ten" } } ]`,
};

async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-identity-'));
  for (const [name, config] of Object.entries(MODELS)) {
    await mkdir(join(root, name, '1'), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), `backend: "identity"\n${config}\n`);
  }
  // An empty version folder and no config: the identity backend, which reads no file, is not guessed.
  await mkdir(join(root, 'no_config', '1'), { recursive: true });
  await mkdir(join(root, 'bad_backend', '1'), { recursive: true });
  await writeFile(join(root, 'bad_backend', 'config.pbtxt'), `backend: "identiti"\n${INT_PAIR}\n`);
  return root;
}

type OutputJson = { name: string; datatype: string; shape: number[]; data: unknown[] };
type Answer = { status: number; json: { outputs?: OutputJson[]; parameters?: Record<string, unknown>; error?: string }; ms: number };

const pairRequest = (values: number[], strings: string[]) => ({
  inputs: [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: values },
    { name: 'INPUT1', datatype: 'BYTES', shape: [1, strings.length], data: strings },
  ],
});

interface Duration {
  count: number;
}
interface Stat {
  inference_count: number;
  execution_count: number;
  inference_stats: Record<'success' | 'cache_hit' | 'cache_miss', Duration>;
}

describe("Triton's identity backend", () => {
  let repository: string;
  let server: TestServer;
  const infer = async (model: string, body: unknown): Promise<Answer> => {
    const start = performance.now();
    const response = await server.post(`/v2/models/${model}/infer`, body);
    return { status: response.status, json: (await response.json()) as Answer['json'], ms: performance.now() - start };
  };
  const statsOf = async (model: string): Promise<Stat> => ((await (await server.get(`/v2/models/${model}/stats`)).json()) as { model_stats: Stat[] }).model_stats[0]!;

  before(async () => {
    repository = await makeRepository();
    const flags = parseServeArgs(['--model-repository', repository, '--cache-config', 'local,size=1048576']);
    assert.notEqual(flags, 'help');
    server = await startTestServer({
      modelRepositories: [repository],
      responseCacheBytes: flags === 'help' ? undefined : flags.responseCacheBytes,
      rateLimit: 'execution_count',
      rateLimitResources: [{ name: 'R', count: 1 }],
    });
  });
  after(async () => {
    await server.close();
    await rm(repository, { recursive: true, force: true });
  });

  test('answers each OUTPUT<i> with INPUT<i> and the example response parameters, over HTTP and gRPC', async () => {
    const answer = await infer('identity_fast', pairRequest([1.5, -2, 3.25], ['alpha', '', 'héllo']));
    assert.equal(answer.status, 200, answer.json.error);
    assert.deepEqual(answer.json, {
      model_name: 'identity_fast',
      model_version: '1',
      parameters: { param0: 'an example string parameter', param1: 42, param2: false },
      outputs: [
        { name: 'OUTPUT0', datatype: 'FP32', shape: [1, 3], data: [1.5, -2, 3.25] },
        { name: 'OUTPUT1', datatype: 'BYTES', shape: [1, 3], data: ['alpha', '', 'héllo'] },
      ],
    });
    const client = new GrpcClient(server.grpcUrl!);
    try {
      const result = await client.infer('identity_fast', [
        { name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] },
        { name: 'INPUT1', datatype: 'BYTES', shape: [2, 1], data: ['x', 'yz'] },
      ]);
      assert.deepEqual([...result.data('OUTPUT0', 'FP32')], [1, 2, 3, 4]);
      assert.deepEqual(result.strings('OUTPUT1'), ['x', 'yz']);
      assert.deepEqual(result.parameters, { param0: 'an example string parameter', param1: 42, param2: false });
    } finally {
      await client.close();
    }
  });

  test('batches concurrent requests into one execution and splits the outputs back; counts the input bytes', async () => {
    const bodies = [0, 1, 2, 3].map((i) => ({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: [i, 10 - i] }] }));
    const answers = await Promise.all(bodies.map((body) => infer('identity_batch', body)));
    assert.deepEqual(
      answers.map((answer) => answer.json.outputs),
      [0, 1, 2, 3].map((i) => [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: [i, 10 - i] }]),
    );
    const stats = await statsOf('identity_batch');
    assert.deepEqual([stats.execution_count, stats.inference_count], [1, 4]);
    const metrics = await (await fetch(`${server.metricsUrl!}/metrics`)).text();
    assert.ok(metrics.includes('# HELP input_byte_size_counter Cumulative input byte size of all requests received by the model\n'), metrics);
    assert.ok(metrics.includes('input_byte_size_counter{model="identity_batch",version="1"} 32\n'), metrics);
  });

  test('waits execute_delay_ms on a miss and not on a cache hit, while other models answer meanwhile', async () => {
    const body = pairRequest([7, 8], ['cached']);
    const missing = infer('identity_cache', body);
    const other = await infer('identity_fast', pairRequest([9], ['fast']));
    const miss = await missing;
    assert.equal(other.status, 200);
    assert.ok(other.ms < DELAY_MS, `identity_fast took ${other.ms} ms behind a ${DELAY_MS} ms execution`);
    assert.ok(miss.ms >= DELAY_MS - 1, `the miss took ${miss.ms} ms`);
    const hit = await infer('identity_cache', body);
    assert.ok(hit.ms < DELAY_MS, `the hit took ${hit.ms} ms`);
    const expected = [
      { name: 'OUTPUT0', datatype: 'FP32', shape: [1, 2], data: [7, 8] },
      { name: 'OUTPUT1', datatype: 'BYTES', shape: [1, 1], data: ['cached'] },
    ];
    assert.deepEqual([miss.json.outputs, hit.json.outputs], [expected, expected]);
    const parameters = { param0: 'an example string parameter', param1: 42, param2: false };
    assert.deepEqual([miss.json.parameters, hit.json.parameters], [parameters, parameters]);
    const stats = await statsOf('identity_cache');
    assert.deepEqual(
      { hits: stats.inference_stats.cache_hit.count, misses: stats.inference_stats.cache_miss.count, success: stats.inference_stats.success.count, executions: stats.execution_count },
      { hits: 1, misses: 1, success: 2, executions: 1 },
    );
  });

  test('takes turns for the rate limiter, and runs sequences with their control inputs', async () => {
    const body = (value: number) => ({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: [value, value + 1] }] });
    const start = performance.now();
    const answers = await Promise.all([infer('identity_limited', body(1)), infer('identity_limited', body(3))]);
    const elapsedMs = performance.now() - start;
    assert.deepEqual(
      answers.map((answer) => answer.json.outputs),
      [1, 3].map((value) => [{ name: 'OUTPUT0', datatype: 'INT32', shape: [2], data: [value, value + 1] }]),
    );
    assert.ok(elapsedMs >= 2 * DELAY_MS - 1, `two executions sharing R took ${elapsedMs} ms`);
    for (const [value, parameters] of [
      [5, { sequence_id: 7, sequence_start: true }],
      [6, { sequence_id: 7, sequence_end: true }],
    ] as const) {
      const answer = await infer('identity_sequence', { parameters, inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: [value, -value] }] });
      assert.deepEqual(answer.json.outputs, [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: [value, -value] }], answer.json.error);
    }
  });

  test('a decoupled model sends one response per request', async () => {
    const response = await server.post('/v2/models/identity_decoupled/generate_stream', { INPUT0: [1.5, 2.5] });
    assert.equal(response.status, 200);
    assert.equal(
      await response.text(),
      'data: {"OUTPUT0":[1.5,2.5],"model_name":"identity_decoupled","model_version":"1","param0":"an example string parameter","param1":42,"param2":false}\n\n',
    );
  });

  test("fails the load of a configuration it cannot serve, with Triton's words", async () => {
    const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
    const reasons = Object.fromEntries(index.filter((entry) => entry.state === 'UNAVAILABLE').map((entry) => [entry.name, entry.reason]));
    assert.deepEqual(reasons, {
      bad_backend: `${join(repository, 'bad_backend', 'config.pbtxt')}: unknown backend 'identiti'; Nereid serves backends 'onnxruntime', 'javascript', 'python', 'pytorch', 'fil', 'identity', 'repeat', 'square' and platforms 'onnxruntime_onnx', 'pytorch_libtorch'`,
      bad_delay: `model 'bad_delay': parameters 'execute_delay_ms' must be an integer from 0 to 2147483647, got "ten"`,
      bad_name: "model 'bad_name': expected input name to follow INPUT<index> pattern, got 'IN0'",
      bad_pairs: "model 'bad_pairs': model configuration must have equal input/output pairs",
      bad_parameter:
        "model 'bad_parameter': parameter 'execute_delay' is not one the identity backend knows (did you mean 'execute_delay_ms'?); it knows execute_delay_ms, instance_wise_delay_multiplier, creation_delay_sec, enable_custom_tracing, nested_span_count, single_activity_frequency",
      bad_shape: "model 'bad_shape': expected input and output shape to match, got [-1] and [2]",
      bad_type: "model 'bad_type': expected input and output datatype to match, got TYPE_INT64 and TYPE_INT32",
      no_config: "model 'no_config' has no config.pbtxt naming a backend or platform, and no version folder holds a file a backend recognises (model.onnx, model.js, model.py, model.pt, xgboost.model)",
      decoupled_cache: `${join(repository, 'decoupled_cache', 'config.pbtxt')}: Response Cache does not currently support model decoupled_cache with 'decoupled' transaction policy. Please disable the response cache.`,
    });
    assert.deepEqual(
      index.filter((entry) => entry.state === 'READY').map((entry) => entry.name),
      ['identity_batch', 'identity_cache', 'identity_decoupled', 'identity_fast', 'identity_limited', 'identity_sequence'],
    );
  });
});
