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
   * Stops taking requests, waits for the accepted ones to settle, then closes the instances.
   * With `isForced` it does not wait: requests still running fail as their instances stop.
   */
  close(options?: { readonly isForced?: boolean }): Promise<void>;
}
