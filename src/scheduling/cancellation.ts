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

/**
 * Calls `onCancel` once when the request's signal aborts (at once, synchronously, when it already has);
 * returns what stops watching. Without a signal it never calls and the returned function does nothing.
 */
export function watchCancel(request: InferRequest, onCancel: () => void): () => void {
  const { signal } = request;
  if (signal === undefined) return noop;
  if (signal.aborted) {
    onCancel();
    return noop;
  }
  signal.addEventListener('abort', onCancel, { once: true });
  return () => signal.removeEventListener('abort', onCancel);
}

const noop = (): void => {};
