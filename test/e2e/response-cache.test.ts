import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { GrpcClient } from '../../src/client/index.js';
import type { Logger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));
const STREAM_ENSEMBLE_REPOSITORY = fileURLToPath(new URL('../fixtures/stream_ensemble_repository', import.meta.url));
const CACHE = 'response_cache { enable: true }';

/**
 * js_add as `adder` (no cache) and `cached_adder`; `cached_pipeline`, an ensemble with the cache
 * whose one step is `adder`; `pipeline_of_cached`, one without, whose step is `cached_adder`;
 * `cached_stream`, the decoupled word_stream with the cache enabled; `cached_word_lengths`, an ensemble
 * with the cache whose first step is the decoupled `word_stream`.
 */
async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-cache-'));
  const add = join(JS_REPOSITORY, 'js_add');
  const addConfig = await readFile(join(add, 'config.pbtxt'), 'utf8');
  await cp(add, join(root, 'adder'), { recursive: true });
  await cp(add, join(root, 'cached_adder'), { recursive: true });
  await writeFile(join(root, 'cached_adder', 'config.pbtxt'), `${addConfig}\n${CACHE}\n`);
  const tensors = (prefix: string) =>
    `${prefix} [ { name: "${prefix === 'input' ? 'INPUT0' : 'OUTPUT0'}" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "${prefix === 'input' ? 'INPUT1' : 'OUTPUT1'}" data_type: TYPE_FP32 dims: [ 4 ] } ]`;
  const ensemble = async (name: string, step: string, cache: string): Promise<void> => {
    await cp(add, join(root, name), { recursive: true, filter: (path) => !path.endsWith('.js') });
    await writeFile(
      join(root, name, 'config.pbtxt'),
      `platform: "ensemble"\nmax_batch_size: 8\n${tensors('input')}\n${tensors('output')}\n${cache}\n` +
        `ensemble_scheduling { step [ { model_name: "${step}" model_version: -1 ` +
        'input_map [ { key: "INPUT0" value: "INPUT0" }, { key: "INPUT1" value: "INPUT1" } ] ' +
        'output_map [ { key: "OUTPUT0" value: "OUTPUT0" }, { key: "OUTPUT1" value: "OUTPUT1" } ] } ] }\n',
    );
  };
  await ensemble('cached_pipeline', 'adder', CACHE);
  await ensemble('pipeline_of_cached', 'cached_adder', '');
  const stream = join(EXAMPLES, 'word_stream');
  await cp(stream, join(root, 'cached_stream'), { recursive: true });
  await writeFile(join(root, 'cached_stream', 'config.pbtxt'), `${await readFile(join(stream, 'config.pbtxt'), 'utf8')}\n${CACHE}\n`);
  await cp(stream, join(root, 'word_stream'), { recursive: true });
  await cp(join(STREAM_ENSEMBLE_REPOSITORY, 'word_length'), join(root, 'word_length'), { recursive: true });
  await cp(join(STREAM_ENSEMBLE_REPOSITORY, 'word_lengths'), join(root, 'cached_word_lengths'), { recursive: true });
  const wordLengths = await readFile(join(STREAM_ENSEMBLE_REPOSITORY, 'word_lengths', 'config.pbtxt'), 'utf8');
  await writeFile(join(root, 'cached_word_lengths', 'config.pbtxt'), `${wordLengths}\n${CACHE}\n`);
  return root;
}

/** A request of `rows` rows of INPUT0 = base + column and INPUT1 = 1; each response holds 2 × rows × 16 bytes. */
const addRequest = (base: number, rows = 1, parameters: Record<string, unknown> = {}) => ({
  parameters,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({
    name,
    datatype: 'FP32',
    shape: [rows, 4],
    data: Array.from({ length: rows * 4 }, (_, index) => (name === 'INPUT0' ? base + (index % 4) : 1)),
  })),
});

interface Duration {
  count: number;
  ns: number;
}
interface Stat {
  inference_count: number;
  execution_count: number;
  inference_stats: Record<'success' | 'queue' | 'compute_infer' | 'cache_hit' | 'cache_miss', Duration>;
}

async function statsOf(server: TestServer, model: string): Promise<Stat> {
  const response = await server.get(`/v2/models/${model}/stats`);
  return ((await response.json()) as { model_stats: Stat[] }).model_stats[0]!;
}

