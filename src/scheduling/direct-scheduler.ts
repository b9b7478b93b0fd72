import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { type Clock, systemClock } from './clock.js';
import { batchSizeOf } from './batch.js';
import { cancelledError } from './cancellation.js';
import { executeBatch } from './execute-batch.js';
import type { InstancePool } from './instance-pool.js';
import { InflightRequests } from './inflight-requests.js';
import type { CloseOptions, Scheduler } from './scheduler.js';

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
 * with the batch it was sent with, on the next idle instance, in arrival order. A request cancelled
 * while it waits for an instance leaves the line unexecuted.
 */
export class DirectScheduler implements Scheduler {
  readonly #options: DirectSchedulerOptions;
  readonly #clock: Clock;
  readonly #inflight: InflightRequests;
  #executingCount = 0;

  constructor(options: DirectSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.modelName, this.#clock);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  get queuedCount(): number {
    return this.#inflight.count - this.#executingCount;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    this.#inflight.accept();
    const enqueuedUs = this.#clock.nowUs();
    try {
      const instance = await this.#acquire(request, enqueuedUs);
      this.#executingCount++;
      try {
        let result: readonly Tensor[] | NereidError | undefined;
        await executeBatch({
          instance,
          batch: [{ request, batchSize: batchSizeOf(request, this.#options.isBatching), enqueuedUs, settle: (settled) => (result = settled) }],
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
      this.#inflight.settle();
    }
  }

  /** An instance for the request; a request cancelled while it waits for one fails CANCELLED unexecuted. */
  async #acquire(request: InferRequest, enqueuedUs: number): Promise<ModelInstance> {
    try {
      return await this.#options.pool.acquire(request.signal);
    } catch (error) {
      if (request.signal?.aborted !== true) throw error;
      this.#options.statistics.recordRequest('CANCELED', (this.#clock.nowUs() - enqueuedUs) * 1000);
      throw cancelledError(request, 'queued');
    }
  }

  async close(options?: CloseOptions): Promise<void> {
    // Requests still waiting for an instance are refused by the pool as it closes.
    await this.#inflight.close(options);
    await this.#options.pool.close();
  }
}
