/** Time for the schedulers, injectable so tests can drive it. Microseconds throughout. */
export interface Clock {
  nowUs(): number;
  /** Calls `callback` once after `delayUs`; returns a handle for clearTimer. */
  setTimer(callback: () => void, delayUs: number): unknown;
  clearTimer(timer: unknown): void;
}

interface SystemTimer {
  isCleared: boolean;
  timeout?: NodeJS.Timeout;
  immediate?: NodeJS.Immediate;
}

const nowUs = (): number => performance.now() * 1000;

/**
 * The real clock. NOTE: setTimeout cannot wait less than a millisecond, but queue delays are often
 * 100-500 µs: a 100 µs max_queue_delay would cost every lone request a full millisecond. So the timer
 * sleeps with setTimeout until about a millisecond is left, then checks the time on each turn of the
 * event loop (setImmediate), which keeps serving I/O while it waits.
 */
export const systemClock: Clock = {
  nowUs,
  setTimer(callback, delayUs) {
    const deadlineUs = nowUs() + delayUs;
    const timer: SystemTimer = { isCleared: false };
    const poll = (): void => {
      if (timer.isCleared) return;
      if (nowUs() >= deadlineUs) callback();
      else timer.immediate = setImmediate(poll);
    };
    if (delayUs >= 2000) timer.timeout = setTimeout(poll, (delayUs - 1000) / 1000);
    else timer.immediate = setImmediate(poll);
    return timer;
  },
  clearTimer(timer) {
    const handle = timer as SystemTimer;
    handle.isCleared = true;
    if (handle.timeout !== undefined) clearTimeout(handle.timeout);
    if (handle.immediate !== undefined) clearImmediate(handle.immediate);
  },
};
