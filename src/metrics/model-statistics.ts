import type { ResponseReport } from '../kernel/infer-request.js';
import type { ComputeTiming } from '../kernel/model-instance.js';
import type { Duration, ModelStatistics as ReportedStatistics, ResponseStatistics } from '../protocol/statistics.js';

/** A Duration that records add to. */
type RunningDuration = { -readonly [K in keyof Duration]: Duration[K] };

/** Why a request failed, as Triton's nv_inference_request_failure `reason` label says it. */
export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';
export const FAILURE_REASONS: readonly FailureReason[] = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'];

/** Sees each request and execution as it is recorded: for metrics that need every observation. */
export interface StatisticsObserver {
  onRequest(isSuccess: boolean, durationNs: number): void;
  onExecution(execution: Execution): void;
  /** A request answered from the response cache; the lookup took `lookupNs`. */
  onCacheHit(lookupNs: number): void;
  /** A successful request that missed the cache; its lookup and insertion took `missNs`. */
  onCacheMiss(missNs: number): void;
  /** A decoupled model's request sent its first response `durationNs` after it was enqueued. */
  onFirstResponse(durationNs: number): void;
  /** The model version unloaded: nothing more is observed, and what was shown of it goes. */
  close(): void;
}

/** What one model version's metric series depend on (ServerMetrics.observerFor). */
export interface ModelMetricSettings {
  /** Its requests go through the response cache: the cache series instead of the request summary. */
  readonly isResponseCacheEnabled: boolean;
  /** It sends any number of responses: the first-response histogram (with histogram_latencies). */
  readonly isDecoupled: boolean;
  /** The first-response histogram's buckets from its model_metrics; Triton's defaults when absent. */
  readonly firstResponseBucketsMs?: readonly number[];
  /** How long its load took, in seconds (nv_model_load_duration_secs). */
  readonly loadSeconds?: number;
}

/** One model execution, as the scheduler that ran it reports it. */
export interface Execution {
  /** Inferences that ran in it, failed requests included: its batch_stats size. */
  readonly batchSize: number;
  /** Inferences of the requests that succeeded: what inference_count counts. */
  readonly inferenceCount: number;
  /** Each successful request's time in the queue. */
  readonly queueNs: readonly number[];
  readonly timing: ComputeTiming;
}

type RunningResponseStatistics = { readonly [K in keyof ResponseStatistics]: RunningDuration };

/** A snapshot of one model version's statistics: what the extension reports, and what only the metrics read. */
export interface ModelStatisticsSnapshot extends ReportedStatistics {
  /** The failed requests by reason (nv_inference_request_failure); they add up to `inferenceStats.fail.count`. */
  readonly failuresByReason: Readonly<Record<FailureReason, number>>;
}

const zero = (): RunningDuration => ({ count: 0, ns: 0 });
const add = (duration: RunningDuration, ns: number, count = 1): void => {
  duration.count += count;
  duration.ns += ns;
};
const copy = (duration: Duration): Duration => ({ ...duration });

/**
 * The statistics extension's numbers for one model version, with the meaning Triton's docs give them
 * (docs/protocol/extension_statistics.md), which perf_analyzer relies on to split latency:
 * - success/fail: requests, and their time from arriving at the model to their response;
 * - queue: per request, the time from enqueue to the start of its execution;
 * - compute_input/infer/output: per request, the time of the execution it ran in (a batch of n
 *   requests adds n counts of the batch's durations);
 * - inference_count: inferences executed (a request of batch size n counts n); execution_count: executions;
 * - batch_stats: per executed batch size, one count per execution;
 * - response_stats: per response index, what the backend reported of each response (recordResponse).
 */
export class ModelStatistics {
  readonly #name: string;
  readonly #version: string;
  #lastInference = 0;
  #inferenceCount = 0;
  #executionCount = 0;
  readonly #success = zero();
  readonly #fail = zero();
  readonly #failuresByReason: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  readonly #queue = zero();
  readonly #computeInput = zero();
  readonly #computeInfer = zero();
  readonly #computeOutput = zero();
  readonly #cacheHit = zero();
  readonly #cacheMiss = zero();
  readonly #batches = new Map<number, { computeInput: RunningDuration; computeInfer: RunningDuration; computeOutput: RunningDuration }>();
  readonly #responses = new Map<string, RunningResponseStatistics>();

  readonly #observer: StatisticsObserver | undefined;

  /** `--model-namespacing`: the model's namespace, in the snapshot for the metrics' label (Triton's statistics carry none). */
  readonly #namespace: string | undefined;

  constructor(name: string, version: number, observer?: StatisticsObserver, namespace?: string) {
    this.#name = name;
    this.#namespace = namespace;
    this.#version = String(version);
    this.#observer = observer;
  }

