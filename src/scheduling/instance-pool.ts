import type { ModelInstance } from '../kernel/model-instance.js';
import { NereidError } from '../kernel/errors.js';
import { type Deferred, deferred } from '../util/deferred.js';

/**
 * The idle instances of one model version and the batches waiting for one.
 * A batch always goes to an idle instance; when none is idle it waits, first come first served.
 * Once closed, the pool hands out nothing: waiting and later callers are refused.
 */
export class InstancePool {
  readonly #idle: ModelInstance[];
  readonly #all: readonly ModelInstance[];
  readonly #waiting: Array<Deferred<ModelInstance>> = [];
  #isClosed = false;

  constructor(instances: readonly ModelInstance[]) {
    this.#all = instances;
    this.#idle = [...instances];
  }

  /** Every instance, idle or not: for a scheduler that binds work to one instance (the sequence batcher). */
  get instances(): readonly ModelInstance[] {
    return this.#all;
  }

  get idleCount(): number {
    return this.#isClosed ? 0 : this.#idle.length;
  }

  /** The instance `tryAcquire` would return, left idle. */
  peekIdle(): ModelInstance | undefined {
    return this.#isClosed ? undefined : this.#idle[this.#idle.length - 1];
  }

  /** An idle instance, reserved for the caller until `release`, or undefined when none is idle. */
  tryAcquire(): ModelInstance | undefined {
    return this.#isClosed ? undefined : this.#idle.pop();
  }

  /**
   * Resolves with an instance that is reserved for the caller until `release`; rejects once the pool
   * closes, or with the signal's reason when it aborts first (the caller then leaves the line).
   */
  acquire(signal?: AbortSignal): Promise<ModelInstance> {
    if (this.#isClosed) return Promise.reject(this.#closedError());
    if (signal?.aborted === true) return Promise.reject(signal.reason as unknown);
    const instance = this.#idle.pop();
    if (instance !== undefined) return Promise.resolve(instance);
    const waiter = deferred<ModelInstance>();
    this.#waiting.push(waiter);
    if (signal === undefined) return waiter.promise;
    const leave = (): void => {
      const index = this.#waiting.indexOf(waiter);
      if (index < 0) return;
      this.#waiting.splice(index, 1);
      waiter.reject(signal.reason as unknown);
    };
    signal.addEventListener('abort', leave, { once: true });
    return waiter.promise.finally(() => signal.removeEventListener('abort', leave));
  }

  release(instance: ModelInstance): void {
    if (this.#isClosed) return;
    const next = this.#waiting.shift();
    if (next !== undefined) next.resolve(instance);
    else this.#idle.push(instance);
  }

  /** Refuses every waiting caller, then stops every instance. */
  async close(): Promise<void> {
    this.#isClosed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(this.#closedError());
    await Promise.all(this.#all.map((instance) => instance.close()));
  }

  #closedError(): NereidError {
    return new NereidError('UNAVAILABLE', 'the model was unloaded before the request could run');
  }
}
