import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnalyzeUsageError, parseAnalyzeArgs, perfOptionsFor } from './analyze-options.js';

test('defaults: quick search, throughput on p99, no constraints, nothing applied', () => {
  const options = parseAnalyzeArgs(['-m', 'digits', '--model-repository', 'models']);
  assert.notEqual(options, 'help');
  if (options === 'help') return;
  assert.equal(options.searchMode, 'quick');
  assert.deepEqual(options.criteria, { objective: 'throughput', percentile: 99, latencyBudgetMs: undefined, minThroughput: undefined });
  assert.deepEqual([options.maxConcurrency, options.maxInstanceCount, options.maxModelBatchSize, options.maxConfigs], [256, 5, 128, 32]);
  assert.equal(options.url, undefined);
  assert.equal(options.isApply, false);
  const perf = perfOptionsFor(options, '127.0.0.1:9000');
  assert.deepEqual([perf.modelName, perf.url, perf.measurementIntervalMs, perf.maxTrials, perf.stabilityPercentage, perf.percentile], ['digits', '127.0.0.1:9000', 1000, 5, 10, 99]);
});

test('the measurement flags reach nereid perf\'s options', () => {
  const options = parseAnalyzeArgs(['-m', 'm', '-u', 'h:1', '-p', '200', '-r', '3', '-s', '20', '--latency-percentile', '95', '--shape', 'IMAGE:3,4', '--input-data', 'zero']);
  if (options === 'help') return assert.fail('help');
  const perf = perfOptionsFor(options, 'h:1');
  assert.deepEqual([perf.measurementIntervalMs, perf.maxTrials, perf.stabilityPercentage, perf.percentile], [200, 3, 20, 95]);
  assert.deepEqual(perf.shapes.get('IMAGE'), [3, 4]);
  assert.deepEqual(perf.inputData, { kind: 'zero' });
});

test('bad flags are refused with the flag named', () => {
  const refuses = (args: string[], message: string): void => assert.throws(() => parseAnalyzeArgs(args), (error: Error) => error instanceof AnalyzeUsageError && error.message === message);
  refuses(['--model-repository', 'x'], 'nereid analyze: -m MODEL is required (the model to tune)');
  refuses(['-m', 'x'], 'nereid analyze: give --model-repository DIR (Nereid is started on it) or -u URL (a running server)');
  refuses(['-m', 'x', '-u', 'h:1', '--apply'], "nereid analyze: --apply writes into the model's folder: give --model-repository DIR");
  refuses(['-m', 'x', '-u', 'h:1', '--run-config-search-mode', 'fast'], "nereid analyze: --run-config-search-mode takes brute, quick, got 'fast'");
  refuses(['-m', 'x', '-u', 'h:1', '--objective', 'cost'], "nereid analyze: --objective takes throughput, latency, got 'cost'");
  refuses(['-m', 'x', '-u', 'h:1', '--run-config-search-max-instance-count', '0'], "nereid analyze: --run-config-search-max-instance-count takes an integer from 1 up, got '0'");
  refuses(['-m', 'x', '-u', 'h:1', '--latency-budget'], "nereid analyze: unknown flag '--latency-budget'. Did you mean '--latency-budget-ms'? Run 'nereid analyze --help' for the flags.");
});
