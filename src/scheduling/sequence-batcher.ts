import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import type { Logger } from '../logging/logger.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { cancelledError, watchCancel } from './cancellation.js';
import { type Clock, systemClock } from './clock.js';
import { type QueuedRequest, executeBatch } from './execute-batch.js';
import { InflightRequests } from './inflight-requests.js';
import type { InstancePool } from './instance-pool.js';
import { OrderedDelivery } from './ordered-delivery.js';
import { requestIdPrefix as idPrefix } from './request-id-prefix.js';
import type { CloseOptions, Scheduler } from './scheduler.js';
import { type CorrelationId, type SequenceControls, type SequenceFlags, correlationKeyOf, formatCorrelationId, sequenceFlagsOf } from './sequence-controls.js';
import { type Runner as RunnerOf, type Sequence as SequenceOf, SequenceSlots, type Slot as SlotOf } from './sequence-slots.js';
import type { SequenceStates } from './sequence-states.js';

/** `sequence_batching.direct`: each sequence owns one batch slot of one instance. */
export interface DirectStrategy {
  readonly kind: 'direct';
  readonly maxQueueDelayUs: number;
  /** The fraction of an instance's slots that must have a request ready before it runs early. */
  readonly minimumSlotUtilization: number;
}

/** `sequence_batching.oldest`: the oldest requests of an instance's candidate sequences batch dynamically. */
export interface OldestStrategy {
  readonly kind: 'oldest';
  readonly maxCandidateSequences: number;
  /** Never empty: normalisation makes it [max_batch_size] when the config gives none. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
}

export interface SequenceBatcherOptions {
  readonly modelName: string;
  readonly pool: InstancePool;
  readonly statistics: ModelStatistics;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly maxBatchSize: number;
  readonly strategy: DirectStrategy | OldestStrategy;
  readonly maxSequenceIdleUs: number;
  readonly controls: SequenceControls;
  readonly states: SequenceStates;
  /**
   * `iterative_sequence` (Triton's IterativeSequencer, docs/user_guide/model_configuration.md
   * "Iterative Sequences"): a request without a correlation id starts a sequence of its own, one the
   * model may run again and again by releasing the request with RESCHEDULE; the sequence ends when the
   * request is released without it.
   */
  readonly isIterative?: boolean;
  /**
   * TRITONSERVER_DELAY_SCHEDULER (scheduler-delay.ts): nothing is sent until this many requests are
   * queued, across every instance's slots as in Triton (and, here, the backlog's); 0, none.
   */
  readonly delayUntilQueued?: number;
}

interface Entry extends QueuedRequest {
  /** Changes when the request is rescheduled: its later iterations run neither START nor END. */
  flags: SequenceFlags & { readonly correlationId: CorrelationId };
  /** When it last entered its sequence's queue: its first arrival, or its last reschedule. */
  enqueuedUs: number;
  /** Requests batch together only when their inputs' shapes (and names) are equal. */
  readonly shapeKey: string;
  /** The outputs the client asked for, which a state output leaves in the response. */
  readonly clientOutputs: ReadonlySet<string>;
  /** Dispatch order, for preserve_ordering: set when the request leaves its sequence's queue. */
  order?: number;
}

type Sequence = SequenceOf<Entry>;
type Slot = SlotOf<Entry>;
type Runner = RunnerOf<Entry>;

type Decision = { readonly slots: readonly Slot[] } | { readonly waitUntilUs: number } | undefined;

/** The request fields an iterative sequence's model sees: the correlation id, START only on the first iteration. */
function iterationParameters(request: InferRequest, flags: Entry['flags']): InferRequest['parameters'] {
  const { sequence_start: _start, sequence_end: _end, ...parameters } = request.parameters;
  return { ...parameters, sequence_id: flags.correlationId, ...(flags.isStart ? { sequence_start: true } : {}), ...(flags.isEnd ? { sequence_end: true } : {}) };
}

function shapeKeyOf(inputs: readonly Tensor[]): string {
  return inputs
    .map((input) => `${input.name}:${input.shape.join('x')}`)
    .sort()
    .join('|');
}

