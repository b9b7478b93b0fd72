/**
 * Messages between a JavaScript model instance (main thread) and the worker thread that runs the
 * model's code. Tensor data travels by structured clone: typed arrays for fixed-size data types,
 * arrays of byte strings for BYTES.
 */
import type { DataType } from '../../protocol/data-type.js';
import type { StatusCode } from '../../protocol/status-code.js';
import type { ParameterValue } from '../../protocol/parameters.js';

export interface WireTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  /** A typed array (see protocol/tensor-data.ts for which one each data type uses), or the BYTES elements. */
  readonly data: ArrayBufferView | readonly Uint8Array[];
}

export interface WireRequest {
  readonly id: string;
  readonly inputs: readonly WireTensor[];
  readonly requestedOutputs: readonly string[];
  readonly parameters: Readonly<Record<string, ParameterValue>>;
}

export interface WireError {
  readonly status: StatusCode;
  readonly message: string;
}

/** What the worker needs to start the model. */
export interface JsWorkerInit {
  /** `initialize`: run the model; `auto-complete`: only call its static autoCompleteConfig hook. */
  readonly mode: 'initialize' | 'auto-complete';
  readonly modelPath: string;
  /** The configuration in Triton's JSON form (as GET /config shows it). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly modelName: string;
  readonly modelVersion: number;
  readonly modelRepository: string;
  readonly instanceName: string;
  readonly isDecoupled: boolean;
}

/** A request for a model-to-model call's answer, or one of its streamed responses. */
export interface WireCallResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly outputs: readonly WireTensor[];
}

export type ToWorker =
  | { readonly type: 'execute'; readonly id: number; readonly requests: readonly WireRequest[] }
  /**
   * The answer to a model call: a response (stream: one of several), an error, or the end of the call;
   * a call that is not a stream ends with its one response, in one message.
   */
  | { readonly type: 'call-response'; readonly callId: number; readonly response: WireCallResponse }
  | { readonly type: 'call-end'; readonly callId: number; readonly response?: WireCallResponse; readonly error?: WireError }
  /** Request `index` of execution `id` was cancelled: its `signal` aborts. */
  | { readonly type: 'cancel'; readonly id: number; readonly index: number }
  | { readonly type: 'close' };

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'init-error'; readonly message: string }
  | { readonly type: 'auto-completed'; readonly config: Readonly<Record<string, unknown>> | undefined }
  | {
      readonly type: 'executed';
      readonly id: number;
      /** One per request: outputs (an empty list once a decoupled request has sent its last), or an error. */
      readonly responses: ReadonlyArray<readonly WireTensor[] | WireError>;
      /** When the model's execute started and ended, in epoch milliseconds. */
      readonly startMs: number;
      readonly endMs: number;
    }
  /** A decoupled model's response to request `index` of execution `id`: outputs, or an error that fails it alone. */
  | { readonly type: 'response'; readonly id: number; readonly index: number; readonly outputs: readonly WireTensor[] | WireError }
  | { readonly type: 'call'; readonly callId: number; readonly isStream: boolean; readonly request: WireCallRequest }
  | { readonly type: 'log'; readonly level: 'info' | 'warning' | 'error' | 'verbose'; readonly message: string };

/** A model-to-model call as the calling model made it. */
export interface WireCallRequest {
  readonly modelName: string;
  readonly modelVersion?: number;
  readonly id: string;
  readonly inputs: readonly WireTensor[];
  readonly requestedOutputs?: readonly string[];
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** The request of the calling model's execution that the call serves: its execution id and index. */
  readonly parent?: { readonly execution: number; readonly index: number };
}
