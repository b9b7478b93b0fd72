import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_METRICS_CONFIG } from '../../src/metrics/server-metrics.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';

/** The value of one sample line, e.g. metric('nv_inference_count', { model: 'simple', version: '1' }). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    const have = labelText.split(',');
    if (wanted.every((pair) => have.includes(pair)) && have.length === wanted.length) return Number(line.slice(line.indexOf('}') + 1));
  }
  return undefined;
}

describe('Prometheus metrics on the metrics port', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      modelRepositories: [FIXTURES, EXAMPLES],
      isStrictReadiness: false,
      metricsConfig: { counterLatencies: true, summaryLatencies: true, histogramLatencies: true, summaryQuantiles: [0.5, 0.99] },
    });
  });
  after(() => server.close());

  test('the counts match the statistics extension, and promtool accepts the exposition', async () => {
    const sizes = [1, 2, 1, 1, 3, 1, 1, 2];
    await Promise.all(
      sizes.map((batch) =>
        server.post('/v2/models/batching/infer', { inputs: [{ name: 'INPUT0', shape: [batch, 4], datatype: 'FP32', data: Array(batch * 4).fill(1) }] }),
      ),
    );
    const rejected = await server.post('/v2/models/batching/infer', { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }], parameters: { priority: 'high' } });
    assert.equal(rejected.status, 400);

    const response = await fetch(`${server.metricsUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const stats = ((await (await server.get('/v2/models/batching/stats')).json()) as { model_stats: Array<Record<string, unknown>> }).model_stats[0] as {
      inference_count: number;
      execution_count: number;
      inference_stats: { success: { count: number; ns: number }; queue: { ns: number } };
      batch_stats: Array<{ batch_size: number; compute_infer: { count: number } }>;
    };
    const labels = { model: 'batching', version: '1' };
    assert.equal(sample(text, 'nv_inference_count', labels), sizes.reduce((a, b) => a + b, 0));
    assert.equal(sample(text, 'nv_inference_count', labels), stats.inference_count);
    assert.equal(sample(text, 'nv_inference_exec_count', labels), stats.execution_count);
    assert.equal(sample(text, 'nv_inference_request_success', labels), sizes.length);
    assert.equal(sample(text, 'nv_inference_request_failure', { ...labels, reason: 'REJECTED' }), 0);
    assert.equal(sample(text, 'nv_inference_pending_request_count', labels), 0);
    assert.equal(sample(text, 'nv_inference_queue_duration_us', labels), Math.round(stats.inference_stats.queue.ns / 1000));
    assert.equal(sample(text, 'nv_inference_request_summary_us_count', labels), sizes.length);
    assert.equal(sample(text, 'nereid_inference_batch_size_count', labels), stats.execution_count);
    assert.equal(sample(text, 'nereid_inference_batch_size_sum', labels), stats.inference_count);
    assert.equal(sample(text, 'nv_inference_count', { model: 'simple', version: '1' }), 0);
    assert.ok((sample(text, 'nv_cpu_memory_total_bytes', {}) ?? 0) > 0 || /nv_cpu_memory_total_bytes \d/.test(text));

    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(check.error, undefined, 'promtool is needed: apt-get install prometheus (.ci/run installs it)');
    // promtool exits 3 for naming-convention lints and 1 for exposition errors. Triton's own metric
    // names break the conventions (nv_inference_count has no _total, *_duration_us abbreviates its
    // unit); those names are what Triton's dashboards query, so they are kept and only lints may appear.
    const problems = `${check.stdout}${check.stderr}`.split('\n').filter((line) => line.trim() !== '');
    const NAMING_LINTS =
      /(counter metrics should have "_total" suffix|metric names should not contain abbreviated units|metric name should not include type '(summary|histogram)'|non-histogram and non-summary metrics should not have "_count" suffix)$/;
    assert.ok(check.status === 0 || check.status === 3, `promtool exit ${check.status}:\n${problems.join('\n')}`);
    assert.deepEqual(problems.filter((line) => !NAMING_LINTS.test(line)), []);
  });

  test('only GET /metrics', async () => {
    assert.equal((await fetch(`${server.metricsUrl}/metrics`, { method: 'POST' })).status, 405);
    assert.equal((await fetch(`${server.metricsUrl}/other`)).status, 404);
  });
});

const JS_ADD = fileURLToPath(new URL('../fixtures/js_repository/js_add', import.meta.url));

/** The families a page shows, by their TYPE lines, in order. */
const familiesOf = (text: string): string[] => text.split('\n').filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2]!);

