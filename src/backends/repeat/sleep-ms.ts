/** The longest delay one Node.js timer takes; a longer one fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Waits `ms` milliseconds on timers, in steps of at most MAX_TIMER_MS so that a UINT32 wait of up to
 * 49.7 days is honoured. Resolves true once the time has passed, false as soon as `signal` aborts
 * (at once when it already has); it never rejects, and leaves no timer or listener behind.
 */
export function sleepMs(ms: number, signal: AbortSignal): Promise<boolean> {
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
