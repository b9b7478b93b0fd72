import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelStatistics } from './model-statistics.js';
import { DEFAULT_METRICS_CONFIG, ServerMetrics } from './server-metrics.js';

test('counters come from the statistics at scrape time, failures by reason, pending from the scheduler', async () => {
  const metrics: ServerMetrics = new ServerMetrics({ config: DEFAULT_METRICS_CONFIG, source: { models: () => models }, cpuIntervalMs: 0 });
  const statistics: ModelStatistics = new ModelStatistics('m', 2, metrics.observerFor('m', 2));
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
