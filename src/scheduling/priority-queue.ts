/** A priority level's queue policy (config ModelQueuePolicy), times in microseconds; 0 means none. */
export interface QueuePolicy {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  readonly maxQueueSize: number;
}

/** What the queue needs of an entry; the scheduler's entries carry more. */
export interface QueueEntry {
  readonly enqueuedUs: number;
  /** When the level's timeout action applies; Infinity without a timeout. */
  deadlineUs: number;
}

export interface PriorityQueueOptions {
  /** 0: one level, and request priorities are ignored. */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicy;
  /** Policies of particular levels (config priority_queue_policy), by level. */
  readonly priorityQueuePolicies: ReadonlyMap<number, QueuePolicy>;
}

interface Level<E> {
  readonly policy: QueuePolicy;
  readonly queue: E[];
  /** Entries whose timeout passed under timeout_action DELAY: served after the level's others. */
  readonly delayed: E[];
}

/**
 * The queued requests of one model by priority level, each level with its queue policy (Triton's
 * PriorityQueue and PolicyQueue, core src/scheduler_utils.cc). Levels are numbered from 1, the most
 * urgent; entries leave in level order, each level's delayed ones last.
 *
 *   level 1: [queue ...][delayed ...]   level 2: [queue ...][delayed ...]   ...
 */
export class PriorityQueue<E extends QueueEntry> {
  readonly #options: PriorityQueueOptions;
  readonly #levels: Array<Level<E>>;

  constructor(options: PriorityQueueOptions) {
    this.#options = options;
    const levelCount = Math.max(1, options.priorityLevels);
    // Without priority levels only the default policy applies (Triton's PriorityQueue).
    this.#levels = Array.from({ length: levelCount }, (_, index) => ({
      policy: (options.priorityLevels > 0 ? options.priorityQueuePolicies.get(index + 1) : undefined) ?? options.defaultQueuePolicy,
      queue: [],
      delayed: [],
    }));
  }

  /** Entries waiting, at every level. */
  get size(): number {
    return this.#levels.reduce((sum, level) => sum + level.queue.length + level.delayed.length, 0);
  }

  /** Priority 0, absent or beyond the levels means the default level (Triton's InferenceRequest::SetPriority). */
  levelOf(priority: number | undefined): number {
    if (this.#options.priorityLevels === 0) return 1;
    if (priority === undefined || priority === 0 || priority > this.#options.priorityLevels) return this.#options.defaultPriorityLevel;
    return priority;
  }

  policyOf(levelNumber: number): QueuePolicy {
    return this.#levels[levelNumber - 1]!.policy;
  }

  /** Entries waiting at one level. */
  waitingAt(levelNumber: number): number {
    const level = this.#levels[levelNumber - 1]!;
    return level.queue.length + level.delayed.length;
  }

  /**
   * When an entry given now at the level times out: a request's timeout may only shorten the level's
   * default one, and with no default timeout it has no effect (Triton's PolicyQueue::Enqueue).
   */
  deadlineOf(levelNumber: number, requestTimeoutUs: number | undefined, nowUs: number): number {
    const { policy } = this.#levels[levelNumber - 1]!;
    let timeoutUs = policy.defaultTimeoutUs;
    if (policy.allowTimeoutOverride && requestTimeoutUs !== undefined && requestTimeoutUs > 0 && requestTimeoutUs < timeoutUs) {
      timeoutUs = requestTimeoutUs;
    }
    return timeoutUs > 0 ? nowUs + timeoutUs : Number.POSITIVE_INFINITY;
  }

  push(levelNumber: number, entry: E): void {
    this.#levels[levelNumber - 1]!.queue.push(entry);
  }

  /**
   * Applies the timeout action to every entry whose deadline has come: DELAY moves it behind its
   * level's others, with no deadline; REJECT takes it out of the queue and hands it to `onRejected`.
   */
  expire(nowUs: number, onRejected: (entry: E, nowUs: number) => void): void {
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
          onRejected(entry, nowUs);
        }
      }
    }
  }

  /** The earliest deadline of a waiting entry; Infinity when none has one. */
  get nextDeadlineUs(): number {
    let deadlineUs = Number.POSITIVE_INFINITY;
    for (const level of this.#levels) {
      for (const entry of level.queue) deadlineUs = Math.min(deadlineUs, entry.deadlineUs);
    }
    return deadlineUs;
  }

  /** Waiting entries in the order they leave: by level, each level's delayed ones last. */
  *ordered(): Generator<E> {
    for (const level of this.#levels) {
      yield* level.queue;
      yield* level.delayed;
    }
  }

  /** Takes the given entries out of the queue. */
  remove(entries: readonly E[]): void {
    const taken = new Set(entries);
    for (const level of this.#levels) {
      for (const list of [level.queue, level.delayed]) {
        for (let index = list.length - 1; index >= 0; index--) if (taken.has(list[index]!)) list.splice(index, 1);
      }
    }
  }

  /** Empties the queue; returns what was waiting, level by level, each level's delayed ones last. */
  clear(): E[] {
    return this.#levels.flatMap((level) => level.queue.splice(0).concat(level.delayed.splice(0)));
  }
}
