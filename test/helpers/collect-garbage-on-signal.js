import { isMainThread } from 'node:worker_threads';

/*
 * Loaded into a `nereid serve` child (with --expose-gc) by tests that measure its resident memory:
 * SIGUSR2 runs a full garbage collection, so that a reading shows what is still held, not what an idle
 * V8 has not yet collected. Plain JavaScript: the child's worker threads load it too, before any loader.
 */
if (isMainThread) process.on('SIGUSR2', () => globalThis.gc?.());
