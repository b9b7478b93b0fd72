import { NereidError } from '../core/errors.js';
import type { InferRequest } from '../core/infer-request.js';
import type { Tensor } from '../core/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { type Clock, systemClock } from './clock.js';
import { type QueuedRequest, batchSizeOf, executeBatch } from './execute-batch.js';
import { InflightRequests } from './inflight-requests.js';
import type { InstancePool } from './instance-pool.js';
import type { CloseOptions, Scheduler } from './scheduler.js';

/** A priority level's queue policy (config ModelQueuePolicy), times in microseconds; 0 means none. */
export interface QueuePolicy {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  readonly maxQueueSize: number;
}

export interface DynamicBatcherOptions {
  readonly modelName: string;
  readonly pool: InstancePool;
  readonly statistics: ModelStatistics;
  readonly clock?: Clock;
  readonly maxBatchSize: number;
  /** Never empty: normalisation makes it [max_batch_size] when the config gives none. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
  /** 0: one level, and request priorities are ignored. */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicy;
  /** Policies of particular levels (config priority_queue_policy), by level. */
  readonly priorityQueuePolicies: ReadonlyMap<number, QueuePolicy>;
}

interface Entry extends QueuedRequest {
  /** Dispatch order, for preserve_ordering: set when the request leaves the queue in a batch. */
  sequence?: number;
  /** When REJECT or DELAY applies; Infinity without a timeout. */
  deadlineUs: number;
  /** Requests batch together only when their inputs' non-batch shapes (and names) are equal. */
  readonly shapeKey: string;
}

interface Level {
  readonly policy: QueuePolicy;
  readonly queue: Entry[];
  /** Requests whose timeout passed under timeout_action DELAY: served after the level's others. */
  readonly delayed: Entry[];
}

type Decision = { readonly batch: Entry[] } | { readonly waitUntilUs: number } | undefined;

/** A `priority` or `timeout` parameter, which core/validate-request.ts has checked is a non-negative integer. */
function readInteger(request: InferRequest, key: 'priority' | 'timeout'): number | undefined {
  const value = request.parameters[key];
  return value === undefined ? undefined : Number(value);
}

/** Triton prefixes a request's errors with its id (InferenceRequest::LogRequest). */
const idPrefix = (request: InferRequest): string => (request.id !== '' ? `[request id: ${request.id}] ` : '');

function shapeKeyOf(request: InferRequest): string {
  return request.inputs
    .map((input) => `${input.name}:${input.shape.slice(1).join('x')}`)
    .sort()
    .join('|');
}

/**
 * Triton's dynamic batcher (core src/dynamic_batch_scheduler.cc, docs/user_guide/model_configuration.md
 * "Dynamic Batcher"). Whenever an instance is idle it looks at the queue in priority order and forms a
 * batch of compatible requests (same non-batch input shapes) up to max_batch_size, each request
 * counting its own batch size. The batch leaves at once when it reaches a preferred size (the largest
 * reached), when it cannot grow (full, or the next request does not fit or does not match), when
 * max_queue_delay_microseconds is 0, or when the oldest queued request has waited that long;
 * otherwise it waits for more requests until then.
 *
 *   level 1: [queue ...][delayed ...]   level 2: [queue ...][delayed ...]   ...   → batch → idle instance
 */
export class DynamicBatcher implements Scheduler {
  readonly #options: DynamicBatcherOptions;
  readonly #clock: Clock;
  readonly #levels: Level[];
  readonly #preferred: ReadonlySet<number>;
  readonly #maxPreferred: number;
  #timer: unknown;
  #nextSequence = 0;
  #nextDelivery = 0;
  readonly #held = new Map<number, () => void>();
  readonly #inflight: InflightRequests;

