/** The longest delay one Node.js timer takes; a longer one fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A signal that never aborts, for a wait nothing cuts short. */
const NEVER = new AbortController().signal;

/**
 * Waits `ms` milliseconds on timers, in steps of at most MAX_TIMER_MS so that a wait past Node.js's
 * timer limit (a UINT32 of milliseconds, a creation delay in seconds) is honoured, not cut to 1 ms.
 * Resolves true once the time has passed, false as soon as `signal` aborts (at once when it already
 * has); it never rejects, and leaves no timer or listener behind.
 */
export function sleepMs(ms: number, signal: AbortSignal = NEVER): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let leftMs = ms;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const step = (): void => {
      if (leftMs <= 0) {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
        return;
      }
      const stepMs = Math.min(leftMs, MAX_TIMER_MS);
      leftMs -= stepMs;
      timer = setTimeout(step, stepMs);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    step();
  });
}
