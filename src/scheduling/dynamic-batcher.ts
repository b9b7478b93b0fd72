import { NereidError } from '../kernel/errors.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { type Clock, systemClock } from './clock.js';
import { batchSizeOf } from './batch.js';
import { cancelledError, watchCancel } from './cancellation.js';
import { type QueuedRequest, executeBatch } from './execute-batch.js';
import { InflightRequests } from './inflight-requests.js';
import type { InstancePool } from './instance-pool.js';
import { OrderedDelivery } from './ordered-delivery.js';
import { requestIdPrefix as idPrefix } from './request-id-prefix.js';
import { PriorityQueue, type PriorityQueueOptions, type QueueEntry } from './priority-queue.js';
import { type AdmittedExecution, RateLimitedInstance } from './rate-limited-instance.js';
import type { CloseOptions, Scheduler } from './scheduler.js';

export interface DynamicBatcherOptions extends PriorityQueueOptions {
  readonly modelName: string;
  readonly pool: InstancePool;
  readonly statistics: ModelStatistics;
  readonly clock?: Clock;
  readonly maxBatchSize: number;
  /** Never empty: normalisation makes it [max_batch_size] when the config gives none. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
  /** TRITONSERVER_DELAY_SCHEDULER (scheduler-delay.ts): nothing is sent until this many requests are queued; 0, none. */
  readonly delayUntilQueued?: number;
}

interface Entry extends QueuedRequest, QueueEntry {
  /** Dispatch order, for preserve_ordering: set when the request leaves the queue in a batch. */
  sequence?: number;
}

type Decision = { readonly batch: Entry[] } | { readonly waitUntilUs: number } | undefined;

/** A `priority` or `timeout` parameter, which kernel/validate-request.ts has checked is a non-negative integer. */
function readInteger(request: InferRequest, key: 'priority' | 'timeout'): number | undefined {
  const value = request.parameters[key];
  return value === undefined ? undefined : Number(value);
}

/**
 * Whether two requests may batch together: the same inputs, by name, with the same non-batch dims.
 * NOTE: compared where a batch forms rather than through a key string made per request, which cost
 * 1.6 % of the main thread on the batched MLP at 32 clients (docs/benchmarks.md, "The hot path").
 */
function haveSameShapes(a: InferRequest, b: InferRequest): boolean {
  if (a.inputs.length !== b.inputs.length) return false;
  for (let index = 0; index < a.inputs.length; index++) {
    const input = a.inputs[index]!;
    const other = b.inputs[index]?.name === input.name ? b.inputs[index] : b.inputs.find((tensor) => tensor.name === input.name);
    if (other === undefined || other.shape.length !== input.shape.length) return false;
    for (let dim = 1; dim < input.shape.length; dim++) if (other.shape[dim] !== input.shape[dim]) return false;
  }
  return true;
}

/**
 * Triton's dynamic batcher (core src/dynamic_batch_scheduler.cc, docs/user_guide/model_configuration.md
 * "Dynamic Batcher"). Whenever an instance is idle it looks at the queue in priority order and forms a
 * batch of compatible requests (same non-batch input shapes) up to max_batch_size, each request
 * counting its own batch size. The batch leaves at once when it reaches a preferred size (the largest
 * reached), when it cannot grow (full, or the next request does not fit or does not match), when
 * max_queue_delay_microseconds is 0, or when the oldest queued request has waited that long;
 * otherwise it waits for more requests until then. The queue, its priority levels and their
 * policies are the PriorityQueue's.
 *
 * With the rate limiter, a batch that is due first waits for an instance's resources, and is formed
 * only once they are given: the requests that arrived meanwhile join it, as they join Triton's payload
 * while it waits in the rate limiter (qa/L0_rate_limiter expects full batches from an instance whose
 * resources another holds). Every idle instance asks, up to one per queued request, so that the rate
 * limiter's priorities choose among a model's instances too; one given its resources when nothing is
 * left to run gives them back unused.
 *
 *   level 1: [queue ...][delayed ...]   level 2: [queue ...][delayed ...]   ...   → batch → idle instance
 */
export class DynamicBatcher implements Scheduler {
  readonly #options: DynamicBatcherOptions;
  readonly #clock: Clock;
  readonly #queue: PriorityQueue<Entry>;
  readonly #preferred: ReadonlySet<number>;
  readonly #maxPreferred: number;
  #timer: unknown;
  /** When #timer fires (meaningful while it is set). */
  #timerAtUs = 0;
  readonly #delivery = new OrderedDelivery();
  readonly #inflight: InflightRequests;
  /** Requests that must be queued before the first batch leaves (0 once they were). */
  #delayUntilQueued: number;
  /** Instances waiting for the rate limiter's resources, each to take the batch that is due then. */
  #admittingCount = 0;

