import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelStatistics } from './model-statistics.js';
import { DEFAULT_METRICS_CONFIG, ServerMetrics } from './server-metrics.js';

test('counters come from the statistics at scrape time, failures by reason, pending from the scheduler', async () => {
  const metrics: ServerMetrics = new ServerMetrics({ config: DEFAULT_METRICS_CONFIG, source: { models: () => models }, cpuIntervalMs: 0 });
  const statistics: ModelStatistics = new ModelStatistics('m', 2, metrics.observerFor({ name: 'm' }, 2, { isResponseCacheEnabled: false, isDecoupled: false }));
  const models: Array<{ statistics: ModelStatistics; pendingCount: number }> = [{ statistics, pendingCount: 3 }];
  statistics.recordExecution({ batchSize: 4, inferenceCount: 4, queueNs: [1000, 3000], timing: { inputNs: 2000, inferNs: 10_000, outputNs: 1000 } });
  statistics.recordRequest('SUCCESS', 20_000);
  statistics.recordRequest('SUCCESS', 30_000);
  statistics.recordRequest('REJECTED', 5000);
  const text = await metrics.text();
  for (const line of [
    'nv_inference_request_success{model="m",version="2"} 2',
    'nv_inference_request_failure{model="m",version="2",reason="REJECTED"} 1',
    'nv_inference_request_failure{model="m",version="2",reason="BACKEND"} 0',
    'nv_inference_count{model="m",version="2"} 4',
    'nv_inference_exec_count{model="m",version="2"} 1',
    'nv_inference_pending_request_count{model="m",version="2"} 3',
    'nv_inference_request_duration_us{model="m",version="2"} 50',
    'nv_inference_queue_duration_us{model="m",version="2"} 4',
    'nv_inference_compute_infer_duration_us{model="m",version="2"} 20',
    'nereid_inference_batch_size_bucket{le="4",model="m",version="2"} 1',
    'nereid_inference_batch_size_bucket{le="2",model="m",version="2"} 0',
  ]) {
    assert.ok(text.includes(`${line}\n`), `missing: ${line}\n${text}`);
  }
  assert.doesNotMatch(text, /nv_inference_request_summary_us/, 'summaries are opt-in');
  metrics.close();
});

test("--model-namespacing: models of one name in two namespaces have series of their own, with Triton's namespace label", async () => {
  const config = { ...DEFAULT_METRICS_CONFIG, summaryLatencies: true, summaryQuantiles: [0.5] };
  const metrics: ServerMetrics = new ServerMetrics({ config, source: { models: () => models }, cpuIntervalMs: 0 });
  const inRepository = (namespace: string): ModelStatistics =>
    new ModelStatistics('m', 1, metrics.observerFor({ name: 'm', namespace }, 1, { isResponseCacheEnabled: false, isDecoupled: false }), namespace);
  const models = [
    { statistics: inRepository('/repos/a'), pendingCount: 0 },
    { statistics: inRepository('/repos/b'), pendingCount: 0 },
  ];
  models[0]!.statistics.recordRequest('SUCCESS', 1000);
  models[1]!.statistics.recordExecution({ batchSize: 1, inferenceCount: 1, queueNs: [2000], timing: { inputNs: 0, inferNs: 0, outputNs: 0 } });
  models[1]!.statistics.recordRequest('SUCCESS', 1000);
  models[1]!.statistics.recordRequest('SUCCESS', 1000);
  const text = await metrics.text();
  for (const line of [
    'nv_inference_request_success{model="m",version="1",namespace="/repos/a"} 1',
    'nv_inference_request_success{model="m",version="1",namespace="/repos/b"} 2',
    'nv_inference_count{model="m",version="1",namespace="/repos/b"} 1',
    'nv_inference_queue_summary_us_count{model="m",version="1",namespace="/repos/b"} 1',
  ]) {
    assert.ok(text.includes(`${line}\n`), `missing: ${line}\n${text}`);
  }
  assert.doesNotMatch(text, /nv_inference_request_success\{model="m",version="1"\}/, 'no series without its namespace');
  metrics.close();
});

