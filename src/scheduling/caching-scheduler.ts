import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { responseCacheKey } from './cache-key.js';
import { untilCheckPhase } from './check-phase.js';
import { type Clock, systemClock } from './clock.js';
import type { ResponseCacheStore } from './response-cache.js';
import type { CloseOptions, Scheduler } from './scheduler.js';

export interface CachingSchedulerOptions {
  /** The model's own scheduler, which runs the requests that miss. */
  readonly scheduler: Scheduler;
  readonly cache: ResponseCacheStore;
  readonly statistics: ModelStatistics;
  /** The model's key (kernel/model-id.ts): two models of one name in different namespaces never share entries. */
  readonly model: string;
  readonly version: number;
  /** Tells this load of the version from earlier ones with the same number (see responseCacheKey). */
  readonly loadId: number;
  readonly clock?: Clock;
}

/**
 * A model's scheduler with the response cache in front (`response_cache { enable: true }` and
 * `--cache-config`), as Triton looks the cache up when a request reaches the model's scheduler:
 * - a hit is answered with the stored outputs, without queuing or executing (statistics: a success
 *   and a cache hit; no inference, no execution): by `enqueue` in the check phase of the event loop's
 *   turn, together with the other hits of that turn (check-phase.ts says why); by `enqueueNow`, with a
 *   local cache, in the caller's step (the HTTP front end then writes the replies of a turn together);
 * - a miss runs on the model's scheduler; when it succeeds, its outputs are stored and the lookup and
 *   insertion time is counted as a cache miss and added to the request's duration (`enqueueWith`, with
 *   a local cache and a model's scheduler that takes callbacks: with no promise); a failed request
 *   is neither stored nor counted as a miss (Triton reports the miss with the successful response),
 *   and an entry the cache cannot hold leaves the request answered all the same.
 */
export class CachingScheduler implements Scheduler {
  readonly #options: CachingSchedulerOptions;
  readonly #clock: Clock;
  #isClosed = false;
  /** Present with a local cache in front of a scheduler that takes callbacks (the dynamic batcher). */
  readonly enqueueWith?: (request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void) => void;

  constructor(options: CachingSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    const { cache, scheduler } = options;
    if (cache.lookupHit !== undefined && scheduler.enqueueWith !== undefined) {
      const enqueueWith = scheduler.enqueueWith.bind(scheduler);
      this.enqueueWith = (request, settle) => this.#enqueueWith(enqueueWith, request, settle);
    }
  }

  get inflightCount(): number {
    return this.#options.scheduler.inflightCount;
  }

  get queuedCount(): number {
    return this.#options.scheduler.queuedCount;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    // A closing model answers nothing more, from the cache either: its scheduler gives the refusal.
    if (this.#isClosed) return this.#options.scheduler.enqueue(request);
    const { cache, statistics, scheduler, model, version, loadId } = this.#options;
    const startUs = this.#clock.nowUs();
    const key = responseCacheKey(request, { model, version, loadId, isShared: cache.isShared });
    const cached = await cache.lookup(key);
    const lookupUs = this.#clock.nowUs() - startUs;
    if (cached !== undefined) {
      statistics.recordCacheHit(lookupUs * 1000, lookupUs * 1000);
      await untilCheckPhase();
      return cached;
    }
    const outputs = await scheduler.enqueue(request);
    const insertStartUs = this.#clock.nowUs();
    await cache.insert(key, outputs);
    statistics.recordCacheMiss((lookupUs + this.#clock.nowUs() - insertStartUs) * 1000);
    return outputs;
  }

  /**
   * `enqueue` with callbacks, for a local cache, whose lookups and insertions need no waiting: a hit is
   * settled in this step, a miss from the completion of its batch.
   */
  #enqueueWith(
    enqueueWith: (request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void) => void,
    request: InferRequest,
    settle: (result: readonly Tensor[] | NereidError) => void,
  ): void {
    if (this.#isClosed) {
      enqueueWith(request, settle);
      return;
    }
    const { cache, statistics, model, version, loadId } = this.#options;
    const startUs = this.#clock.nowUs();
    const key = responseCacheKey(request, { model, version, loadId, isShared: cache.isShared });
    // A local cache (the only kind given enqueueWith) looks up in this step.
    const cached = cache.lookup(key) as readonly Tensor[] | undefined;
    const lookupUs = this.#clock.nowUs() - startUs;
    if (cached !== undefined) {
      statistics.recordCacheHit(lookupUs * 1000, lookupUs * 1000);
      settle(cached);
      return;
    }
    enqueueWith(request, (result) => {
      if (result instanceof NereidError) {
        settle(result);
        return;
      }
      const insertStartUs = this.#clock.nowUs();
      void cache.insert(key, result);
      statistics.recordCacheMiss((lookupUs + this.#clock.nowUs() - insertStartUs) * 1000);
      settle(result);
    });
  }

  /** With a local cache, a hit is answered in the caller's step (enqueueNow). */
  get canEnqueueNow(): boolean {
    return !this.#isClosed && this.#options.cache.lookupHit !== undefined;
  }

  /**
   * A hit in the local cache, answered in this step with the statistics `enqueue` records; undefined
   * (nothing counted) on a miss, which `enqueue` then looks up again and runs.
   */
  enqueueNow(request: InferRequest): readonly Tensor[] | undefined {
    const { cache, statistics, model, version, loadId } = this.#options;
    if (this.#isClosed || cache.lookupHit === undefined) return undefined;
    const startUs = this.#clock.nowUs();
    const cached = cache.lookupHit(responseCacheKey(request, { model, version, loadId, isShared: cache.isShared }));
    if (cached === undefined) return undefined;
    const lookupUs = this.#clock.nowUs() - startUs;
    statistics.recordCacheHit(lookupUs * 1000, lookupUs * 1000);
    return cached;
  }

  close(options?: CloseOptions): Promise<void> {
    this.#isClosed = true;
    return this.#options.scheduler.close(options);
  }
}