  constructor(options: DynamicBatcherOptions) {
    this.#options = options;
    this.#delayUntilQueued = options.delayUntilQueued ?? 0;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.modelName, this.#clock);
    this.#queue = new PriorityQueue(options);
    this.#preferred = new Set(options.preferredBatchSizes);
    this.#maxPreferred = Math.max(...options.preferredBatchSizes);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  /** Requests waiting in the queue, not yet executing. */
  get queuedCount(): number {
    return this.#queue.size;
  }

  enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    return new Promise((resolve, reject) => this.enqueueWith(request, (result) => (result instanceof NereidError ? reject(result) : resolve(result))));
  }

  enqueueWith(request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void): void {
    try {
      this.#inflight.accept();
    } catch (error) {
      settle(error as NereidError);
      return;
    }
    const levelNumber = this.#queue.levelOf(readInteger(request, 'priority'));
    const policy = this.#queue.policyOf(levelNumber);
    const waiting = this.#queue.waitingAt(levelNumber);
    if (policy.maxQueueSize > 0 && waiting >= policy.maxQueueSize) {
      this.#inflight.settle(); // accepted just above; it ends here
      settle(
        new NereidError(
          'UNAVAILABLE',
          `${idPrefix(request)}Exceeds maximum queue size: model '${this.#options.modelName}' already has ${waiting} request(s) waiting at priority level ${levelNumber} (max_queue_size ${policy.maxQueueSize})`,
        ),
      );
      return;
    }
    const nowUs = this.#clock.nowUs();
    let unwatch = (): void => {};
    const entry: Entry = {
      request,
      batchSize: batchSizeOf(request, this.#options.maxBatchSize > 0),
      enqueuedUs: nowUs,
      deadlineUs: this.#queue.deadlineOf(levelNumber, readInteger(request, 'timeout'), nowUs),
      settle: (result) => {
        unwatch();
        const finish = (): void => {
          try {
            settle(result);
          } finally {
            this.#inflight.settle();
          }
        };
        // Requests that never left the queue (timed out, cancelled, unloaded) are answered at once.
        if (entry.sequence === undefined || !this.#options.preserveOrdering) finish();
        else this.#delivery.deliver(entry.sequence, finish);
      },
    };
    this.#queue.push(levelNumber, entry);
    unwatch = watchCancel(request, () => this.#cancelQueued(entry));
    this.#scheduleAfterArrival(nowUs);
  }

  /**
   * #schedule for a request that has just arrived: at once when every instance is idle or none is,
   * at the end of this turn of the event loop (a wake-up due now) when some instance is busy.
   * NOTE: with an instance idle and another busy, a request sent at once leaves alone, and so does the
   * next if a third instance is idle: the MLP of bench/hot-path.ts at queue delay 0 and 32 clients ran
   * 58 % of its executions with one request, each paying the hop to its execution thread and back.
   * Gathered to the turn's end, the requests read in one turn leave together while the busy instance
   * computes; with every instance idle the first one still leaves at once, so that the model computes
   * while the main thread reads the rest (gathering those too left the main thread idle during each
   * run: 0.92 of the requests served). docs/benchmarks.md, "The hot path".
   */
  #scheduleAfterArrival(nowUs: number): void {
    const { pool } = this.#options;
    const idle = pool.idleCount;
    if (idle === 0 || idle === pool.instances.length) {
      this.#schedule();
      return;
    }
    if (this.#timer !== undefined) {
      if (this.#timerAtUs <= nowUs) return;
      this.#clock.clearTimer(this.#timer);
    }
    this.#armTimer(nowUs, nowUs);
  }

  /** Applies timeouts, sends every batch that is due to idle instances, and arms the next wake-up. */
  #schedule(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    const nowUs = this.#clock.nowUs();
    this.#queue.expire(nowUs, this.#rejectTimedOut);
    let wakeUs = Number.POSITIVE_INFINITY;
    if (this.#delayUntilQueued > 0 && this.#queue.size >= this.#delayUntilQueued) this.#delayUntilQueued = 0;
    const { pool } = this.#options;
    while (this.#delayUntilQueued === 0 && pool.idleCount > 0) {
      const decision = this.#formBatch(nowUs, false);
      if (decision === undefined) break;
      if ('waitUntilUs' in decision) {
        wakeUs = decision.waitUntilUs;
        break;
      }
      if (!(pool.peekIdle() instanceof RateLimitedInstance)) {
        const instance = pool.tryAcquire()!;
        this.#dispatch(decision.batch, nowUs, instance, instance);
      } else if (this.#admittingCount < this.#queue.size) {
        this.#admit(pool.tryAcquire() as RateLimitedInstance);
      } else {
        break;
      }
    }
    wakeUs = Math.min(wakeUs, this.#queue.nextDeadlineUs);
    if (wakeUs !== Number.POSITIVE_INFINITY) this.#armTimer(wakeUs, nowUs);
  }

  /** Arms the one wake-up, which runs #schedule, for `wakeUs`. */
  #armTimer(wakeUs: number, nowUs: number): void {
    this.#timerAtUs = wakeUs;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#schedule();
    }, Math.max(0, wakeUs - nowUs));
  }

  /** timeout_action REJECT: a request still queued at its deadline fails. Made once, not per schedule. */
  readonly #rejectTimedOut = (entry: Entry, nowUs: number): void => {
    const waitedUs = nowUs - entry.enqueuedUs;
    this.#options.statistics.recordRequest('REJECTED', waitedUs * 1000);
    entry.settle(
      new NereidError(
        'UNAVAILABLE',
        `${idPrefix(entry.request)}Request timeout expired: the request waited ${Math.round(waitedUs)} µs in the queue of model '${this.#options.modelName}'`,
      ),
    );
  };