  constructor(options: DynamicBatcherOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.modelName, this.#clock);
    const levelCount = Math.max(1, options.priorityLevels);
    // Without priority levels only the default policy applies (Triton's PriorityQueue).
    this.#levels = Array.from({ length: levelCount }, (_, index) => ({
      policy: (options.priorityLevels > 0 ? options.priorityQueuePolicies.get(index + 1) : undefined) ?? options.defaultQueuePolicy,
      queue: [],
      delayed: [],
    }));
    this.#preferred = new Set(options.preferredBatchSizes);
    this.#maxPreferred = Math.max(...options.preferredBatchSizes);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  /** Requests waiting in the queue, not yet executing. */
  get queuedCount(): number {
    return this.#levels.reduce((sum, level) => sum + level.queue.length + level.delayed.length, 0);
  }

  enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    // Refusals reject the returned promise, as the Scheduler contract says; enqueue never throws.
    try {
      this.#inflight.accept();
    } catch (error) {
      return Promise.reject(error);
    }
    const levelNumber = this.#levelOf(readInteger(request, 'priority'));
    const timeoutUs = readInteger(request, 'timeout');
    const level = this.#levels[levelNumber - 1]!;
    const { policy } = level;
    const waiting = level.queue.length + level.delayed.length;
    if (policy.maxQueueSize > 0 && waiting >= policy.maxQueueSize) {
      this.#inflight.settle(); // accepted just above; it ends here
      return Promise.reject(
        new NereidError(
          'UNAVAILABLE',
          `${idPrefix(request)}Exceeds maximum queue size: model '${this.#options.modelName}' already has ${waiting} request(s) waiting at priority level ${levelNumber} (max_queue_size ${policy.maxQueueSize})`,
        ),
      );
    }
    // A request's timeout may only shorten a default one; with no default timeout it has no effect
    // (Triton's PolicyQueue::Enqueue).
    let effectiveTimeoutUs = policy.defaultTimeoutUs;
    if (policy.allowTimeoutOverride && timeoutUs !== undefined && timeoutUs > 0 && timeoutUs < effectiveTimeoutUs) {
      effectiveTimeoutUs = timeoutUs;
    }
    const nowUs = this.#clock.nowUs();
    return new Promise<readonly Tensor[]>((resolve, reject) => {
      const entry: Entry = {
        request,
        batchSize: batchSizeOf(request, this.#options.maxBatchSize > 0),
        enqueuedUs: nowUs,
        deadlineUs: effectiveTimeoutUs > 0 ? nowUs + effectiveTimeoutUs : Number.POSITIVE_INFINITY,
        shapeKey: shapeKeyOf(request),
        settle: (result) => {
          const finish = (): void => {
            if (result instanceof NereidError) reject(result);
            else resolve(result);
            this.#inflight.settle();
          };
          // Requests that never left the queue (timed out, unloaded) are answered at once.
          if (entry.sequence === undefined || !this.#options.preserveOrdering) finish();
          else this.#deliver(entry.sequence, finish);
        },
      };
      level.queue.push(entry);
      this.#schedule();
    });
  }

  /** Priority 0, absent or beyond the levels means the default level (Triton's InferenceRequest::SetPriority). */
  #levelOf(priority: number | undefined): number {
    if (this.#options.priorityLevels === 0) return 1;
    if (priority === undefined || priority === 0 || priority > this.#options.priorityLevels) return this.#options.defaultPriorityLevel;
    return priority;
  }

  /** With preserve_ordering: hands results back in the order their requests left the queue. */
  #deliver(sequence: number, deliver: () => void): void {
    this.#held.set(sequence, deliver);
    for (let next = this.#held.get(this.#nextDelivery); next !== undefined; next = this.#held.get(this.#nextDelivery)) {
      this.#held.delete(this.#nextDelivery);
      this.#nextDelivery++;
      next();
    }
  }

  /** Applies timeouts, sends every batch that is due to idle instances, and arms the next wake-up. */
  #schedule(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    const nowUs = this.#clock.nowUs();
    this.#applyTimeouts(nowUs);
    let wakeUs = Number.POSITIVE_INFINITY;
    while (this.#options.pool.idleCount > 0) {
      const decision = this.#formBatch(nowUs);
      if (decision === undefined) break;
      if ('waitUntilUs' in decision) {
        wakeUs = decision.waitUntilUs;
        break;
      }
      this.#dispatch(decision.batch, nowUs);
    }
    for (const level of this.#levels) {
      for (const entry of level.queue) wakeUs = Math.min(wakeUs, entry.deadlineUs);
    }
    if (wakeUs !== Number.POSITIVE_INFINITY) {
      this.#timer = this.#clock.setTimer(() => {
        this.#timer = undefined;
        this.#schedule();
      }, Math.max(0, wakeUs - nowUs));
    }
  }

  #applyTimeouts(nowUs: number): void {
    for (const level of this.#levels) {
      for (let index = 0; index < level.queue.length; ) {
        const entry = level.queue[index]!;
        if (entry.deadlineUs > nowUs) {
          index++;
          continue;
        }
        level.queue.splice(index, 1);
        if (level.policy.timeoutAction === 'DELAY') {
          entry.deadlineUs = Number.POSITIVE_INFINITY;
          level.delayed.push(entry);
        } else {
          this.#options.statistics.recordRequest('REJECTED', (nowUs - entry.enqueuedUs) * 1000);
          entry.settle(
            new NereidError(
              'UNAVAILABLE',
              `${idPrefix(entry.request)}Request timeout expired: the request waited ${Math.round(nowUs - entry.enqueuedUs)} µs in the queue of model '${this.#options.modelName}'`,
            ),
          );
        }
      }
    }
  }

  /** Queued requests in the order batches take them: by priority level, each level's delayed ones last. */
  *#ordered(): Generator<Entry> {
    for (const level of this.#levels) {
      yield* level.queue;
      yield* level.delayed;
    }
  }

  /** Triton's GetDynamicBatch: which requests to send now, or until when to wait for more. */
  #formBatch(nowUs: number): Decision {
    // A model that does not batch (max_batch_size 0) still queues by priority, one request per execution.
    const maxBatchSize = Math.max(1, this.#options.maxBatchSize);
    const { maxQueueDelayUs } = this.#options;
    const chosen: Entry[] = [];
    let total = 0;
    let preferredCount = 0;
    let cannotGrow = false;
    let oldestUs = Number.POSITIVE_INFINITY;
    for (const entry of this.#ordered()) {
      if (chosen.length > 0) {
        if (total + entry.batchSize > this.#maxPreferred && preferredCount === 0) preferredCount = chosen.length;
        if (total + entry.batchSize > maxBatchSize || entry.shapeKey !== chosen[0]!.shapeKey) {
          cannotGrow = true;
          break;
        }
      }
      chosen.push(entry);
      total += entry.batchSize;
      // The queue delay counts from the oldest request of the pending batch only.
      oldestUs = Math.min(oldestUs, entry.enqueuedUs);
      if (this.#preferred.has(total)) preferredCount = chosen.length;
    }
    if (chosen.length === 0) return undefined;
    const isDelayExceeded = maxQueueDelayUs > 0 && nowUs - oldestUs >= maxQueueDelayUs;
    if (preferredCount > 0 && !isDelayExceeded) return { batch: chosen.slice(0, preferredCount) };
    if (cannotGrow || total >= this.#maxPreferred || isDelayExceeded || maxQueueDelayUs === 0) return { batch: chosen };
    return { waitUntilUs: oldestUs + maxQueueDelayUs };
  }

  #dispatch(batch: readonly Entry[], nowUs: number): void {
    const taken = new Set(batch);
    for (const level of this.#levels) {
      for (const list of [level.queue, level.delayed]) {
        for (let index = list.length - 1; index >= 0; index--) if (taken.has(list[index]!)) list.splice(index, 1);
      }
    }
    for (const entry of batch) entry.sequence = this.#nextSequence++;
    const instance = this.#options.pool.tryAcquire()!;
    void executeBatch({ instance, batch, statistics: this.#options.statistics, clock: this.#clock, startUs: nowUs }).finally(() => {
      this.#options.pool.release(instance);
      this.#schedule();
    });
  }

  async close(options?: CloseOptions): Promise<void> {
    if (!(await this.#inflight.close(options))) {
      const error = new NereidError('UNAVAILABLE', `model '${this.#options.modelName}' was unloaded before the request ran`);
      for (const level of this.#levels) {
        for (const entry of level.queue.splice(0).concat(level.delayed.splice(0))) entry.settle(error);
      }
    }
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    await this.#options.pool.close();
  }
}
