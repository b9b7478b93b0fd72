import { type Deferred, deferred } from './deferred.js';

/**
 * Values produced by callbacks (responses, events) and read by one consumer with `for await`, in order.
 * `end()` lets the reader finish once it has read everything pushed; `end(error)` makes the iteration
 * throw `error` after that. Pushes after the end are dropped.
 *
 *     push(a) push(b) ─▶ [a, b] ─▶ for await ─▶ a, b, then waits in #waiter until push or end
 *
 * A reader that stops early (break, return) ends the queue: later pushes are dropped.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #waiter: Deferred<void> | undefined;
  #isEnded = false;
  #error: { readonly reason: unknown } | undefined;

  get isEnded(): boolean {
    return this.#isEnded;
  }

  push(item: T): void {
    if (this.#isEnded) return;
    this.#items.push(item);
    this.#wake();
  }

  end(error?: unknown): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    if (error !== undefined) this.#error = { reason: error };
    this.#wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (true) {
        if (this.#items.length > 0) {
          yield this.#items.shift()!;
          continue;
        }
        if (this.#isEnded) {
          if (this.#error !== undefined) throw this.#error.reason;
          return;
        }
        this.#waiter = deferred();
        await this.#waiter.promise;
      }
    } finally {
      this.#isEnded = true;
      this.#items.length = 0;
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve();
  }
}
