import type { ModelInstance } from '../backends/backend.js';

/**
 * The idle instances of one model version and the batches waiting for one.
 * A batch always goes to an idle instance; when none is idle it waits, first come first served.
 */
export class InstancePool {
  readonly #idle: ModelInstance[];
  readonly #all: readonly ModelInstance[];
  readonly #waiting: Array<(instance: ModelInstance) => void> = [];

  constructor(instances: readonly ModelInstance[]) {
    this.#all = instances;
    this.#idle = [...instances];
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  /** An idle instance, reserved for the caller until `release`, or undefined when none is idle. */
  tryAcquire(): ModelInstance | undefined {
    return this.#idle.pop();
  }

  /** Resolves with an instance that is reserved for the caller until `release`. */
  acquire(): Promise<ModelInstance> {
    const instance = this.#idle.pop();
    if (instance !== undefined) return Promise.resolve(instance);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(instance: ModelInstance): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next(instance);
    else this.#idle.push(instance);
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((instance) => instance.close()));
  }
}
