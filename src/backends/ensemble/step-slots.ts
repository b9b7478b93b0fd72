/**
 * `ensemble_scheduling.max_inflight_requests` for one step: at most `limit` of its requests run on
 * the composing model at once, across all the ensemble's requests; the others wait, in order, for a
 * slot (Triton core ensemble_scheduler.cc blocks the step's scheduling the same way). 0: no limit.
 */
export class StepSlots {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves once a slot is taken; every `acquire` that resolves is matched by one `release`. */
  acquire(): Promise<void> | undefined {
    if (this.#limit === 0 || this.#running < this.#limit) {
      this.#running++;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#running--;
  }
}
