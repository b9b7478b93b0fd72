import { type LiveCounts, type SendRequest, type WindowSamples, runConcurrencyWindow, runRequestRateWindow } from './load-generator.js';
import {
  type LatencySummary,
  type ServerCounters,
  type ServerTimes,
  type Stability,
  type WindowMeasurement,
  STABILITY_WINDOW_COUNT,
  judgedLatencyUs,
  mergeWindows,
  serverTimesOf,
  stabilityOf,
  subtractCounters,
  summarizeLatencies,
  throughputOf,
} from './measurement.js';
import type { LoadRange } from './perf-options.js';
import type { Random } from './random.js';

/** The load of one step of the sweep. */
export type StepLoad = { readonly mode: 'concurrency'; readonly concurrency: number } | { readonly mode: 'request-rate'; readonly requestRate: number };

/** One measurement window as reported (`windows` in the JSON). */
export interface WindowResult {
  readonly durationMs: number;
  readonly sentCount: number;
  /** Successful requests: what the server's statistics must count as `success` over the same window. */
  readonly requestCount: number;
  readonly failedCount: number;
  readonly throughputInferPerSec: number;
  readonly latencyUs: LatencySummary;
  /** The statistics extension's counters over the window (after minus before). */
  readonly server: ServerCounters;
}

export interface StepResult {
  readonly load: StepLoad;
  /** Whether the last three windows agreed; the figures are theirs either way. */
  readonly isStable: boolean;
  readonly durationMs: number;
  readonly sentCount: number;
  readonly requestCount: number;
  readonly failedCount: number;
  readonly throughputInferPerSec: number;
  /** Requests sent per second over the span of sending (the rate achieved, in request-rate mode). */
  readonly sendRatePerSec: number;
  readonly latencyUs: LatencySummary;
  readonly server: ServerCounters;
  readonly serverTimesUs: ServerTimes;
  /** Average latency not spent in the server's queue or compute: client, network and the server's front end. */
  readonly overheadUs: number;
  /** Request-rate mode: how late requests left after their scheduled time, on average. */
  readonly averageSendLagUs: number | undefined;
  /** Every window of the step, the unstable ones first. */
  readonly windows: readonly WindowResult[];
}

export interface ProfileSettings {
  readonly range: LoadRange;
  readonly batchSize: number;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  readonly percentile: number | undefined;
  readonly latencyThresholdMs: number;
}

/** What the profiler tells as it goes (the progress display listens). */
export interface ProfileHooks {
  onWindowStart?(load: StepLoad, windowNumber: number, live: LiveCounts): void;
  onWindowEnd?(load: StepLoad, windowNumber: number, window: WindowResult, stability: Stability): void;
  onStepEnd?(result: StepResult): void;
}

export interface ProfileDependencies {
  readonly send: SendRequest;
  /** Reads the server's statistics counters for the model measured. */
  readonly readServerCounters: () => Promise<ServerCounters>;
  readonly random: Random;
  readonly hooks?: ProfileHooks;
}

export interface ProfileOutcome {
  readonly steps: readonly StepResult[];
  /** Why the sweep ended before the end of its range, if it did. */
  readonly stopReason: string | undefined;
  /** Set when requests failed: the sweep stops at the step where they did, as perf_analyzer does. */
  readonly failure: string | undefined;
}

/** The loads of a range: START, START+STEP, … up to END; without END (0), on until the latency threshold stops them. */
export function* stepLoads(range: LoadRange): Generator<StepLoad> {
  for (let index = 0; ; index++) {
    const value = range.start + index * range.step;
    if (range.end !== 0 && value > range.end + 1e-9) return;
    yield range.mode === 'concurrency' ? { mode: 'concurrency', concurrency: Math.round(value) } : { mode: 'request-rate', requestRate: Number(value.toFixed(6)) };
  }
}

export function describeLoad(load: StepLoad): string {
  return load.mode === 'concurrency' ? `concurrency ${load.concurrency}` : `request rate ${load.requestRate}/s`;
}

function windowResultOf(measurement: WindowMeasurement): WindowResult {
  const { samples } = measurement;
  return {
    durationMs: samples.durationMs,
    sentCount: samples.sentCount,
    requestCount: samples.latenciesUs.length,
    failedCount: samples.failedCount,
    throughputInferPerSec: throughputOf(samples, measurement.batchSize),
    latencyUs: summarizeLatencies(samples.latenciesUs),
    server: measurement.server,
  };
}

