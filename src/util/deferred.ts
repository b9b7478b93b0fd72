/** A promise with its settle functions, for code that settles it from elsewhere (a message, an event). */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * A new pending promise and the functions that settle it.
 * NOTE: this is `Promise.withResolvers()`, which Node.js has from version 22 only; Nereid runs on 20.
 */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}