async function metricValue(server: TestServer, series: string): Promise<number> {
  const text = await (await fetch(`${server.metricsUrl!}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  assert.ok(line !== undefined, `no ${series} in\n${text}`);
  return Number(line.slice(series.length + 1));
}

async function infer(server: TestServer, model: string, body: unknown): Promise<number[]> {
  const response = await server.post(`/v2/models/${model}/infer`, body);
  const json = (await response.json()) as { outputs: Array<{ name: string; data: number[] }>; error?: string };
  assert.equal(response.status, 200, json.error);
  return json.outputs.find((output) => output.name === 'OUTPUT0')!.data;
}

describe('the response cache (--cache-config local,size=BYTES)', () => {
  let repository: string;
  before(async () => {
    repository = await makeRepository();
  });
  after(() => rm(repository, { recursive: true, force: true }));

  describe('with room for every response', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ modelRepositories: [repository], responseCacheBytes: 1 << 20 });
    });
    after(() => server.close());

    test('repeated requests hit; a changed input or parameter misses; statistics and metrics agree', async () => {
      const sequence: Array<[number, Record<string, unknown>]> = [
        [1, {}],
        [1, {}],
        [1, {}],
        [2, {}],
        [1, { scale: 3 }],
        [1, { priority: 1 }],
        [2, {}],
      ];
      for (const [base, parameters] of sequence) {
        assert.deepEqual(await infer(server, 'cached_adder', addRequest(base, 1, parameters)), [base + 1, base + 2, base + 3, base + 4]);
      }
      const stats = await statsOf(server, 'cached_adder');
      // Misses: 1, 2 and 1 with scale=3; priority only orders the queue, so that request hits.
      assert.deepEqual(
        { hits: stats.inference_stats.cache_hit.count, misses: stats.inference_stats.cache_miss.count, success: stats.inference_stats.success.count },
        { hits: 4, misses: 3, success: 7 },
      );
      assert.deepEqual({ executions: stats.execution_count, inferences: stats.inference_count, computed: stats.inference_stats.compute_infer.count }, { executions: 3, inferences: 3, computed: 3 });
      assert.equal(stats.inference_stats.queue.count, 7);
      const labels = '{model="cached_adder",version="1"}';
      assert.equal(await metricValue(server, `nv_cache_num_hits_per_model${labels}`), 4);
      assert.equal(await metricValue(server, `nv_cache_num_misses_per_model${labels}`), 3);
      assert.equal(await metricValue(server, `nv_inference_request_success${labels}`), 7);
      assert.equal(await metricValue(server, `nv_inference_count${labels}`), 3);
      assert.equal(await metricValue(server, `nv_cache_hit_duration_per_model${labels}`), Math.round(stats.inference_stats.cache_hit.ns / 1000));
      assert.equal(await metricValue(server, `nv_cache_miss_duration_per_model${labels}`), Math.round(stats.inference_stats.cache_miss.ns / 1000));
    });

    test('a model without response_cache is not cached, and a gRPC request hits what an HTTP one stored', async () => {
      for (let i = 0; i < 3; i++) await infer(server, 'adder', addRequest(40));
      const adder = await statsOf(server, 'adder');
      assert.deepEqual([adder.execution_count, adder.inference_stats.cache_hit.count, adder.inference_stats.cache_miss.count], [3, 0, 0]);
      const before = await statsOf(server, 'cached_adder');
      await infer(server, 'cached_adder', addRequest(50));
      const client = new GrpcClient(server.grpcUrl!);
      try {
        const result = await client.infer('cached_adder', [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [50, 51, 52, 53] },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [1, 1, 1, 1] },
        ]);
        assert.deepEqual([...(result.data('OUTPUT0') as Float32Array)], [51, 52, 53, 54]);
      } finally {
        await client.close();
      }
      const after = await statsOf(server, 'cached_adder');
      assert.equal(after.inference_stats.cache_hit.count - before.inference_stats.cache_hit.count, 1);
      assert.equal(after.execution_count - before.execution_count, 1);
    });

    test('a hit over HTTP answers the bytes a miss would, with its own id, in JSON and in binary, outputs picked and classified', async () => {
      const bodies = [
        { id: 'one', ...addRequest(60) },
        { id: 'a "second" id', ...addRequest(60), outputs: [{ name: 'OUTPUT1' }, { name: 'OUTPUT0', parameters: { binary_data: true } }] },
        { ...addRequest(60), parameters: { binary_data_output: true } },
        { id: '4', ...addRequest(60), outputs: [{ name: 'OUTPUT0', parameters: { classification: 2 } }] },
      ];
      const answer = async (model: string, body: unknown): Promise<[number | null, string]> => {
        const response = await server.post(`/v2/models/${model}/infer`, body);
        assert.equal(response.status, 200);
        const headerLength = response.headers.get('inference-header-content-length');
        // The JSON's length without the model's name, which the two answers differ in.
        const jsonLength = headerLength === null ? null : Number(headerLength) - model.length;
        return [jsonLength, Buffer.from(await response.arrayBuffer()).toString('latin1').replaceAll(model, 'MODEL')];
      };
      for (const body of bodies) {
        const uncached = await answer('adder', body);
        for (let i = 0; i < 3; i++) assert.deepEqual(await answer('cached_adder', body), uncached);
      }
    });

    test('an ensemble caches its top-level response: a hit sends nothing to its composing model', async () => {
      assert.deepEqual(await infer(server, 'cached_pipeline', addRequest(7)), [8, 9, 10, 11]);
      const adderBefore = await statsOf(server, 'adder');
      assert.deepEqual(await infer(server, 'cached_pipeline', addRequest(7)), [8, 9, 10, 11]);
      assert.deepEqual(await infer(server, 'cached_pipeline', addRequest(7)), [8, 9, 10, 11]);
      const pipeline = await statsOf(server, 'cached_pipeline');
      assert.deepEqual([pipeline.inference_stats.cache_hit.count, pipeline.inference_stats.cache_miss.count, pipeline.inference_stats.success.count], [2, 1, 3]);
      assert.equal((await statsOf(server, 'adder')).execution_count, adderBefore.execution_count);
    });

    test("an ensemble without the cache runs its steps each time; a composing model's own cache answers them", async () => {
      const before = await statsOf(server, 'cached_adder');
      for (let i = 0; i < 3; i++) assert.deepEqual(await infer(server, 'pipeline_of_cached', addRequest(70)), [71, 72, 73, 74]);
      const pipeline = await statsOf(server, 'pipeline_of_cached');
      assert.deepEqual([pipeline.inference_stats.success.count, pipeline.inference_stats.cache_hit.count], [3, 0]);
      const after = await statsOf(server, 'cached_adder');
      assert.deepEqual(
        [after.inference_stats.cache_hit.count - before.inference_stats.cache_hit.count, after.inference_stats.cache_miss.count - before.inference_stats.cache_miss.count],
        [2, 1],
      );
      assert.equal(after.execution_count - before.execution_count, 1);
    });

    test('a decoupled model with the cache enabled is refused at load, as Triton refuses it', async () => {
      const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
      const stream = index.find((entry) => entry.name === 'cached_stream')!;
      assert.equal(stream.state, 'UNAVAILABLE');
      assert.equal(
        stream.reason,
        `${join(repository, 'cached_stream', 'config.pbtxt')}: Response Cache does not currently support model cached_stream with 'decoupled' transaction policy. Please disable the response cache.`,
      );
    });

    test('an ensemble with the cache and a decoupled step is refused at load, as Triton refuses it', async () => {
      const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
      const ensemble = index.find((entry) => entry.name === 'cached_word_lengths')!;
      assert.deepEqual(
        { state: ensemble.state, reason: ensemble.reason },
        { state: 'UNAVAILABLE', reason: "Response Cache does not currently support model cached_word_lengths with 'decoupled' transaction policy. Please disable the response cache." },
      );
    });
  });

  describe('with room for two responses of one row (292 bytes)', () => {
    let server: TestServer;
    const cacheErrors: string[] = [];
    before(async () => {
      const logger: Logger = { info() {}, verbose() {}, warning() {}, error: (component, message) => void (component === 'cache' && cacheErrors.push(message)) };
      server = await startTestServer({ modelRepositories: [repository], responseCacheBytes: 292, logger });
    });
    after(() => server.close());

    test('the least recently used response is evicted; one larger than the cache is answered, not stored, and logged', async () => {
      // A response of n rows takes 4 + 2 × (8 + 4+7 + 4+4 + 4+16 + 8 + 16n) bytes as Triton serializes it:
      // 146 for one row. A B C evicts A; A evicts B; C hits; B evicts A.
      const order = [10, 20, 30, 10, 30, 20];
      for (const base of order) await infer(server, 'cached_adder', addRequest(base));
      let stats = await statsOf(server, 'cached_adder');
      assert.deepEqual([stats.inference_stats.cache_hit.count, stats.inference_stats.cache_miss.count, stats.execution_count], [1, 5, 5]);
      assert.equal(await metricValue(server, 'nv_cache_num_evictions'), 3);
      assert.equal(await metricValue(server, 'nv_cache_num_entries'), 2);
      assert.equal(await metricValue(server, 'nv_cache_util'), 1);
      // Now C and B are stored, B the more recent: C hits and becomes the more recent.
      await infer(server, 'cached_adder', addRequest(30));
      stats = await statsOf(server, 'cached_adder');
      assert.equal(stats.inference_stats.cache_hit.count, 2);

      // Six rows: 306 bytes, more than the whole cache (Triton's test_ensemble_cache_insertion_failure: both miss).
      const big = addRequest(100, 6);
      for (let i = 0; i < 2; i++) assert.deepEqual((await infer(server, 'cached_adder', big)).slice(0, 4), [101, 102, 103, 104]);
      stats = await statsOf(server, 'cached_adder');
      assert.deepEqual([stats.inference_stats.cache_hit.count, stats.inference_stats.cache_miss.count, stats.execution_count], [2, 7, 7]);
      assert.equal(await metricValue(server, 'nereid_cache_insertion_failures'), 2);
      assert.equal(await metricValue(server, 'nv_cache_num_entries'), 2);
      const failures = cacheErrors.map((message) => message.replace(/\[[0-9a-f]{64}\]/, '[KEY]'));
      assert.deepEqual(failures, Array(2).fill('Failed to insert key [KEY] into response cache: Requested byte_size: 306 is greater than total cache size: 292'));
    });
  });
});
