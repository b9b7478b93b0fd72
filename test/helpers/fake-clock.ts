import type { Clock } from '../../src/scheduling/clock.js';

/** A clock the test moves by hand; timers fire in order as it passes them. */
export class FakeClock implements Clock {
  #now = 0;
  readonly #timers = new Map<number, { atUs: number; callback: () => void }>();
  #nextId = 0;

  nowUs(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayUs: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { atUs: this.#now + delayUs, callback });
    return id;
  }

  clearTimer(timer: unknown): void {
    this.#timers.delete(timer as number);
  }

  /** Timers waiting to fire. */
  get timerCount(): number {
    return this.#timers.size;
  }

  advance(us: number): void {
    const target = this.#now + us;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.atUs <= target).sort((a, b) => a[1].atUs - b[1].atUs)[0];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].atUs;
      due[1].callback();
    }
    this.#now = target;
  }
}
