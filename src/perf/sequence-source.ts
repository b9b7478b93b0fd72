import type { Random } from './random.js';

/** perf_analyzer's sequence flags (docs/cli.md "Sequence Model Options" of triton-inference-server/perf_analyzer). */
export interface SequenceSettings {
  /** `--sequence-length`: the base number of requests of a sequence (default 20). */
  readonly length: number;
  /** `--sequence-length-variation`: each sequence's length is within ± this percentage of the base (default 20). */
  readonly lengthVariationPct: number;
  /** `--sequence-id-range START[:END]`: ids from START (default 1), up to END excluded, or without bound. */
  readonly idStart: number;
  readonly idEnd: number | undefined;
  /** `--num-of-sequences`: the sequences kept live in request-rate mode (default 4). */
  readonly numOfSequences: number;
}

/** The sequence fields of one request, and the call that hands its sequence back once it is answered. */
export interface SequenceStep {
  readonly sequenceId: number;
  readonly sequenceStart: boolean;
  readonly sequenceEnd: boolean;
  /** Call once the request is answered (or failed): the sequence's next request may then go. */
  release(): void;
}

interface LiveSequence {
  readonly id: number;
  readonly length: number;
  sent: number;
}

/**
 * Hands out the sequence fields of each request, as perf_analyzer drives a sequence model: every
 * request belongs to a live sequence, at most one request of a sequence is in flight (its next one
 * would otherwise race it to the server), a sequence ends after its drawn length, and a new one then
 * starts with the next id of the range (wrapping round, never reusing a live id).
 * - concurrency mode (`maxLive` undefined): a request takes an idle live sequence or starts one, so
 *   there are as many live sequences as requests in flight;
 * - request-rate mode: `maxLive` sequences (`--num-of-sequences`); a request waits for one of them to be idle.
 */
export class SequenceSource {
  readonly #settings: SequenceSettings;
  readonly #random: Random;
  readonly #maxLive: number | undefined;
  readonly #idle: LiveSequence[] = [];
  readonly #liveIds = new Set<number>();
  readonly #waiting: Array<(sequence: LiveSequence) => void> = [];
  #nextId: number;

  constructor(settings: SequenceSettings, random: Random, maxLive?: number) {
    this.#settings = settings;
    this.#random = random;
    this.#maxLive = maxLive;
    this.#nextId = settings.idStart;
  }

  /** The sequence fields of the next request; waits in request-rate mode while every live sequence has a request in flight. */
  async next(): Promise<SequenceStep> {
    const sequence = this.#idle.pop() ?? (this.#maxLive === undefined || this.#liveIds.size < this.#maxLive ? this.#start() : await new Promise<LiveSequence>((resolve) => this.#waiting.push(resolve)));
    const index = sequence.sent++;
    const isEnd = sequence.sent >= sequence.length;
    let isReleased = false;
    return {
      sequenceId: sequence.id,
      sequenceStart: index === 0,
      sequenceEnd: isEnd,
      release: () => {
        if (isReleased) return;
        isReleased = true;
        this.#release(isEnd ? undefined : sequence, sequence.id);
      },
    };
  }

  #release(sequence: LiveSequence | undefined, id: number): void {
    if (sequence === undefined) this.#liveIds.delete(id);
    const next = sequence ?? (this.#waiting.length > 0 ? this.#start() : undefined);
    if (next === undefined) return;
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) waiter(next);
    else this.#idle.push(next);
  }

  #start(): LiveSequence {
    const { length, lengthVariationPct } = this.#settings;
    const drawn = Math.round(length * (1 + ((2 * this.#random() - 1) * lengthVariationPct) / 100));
    const sequence = { id: this.#takeId(), length: Math.max(1, drawn), sent: 0 };
    this.#liveIds.add(sequence.id);
    return sequence;
  }

  /** The next id of the range not live now; parsePerfArgs has checked that the range holds enough. */
  #takeId(): number {
    const { idStart, idEnd } = this.#settings;
    for (;;) {
      const id = this.#nextId++;
      if (idEnd !== undefined && this.#nextId >= idEnd) this.#nextId = idStart;
      if (!this.#liveIds.has(id)) return id;
    }
  }
}