function stepResultOf(load: StepLoad, windows: readonly WindowMeasurement[], isStable: boolean): StepResult {
  const merged = mergeWindows(windows.slice(-STABILITY_WINDOW_COUNT));
  const summary = windowResultOf(merged);
  const serverTimesUs = serverTimesOf(merged.server);
  const serverUs = serverTimesUs.queueUs + serverTimesUs.computeInputUs + serverTimesUs.computeInferUs + serverTimesUs.computeOutputUs;
  return {
    load,
    isStable,
    ...summary,
    sendRatePerSec: merged.samples.sendSpanMs > 0 ? (merged.samples.sentCount * 1000) / merged.samples.sendSpanMs : 0,
    serverTimesUs,
    overheadUs: Math.max(0, summary.latencyUs.averageUs - serverUs),
    averageSendLagUs: merged.samples.averageSendLagUs,
    windows: windows.map(windowResultOf),
  };
}

/**
 * Runs the sweep, perf_analyzer's way: for each load of the range, measurement windows of
 * `measurementIntervalMs` until the last three agree within `stabilityPercentage` (or `maxTrials`
 * windows have run); the step reports those three windows merged. The server's statistics are read
 * before the first window and after each one, so each window has its own exact server delta.
 */
export async function profile(settings: ProfileSettings, dependencies: ProfileDependencies): Promise<ProfileOutcome> {
  const { hooks = {} } = dependencies;
  const distribution = settings.range.mode === 'request-rate' ? settings.range.distribution : 'constant';
  const steps: StepResult[] = [];
  for (const load of stepLoads(settings.range)) {
    const windows: WindowMeasurement[] = [];
    let stability: Stability = { isStable: false, throughputSpreadPercent: Number.POSITIVE_INFINITY, latencySpreadPercent: Number.POSITIVE_INFINITY };
    let before = await dependencies.readServerCounters();
    for (let windowNumber = 1; windowNumber <= settings.maxTrials; windowNumber++) {
      const live: LiveCounts = { completed: 0, failed: 0 };
      hooks.onWindowStart?.(load, windowNumber, live);
      const samples: WindowSamples =
        load.mode === 'concurrency'
          ? await runConcurrencyWindow({ send: dependencies.send, concurrency: load.concurrency, durationMs: settings.measurementIntervalMs, live })
          : await runRequestRateWindow({
              send: dependencies.send,
              rate: { ratePerSec: load.requestRate, distribution, random: dependencies.random },
              durationMs: settings.measurementIntervalMs,
              live,
            });
      const after = await dependencies.readServerCounters();
      windows.push({ samples, batchSize: settings.batchSize, server: subtractCounters(after, before) });
      before = after;
      stability = stabilityOf(windows, settings.stabilityPercentage, settings.percentile);
      hooks.onWindowEnd?.(load, windowNumber, windowResultOf(windows.at(-1)!), stability);
      if (samples.failedCount > 0 || stability.isStable) break;
    }
    const result = stepResultOf(load, windows, stability.isStable);
    steps.push(result);
    hooks.onStepEnd?.(result);
    const failed = windows.at(-1)!.samples;
    if (failed.failedCount > 0) {
      const failure = `${failed.failedCount} of ${failed.sentCount} requests failed at ${describeLoad(load)}; the first: ${failed.firstError}`;
      return { steps, stopReason: undefined, failure };
    }
    if (settings.latencyThresholdMs > 0) {
      const latencyUs = judgedLatencyUs(mergeWindows(windows.slice(-STABILITY_WINDOW_COUNT)).samples.latenciesUs, settings.percentile);
      if (latencyUs > settings.latencyThresholdMs * 1000) {
        const which = settings.percentile === undefined ? 'average latency' : `p${settings.percentile} latency`;
        return { steps, stopReason: `${which} ${(latencyUs / 1000).toFixed(2)} ms at ${describeLoad(load)} is over the threshold of ${settings.latencyThresholdMs} ms`, failure: undefined };
      }
    }
  }
  return { steps, stopReason: undefined, failure: undefined };
}
