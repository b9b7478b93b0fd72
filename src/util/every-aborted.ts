/**
 * A signal that aborts once every one of `signals` has aborted (AbortSignal.any's counterpart, which
 * aborts on the first); undefined when the list is empty or holds an undefined signal: a caller that
 * never cancels. Its reason is the last signal's.
 */
export function everyAborted(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  if (signals.length === 0 || signals.some((signal) => signal === undefined)) return undefined;
  const combined = new AbortController();
  let remaining = signals.length;
  for (const signal of signals as readonly AbortSignal[]) {
    const onAbort = (): void => {
      remaining--;
      if (remaining === 0) combined.abort(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }
  return combined.signal;
}
