/** A signal made of others, and what detaches it from them. */
export interface CombinedSignal {
  readonly signal: AbortSignal;
  /** Removes the listeners on the source signals (which may outlive it: a connection's serves many requests). */
  release(): void;
}

/**
 * A signal that aborts once every one of `signals` has aborted (AbortSignal.any's counterpart, which
 * aborts on the first); undefined when the list is empty or holds an undefined signal: a caller that
 * never cancels. Its reason is the last signal's. Call `release` once it is no longer needed.
 */
export function everyAborted(signals: ReadonlyArray<AbortSignal | undefined>): CombinedSignal | undefined {
  if (signals.length === 0 || signals.some((signal) => signal === undefined)) return undefined;
  const combined = new AbortController();
  let remaining = signals.length;
  const watched: Array<{ readonly signal: AbortSignal; readonly onAbort: () => void }> = [];
  for (const signal of signals as readonly AbortSignal[]) {
    const onAbort = (): void => {
      remaining--;
      if (remaining === 0) combined.abort(signal.reason);
    };
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      watched.push({ signal, onAbort });
    }
  }
  return {
    signal: combined.signal,
    release: () => {
      for (const { signal, onAbort } of watched.splice(0)) signal.removeEventListener('abort', onAbort);
    },
  };
}
