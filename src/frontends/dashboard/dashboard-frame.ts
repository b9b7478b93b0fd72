/*
 * What the dashboard's event stream sends, once a second, as `event: frame` with this JSON as data. The
 * page (ui/dashboard/) imports these types; the server builds them in dashboard-sampler.ts.
 */
import type { RepositoryIndexEntryJson } from '../../protocol/repository-index.js';

/** The process serving, over the last interval. */
export interface ServerSample {
  readonly uptimeS: number;
  /** CPU time of the process over the interval, in cores (1.5: one and a half cores busy). */
  readonly cpuCores: number;
  readonly residentBytes: number;
  /** Models with a version READY. */
  readonly loadedModelCount: number;
}

/** Per-request means over the interval, in microseconds; undefined when no request finished in it. */
export interface LatencySplitUs {
  readonly request: number;
  readonly queue: number;
  readonly computeInput: number;
  readonly computeInfer: number;
  readonly computeOutput: number;
}

/** Request latency quantiles of the last minute, in microseconds (the metrics' latency summaries). */
export interface LatencyQuantilesUs {
  readonly p50: number | undefined;
  readonly p90: number | undefined;
  readonly p99: number | undefined;
}

/** One model version's traffic: counts since it loaded (as the statistics extension has them), rates over the interval. */
export interface ModelTraffic {
  readonly name: string;
  readonly version: string;
  readonly successCount: number;
  readonly failCount: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly requestsPerS: number;
  readonly inferencesPerS: number;
  readonly executionsPerS: number;
  readonly meanUs: LatencySplitUs | undefined;
  /** Undefined without `--metrics-config summary_latencies=true` (or with metrics off). */
  readonly quantilesUs: LatencyQuantilesUs | undefined;
  /** Failed requests by Triton's reasons (REJECTED, CANCELED, BACKEND, OTHER); undefined with metrics off. */
  readonly failuresByReason: Readonly<Record<string, number>> | undefined;
  /** Executions of each batch size since the model loaded: the statistics' batch_stats counts, ascending. */
  readonly batchExecutions: ReadonlyArray<{ readonly batchSize: number; readonly count: number }>;
  /** Time its executions took over the interval, in instance-seconds per second (what it keeps busy). */
  readonly busyInstances: number;
}

export type ControlMode = 'none' | 'explicit' | 'poll';

export interface DashboardFrame {
  readonly timeMs: number;
  /** Since the previous frame of this stream; 0 in the first, whose rates are 0. */
  readonly intervalMs: number;
  readonly controlMode: ControlMode;
  readonly server: ServerSample;
  /** The repository index: every model and version with its state and, when not ready, the reason. */
  readonly models: readonly RepositoryIndexEntryJson[];
  readonly traffic: readonly ModelTraffic[];
}
