import type { ExecuteResult, ModelInstance } from '../backends/backend.js';
import { NereidError } from '../core/errors.js';
import type { InferRequest } from '../core/infer-request.js';
import type { Tensor } from '../core/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';

/** A request waiting in a scheduler, with what is needed to answer it. */
export interface QueuedRequest {
  readonly request: InferRequest;
  /** Inferences it carries: its batch dimension, or 1 for a model that does not batch. */
  readonly batchSize: number;
  readonly enqueuedUs: number;
  /** Delivers the request's outputs or error; called exactly once. */
  settle(result: readonly Tensor[] | NereidError): void;
}

/**
 * Runs one batch on an instance the caller has reserved, records the execution's statistics, and
 * settles every request of the batch. Never throws: a failure of the whole execution fails each
 * request with it.
 */
export async function executeBatch(
  instance: ModelInstance,
  batch: readonly QueuedRequest[],
  statistics: ModelStatistics,
  startUs: number,
): Promise<void> {
  let result: ExecuteResult;
  try {
    result = await instance.execute(batch.map((queued) => queued.request));
  } catch (error) {
    const failure =
      error instanceof NereidError
        ? error
        : new NereidError('INTERNAL', `instance '${instance.name}' failed to execute: ${(error as Error).message}`, { cause: error });
    for (const queued of batch) queued.settle(failure);
    return;
  }
  const executed = batch.filter((_, index) => !(result.responses[index] instanceof NereidError));
  if (executed.length > 0) {
    statistics.recordExecution(
      executed.reduce((sum, queued) => sum + queued.batchSize, 0),
      executed.map((queued) => Math.max(0, (startUs - queued.enqueuedUs) * 1000)),
      result.timing,
    );
  }
  batch.forEach((queued, index) => {
    queued.settle(result.responses[index] ?? new NereidError('INTERNAL', `instance '${instance.name}' returned no response for a request`));
  });
}
