/**
 * `--model-load-thread-count`: at most `count` model loads run at once, the others wait in the order
 * they came (Triton loads models on a pool of that many threads).
 *
 * NOTE: an ensemble's load waits for the models its steps run, which need slots of their own. A load
 * that waits for another model gives its slot back for the wait (`whileWaiting`), so N ensembles
 * waiting for their steps never hold all N slots while the steps wait for one.
 */
export class LoadSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Runs `task` once a slot is free; the slot is freed when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  /** From inside `run`: frees the task's slot while `wait` is pending and takes one again after it. */
  async whileWaiting<T>(wait: () => Promise<T>): Promise<T> {
    this.#release();
    try {
      return await wait();
    } finally {
      await this.#acquire();
    }
  }

  /** Loads waiting for a slot. */
  get waitingCount(): number {
    return this.#waiting.length;
  }

  #acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#free++;
  }
}
