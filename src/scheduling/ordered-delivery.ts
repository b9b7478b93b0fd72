/**
 * `preserve_ordering`: results are handed back in the order their requests left the queue. Each
 * request gets its number when it leaves (`next()`); `deliver` holds a result until every result
 * numbered before it has been delivered.
 */
export class OrderedDelivery {
  #nextNumber = 0;
  #nextDelivery = 0;
  readonly #held = new Map<number, () => void>();

  /** The number of the next request to leave the queue. */
  next(): number {
    return this.#nextNumber++;
  }

  deliver(number: number, deliver: () => void): void {
    this.#held.set(number, deliver);
    for (let held = this.#held.get(this.#nextDelivery); held !== undefined; held = this.#held.get(this.#nextDelivery)) {
      this.#held.delete(this.#nextDelivery);
      this.#nextDelivery++;
      held();
    }
  }
}
