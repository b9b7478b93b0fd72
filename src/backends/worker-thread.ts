import { Worker } from 'node:worker_threads';

// Nereid's own modules are .ts files when it runs from source (tests, tsx) and .js once built.
const IS_SOURCE = import.meta.url.endsWith('.ts');

/** The URL of a worker module next to `base`, given its name without extension. */
export function workerUrl(name: string, base: string): URL {
  return new URL(`${name}${IS_SOURCE ? '.ts' : '.js'}`, base);
}

/**
 * Starts a worker thread running `url`.
 * NOTE: a worker does not inherit the tsx loader that `node --import tsx` gave the main thread, so
 * from source the worker first registers tsx itself (a dev dependency, never needed once built).
 */
export function startWorker(url: URL, workerData: unknown): Worker {
  if (!IS_SOURCE) return new Worker(url, { workerData });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** Milliseconds since the epoch with sub-millisecond precision, comparable across threads. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** A duration in milliseconds as whole nanoseconds, never negative (statistics). */
export const msToNs = (ms: number): number => Math.max(0, Math.round(ms * 1e6));
