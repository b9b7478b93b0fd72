/**
 * Settles as `promise` does, or rejects with `signal.reason` as soon as the signal aborts, whichever
 * comes first; with no signal, `promise` itself. The work behind `promise` goes on: stopping it is the
 * caller's. The listener is removed once either settles, so a signal that outlives many calls holds none.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as unknown);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