test('with a response cache: per-model hit and miss counters for the models that use it, and the global gauges', async () => {
  const cached = new ModelStatistics('cached', 1);
  const plain = new ModelStatistics('plain', 1);
  cached.recordCacheHit(3000, 2000);
  cached.recordCacheHit(4000, 2000);
  cached.recordCacheMiss(5000);
  const models = [
    { statistics: cached, pendingCount: 0, isResponseCacheEnabled: true },
    { statistics: plain, pendingCount: 0, isResponseCacheEnabled: false },
  ];
  const cache = {
    lookupCount: 3,
    hitCount: 2,
    missCount: 1,
    insertionFailureCount: 1,
    lookupNs: 6000,
    insertionNs: 1000,
    store: { entryCount: 1, usedBytes: 256, sizeBytes: 1024, evictionCount: 0 },
  };
  const metrics = new ServerMetrics({ config: DEFAULT_METRICS_CONFIG, source: { models: () => models, responseCache: () => cache }, cpuIntervalMs: 0 });
  const text = await metrics.text();
  for (const line of [
    'nv_cache_num_hits_per_model{model="cached",version="1"} 2',
    'nv_cache_num_misses_per_model{model="cached",version="1"} 1',
    'nv_cache_hit_duration_per_model{model="cached",version="1"} 4',
    'nv_cache_miss_duration_per_model{model="cached",version="1"} 5',
    'nv_inference_request_success{model="cached",version="1"} 2',
    'nv_inference_request_duration_us{model="cached",version="1"} 12',
    'nv_cache_num_entries 1',
    'nv_cache_num_lookups 3',
    'nv_cache_num_hits 2',
    'nv_cache_num_misses 1',
    'nv_cache_num_evictions 0',
    'nv_cache_lookup_duration 6',
    'nv_cache_insertion_duration 1',
    'nv_cache_util 0.25',
    'nereid_cache_insertion_failures 1',
    '# HELP nv_cache_num_hits_per_model Number of cache hits per model',
    '# HELP nv_cache_miss_duration_per_model Total cache miss (insert+lookup) duration per model, in microseconds',
    '# TYPE nv_cache_num_hits_per_model counter',
    '# TYPE nv_cache_num_entries gauge',
  ]) {
    assert.ok(text.includes(`${line}\n`), `missing: ${line}\n${text}`);
  }
  assert.doesNotMatch(text, /nv_cache_num_hits_per_model\{model="plain"/);
  metrics.close();
});

test('without a response cache there are no nv_cache_* metrics', async () => {
  const metrics = new ServerMetrics({ config: DEFAULT_METRICS_CONFIG, source: { models: () => [] }, cpuIntervalMs: 0 });
  assert.doesNotMatch(await metrics.text(), /nv_cache_/);
  metrics.close();
});

/** The families /metrics shows, by their TYPE lines, in registration order. */
const familiesOf = (text: string): string[] => text.split('\n').filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2]!);

