import type { InferRequest } from '../core/infer-request.js';
import type { Tensor } from '../core/tensor.js';

/**
 * Decides when and on which instance each request of one model version runs.
 * Contract (as Triton's Scheduler::Enqueue): once `enqueue` is called the scheduler owns the request
 * until the returned promise settles; the promise resolves with the request's outputs or rejects with
 * a NereidError for that request alone.
 */
export interface Scheduler {
  enqueue(request: InferRequest): Promise<readonly Tensor[]>;
  /** Requests accepted and not yet settled. */
  readonly inflightCount: number;
  /** Requests accepted and not yet executing (Triton's pending request count). */
  readonly queuedCount: number;
  /**
   * Stops taking requests, waits for the accepted ones to settle (at most `drainTimeoutMs` when
   * given), then closes the instances. With `isForced`, or once the wait is over, it waits no more:
   * queued requests fail at once, running ones as their instances stop.
   */
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  readonly isForced?: boolean;
  readonly drainTimeoutMs?: number;
}

/**
 * Waits for `drained` unless forced, for at most `drainTimeoutMs`; true when everything settled.
 * The schedulers' common part of close().
 */
export async function waitForDrain(inflightCount: number, drained: Promise<void>, options: CloseOptions | undefined): Promise<boolean> {
  if (inflightCount === 0) return true;
  if (options?.isForced === true) return false;
  if (options?.drainTimeoutMs === undefined) {
    await drained;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), options.drainTimeoutMs)));
  const isDrained = await Promise.race([drained.then(() => true), expired]);
  clearTimeout(timer);
  return isDrained;
}
