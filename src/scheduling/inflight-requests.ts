import { NereidError } from '../kernel/errors.js';
import { type Deferred, deferred } from '../util/deferred.js';
import type { Clock } from './clock.js';
import type { CloseOptions } from './scheduler.js';

/**
 * The requests a scheduler has accepted and not yet settled, and the closing rule every scheduler
 * shares: once `close` is called no request is accepted, and `close` waits for the accepted ones to
 * settle, unless forced, for at most `drainTimeoutMs` (Scheduler.close).
 * Contract: each `accept()` that returns is matched by exactly one `settle()`.
 */
export class InflightRequests {
  readonly #modelName: string;
  readonly #clock: Clock;
  #count = 0;
  #isClosing = false;
  /** Made by the first `close` that has to wait; resolved when the last request settles. */
  #drained: Deferred<void> | undefined;

  constructor(modelName: string, clock: Clock) {
    this.#modelName = modelName;
    this.#clock = clock;
  }

  /** Requests accepted and not yet settled. */
  get count(): number {
    return this.#count;
  }

  /** Counts a new request; throws UNAVAILABLE once `close` has been called. */
  accept(): void {
    if (this.#isClosing) throw new NereidError('UNAVAILABLE', `model '${this.#modelName}' is unloading and takes no new requests`);
    this.#count++;
  }

  /** An accepted request has its answer. */
  settle(): void {
    this.#count--;
    if (this.#count === 0) this.#drained?.resolve();
  }

  /**
   * Refuses new requests, then waits for the accepted ones to settle: not at all with `isForced`, at
   * most `drainTimeoutMs` when given. True when none is left in flight, false when the wait ended
   * first; the caller then fails what it still holds.
   */
  async close(options?: CloseOptions): Promise<boolean> {
    this.#isClosing = true;
    if (this.#count === 0) return true;
    if (options?.isForced === true) return false;
    // A second close while draining waits for the same drain.
    this.#drained ??= deferred();
    const { drainTimeoutMs } = options ?? {};
    if (drainTimeoutMs === undefined) {
      await this.#drained.promise;
      return true;
    }
    const expired = deferred<boolean>();
    const timer = this.#clock.setTimer(() => expired.resolve(false), drainTimeoutMs * 1000);
    const isDrained = await Promise.race([this.#drained.promise.then(() => true), expired.promise]);
    this.#clock.clearTimer(timer);
    return isDrained;
  }
}
