import { type Criteria, type MeasuredStep, describeConstraints, latencyUsAt, meetsCriteria } from './objective.js';
import { describeRunConfig } from './run-config.js';
import type { AnalyzeResult, ConfigResult } from './run-analyze.js';

const ms = (us: number): string => (us / 1000).toFixed(2);

export function operatingStepOf(result: ConfigResult): MeasuredStep | undefined {
  return result.steps.find((step) => step.concurrency === result.operatingConcurrency);
}

export function bestOf(result: AnalyzeResult): ConfigResult | undefined {
  return result.configs.find((config) => config.label === result.bestLabel);
}

export function defaultOf(result: AnalyzeResult): ConfigResult {
  return result.configs.find((config) => config.isDefault)!;
}

/** The configurations by rank: those meeting the criteria by their operating point, then the rest in measurement order. */
export function rankedConfigs(result: AnalyzeResult): ConfigResult[] {
  const { criteria } = result;
  const value = (config: ConfigResult): number => {
    const step = operatingStepOf(config)!;
    return criteria.objective === 'throughput' ? -step.throughputInferPerSec : latencyUsAt(step, criteria.percentile);
  };
  const meeting = result.configs.filter((config) => config.operatingConcurrency !== undefined).sort((a, b) => value(a) - value(b));
  return [...meeting, ...result.configs.filter((config) => config.operatingConcurrency === undefined)];
}

function atPoint(step: MeasuredStep, criteria: Criteria): string {
  return `${step.throughputInferPerSec.toFixed(1)} infer/s at concurrency ${step.concurrency}, p${criteria.percentile} ${ms(latencyUsAt(step, criteria.percentile))} ms`;
}

const ratio = (value: number): string => `${value >= 10 ? value.toFixed(0) : value.toFixed(1)}x`;

/**
 * The one sentence that explains the result, e.g. "2 instances with batching up to 16 and a 500 µs
 * delay: 2.4x the default's throughput at p99 ≤ 10 ms (…)".
 */
export function summarize(result: AnalyzeResult): string {
  const { criteria } = result;
  const constraints = describeConstraints(criteria);
  const best = bestOf(result);
  if (best === undefined) {
    if (constraints === '') return 'No configuration could be measured.';
    return `No configuration measured meets ${constraints}: relax the budget, or raise --run-config-search-max-concurrency and the other limits.`;
  }
  const bestStep = operatingStepOf(best)!;
  const where = constraints === '' ? '' : ` at ${constraints}`;
  if (best.isDefault) return `The model's own configuration, ${describeRunConfig(best.runConfig)}, is the best measured${where}: ${atPoint(bestStep, criteria)}; no candidate beat it.`;
  const baselineStep = operatingStepOf(defaultOf(result));
  const detail = `(${atPoint(bestStep, criteria)})`;
  if (baselineStep === undefined) return `${describeRunConfig(best.runConfig)}: ${bestStep.throughputInferPerSec.toFixed(1)} infer/s${where}, which the model's own configuration does not meet at any concurrency ${detail}.`;
  if (criteria.objective === 'throughput') {
    return `${describeRunConfig(best.runConfig)}: ${ratio(bestStep.throughputInferPerSec / baselineStep.throughputInferPerSec)} the default's throughput${where} ${detail}.`;
  }
  const latency = (step: MeasuredStep): number => latencyUsAt(step, criteria.percentile);
  return `${describeRunConfig(best.runConfig)}: p${criteria.percentile} ${ms(latency(bestStep))} ms, ${ratio(latency(bestStep) / latency(baselineStep))} the default's ${ms(latency(baselineStep))} ms${where} ${detail}.`;
}

