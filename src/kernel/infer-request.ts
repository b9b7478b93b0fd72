import type { Parameters } from '../protocol/parameters.js';
import type { CutElement } from './bytes-slices.js';
import type { NereidError } from './errors.js';
import type { RequestTrace } from './request-trace.js';
import type { ResponseMemo } from './response-memo.js';
import type { Tensor } from './tensor.js';

/** An output the client asked for, with its per-output parameters (for example `binary_data`). */
export interface RequestedOutput {
  readonly name: string;
  readonly parameters?: Parameters;
}

/**
 * One inference request as the core sees it, whatever front end it came through.
 * Wire names stay in the codecs: here everything is camelCase.
 */
export interface InferRequest {
  readonly modelName: string;
  /** A specific version, or undefined for the one the version policy serves (the highest ready). */
  readonly modelVersion?: number;
  /** Echoed in the response; empty when the client sent none. */
  readonly id: string;
  readonly inputs: readonly Tensor[];
  /** Undefined: every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  readonly parameters: Parameters;
  /**
   * The BYTES inputs whose serialized data (binary data, raw contents, shared memory) ends inside an
   * element, by name, and how it ends: set by the front ends that split such data, so that
   * validateRequest refuses the request in Triton's words, at the point Triton's checks would.
   */
  readonly cutBytesInputs?: ReadonlyMap<string, CutElement>;
  /**
   * Receives the responses of a decoupled model as the model sends them (set by the core for such
   * models only): outputs, or an error, which, as Triton's response sent with an error, fails that
   * response alone; the request goes on. The request is complete when its scheduler settles it.
   */
  readonly onResponse?: (response: readonly Tensor[] | NereidError) => void;
  /**
   * Set by the scheduler on a decoupled model's request: a backend that times its responses (Triton's
   * TRITONBACKEND_ModelInstanceReportResponseStatistics) reports each here in turn, sent or empty; the
   * statistics extension's `response_stats` count them by their index in the request.
   */
  readonly reportResponse?: (report: ResponseReport) => void;
  /** Set when the request was sampled for tracing (the trace extension); its creator ends it. */
  readonly trace?: RequestTrace;
  /**
   * Aborts when whoever made the request no longer wants its answer: its HTTP connection closed, its
   * gRPC call or stream was cancelled, its in-process caller or calling model gave up (Triton's
   * request cancellation, docs/user_guide/request_cancellation.md). A request still queued then
   * leaves its queue unexecuted and fails CANCELLED (statistics: a failure, reason CANCELED); one
   * already executing is reported to its backend, and its result is replaced by the CANCELLED error.
   */
  readonly signal?: AbortSignal;
}

/** One response of a decoupled model as its backend timed it (process.hrtime, in nanoseconds). */
export interface ResponseReport {
  readonly startNs: number;
  /** When its outputs started to be written; undefined for a response with none (an empty one). */
  readonly outputStartNs?: number;
  readonly endNs: number;
  /** It was sent with an error. */
  readonly isError: boolean;
}

export interface InferResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly parameters: Parameters;
  readonly outputs: readonly Tensor[];
  /** Set when the response comes from the response cache's entry: its encoded forms, kept by the front ends. */
  readonly memo?: ResponseMemo;
}
