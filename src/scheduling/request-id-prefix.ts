import type { InferRequest } from '../kernel/infer-request.js';

/** Triton prefixes a request's errors with its id (InferenceRequest::LogRequest). */
export const requestIdPrefix = (request: InferRequest): string => (request.id !== '' ? `[request id: ${request.id}] ` : '');