/** The table printed at the end: one row per configuration, best first, then the Pareto front. */
export function analyzeTable(result: AnalyzeResult): string {
  const { criteria } = result;
  const p = `p${criteria.percentile}`;
  const onFront = new Set(result.front.map((point) => point.label));
  const rows = rankedConfigs(result).map((config) => {
    const step = operatingStepOf(config);
    const note = config.failure ?? (step === undefined ? `meets no concurrency (${describeConstraints(criteria) || 'no step'})` : '');
    return [
      `${config.label}${config.isDefault ? ' (default)' : ''}${config.label === result.bestLabel ? ' *' : ''}`,
      step === undefined ? '-' : String(step.concurrency),
      step === undefined ? '-' : step.throughputInferPerSec.toFixed(1),
      step === undefined ? '-' : ms(latencyUsAt(step, criteria.percentile)),
      String(config.steps.length),
      onFront.has(config.label) ? 'yes' : '',
      note,
    ];
  });
  const cells = [['Config', 'Concurrency', 'Infer/s', `${p} ms`, 'Levels', 'Front', 'Note'], ...rows];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const lines = cells.map((row) => row.map((cell, i) => (i === 0 || i === row.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd());
  const front = result.front.map((point) => `  ${point.label} at concurrency ${point.concurrency}: ${point.throughputInferPerSec.toFixed(1)} infer/s, ${p} ${ms(point.latencyUs)} ms`);
  const constraints = describeConstraints(criteria);
  return [
    `nereid analyze: model '${result.modelName}' at ${result.url}, ${result.searchMode} search, ${result.configs.length} configurations measured`,
    `Objective: ${criteria.objective === 'throughput' ? 'the most throughput' : `the lowest ${p} latency`}${constraints === '' ? '' : `, with ${constraints}`}. Labels: i instances, b max_batch_size, d queue delay µs, p preferred batch size, off no dynamic batching.`,
    ...(result.batchingNote === undefined ? [] : [`Note: ${result.batchingNote}.`]),
    '',
    ...lines,
    '',
    `Pareto front (throughput against ${p} latency):`,
    ...front,
    '',
    `Best (*): ${summarize(result)}`,
    '',
  ].join('\n');
}

/** One row per configuration and concurrency; times in microseconds. */
export function analyzeCsv(result: AnalyzeResult): string {
  const frontKeys = new Set(result.front.map((point) => `${point.label}@${point.concurrency}`));
  const header = [
    'Config', 'Is Default', 'Is Best', 'Instance Count', 'Max Batch Size', 'Dynamic Batching', 'Max Queue Delay', 'Preferred Batch Sizes',
    'Concurrency', 'Inferences/Second', 'p50 latency', 'p90 latency', 'p95 latency', 'p99 latency', 'Avg latency', 'Server Queue', 'Server Compute',
    'Requests', 'Stable', 'Meets Constraints', 'On Front',
  ];
  const rows = result.configs.flatMap((config) =>
    config.steps.map((step) => {
      const batching = config.runConfig.dynamicBatching;
      return [
        config.label, config.isDefault ? 'yes' : 'no', config.label === result.bestLabel && step.concurrency === config.operatingConcurrency ? 'yes' : 'no',
        config.runConfig.instanceCount, config.runConfig.maxBatchSize, batching === undefined ? 'no' : 'yes', batching?.maxQueueDelayUs ?? '', batching?.preferredBatchSizes.join(' ') ?? '',
        step.concurrency, step.throughputInferPerSec.toFixed(2), ...[step.latencyUs.p50Us, step.latencyUs.p90Us, step.latencyUs.p95Us, step.latencyUs.p99Us, step.latencyUs.averageUs, step.serverQueueUs, step.serverComputeUs].map((us) => us.toFixed(0)),
        step.requestCount, step.isStable ? 'yes' : 'no', meetsCriteria(step, result.criteria) ? 'yes' : 'no', frontKeys.has(`${config.label}@${step.concurrency}`) ? 'yes' : 'no',
      ].join(',');
    }),
  );
  return `${[header.join(','), ...rows].join('\n')}\n`;
}

/** The result as JSON, numbers rounded to a thousandth, with the summary sentence. */
export function analyzeJson(result: AnalyzeResult): string {
  const round = (_key: string, value: unknown): unknown => (typeof value === 'number' && !Number.isInteger(value) && Number.isFinite(value) ? Math.round(value * 1000) / 1000 : value);
  return `${JSON.stringify({ ...result, summary: summarize(result) }, round, 2)}\n`;
}
