import { NereidError } from '../core/errors.js';
import type { InferRequest } from '../core/infer-request.js';
import type { Tensor } from '../core/tensor.js';
import type { InstancePool } from './instance-pool.js';
import type { Scheduler } from './scheduler.js';

/**
 * Triton's default scheduler, for models without a scheduling choice: each request runs alone,
 * with the batch it was sent with, on the next idle instance, in arrival order.
 */
export class DirectScheduler implements Scheduler {
  readonly #pool: InstancePool;
  readonly #modelName: string;
  #inflightCount = 0;
  #isClosing = false;
  #drained: (() => void) | undefined;

  constructor(pool: InstancePool, modelName: string) {
    this.#pool = pool;
    this.#modelName = modelName;
  }

  get inflightCount(): number {
    return this.#inflightCount;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    if (this.#isClosing) {
      throw new NereidError('UNAVAILABLE', `model '${this.#modelName}' is unloading and takes no new requests`);
    }
    this.#inflightCount++;
    try {
      const instance = await this.#pool.acquire();
      try {
        const [result] = await instance.execute([request]);
        if (result === undefined) {
          throw new NereidError('INTERNAL', `instance '${instance.name}' returned no response for the request`);
        }
        if (result instanceof NereidError) throw result;
        return result;
      } finally {
        this.#pool.release(instance);
      }
    } finally {
      this.#inflightCount--;
      if (this.#inflightCount === 0) this.#drained?.();
    }
  }

  async close(options?: { readonly isForced?: boolean }): Promise<void> {
    this.#isClosing = true;
    if (this.#inflightCount > 0 && options?.isForced !== true) await new Promise<void>((resolve) => (this.#drained = resolve));
    await this.#pool.close();
  }
}
