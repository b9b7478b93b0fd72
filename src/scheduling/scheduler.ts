import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';

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
