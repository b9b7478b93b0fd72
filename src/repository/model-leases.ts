/**
 * Models that requests are about to use, with how many: the repository evicts no leased model. A
 * lease is taken when a request asks for its model and returned once the request is enqueued (and so
 * counted in flight by the model's scheduler).
 */
export class ModelLeases {
  readonly #counts = new Map<string, number>();

  /** Leases `name` until the returned function is called (once). */
  take(name: string): () => void {
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
    let isReturned = false;
    return () => {
      if (isReturned) return;
      isReturned = true;
      const count = this.#counts.get(name)! - 1;
      if (count > 0) this.#counts.set(name, count);
      else this.#counts.delete(name);
    };
  }

  has(name: string): boolean {
    return this.#counts.has(name);
  }
}
