import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepAt } from '../../test/helpers/measured-steps.js';
import { renderAnalyzeHtml } from './analyze-html.js';
import { analyzeCsv, analyzeTable, summarize } from './analyze-report.js';
import type { AnalyzeResult, ConfigResult } from './run-analyze.js';

function configResult(label: string, runConfig: ConfigResult['runConfig'], steps: ConfigResult['steps'], operatingConcurrency: number | undefined, isDefault = false): ConfigResult {
  return { label, runConfig, isDefault, steps, operatingConcurrency, stopReason: undefined, failure: undefined };
}

const DEFAULT = configResult('i1 b8 off', { instanceCount: 1, maxBatchSize: 8, dynamicBatching: undefined }, [stepAt(1, 100, 2), stepAt(2, 150, 8), stepAt(4, 160, 20)], 2, true);
const BEST = configResult('i2 b16 d500', { instanceCount: 2, maxBatchSize: 16, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] } }, [stepAt(1, 120, 3), stepAt(2, 240, 6), stepAt(4, 360, 9)], 4);

const RESULT: AnalyzeResult = {
  tool: 'nereid analyze',
  startedAt: '2026-12-01T18:00:00.000Z',
  modelName: 'digits',
  url: '127.0.0.1:8000',
  searchMode: 'quick',
  criteria: { objective: 'throughput', percentile: 99, latencyBudgetMs: 10, minThroughput: undefined },
  canBatch: true,
  batchingNote: undefined,
  configs: [DEFAULT, BEST],
  bestLabel: 'i2 b16 d500',
  front: [
    { label: 'i1 b8 off', concurrency: 1, throughputInferPerSec: 100, latencyUs: 2000 },
    { label: 'i2 b16 d500', concurrency: 2, throughputInferPerSec: 240, latencyUs: 6000 },
    { label: 'i2 b16 d500', concurrency: 4, throughputInferPerSec: 360, latencyUs: 9000 },
  ],
  servedConfig: { name: 'digits', max_batch_size: 8 },
};

test('the summary names the winner and how it compares with the default on the objective', () => {
  assert.equal(summarize(RESULT), "2 instances with batching up to 16 and a 500 µs delay: 2.4x the default's throughput at p99 ≤ 10 ms (360.0 infer/s at concurrency 4, p99 9.00 ms).");
  const latency = { ...RESULT, criteria: { ...RESULT.criteria, objective: 'latency' as const }, bestLabel: 'i1 b8 off' };
  assert.match(summarize(latency), /^The model's own configuration, 1 instance without dynamic batching, is the best measured at p99 ≤ 10 ms/);
  assert.match(summarize({ ...RESULT, bestLabel: undefined }), /^No configuration measured meets p99 ≤ 10 ms/);
});

test('the table ranks the configurations and the CSV has a row per level', () => {
  const table = analyzeTable(RESULT);
  assert.ok(table.indexOf('i2 b16 d500 *') < table.indexOf('i1 b8 off (default)'), table);
  const csv = analyzeCsv(RESULT).trimEnd().split('\n');
  assert.equal(csv.length, 1 + 6);
  assert.ok(csv[0]!.startsWith('Config,Is Default,Is Best,'));
  assert.deepEqual(csv.filter((line) => line.split(',')[2] === 'yes').map((line) => line.split(',').slice(0, 1).concat(line.split(',')[8]!)), [['i2 b16 d500', '4']]);
});

test('the HTML report holds both plots, the front and the best config.pbtxt', () => {
  const html = renderAnalyzeHtml(RESULT, 'max_batch_size: 16\n');
  assert.equal(html.match(/<svg /g)?.length, 2);
  assert.match(html, /<g class="front"/);
  assert.match(html, /class="budget"/);
  assert.match(html, /<pre id="best-config">max_batch_size: 16/);
});