  /**
   * A request that reached the model was answered, `durationNs` after it was queued: 'SUCCESS', or why
   * it failed. Requests refused before queuing (queue full, model unloading) are not counted, as in Triton.
   */
  recordRequest(outcome: 'SUCCESS' | FailureReason, durationNs: number): void {
    const ns = Math.max(0, Math.round(durationNs));
    if (outcome === 'SUCCESS') add(this.#success, ns);
    else {
      add(this.#fail, ns);
      this.#failuresByReason[outcome]++;
    }
    this.#observer?.onRequest(outcome === 'SUCCESS', ns);
  }

  /**
   * A request answered from the response cache (Triton's UpdateSuccessCacheHit): a success taking
   * `requestNs`, a queue count with the time before the lookup (none: the lookup is the first thing
   * the model does), and a cache hit taking `lookupNs`; no inference or execution is counted.
   */
  recordCacheHit(requestNs: number, lookupNs: number): void {
    const ns = Math.max(0, Math.round(lookupNs));
    add(this.#success, Math.max(0, Math.round(requestNs)));
    add(this.#queue, 0);
    add(this.#cacheHit, ns);
    this.#observer?.onCacheHit(ns);
  }

  /**
   * A successful request that missed the cache and was executed (Triton's UpdateSuccessCacheMiss): the
   * lookup and the insertion, `missNs` in all, are a cache miss and are added to the request's duration.
   */
  recordCacheMiss(missNs: number): void {
    const ns = Math.max(0, Math.round(missNs));
    this.#success.ns += ns;
    add(this.#cacheMiss, ns);
    this.#observer?.onCacheMiss(ns);
  }

  /** An execution with at least one successful request finished. */
  recordExecution(execution: Execution): void {
    const { batchSize, inferenceCount, queueNs, timing } = execution;
    this.#executionCount++;
    this.#inferenceCount += inferenceCount;
    this.#lastInference = Date.now();
    const requests = queueNs.length;
    for (const ns of queueNs) add(this.#queue, Math.round(ns));
    add(this.#computeInput, timing.inputNs * requests, requests);
    add(this.#computeInfer, timing.inferNs * requests, requests);
    add(this.#computeOutput, timing.outputNs * requests, requests);
    let batch = this.#batches.get(batchSize);
    if (batch === undefined) {
      batch = { computeInput: zero(), computeInfer: zero(), computeOutput: zero() };
      this.#batches.set(batchSize, batch);
    }
    add(batch.computeInput, timing.inputNs);
    add(batch.computeInfer, timing.inferNs);
    add(batch.computeOutput, timing.outputNs);
    this.#observer?.onExecution(execution);
  }

  /**
   * The `index`-th response of a request (0 for its first), as its backend timed it: Triton's
   * UpdateResponseSuccess, UpdateResponseFail and UpdateResponseEmpty (core src/infer_stats.cc).
   * compute_infer runs from the response's start to its outputs' start (to its end for a response
   * without outputs), compute_output from there to its end, and success, fail or empty_response the
   * whole of it. A report whose times run backwards is dropped, as Triton refuses it.
   */
  recordResponse(index: number, report: ResponseReport): void {
    const { startNs, outputStartNs, endNs, isError } = report;
    const hasOutputs = outputStartNs !== undefined;
    if (startNs > endNs || (hasOutputs && (startNs > outputStartNs || outputStartNs > endNs))) return;
    const key = String(index);
    let response = this.#responses.get(key);
    if (response === undefined) {
      response = { computeInfer: zero(), computeOutput: zero(), success: zero(), fail: zero(), emptyResponse: zero(), cancel: zero() };
      this.#responses.set(key, response);
    }
    const totalNs = Math.round(endNs - startNs);
    add(response.computeInfer, Math.round((hasOutputs ? outputStartNs : endNs) - startNs));
    if (hasOutputs && (!isError || endNs > outputStartNs)) add(response.computeOutput, Math.round(endNs - outputStartNs));
    if (isError) add(response.fail, totalNs);
    else if (hasOutputs) add(response.success, totalNs);
    else add(response.emptyResponse, totalNs);
  }

  /**
   * A decoupled model's request sent its first response (outputs or an error) `durationNs` after it
   * was enqueued: only the metrics' nv_inference_first_response_histogram_ms observe it.
   */
  recordFirstResponse(durationNs: number): void {
    this.#observer?.onFirstResponse(durationNs);
  }

  /** The version unloaded: its observer shows nothing more of it (the statistics stay readable). */
  close(): void {
    this.#observer?.close();
  }

  snapshot(): ModelStatisticsSnapshot {
    return {
      name: this.#name,
      version: this.#version,
      ...(this.#namespace !== undefined ? { namespace: this.#namespace } : {}),
      lastInference: this.#lastInference,
      inferenceCount: this.#inferenceCount,
      executionCount: this.#executionCount,
      inferenceStats: {
        success: copy(this.#success),
        fail: copy(this.#fail),
        queue: copy(this.#queue),
        computeInput: copy(this.#computeInput),
        computeInfer: copy(this.#computeInfer),
        computeOutput: copy(this.#computeOutput),
        cacheHit: copy(this.#cacheHit),
        cacheMiss: copy(this.#cacheMiss),
      },
      batchStats: [...this.#batches]
        .sort(([a], [b]) => a - b)
        .map(([batchSize, batch]) => ({
          batchSize,
          computeInput: copy(batch.computeInput),
          computeInfer: copy(batch.computeInfer),
          computeOutput: copy(batch.computeOutput),
        })),
      responseStats: Object.fromEntries(
        [...this.#responses].map(([key, response]) => [
          key,
          {
            computeInfer: copy(response.computeInfer),
            computeOutput: copy(response.computeOutput),
            success: copy(response.success),
            fail: copy(response.fail),
            emptyResponse: copy(response.emptyResponse),
            cancel: copy(response.cancel),
          },
        ]),
      ),
      failuresByReason: { ...this.#failuresByReason },
    };
  }
}
