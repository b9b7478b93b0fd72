/**
 * Runs tasks one at a time per key, in the order they were given; tasks of different keys run
 * concurrently. The repository uses it so that the loads and unloads of one model never overlap.
 */
export class KeyedMutex {
  /** The last task given for each key, settled or not; removed once it settles with nothing after it. */
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every task given earlier for `key` has settled; a failure of those does not stop it. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(task);
    this.#tails.set(key, next);
    const forget = (): void => {
      if (this.#tails.get(key) === next) this.#tails.delete(key);
    };
    next.then(forget, forget);
    return next;
  }

  /** True when no task given for `key` is still to settle. */
  isIdle(key: string): boolean {
    return !this.#tails.has(key);
  }

  /** Settles once every task given so far for `key` has settled (never rejects). */
  async settled(key: string): Promise<void> {
    await this.#tails.get(key)?.catch(() => undefined);
  }
}