/**
 * Triton's sequence batcher (core src/sequence_batch_scheduler/, docs/user_guide/architecture.md
 * "Stateful Models"). Requests carry a correlation id (`sequence_id`) and START / END flags; all the
 * requests of one sequence go, one at a time and in order, to the slot the sequence was given when it
 * started, in one instance:
 *
 *   enqueue ──▶ sequence of its id ──▶ slot of a runner (one per instance) ──▶ batch ──▶ instance
 *               (new on START)         or the backlog, first come first served, until a slot frees
 *
 * - `direct`: each instance has max(1, max_batch_size) slots; a batch holds one request per slot,
 *   an empty slot below the highest one used filled by padding whose READY control is false.
 *   It runs once an instance is idle, at once when max_queue_delay_microseconds is 0, else when
 *   minimum_slot_utilization of the slots have a request ready or the oldest has waited that long.
 * - `oldest`: each instance has max_candidate_sequences slots; a batch is the oldest ready requests,
 *   at most one per sequence and max_batch_size in all, sent as the dynamic batcher sends one
 *   (a preferred size reached, or the oldest waited max_queue_delay_microseconds).
 * A slot frees when its sequence's END request has run, or when the sequence has had no request for
 * max_sequence_idle_microseconds (Triton's reaper): a later request of that id without START is
 * refused. The controls and implicit states are added to every request the instance sees.
 * With `iterative_sequence`, a request its model releases with RESCHEDULE goes back to the front of its
 * sequence's queue (executeBatch calls `reschedule`), and its sequence ends once it is released without.
 */
export class SequenceBatcher implements Scheduler {
  readonly #options: SequenceBatcherOptions;
  readonly #clock: Clock;
  readonly #inflight: InflightRequests;
  readonly #slots: SequenceSlots<Entry>;
  readonly #preferred: ReadonlySet<number>;
  /** The preferred batch sizes, largest first. */
  readonly #preferredDescending: readonly number[];
  readonly #maxPreferred: number;
  #queuedCount = 0;
  #timer: unknown;
  readonly #delivery = new OrderedDelivery();
  readonly #initialStatesKey: string;
  /** The correlation id of the next iterative request that comes without one (Triton counts from 1). */
  #nextIterativeId = 1n;
  /** Requests that must be queued before the first batch leaves (0 once they were). */
  #delayUntilQueued: number;

  constructor(options: SequenceBatcherOptions) {
    this.#options = options;
    this.#delayUntilQueued = options.delayUntilQueued ?? 0;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.modelName, this.#clock);
    const { strategy } = options;
    const slotCount = strategy.kind === 'oldest' ? strategy.maxCandidateSequences : Math.max(1, options.maxBatchSize);
    this.#slots = new SequenceSlots(options.pool.instances, slotCount);
    const preferred = strategy.kind === 'oldest' ? strategy.preferredBatchSizes : [];
    this.#preferred = new Set(preferred);
    this.#preferredDescending = [...this.#preferred].sort((a, b) => b - a);
    this.#maxPreferred = preferred.length > 0 ? Math.max(...preferred) : Math.max(1, options.maxBatchSize);
    this.#initialStatesKey = shapeKeyOf([...options.states.initial().values()]);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  get queuedCount(): number {
    return this.#queuedCount;
  }

  /** Sequences holding a slot, and sequences waiting in the backlog for one. */
  get sequenceCounts(): { readonly active: number; readonly backlogged: number } {
    return this.#slots.counts;
  }

  enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    // Refusals reject the returned promise, as the Scheduler contract says; enqueue never throws.
    try {
      this.#inflight.accept();
    } catch (error) {
      return Promise.reject(error);
    }
    let flags: Entry['flags'];
    try {
      flags = this.#checkRequest(request);
    } catch (error) {
      this.#inflight.settle();
      return Promise.reject(error);
    }
    const nowUs = this.#clock.nowUs();
    return new Promise<readonly Tensor[]>((resolve, reject) => {
      let unwatch = (): void => {};
      const entry: Entry = {
        request,
        batchSize: 1,
        enqueuedUs: nowUs,
        flags,
        shapeKey: shapeKeyOf(request.inputs),
        clientOutputs: new Set((request.outputs ?? []).map((output) => output.name)),
        settle: (result) => {
          unwatch();
          const finish = (): void => {
            if (result instanceof NereidError) reject(result);
            else resolve(result);
            this.#inflight.settle();
          };
          const { strategy } = this.#options;
          if (entry.order === undefined || strategy.kind !== 'oldest' || !strategy.preserveOrdering) finish();
          else this.#delivery.deliver(entry.order, finish);
        },
      };
      this.#route(entry, nowUs);
      unwatch = watchCancel(request, () => this.#cancelSequence(entry));
      this.#schedule();
    });
  }