test("which families and series exist follows Triton's InitializeCounters and InitializeSummaries, for each setting", async () => {
  const cache = { lookupCount: 0, hitCount: 0, missCount: 0, insertionFailureCount: 0, lookupNs: 0, insertionNs: 0 };
  const ALWAYS = ['nv_inference_request_success', 'nv_inference_request_failure', 'nv_inference_count', 'nv_inference_exec_count', 'nv_inference_pending_request_count'];
  const COUNTERS = ['nv_inference_request_duration_us', 'nv_inference_queue_duration_us', 'nv_inference_compute_input_duration_us', 'nv_inference_compute_infer_duration_us', 'nv_inference_compute_output_duration_us'];
  const CACHE_COUNTERS = ['nv_cache_num_hits_per_model', 'nv_cache_num_misses_per_model', 'nv_cache_hit_duration_per_model', 'nv_cache_miss_duration_per_model'];
  const SUMMARIES = ['nv_inference_request_summary_us', 'nv_inference_queue_summary_us', 'nv_inference_compute_input_summary_us', 'nv_inference_compute_infer_summary_us', 'nv_inference_compute_output_summary_us'];
  const CACHE_SUMMARIES = ['nv_cache_hit_summary_per_model', 'nv_cache_miss_summary_per_model'];
  const GLOBAL = ['nv_cache_num_lookups', 'nv_cache_num_hits', 'nv_cache_num_misses', 'nv_cache_lookup_duration', 'nv_cache_insertion_duration', 'nereid_cache_insertion_failures', 'nereid_loaded_models'];
  for (const counterLatencies of [true, false]) {
    for (const summaryLatencies of [true, false]) {
      for (const models of [['plain'], ['cached'], ['plain', 'cached']]) {
        const config = { ...DEFAULT_METRICS_CONFIG, counterLatencies, summaryLatencies };
        const loaded: Array<{ statistics: ModelStatistics; pendingCount: number; isResponseCacheEnabled: boolean }> = [];
        const metrics: ServerMetrics = new ServerMetrics({ config, source: { models: () => loaded, responseCache: () => cache }, cpuIntervalMs: 0 });
        for (const name of models) {
          const isResponseCacheEnabled = name === 'cached';
          loaded.push({ statistics: new ModelStatistics(name, 1, metrics.observerFor({ name }, 1, { isResponseCacheEnabled, isDecoupled: false })), pendingCount: 0, isResponseCacheEnabled });
        }
        const hasPlain = models.includes('plain');
        const hasCached = models.includes('cached');
        const expected = [
          ...ALWAYS,
          ...(counterLatencies ? COUNTERS : []),
          ...(counterLatencies && hasCached ? CACHE_COUNTERS : []),
          ...(summaryLatencies ? SUMMARIES.filter((name) => hasPlain || name !== 'nv_inference_request_summary_us') : []),
          ...(summaryLatencies && hasCached ? CACHE_SUMMARIES : []),
          ...GLOBAL,
        ];
        const text = await metrics.text();
        const setting = `counter_latencies=${counterLatencies} summary_latencies=${summaryLatencies} models=${models.join(',')}`;
        assert.deepEqual(familiesOf(text), expected, setting);
        if (summaryLatencies) {
          // Every model's summaries are there before its first request, count 0.
          assert.equal(text.includes('nv_inference_request_summary_us_count{model="cached",version="1"} 0\n'), false, setting);
          assert.equal(text.includes('nv_inference_request_summary_us_count{model="plain",version="1"} 0\n'), hasPlain, setting);
          assert.equal(text.includes('nv_cache_hit_summary_per_model_count{model="cached",version="1"} 0\n'), hasCached, setting);
          assert.equal(text.includes('nv_cache_hit_summary_per_model_count{model="plain",version="1"} 0\n'), false, setting);
        }
        metrics.close();
      }
    }
  }
});

test('cache hits and misses feed the cache summaries and the queue summary; an unloaded version leaves /metrics', async () => {
  const config = { ...DEFAULT_METRICS_CONFIG, summaryLatencies: true, summaryQuantiles: [0.5] };
  const metrics = new ServerMetrics({ config, source: { models: () => [] }, cpuIntervalMs: 0 });
  const statistics = new ModelStatistics('cached', 3, metrics.observerFor({ name: 'cached' }, 3, { isResponseCacheEnabled: true, isDecoupled: false }));
  statistics.recordCacheHit(9000, 4000);
  statistics.recordCacheHit(9000, 6000);
  statistics.recordCacheMiss(7000);
  statistics.recordRequest('SUCCESS', 20_000);
  const lines = (await metrics.text()).split('\n').filter((line) => /^nv_(cache_(hit|miss)|inference_(queue|request))_summary/.test(line));
  assert.deepEqual(lines, [
    'nv_inference_queue_summary_us{model="cached",version="3",quantile="0.5"} 0',
    'nv_inference_queue_summary_us_sum{model="cached",version="3"} 0',
    'nv_inference_queue_summary_us_count{model="cached",version="3"} 2',
    'nv_cache_hit_summary_per_model{model="cached",version="3",quantile="0.5"} 5',
    'nv_cache_hit_summary_per_model_sum{model="cached",version="3"} 10',
    'nv_cache_hit_summary_per_model_count{model="cached",version="3"} 2',
    'nv_cache_miss_summary_per_model{model="cached",version="3",quantile="0.5"} 7',
    'nv_cache_miss_summary_per_model_sum{model="cached",version="3"} 7',
    'nv_cache_miss_summary_per_model_count{model="cached",version="3"} 1',
  ]);
  statistics.close();
  assert.doesNotMatch(await metrics.text(), /summary/);
  metrics.close();
});
