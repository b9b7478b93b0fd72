import { NereidError } from '../core/errors.js';
import type { InferRequest } from '../core/infer-request.js';
import type { Tensor } from '../core/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { type Clock, systemClock } from './clock.js';
import { executeBatch } from './execute-batch.js';
import type { InstancePool } from './instance-pool.js';
import { type CloseOptions, type Scheduler, waitForDrain } from './scheduler.js';

export interface DirectSchedulerOptions {
  readonly modelName: string;
  readonly pool: InstancePool;
  readonly statistics: ModelStatistics;
  /** max_batch_size > 0: a request's first dimension is its batch size (for inference_count). */
  readonly isBatching: boolean;
  readonly clock?: Clock;
}

/**
 * Triton's default scheduler, for models without a scheduling choice: each request runs alone,
 * with the batch it was sent with, on the next idle instance, in arrival order.
 */
export class DirectScheduler implements Scheduler {
  readonly #options: DirectSchedulerOptions;
  readonly #clock: Clock;
  #inflightCount = 0;
  #executingCount = 0;
  #isClosing = false;
  #drained: (() => void) | undefined;

  constructor(options: DirectSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  get inflightCount(): number {
    return this.#inflightCount;
  }

  get queuedCount(): number {
    return this.#inflightCount - this.#executingCount;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    if (this.#isClosing) {
      throw new NereidError('UNAVAILABLE', `model '${this.#options.modelName}' is unloading and takes no new requests`);
    }
    this.#inflightCount++;
    const enqueuedUs = this.#clock.nowUs();
    try {
      const instance = await this.#options.pool.acquire();
      this.#executingCount++;
      try {
        let result: readonly Tensor[] | NereidError | undefined;
        const batchSize = this.#options.isBatching ? request.inputs[0]!.shape[0]! : 1;
        await executeBatch({
          instance,
          batch: [{ request, batchSize, enqueuedUs, settle: (settled) => (result = settled) }],
          statistics: this.#options.statistics,
          clock: this.#clock,
          startUs: this.#clock.nowUs(),
        });
        if (result instanceof NereidError) throw result;
        return result!;
      } finally {
        this.#executingCount--;
        this.#options.pool.release(instance);
      }
    } finally {
      this.#inflightCount--;
      if (this.#inflightCount === 0) this.#drained?.();
    }
  }

  async close(options?: CloseOptions): Promise<void> {
    this.#isClosing = true;
    await waitForDrain(this.#inflightCount, new Promise<void>((resolve) => (this.#drained = resolve)), options);
    await this.#options.pool.close();
  }
}
