import type { Tensor } from './tensor.js';

/**
 * Triton's timestamp names (server src/tracer.cc and core src/infer_trace.h), in the order a request
 * meets them: the front end's receive, the core's request and queue, the backend's compute, the
 * response, the front end's send.
 */
export type TraceTimestampName =
  | 'HTTP_RECV_START'
  | 'HTTP_RECV_END'
  | 'GRPC_WAITREAD_START'
  | 'GRPC_WAITREAD_END'
  | 'REQUEST_START'
  | 'QUEUE_START'
  | 'COMPUTE_START'
  | 'COMPUTE_INPUT_END'
  | 'COMPUTE_OUTPUT_START'
  | 'COMPUTE_END'
  | 'INFER_RESPONSE_COMPLETE'
  | 'REQUEST_END'
  | 'HTTP_SEND_START'
  | 'HTTP_SEND_END'
  | 'GRPC_SEND_START'
  | 'GRPC_SEND_END';

/** Triton's tensor activities: the inputs as the request enters its model's queue, the outputs as the backend gives them. */
export type TraceTensorActivity = 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_OUTPUT';

/**
 * The trace of one sampled request (the trace extension). Whoever creates it (a front end, or a
 * parent trace for an ensemble step or a model-to-model call) ends it once, when its request is done.
 * Every method is cheap and never throws; what the trace's level does not ask for is dropped.
 */
export interface RequestTrace {
  /** The model and version that serve the request, once known, and the request's id. */
  setModel(name: string, version: number, requestId: string): void;
  /** A timestamp, now or at `ns` (process.hrtime.bigint()'s clock: monotonic nanoseconds). */
  timestamp(name: TraceTimestampName, ns?: bigint): void;
  tensors(activity: TraceTensorActivity, tensors: readonly Tensor[]): void;
  /** A trace for a request this one's model makes (an ensemble step, a model-to-model call), with this one as its parent. */
  child(): RequestTrace;
  /** Completes the trace; later calls are ignored. */
  end(): void;
}