  /**
   * A request cancelled while queued leaves the queue unexecuted (Triton's PolicyQueue::ApplyPolicy
   * checks IsCancelled at the same points as the timeouts); once dispatched, its batch runs it and
   * executeBatch drops its result.
   */
  #cancelQueued(entry: Entry): void {
    if (entry.sequence !== undefined) return;
    this.#queue.remove([entry]);
    this.#options.statistics.recordRequest('CANCELED', (this.#clock.nowUs() - entry.enqueuedUs) * 1000);
    entry.settle(cancelledError(entry.request, 'queued'));
    this.#schedule();
  }

  /**
   * Waits for the instance's resources, then sends it the batch due at that moment (what was due when
   * it asked, grown by the requests that came since); gives them back when nothing is left to send.
   */
  #admit(instance: RateLimitedInstance): void {
    this.#admittingCount++;
    instance.admit().then(
      (admitted: AdmittedExecution) => {
        this.#admittingCount--;
        const nowUs = this.#clock.nowUs();
        this.#queue.expire(nowUs, this.#rejectTimedOut);
        const decision = this.#formBatch(nowUs, true);
        if (decision !== undefined && 'batch' in decision) {
          this.#dispatch(decision.batch, nowUs, instance, admitted);
        } else {
          admitted.withdraw();
          this.#options.pool.release(instance);
        }
        // Another idle instance may take what is still due.
        this.#schedule();
      },
      () => {
        // Unregistered while it waited: the model is unloading, and close() answers the queue.
        this.#admittingCount--;
        this.#options.pool.release(instance);
      },
    );
  }

  /**
   * Triton's GetDynamicBatch: which requests to send now, or until when to wait for more; with `isDue`,
   * what can go now, never a wait.
   */
  #formBatch(nowUs: number, isDue: boolean): Decision {
    // A model that does not batch (max_batch_size 0) still queues by priority, one request per execution.
    const maxBatchSize = Math.max(1, this.#options.maxBatchSize);
    const { maxQueueDelayUs } = this.#options;
    const chosen: Entry[] = [];
    let total = 0;
    let preferredCount = 0;
    let cannotGrow = false;
    let oldestUs = Number.POSITIVE_INFINITY;
    for (const entry of this.#queue.ordered()) {
      if (chosen.length > 0) {
        if (total + entry.batchSize > this.#maxPreferred && preferredCount === 0) preferredCount = chosen.length;
        if (total + entry.batchSize > maxBatchSize || !haveSameShapes(entry.request, chosen[0]!.request)) {
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
    if (isDue || cannotGrow || total >= this.#maxPreferred || isDelayExceeded || maxQueueDelayUs === 0) return { batch: chosen };
    return { waitUntilUs: oldestUs + maxQueueDelayUs };
  }

  /** Runs the batch on `runner`: the reserved instance itself, or the execution the rate limiter admitted on it. */
  #dispatch(batch: readonly Entry[], nowUs: number, instance: ModelInstance, runner: Pick<ModelInstance, 'name' | 'execute'>): void {
    this.#queue.remove(batch);
    for (const entry of batch) entry.sequence = this.#delivery.next();
    void executeBatch({ instance: runner, batch, statistics: this.#options.statistics, clock: this.#clock, startUs: nowUs }).finally(() => {
      this.#options.pool.release(instance);
      this.#schedule();
    });
  }

  async close(options?: CloseOptions): Promise<void> {
    if (!(await this.#inflight.close(options))) {
      const error = new NereidError('UNAVAILABLE', `model '${this.#options.modelName}' was unloaded before the request ran`);
      for (const entry of this.#queue.clear()) entry.settle(error);
    }
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    await this.#options.pool.close();
  }
}