  /**
   * A request cancelled while queued cancels every request of its sequence still queued, as Triton
   * does; none of them runs. One already sent to its instance runs, and executeBatch drops its result.
   */
  #cancelSequence(entry: Entry): void {
    const sequence = this.#slots.sequences().find((candidate) => candidate.entries.includes(entry));
    if (sequence === undefined) return;
    const nowUs = this.#clock.nowUs();
    for (const cancelled of sequence.entries.splice(0)) {
      this.#queuedCount--;
      this.#options.statistics.recordRequest('CANCELED', (nowUs - cancelled.enqueuedUs) * 1000);
      cancelled.settle(cancelledError(cancelled.request, 'queued'));
    }
    if (this.#options.isIterative === true) this.#slots.end(sequence);
    this.#slots.releaseIfDone(sequence, nowUs);
    this.#schedule();
  }

  /** Triton's checks in SequenceBatchScheduler::Enqueue, with its messages. */
  #checkRequest(request: InferRequest): Entry['flags'] {
    const model = this.#options.modelName;
    if (this.#options.maxBatchSize > 0 && (request.inputs[0]?.shape[0] ?? 1) > 1) {
      throw new NereidError('INVALID_ARG', `${idPrefix(request)}inference request to model '${model}' must specify batch-size 1 due to requirements of sequence batcher`);
    }
    const flags = sequenceFlagsOf(request);
    if (this.#options.isIterative === true && flags.correlationId === undefined) {
      return { isStart: true, isEnd: false, correlationId: this.#nextIterativeId++ };
    }
    const { correlationId } = flags;
    if (correlationId === undefined) {
      throw new NereidError('INVALID_ARG', `${idPrefix(request)}inference request to model '${model}' must specify a non-zero or non-empty correlation ID`);
    }
    const refusal = this.#options.controls.refusalOf(correlationId, model);
    if (refusal !== undefined) throw new NereidError('INVALID_ARG', `${idPrefix(request)}${refusal}`);
    if (!flags.isStart && !this.#slots.isActive(correlationKeyOf(correlationId))) {
      throw new NereidError(
        'INVALID_ARG',
        `${idPrefix(request)}inference request for sequence ${formatCorrelationId(correlationId)} to model '${model}' must specify the START flag on the first request of the sequence`,
      );
    }
    return { ...flags, correlationId };
  }