/**
 * Triton's qa/L0_metrics/metrics_config_test.py, for each --metrics-config setting, on a server with the
 * response cache and two models, `adder` without the cache and `cached_adder` with it: which families
 * exist before any request (Triton makes a model's series when it loads), and which series afterwards.
 */
describe('which metric families and series exist, by counter_latencies and summary_latencies, with and without the response cache', () => {
  let repository: string;
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), 'nereid-metrics-'));
    await cp(JS_ADD, join(repository, 'adder'), { recursive: true });
    await cp(JS_ADD, join(repository, 'cached_adder'), { recursive: true });
    const config = await readFile(join(JS_ADD, 'config.pbtxt'), 'utf8');
    await writeFile(join(repository, 'cached_adder', 'config.pbtxt'), `${config}\nresponse_cache { enable: true }\n`);
  });
  after(() => rm(repository, { recursive: true, force: true }));

  const ALWAYS = ['nv_inference_request_success', 'nv_inference_request_failure', 'nv_inference_count', 'nv_inference_exec_count', 'nv_inference_pending_request_count', 'nv_model_load_duration_secs'];
  const COUNTERS = ['nv_inference_request_duration_us', 'nv_inference_queue_duration_us', 'nv_inference_compute_input_duration_us', 'nv_inference_compute_infer_duration_us', 'nv_inference_compute_output_duration_us'];
  const CACHE_COUNTERS = ['nv_cache_num_hits_per_model', 'nv_cache_num_misses_per_model', 'nv_cache_hit_duration_per_model', 'nv_cache_miss_duration_per_model'];
  const SUMMARIES = ['nv_inference_request_summary_us', 'nv_inference_queue_summary_us', 'nv_inference_compute_input_summary_us', 'nv_inference_compute_infer_summary_us', 'nv_inference_compute_output_summary_us'];
  const CACHE_SUMMARIES = ['nv_cache_hit_summary_per_model', 'nv_cache_miss_summary_per_model'];
  const CACHE_GAUGES = ['nv_cache_num_lookups', 'nv_cache_num_hits', 'nv_cache_num_misses', 'nv_cache_lookup_duration', 'nv_cache_insertion_duration', 'nv_cache_num_entries', 'nv_cache_num_evictions', 'nv_cache_util', 'nereid_cache_insertion_failures'];
  const NEREID = ['nereid_model_loads_total', 'nereid_loaded_models', 'nereid_model_memory_bytes'];
  const request = (base: number) => ({ inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'FP32', shape: [1, 4], data: [base, base, base, base] })) });

  for (const counterLatencies of [true, false]) {
    for (const summaryLatencies of [true, false]) {
      test(`counter_latencies=${counterLatencies} summary_latencies=${summaryLatencies}`, async (t) => {
        const server = await startTestServer({
          modelRepositories: [repository],
          responseCacheBytes: 1 << 20,
          isCpuMetricsAllowed: false,
          metricsConfig: { ...DEFAULT_METRICS_CONFIG, counterLatencies, summaryLatencies, summaryQuantiles: [0.5] },
        });
        t.after(() => server.close());
        const scrape = async (): Promise<string> => (await fetch(`${server.metricsUrl}/metrics`)).text();

        // Before any request: a family with no series is not on the page at all (prometheus-cpp).
        const before = await scrape();
        assert.deepEqual(familiesOf(before), [
          ...ALWAYS,
          ...(counterLatencies ? [...COUNTERS, ...CACHE_COUNTERS] : []),
          ...(summaryLatencies ? [...SUMMARIES, ...CACHE_SUMMARIES] : []),
          ...CACHE_GAUGES,
          ...NEREID,
        ]);

        // cached_adder misses, then hits; adder runs once.
        for (const [model, base] of [['cached_adder', 1], ['cached_adder', 1], ['adder', 1]] as const) {
          assert.equal((await server.post(`/v2/models/${model}/infer`, request(base))).status, 200);
        }
        const text = await scrape();
        const COUNTED = /^(nv_cache_num_(hits|misses)_per_model|nv_inference_(request|queue)_summary_us_count|nv_cache_(hit|miss)_summary_per_model_count)\{/;
        const cached = 'model="cached_adder",version="1"';
        const plain = 'model="adder",version="1"';
        assert.deepEqual(
          text.split('\n').filter((line) => COUNTED.test(line)).sort(),
          [
            ...(counterLatencies ? [`nv_cache_num_hits_per_model{${cached}} 1`, `nv_cache_num_misses_per_model{${cached}} 1`] : []),
            // The request summary of a model with the cache is not shown (Triton's DLIS-4762); a hit's queue time is counted.
            ...(summaryLatencies
              ? [
                  `nv_inference_request_summary_us_count{${plain}} 1`,
                  `nv_inference_queue_summary_us_count{${plain}} 1`,
                  `nv_inference_queue_summary_us_count{${cached}} 2`,
                  `nv_cache_hit_summary_per_model_count{${cached}} 1`,
                  `nv_cache_miss_summary_per_model_count{${cached}} 1`,
                ]
              : []),
          ].sort(),
        );
        for (const family of ['nv_cache_hit_duration_per_model', 'nv_cache_miss_duration_per_model']) {
          const series = text.split('\n').filter((line) => line.startsWith(`${family}{`));
          assert.deepEqual(series.map((line) => line.slice(0, line.indexOf('}') + 1)), counterLatencies ? [`${family}{${cached}}`] : [], family);
        }
        assert.equal(text.includes(`nv_inference_request_summary_us_count{${cached}}`), false);
      });
    }
  }
});

