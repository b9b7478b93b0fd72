import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { requestIdPrefix } from './request-id-prefix.js';

/**
 * The error a cancelled request is answered with. Triton answers `Status(CANCELLED)` with no message
 * (core src/dynamic_batch_scheduler.cc `FinishRejectedCancelledRequests`); Nereid says where it was.
 */
export function cancelledError(request: InferRequest, stage: 'queued' | 'executing'): NereidError {
  const where = stage === 'queued' ? 'while it waited in the queue' : 'while it was executing; its result was dropped';
  return new NereidError('CANCELLED', `${requestIdPrefix(request)}the request to model '${request.modelName}' was cancelled ${where}`);
}

/** What each signal's one 'abort' listener calls, in the order they were added. */
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `onCancel` once when the request's signal aborts (at once, synchronously, when it already has);
 * returns what stops watching. Without a signal it never calls and the returned function does nothing.
 * A signal is an HTTP connection's or a gRPC call's, shared by every request and ensemble step on it:
 * it gets one listener, and a request is watched by adding to a Set (EventTarget's own
 * addEventListener and removeEventListener were 1.2 % of the main thread's samples under the digits
 * ensemble, with a batcher's queue and an instance watching each step).
 */
export function watchCancel(request: InferRequest, onCancel: () => void): () => void {
  const { signal } = request;
  if (signal === undefined) return noop;
  if (signal.aborted) {
    onCancel();
    return noop;
  }
  let callbacks = watchers.get(signal);
  if (callbacks === undefined) {
    const added = new Set<() => void>();
    watchers.set(signal, added);
    signal.addEventListener('abort', () => callEach(added), { once: true });
    callbacks = added;
  }
  const watching = callbacks;
  watching.add(onCancel);
  return () => {
    watching.delete(onCancel);
  };
}

/** Calls each callback once; one that throws is reported as a listener's error would be, and the others still run. */
function callEach(callbacks: Set<() => void>): void {
  for (const callback of callbacks) {
    callbacks.delete(callback);
    try {
      callback();
    } catch (error) {
      process.nextTick(() => {
        throw error;
      });
    }
  }
}

const noop = (): void => {};