  /** Puts an accepted request in its sequence, starting the sequence (in a free slot or the backlog) on START. */
  #route(entry: Entry, nowUs: number): void {
    const wasActive = this.#slots.add(correlationKeyOf(entry.flags.correlationId), entry, { isEnd: entry.flags.isEnd, nowUs });
    this.#queuedCount++;
    if (wasActive && entry.flags.isStart) {
      this.#options.logger?.warning(
        'sequence-batcher',
        `sequence ${formatCorrelationId(entry.flags.correlationId)} for model '${this.#options.modelName}' has a conflict. The previous sequence did not end before this sequence start. Previous sequence will be terminated early.`,
      );
    }
  }

  /** Frees idle slots, sends every batch that is due to idle instances, and arms the next wake-up. */
  #schedule(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    const nowUs = this.#clock.nowUs();
    const { reaped, nextUs } = this.#slots.reapIdle(nowUs, this.#options.maxSequenceIdleUs);
    for (const key of reaped) this.#options.logger?.verbose(1, 'sequence-batcher', `Reaper: CORRID ${key.slice(2)}: max sequence idle exceeded`);
    let wakeUs = nextUs;
    if (this.#delayUntilQueued > 0 && this.#queuedCount >= this.#delayUntilQueued) this.#delayUntilQueued = 0;
    for (const runner of this.#slots.runners) {
      if (runner.isBusy || this.#delayUntilQueued > 0) continue;
      const decision = this.#options.strategy.kind === 'direct' ? this.#formDirect(runner, nowUs) : this.#formOldest(runner, nowUs);
      if (decision === undefined) continue;
      if ('waitUntilUs' in decision) wakeUs = Math.min(wakeUs, decision.waitUntilUs);
      else this.#dispatch(runner, decision.slots, nowUs);
    }
    if (wakeUs !== Number.POSITIVE_INFINITY) {
      this.#timer = this.#clock.setTimer(() => {
        this.#timer = undefined;
        this.#schedule();
      }, Math.max(0, wakeUs - nowUs));
    }
  }

  /** The slots with a request ready, oldest first, those of the oldest request's shapes only. */
  #readySlots(runner: Runner): Slot[] {
    const ready = runner.slots.filter((slot) => (slot.sequence?.entries.length ?? 0) > 0);
    if (ready.length === 0) return ready;
    ready.sort((a, b) => a.sequence!.entries[0]!.enqueuedUs - b.sequence!.entries[0]!.enqueuedUs);
    const shapeKey = this.#shapeKeyOf(ready[0]!.sequence!);
    return ready.filter((slot) => this.#shapeKeyOf(slot.sequence!) === shapeKey);
  }

  /** The shapes the next request of a sequence runs with: its inputs' and, with variable state dims, its states'. */
  #shapeKeyOf(sequence: Sequence): string {
    const entry = sequence.entries[0]!;
    if (this.#options.states.isEmpty) return entry.shapeKey;
    const states = entry.flags.isStart || sequence.states === undefined ? this.#initialStatesKey : shapeKeyOf([...sequence.states.values()]);
    return `${entry.shapeKey}|${states}`;
  }

  /** Triton's DirectSequenceBatch: every ready slot runs, unless it is worth waiting for more. */
  #formDirect(runner: Runner, nowUs: number): Decision {
    const ready = this.#readySlots(runner);
    if (ready.length === 0) return undefined;
    const strategy = this.#options.strategy as DirectStrategy;
    const oldestUs = ready[0]!.sequence!.entries[0]!.enqueuedUs;
    const requiredCount = Math.ceil(strategy.minimumSlotUtilization * runner.slots.length);
    if (strategy.maxQueueDelayUs > 0 && ready.length < requiredCount && nowUs - oldestUs < strategy.maxQueueDelayUs) {
      return { waitUntilUs: oldestUs + strategy.maxQueueDelayUs };
    }
    return { slots: ready };
  }

  /** Triton's OldestSequenceBatch: a dynamic batch of the oldest ready requests, one per sequence. */
  #formOldest(runner: Runner, nowUs: number): Decision {
    const strategy = this.#options.strategy as OldestStrategy;
    const ready = this.#readySlots(runner).slice(0, Math.max(1, this.#options.maxBatchSize));
    if (ready.length === 0) return undefined;
    const oldestUs = ready[0]!.sequence!.entries[0]!.enqueuedUs;
    const isDelayExceeded = strategy.maxQueueDelayUs > 0 && nowUs - oldestUs >= strategy.maxQueueDelayUs;
    if (strategy.maxQueueDelayUs === 0 || isDelayExceeded || this.#preferred.has(ready.length) || ready.length >= this.#maxPreferred) {
      const preferred = isDelayExceeded ? undefined : this.#preferredDescending.find((size) => size <= ready.length);
      return { slots: ready.slice(0, preferred ?? ready.length) };
    }
    return { waitUntilUs: oldestUs + strategy.maxQueueDelayUs };
  }

  #dispatch(runner: Runner, slots: readonly Slot[], nowUs: number): void {
    runner.isBusy = true;
    const { controls, states } = this.#options;
    const ran: Sequence[] = [];
    const byIndex = new Map(slots.map((slot) => [slot.index, slot]));
    // Direct batches keep slot order with padding in the holes; oldest batches are just the requests.
    const positions = this.#options.strategy.kind === 'direct' ? Array.from({ length: Math.max(...slots.map((slot) => slot.index)) + 1 }, (_, index) => byIndex.get(index)) : slots;
    let template: InferRequest | undefined;
    const placed = positions.map((slot): QueuedRequest | undefined => {
      if (slot === undefined) return undefined;
      const sequence = slot.sequence!;
      const entry = sequence.entries.shift()!;
      this.#queuedCount--;
      entry.order = this.#delivery.next();
      ran.push(sequence);
      if (entry.flags.isStart || sequence.states === undefined) sequence.states = states.initial();
      const sequenceStates = sequence.states;
      const request: InferRequest = {
        ...entry.request,
        inputs: [
          ...entry.request.inputs,
          ...controls.tensorsFor({ isStart: entry.flags.isStart, isEnd: entry.flags.isEnd, isReady: true, correlationId: entry.flags.correlationId }),
          ...sequenceStates.values(),
        ],
        outputs: [...(entry.request.outputs ?? []), ...states.outputNames.filter((name) => !entry.clientOutputs.has(name)).map((name) => ({ name }))],
      };
      template ??= request;
      const settle = (result: readonly Tensor[] | NereidError): void =>
        entry.settle(result instanceof NereidError ? result : states.update(sequenceStates, result, entry.clientOutputs));
      if (this.#options.isIterative !== true) return { request, batchSize: 1, enqueuedUs: entry.enqueuedUs, settle };
      return {
        request: { ...request, parameters: iterationParameters(request, entry.flags) },
        batchSize: 1,
        enqueuedUs: entry.enqueuedUs,
        settle: (result) => {
          this.#slots.end(sequence);
          settle(result);
        },
        reschedule: () => this.#reschedule(sequence, entry),
      };
    });
    const batch = placed.map((queued) => queued ?? this.#padding(template!, nowUs));
    void executeBatch({ instance: runner.instance, batch, statistics: this.#options.statistics, clock: this.#clock, startUs: nowUs }).finally(() => {
      runner.isBusy = false;
      const endUs = this.#clock.nowUs();
      for (const sequence of ran) this.#slots.releaseIfDone(sequence, endUs);
      this.#schedule();
    });
  }

  /**
   * Puts a request its model released with RESCHEDULE back at the front of its sequence, as Triton's
   * IterativeSequencer::RescheduleRequest does: it runs again in the same slot, with the sequence's
   * states, and neither START nor END.
   */
  #reschedule(sequence: Sequence, entry: Entry): void {
    if (entry.order !== undefined) {
      // Its turn in preserve_ordering passes: the result it will have is numbered when it leaves again.
      this.#delivery.deliver(entry.order, () => {});
      entry.order = undefined;
    }
    entry.flags = { ...entry.flags, isStart: false, isEnd: false };
    entry.enqueuedUs = this.#clock.nowUs();
    sequence.entries.unshift(entry);
    this.#queuedCount++;
  }

  /** An empty slot's stand-in: a ready request's tensors with the controls of a slot that is not ready. */
  #padding(template: InferRequest, nowUs: number): QueuedRequest {
    const controls = this.#options.controls.tensorsFor({ isStart: false, isEnd: false, isReady: false, correlationId: undefined });
    const controlNames = new Set(controls.map((control) => control.name));
    return {
      request: { ...template, id: '', inputs: [...template.inputs.filter((input) => !controlNames.has(input.name)), ...controls], signal: undefined },
      batchSize: 1,
      enqueuedUs: nowUs,
      isPadding: true,
      settle: () => {},
    };
  }

  async close(options?: CloseOptions): Promise<void> {
    if (!(await this.#inflight.close(options))) {
      const error = new NereidError('UNAVAILABLE', `model '${this.#options.modelName}' was unloaded before the request ran`);
      for (const sequence of this.#slots.sequences()) {
        for (const entry of sequence.entries.splice(0)) entry.settle(error);
      }
      this.#queuedCount = 0;
    }
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#options.pool.close();
  }
}
