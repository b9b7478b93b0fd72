import type { StepLoad, StepResult } from './profiler.js';
import type { Protocol } from './perf-options.js';

/** What a report says about the run, besides its steps. */
export interface ReportSettings {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly protocol: Protocol;
  readonly url: string;
  readonly mode: 'concurrency' | 'request-rate';
  readonly requestDistribution: 'constant' | 'poisson' | undefined;
  readonly batchSize: number;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  readonly percentile: number | undefined;
  readonly isStreaming: boolean;
  readonly inputData: string;
  /** False when the server has no statistics extension: the server's columns are then empty. */
  readonly hasServerStatistics: boolean;
}

/** The whole result of a run: what `--json` writes. */
export interface PerfReport {
  readonly tool: 'nereid perf';
  readonly startedAt: string;
  readonly settings: ReportSettings;
  readonly steps: readonly StepResult[];
  readonly stopReason: string | undefined;
  readonly failure: string | undefined;
}

export const loadValue = (load: StepLoad): number => (load.mode === 'concurrency' ? load.concurrency : load.requestRate);
export const loadHeading = (mode: ReportSettings['mode']): string => (mode === 'concurrency' ? 'Concurrency' : 'Request Rate');

/** The report as JSON: numbers rounded to a thousandth (microseconds: nanosecond precision at most). */
export function reportJson(report: PerfReport): string {
  return `${JSON.stringify(report, (_key, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) && Number.isFinite(value) ? Math.round(value * 1000) / 1000 : value), 2)}\n`;
}

/**
 * The report as CSV, one row per step in sweep order, times in microseconds. The first columns are
 * perf_analyzer's (-f) where Nereid measures the same thing; "Client+Network+Server Send/Recv" is the
 * average latency outside the server's queue and compute (perf_analyzer splits it further).
 */
export function reportCsv(report: PerfReport): string {
  const header = [
    loadHeading(report.settings.mode),
    'Inferences/Second',
    'Client+Network+Server Send/Recv',
    'Server Queue',
    'Server Compute Input',
    'Server Compute Infer',
    'Server Compute Output',
    'p50 latency',
    'p90 latency',
    'p95 latency',
    'p99 latency',
    'Avg latency',
    'Requests',
    'Failed Requests',
    'Server Success Count',
    'Send Rate',
    'Stable',
  ];
  const us = (value: number): string => value.toFixed(0);
  const rows = report.steps.map((step) =>
    [
      String(loadValue(step.load)),
      step.throughputInferPerSec.toFixed(2),
      us(step.overheadUs),
      us(step.serverTimesUs.queueUs),
      us(step.serverTimesUs.computeInputUs),
      us(step.serverTimesUs.computeInferUs),
      us(step.serverTimesUs.computeOutputUs),
      us(step.latencyUs.p50Us),
      us(step.latencyUs.p90Us),
      us(step.latencyUs.p95Us),
      us(step.latencyUs.p99Us),
      us(step.latencyUs.averageUs),
      String(step.requestCount),
      String(step.failedCount),
      String(step.server.successCount),
      step.sendRatePerSec.toFixed(2),
      step.isStable ? 'yes' : 'no',
    ].join(','),
  );
  return `${[header.join(','), ...rows].join('\n')}\n`;
}

/** One line about the run's settings, for the table and the plot. */
export function describeSettings(settings: ReportSettings): string {
  const version = settings.modelVersion === undefined ? '' : ` version ${settings.modelVersion}`;
  const transport = `${settings.protocol}${settings.isStreaming ? ' (streaming)' : ''} at ${settings.url}`;
  const load = settings.mode === 'request-rate' ? `, ${settings.requestDistribution} arrivals` : '';
  return `model '${settings.modelName}'${version} over ${transport}, batch size ${settings.batchSize}, ${settings.inputData} data${load}`;
}

/** The results table `nereid perf` prints at the end. */
export function reportTable(report: PerfReport): string {
  const { settings } = report;
  const ms = (us: number): string => (us / 1000).toFixed(2);
  const columns: Array<[string, (step: StepResult) => string]> = [
    [loadHeading(settings.mode), (step) => String(loadValue(step.load))],
    ['Infer/s', (step) => step.throughputInferPerSec.toFixed(1)],
    ['Avg ms', (step) => ms(step.latencyUs.averageUs)],
    ['p50 ms', (step) => ms(step.latencyUs.p50Us)],
    ['p90 ms', (step) => ms(step.latencyUs.p90Us)],
    ['p95 ms', (step) => ms(step.latencyUs.p95Us)],
    ['p99 ms', (step) => ms(step.latencyUs.p99Us)],
    ['Queue µs', (step) => step.serverTimesUs.queueUs.toFixed(0)],
    ['Input µs', (step) => step.serverTimesUs.computeInputUs.toFixed(0)],
    ['Infer µs', (step) => step.serverTimesUs.computeInferUs.toFixed(0)],
    ['Output µs', (step) => step.serverTimesUs.computeOutputUs.toFixed(0)],
    ['Other µs', (step) => step.overheadUs.toFixed(0)],
    ['Requests', (step) => String(step.requestCount)],
    ['Stable', (step) => (step.isStable ? 'yes' : 'no')],
  ];
  if (settings.mode === 'request-rate') columns.splice(1, 0, ['Sent/s', (step) => step.sendRatePerSec.toFixed(1)]);
  const cells = [columns.map(([heading]) => heading), ...report.steps.map((step) => columns.map(([, cell]) => cell(step)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const lines = cells.map((row) => row.map((cell, i) => cell.padStart(widths[i]!)).join('  '));
  const judged = settings.percentile === undefined ? 'throughput and average latency' : `throughput and p${settings.percentile} latency`;
  const notes = [
    `nereid perf: ${describeSettings(settings)}`,
    `Each step: windows of ${settings.measurementIntervalMs} ms until the last 3 agree within ${settings.stabilityPercentage} % (${judged}), at most ${settings.maxTrials}; figures from those 3.`,
    'Queue, Input, Infer, Output: the server\'s statistics per request; Other: the rest of the average latency (client, network, server front end).',
    '',
    ...lines,
  ];
  if (!settings.hasServerStatistics) notes.push('', 'The server answered no statistics (the statistics extension): its queue and compute times are not known, and shown as 0.');
  if (report.steps.some((step) => !step.isStable)) notes.push('', `Stable "no": ${settings.maxTrials} windows did not agree within ${settings.stabilityPercentage} %; those figures are less certain.`);
  if (report.stopReason !== undefined) notes.push('', `Stopped: ${report.stopReason}.`);
  if (report.failure !== undefined) notes.push('', `Failed: ${report.failure}`);
  return `${notes.join('\n')}\n`;
}
