import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
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