test("nv_model_load_duration_secs: each loaded version's load time, from its load until its unload, kept when a load finds the model unchanged (qa/L0_metrics/model_load_time_test.py)", async (t) => {
  const repository = await mkdtemp(join(tmpdir(), 'nereid-load-time-'));
  t.after(() => rm(repository, { recursive: true, force: true }));
  await cp(JS_ADD, join(repository, 'adder'), { recursive: true });
  const server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: ['adder'], isCpuMetricsAllowed: false });
  t.after(() => server.close());
  const loadTimes = async (): Promise<string[]> =>
    (await (await fetch(`${server.metricsUrl}/metrics`)).text()).split('\n').filter((line) => line.startsWith('nv_model_load_duration_secs{'));
  const [line] = await loadTimes();
  assert.match(line!, /^nv_model_load_duration_secs\{model="adder",version="1"\} \d+(\.\d+)?(e-\d+)?$/);
  assert.ok(Number(line!.split(' ')[1]) > 0, line);
  // Loaded again unchanged: Triton does not load it again, and its load time stays.
  assert.equal((await server.post('/v2/repository/models/adder/load', {})).status, 200);
  assert.deepEqual(await loadTimes(), [line]);
  // Its config changed: loaded again, with a load time of its own.
  await writeFile(join(repository, 'adder', 'config.pbtxt'), `${await readFile(join(repository, 'adder', 'config.pbtxt'), 'utf8')}\n# changed\n`);
  assert.equal((await server.post('/v2/repository/models/adder/load', {})).status, 200);
  const [reloaded] = await loadTimes();
  assert.notEqual(reloaded, line);
  assert.equal((await server.post('/v2/repository/models/adder/unload', {})).status, 200);
  assert.deepEqual(await loadTimes(), []);
  assert.equal((await server.post('/v2/repository/models/adder/load', {})).status, 200);
  assert.equal((await loadTimes()).length, 1);
});

