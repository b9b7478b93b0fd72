import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { type Deferred, deferred } from '../util/deferred.js';
import { type Clock, systemClock } from './clock.js';
import { batchSizeOf } from './batch.js';
import { cancelledError } from './cancellation.js';
import { executeBatch, failBatch, settleBatch } from './execute-batch.js';
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
  /** Requests their model released before their last response (ExecuteResult.unfinished). */
  #respondingCount = 0;

  constructor(options: DirectSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.modelName, this.#clock);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  get queuedCount(): number {
    return this.#inflight.count - this.#executingCount - this.#respondingCount;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    this.#inflight.accept();
    const enqueuedUs = this.#clock.nowUs();
    try {
      // An idle instance is taken at once, without a turn of the microtask queue.
      const idle = request.signal?.aborted === true ? undefined : this.#options.pool.tryAcquire();
      const instance = idle ?? (await this.#acquire(request, enqueuedUs));
      this.#executingCount++;
      let result: readonly Tensor[] | NereidError | undefined;
      let unfinished: Deferred<readonly Tensor[] | NereidError> | undefined;
      const settle = (settled: readonly Tensor[] | NereidError): void => {
        if (unfinished === undefined) result = settled;
        else unfinished.resolve(settled);
      };
      try {
        await executeBatch({
          instance,
          batch: [{ request, batchSize: batchSizeOf(request, this.#options.isBatching), enqueuedUs, settle }],
          statistics: this.#options.statistics,
          clock: this.#clock,
          startUs: this.#clock.nowUs(),
        });
      } finally {
        this.#executingCount--;
        this.#options.pool.release(instance);
      }
      if (result === undefined) {
        // Released before its last response (ExecuteResult.unfinished): the instance serves others meanwhile.
        unfinished = deferred();
        this.#respondingCount++;
        try {
          result = await unfinished.promise;
        } finally {
          this.#respondingCount--;
        }
      }
      if (result instanceof NereidError) throw result;
      return result;
    } finally {
      this.#inflight.settle();
    }
  }

  get canEnqueueNow(): boolean {
    return this.#options.pool.peekIdle()?.canExecuteNow === true;
  }

  /**
   * The request run in this step on an idle instance that computes on the calling thread, with the
   * statistics `enqueue` records; undefined (nothing done) when no such instance is idle or it declines.
   */
  enqueueNow(request: InferRequest): readonly Tensor[] | undefined {
    if (request.signal?.aborted === true || this.#options.pool.peekIdle()?.canExecuteNow !== true) return undefined;
    this.#inflight.accept();
    const instance = this.#options.pool.tryAcquire()!;
    try {
      const enqueuedUs = this.#clock.nowUs();
      let result: readonly Tensor[] | NereidError | undefined;
      const options = {
        instance,
        batch: [{ request, batchSize: batchSizeOf(request, this.#options.isBatching), enqueuedUs, settle: (settled: readonly Tensor[] | NereidError) => (result = settled) }],
        statistics: this.#options.statistics,
        clock: this.#clock,
        startUs: enqueuedUs,
      };
      let executed;
      try {
        executed = instance.executeNow!(request);
      } catch (error) {
        failBatch(options, error);
      }
      if (executed !== undefined) settleBatch(options, executed);
      else if (result === undefined) return undefined;
      if (result instanceof NereidError) throw result;
      return result;
    } finally {
      this.#options.pool.release(instance);
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
