/** Time for the schedulers, injectable so tests can drive it. Microseconds throughout. */
export interface Clock {
  nowUs(): number;
  /** Calls `callback` once after `delayUs`; returns a handle for clearTimer. */
  setTimer(callback: () => void, delayUs: number): unknown;
  clearTimer(timer: unknown): void;
}

export const systemClock: Clock = {
  nowUs: () => performance.now() * 1000,
  setTimer: (callback, delayUs) => setTimeout(callback, Math.max(0, delayUs / 1000)),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};
