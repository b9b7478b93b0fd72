import type { NereidError } from '../kernel/errors.js';
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
  /**
   * `enqueue` with a callback in place of the promise: `settle` is called exactly once, with the
   * request's outputs or its NereidError (in the caller's step for a refusal), and must not throw.
   * Absent: `enqueue` only.
   */
  enqueueWith?(request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void): void;
  /** Whether `enqueueNow` would run a request at this moment. Absent: never. */
  readonly canEnqueueNow?: boolean;
  /**
   * `enqueue` run to the end in the caller's step, for a request that can execute at once without
   * waiting (an idle instance that computes on the calling thread): the outputs, a NereidError thrown
   * for this request alone, or undefined when it cannot after all and `enqueue` is to be used.
   */
  enqueueNow?(request: InferRequest): readonly Tensor[] | undefined;
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
