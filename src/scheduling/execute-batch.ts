import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { cancelledError } from './cancellation.js';
import type { Clock } from './clock.js';
import { requestIdPrefix } from './request-id-prefix.js';

/** A request waiting in a scheduler, with what is needed to answer it. */
export interface QueuedRequest {
  readonly request: InferRequest;
  /** Inferences it carries: its batch dimension, or 1 for a model that does not batch. */
  readonly batchSize: number;
  readonly enqueuedUs: number;
  /**
   * Fills an empty slot of a sequence batch (its control READY false): it runs with the batch, but
   * counts in no statistic and its result goes nowhere but `settle`.
   */
  readonly isPadding?: boolean;
  /** Delivers the request's outputs or error; called exactly once, unless `reschedule` is called instead. */
  settle(result: readonly Tensor[] | NereidError): void;
  /**
   * Given by a scheduler that runs a request again when its model released it with RESCHEDULE (the
   * iterative sequence batcher); absent, such a request fails with Triton's error.
   */
  reschedule?(): void;
}

export interface ExecuteBatchOptions {
  /** Reserved by the caller for this batch (or one execution the rate limiter admitted on it). */
  readonly instance: Pick<ModelInstance, 'name' | 'execute'>;
  readonly batch: readonly QueuedRequest[];
  readonly statistics: ModelStatistics;
  readonly clock: Clock;
  /** When the batch left the queue. */
  readonly startUs: number;
}

/**
 * Runs one batch on an instance, records the statistics as Triton does, and settles every request of
 * the batch. Never throws: a failure of the whole execution fails each request with it.
 * - each request: success, or fail (reason BACKEND), timed from enqueue to its response;
 * - the execution: its batch size counts every request that ran in it, its inferences only those that
 *   succeeded; queue and compute times are counted for the successful requests, the queue time with
 *   any wait for the rate limiter's resources.
 * A request cancelled while it ran counts as its backend answered it, but is settled with the
 * CANCELLED error instead of its result: nobody wants that any more.
 * A request the model released with RESCHEDULE counts as this execution's success, as Triton's
 * backends report each execution of a request, and goes back to its scheduler (`reschedule`).
 * A request released before its last response (ExecuteResult.unfinished) counts when the execution
 * returns, as Triton's backends report it at its release, and is settled when its promise resolves.
 * A decoupled model's request (one with `onResponse`) runs with `reportResponse` set, for a backend
 * that times its responses.
 */
export async function executeBatch(options: ExecuteBatchOptions): Promise<void> {
  const { instance, batch } = options;
  let result: ExecuteResult;
  const isTraced = batch.some((queued) => queued.request.trace !== undefined);
  const computeStartNs = isTraced ? process.hrtime.bigint() : 0n;
  try {
    result = await instance.execute(batch.map((queued) => (queued.request.onResponse === undefined ? queued.request : withResponseReports(queued.request, options.statistics))));
    if (isTraced) traceCompute(batch, result, computeStartNs);
  } catch (error) {
    failBatch(options, error);
    return;
  }
  settleBatch(options, result);
}

/** A decoupled model's request whose backend may report each response's times: its response_stats, by index in the request. */
function withResponseReports(request: InferRequest, statistics: ModelStatistics): InferRequest {
  let index = 0;
  return { ...request, reportResponse: (report) => statistics.recordResponse(index++, report) };
}

/** Fails every request of a batch whose execution threw: counted as the backend's failures. */
export function failBatch({ instance, batch, statistics, clock }: ExecuteBatchOptions, error: unknown): void {
  const failure =
    error instanceof NereidError
      ? error
      : new NereidError('INTERNAL', `instance '${instance.name}' failed to execute: ${(error as Error).message}`, { cause: error });
  const endUs = clock.nowUs();
  for (const queued of batch) {
    if (queued.isPadding !== true) statistics.recordRequest('BACKEND', (endUs - queued.enqueuedUs) * 1000);
    queued.settle(failure);
  }
}

/** Records the statistics of an execution that returned and settles each of its requests (see executeBatch). */
export function settleBatch({ instance, batch, statistics, clock, startUs }: ExecuteBatchOptions, result: ExecuteResult): void {
  const rescheduled = result.rescheduled ?? NONE_RESCHEDULED;
  const responses = batch.map((queued, index) => {
    if (rescheduled.has(index) && queued.reschedule === undefined) return rescheduleRefused(queued.request);
    return result.responses[index] ?? new NereidError('INTERNAL', `instance '${instance.name}' returned no response for a request`);
  });
  const succeeded = batch.filter((queued, index) => queued.isPadding !== true && !(responses[index] instanceof NereidError));
  if (succeeded.length > 0) {
    statistics.recordExecution({
      batchSize: batch.reduce((sum, queued) => sum + (queued.isPadding === true ? 0 : queued.batchSize), 0),
      inferenceCount: succeeded.reduce((sum, queued) => sum + queued.batchSize, 0),
      queueNs: succeeded.map((queued) => Math.max(0, (startUs - queued.enqueuedUs) * 1000) + (result.waitNs ?? 0)),
      timing: result.timing,
    });
  }
  const endUs = clock.nowUs();
  batch.forEach((queued, index) => {
    const response = responses[index]!;
    if (queued.isPadding !== true) statistics.recordRequest(response instanceof NereidError ? 'BACKEND' : 'SUCCESS', (endUs - queued.enqueuedUs) * 1000);
    const isCancelled = queued.request.signal?.aborted === true;
    const unfinished = response instanceof NereidError ? undefined : result.unfinished?.get(index);
    if (rescheduled.has(index) && queued.reschedule !== undefined && !isCancelled) queued.reschedule();
    else if (unfinished !== undefined) void unfinished.then((final) => queued.settle(queued.request.signal?.aborted === true ? cancelledError(queued.request, 'executing') : final));
    else queued.settle(isCancelled ? cancelledError(queued.request, 'executing') : response);
  });
}

const NONE_RESCHEDULED: ReadonlySet<number> = new Set();

/** Triton's answer to a release with RESCHEDULE where the scheduler cannot run the request again (core src/infer_request.cc). */
function rescheduleRefused(request: InferRequest): NereidError {
  return new NereidError(
    'INVALID_ARG',
    `${requestIdPrefix(request)}Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the model is not configured to handle such a flag. ` +
      'Only a model with sequence_batching { iterative_sequence: true } can reschedule a request',
  );
}

/**
 * Triton's compute timestamps of each traced request of a batch (core src/infer_request.cc
 * `ReportStatistics`): the execution's start and end, the inputs ready after its input time, the
 * outputs started before its end by its output time; and, at TENSORS level, the outputs it gave.
 */
function traceCompute(batch: readonly QueuedRequest[], result: ExecuteResult, startNs: bigint): void {
  const endNs = process.hrtime.bigint();
  const inputEndNs = startNs + BigInt(Math.round(result.timing.inputNs));
  const outputStartNs = endNs - BigInt(Math.round(result.timing.outputNs));
  batch.forEach((queued, index) => {
    const { trace } = queued.request;
    if (trace === undefined) return;
    trace.timestamp('COMPUTE_START', startNs);
    trace.timestamp('COMPUTE_INPUT_END', inputEndNs < endNs ? inputEndNs : endNs);
    trace.timestamp('COMPUTE_OUTPUT_START', outputStartNs > startNs ? outputStartNs : startNs);
    trace.timestamp('COMPUTE_END', endNs);
    const response = result.responses[index];
    if (response !== undefined && !(response instanceof NereidError)) trace.tensors('TENSOR_BACKEND_OUTPUT', response);
  });
}
