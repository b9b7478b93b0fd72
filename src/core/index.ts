/** The core's public surface: front ends import from here and nowhere else in the core. */
export { InferenceServer } from './inference-server.js';
export type { InferenceServerOptions, TraceSettingsMessage } from './inference-server.js';
export type { RequestTrace } from '../kernel/request-trace.js';
export { TraceManager } from './tracing/trace-manager.js';
export { type TraceContextCarrier, loadOpenTelemetryTracer } from './tracing/open-telemetry-tracer.js';
export { type TraceSettings, type TraceSettingsUpdate, DEFAULT_TRACE_SETTINGS, parseTraceSettingsUpdate } from '../kernel/trace-settings.js';
export { RequestRouter } from './request-router.js';
export type { ModelCaller } from '../kernel/model-caller.js';
export type { ModelControl, UnloadOptions } from '../kernel/model-control.js';
export type { ModelSpec, TensorSpec } from '../kernel/model-spec.js';
export { NereidError } from '../kernel/errors.js';
export type { ErrorReason, NereidErrorOptions } from '../kernel/errors.js';
export type { InferRequest, InferResponse, RequestedOutput } from '../kernel/infer-request.js';
export { ResponseMemo } from '../kernel/response-memo.js';
export type { Tensor } from '../kernel/tensor.js';
export { deserializeBytesSliced, serializeBytesSliced } from '../kernel/bytes-slices.js';
export { modelConfigToTritonJson } from '../config/model-config-json.js';
export type { LogSettingsMessage } from './log-settings.js';
