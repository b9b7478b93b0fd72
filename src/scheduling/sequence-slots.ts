import type { ModelInstance } from '../kernel/model-instance.js';
import type { Tensor } from '../kernel/tensor.js';

/** A sequence from its first request to its END (or idle expiry): its queue, its states, its slot. */
export interface Sequence<E> {
  readonly key: string;
  /** Requests accepted and not yet sent to the instance, in arrival order. */
  readonly entries: E[];
  states: Map<string, Tensor> | undefined;
  /** Its END request has arrived: no request joins it any more. */
  hasEnded: boolean;
  lastRequestUs: number;
  /** Undefined while in the backlog. */
  slot: Slot<E> | undefined;
}

export interface Slot<E> {
  readonly runner: Runner<E>;
  readonly index: number;
  sequence: Sequence<E> | undefined;
}

/** One instance with its slots; it runs one execution at a time. */
export interface Runner<E> {
  readonly instance: ModelInstance;
  readonly slots: ReadonlyArray<Slot<E>>;
  isBusy: boolean;
}

/**
 * Which sequence holds which slot of which instance, and the backlog of those waiting for one
 * (Triton core sequence_batch_scheduler.cc: sequence_to_batcherseqslot_map_, ready_batcher_seq_slots_,
 * backlog_queues_). A sequence is active from its first request until its END arrives; an active
 * sequence's later requests join it wherever it is. Slots are taken lowest index first across the
 * instances, so sequences spread over them.
 *
 *   active:  id 7 ──▶ runner 0 slot 0      backlog: [id 9, id 12] ──▶ the next slot that frees
 *            id 8 ──▶ runner 1 slot 0
 */
export class SequenceSlots<E> {
  readonly runners: ReadonlyArray<Runner<E>>;
  readonly #active = new Map<string, Sequence<E>>();
  readonly #backlog: Array<Sequence<E>> = [];

  constructor(instances: readonly ModelInstance[], slotCount: number) {
    this.runners = instances.map((instance) => {
      const slots: Array<Slot<E>> = [];
      const runner: Runner<E> = { instance, slots, isBusy: false };
      for (let index = 0; index < slotCount; index++) slots.push({ runner, index, sequence: undefined });
      return runner;
    });
  }

  /** Whether a sequence of this key is active: a request without START may join it. */
  isActive(key: string): boolean {
    return this.#active.has(key);
  }

  /** Sequences holding a slot, and sequences waiting in the backlog for one. */
  get counts(): { readonly active: number; readonly backlogged: number } {
    let active = 0;
    for (const runner of this.runners) for (const slot of runner.slots) if (slot.sequence !== undefined) active++;
    return { active, backlogged: this.#backlog.length };
  }

  /** Every sequence that holds a slot or waits for one. */
  sequences(): Array<Sequence<E>> {
    return [...this.#backlog, ...this.runners.flatMap((runner) => runner.slots.flatMap((slot) => (slot.sequence === undefined ? [] : [slot.sequence])))];
  }

  /**
   * Adds a request to the active sequence of `key`, or to a new one (in a free slot, or the backlog).
   * Returns whether a sequence of that key was already active (a START for it is a conflict).
   */
  add(key: string, entry: E, options: { readonly isEnd: boolean; readonly nowUs: number }): boolean {
    let sequence = this.#active.get(key);
    const wasActive = sequence !== undefined;
    if (sequence === undefined) {
      sequence = { key, entries: [], states: undefined, hasEnded: false, lastRequestUs: options.nowUs, slot: undefined };
      this.#active.set(key, sequence);
      const slot = this.#freeSlot();
      if (slot === undefined) this.#backlog.push(sequence);
      else this.#bind(slot, sequence, options.nowUs);
    }
    sequence.entries.push(entry);
    sequence.lastRequestUs = options.nowUs;
    if (options.isEnd) {
      // A later request with this id starts a new sequence.
      sequence.hasEnded = true;
      this.#active.delete(key);
    }
    return wasActive;
  }

  /** Ends a sequence without an END request (an iterative sequence's request was released): a later request of its key starts a new one. */
  end(sequence: Sequence<E>): void {
    sequence.hasEnded = true;
    if (this.#active.get(sequence.key) === sequence) this.#active.delete(sequence.key);
  }

  /** Frees the slot of a sequence that has ended and run its last request; the oldest backlogged sequence takes it. */
  releaseIfDone(sequence: Sequence<E>, nowUs: number): void {
    if (sequence.hasEnded && sequence.entries.length === 0 && sequence.slot !== undefined) this.#release(sequence.slot, nowUs);
  }

  /**
   * Releases the slot of every sequence on an idle instance with nothing queued whose last request is
   * `idleUs` or more ago (Triton's reaper: a later request of it without START is then refused).
   * Returns the reaped sequences' keys and when the next one would idle out.
   */
  reapIdle(nowUs: number, idleUs: number): { readonly reaped: readonly string[]; readonly nextUs: number } {
    const reaped: string[] = [];
    let nextUs = Number.POSITIVE_INFINITY;
    for (const runner of this.runners) {
      if (runner.isBusy) continue;
      for (const slot of runner.slots) {
        const sequence = slot.sequence;
        if (sequence === undefined || sequence.entries.length > 0) continue;
        const expiresUs = sequence.lastRequestUs + idleUs;
        if (expiresUs > nowUs) {
          nextUs = Math.min(nextUs, expiresUs);
          continue;
        }
        reaped.push(sequence.key);
        if (this.#active.get(sequence.key) === sequence) this.#active.delete(sequence.key);
        this.#release(slot, nowUs);
      }
    }
    return { reaped, nextUs };
  }

  /** A free slot, the lowest slot index first across instances (Triton's ready slot order). */
  #freeSlot(): Slot<E> | undefined {
    let best: Slot<E> | undefined;
    for (const runner of this.runners) {
      const slot = runner.slots.find((candidate) => candidate.sequence === undefined);
      if (slot !== undefined && (best === undefined || slot.index < best.index)) best = slot;
    }
    return best;
  }

  #bind(slot: Slot<E>, sequence: Sequence<E>, nowUs: number): void {
    slot.sequence = sequence;
    sequence.slot = slot;
    // The idle time of a sequence that waited in the backlog counts from when it got its slot.
    sequence.lastRequestUs = Math.max(sequence.lastRequestUs, nowUs);
  }

  #release(slot: Slot<E>, nowUs: number): void {
    if (slot.sequence !== undefined) slot.sequence.slot = undefined;
    slot.sequence = undefined;
    const next = this.#backlog.shift();
    if (next !== undefined) this.#bind(slot, next, nowUs);
  }
}
