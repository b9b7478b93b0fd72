/**
 * The interface of a JavaScript model, as its author sees it (`backend: "javascript"`). Types only:
 * a model imports nothing from Nereid at run time; what it needs arrives in `initialize(args)`.
 * TypeScript authors can `import type { ModelRequest, ... } from 'nereid/model'`.
 */
import type { DataType } from '../../protocol/data-type.js';
import type { StatusCode } from '../../protocol/status-code.js';

/** Element values a model may give for an output; converted to the data type's typed array. */
export type TensorValues = ArrayBufferView | ReadonlyArray<number | bigint | boolean | string | Uint8Array>;

export interface ModelTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  /**
   * Inputs: a typed array (Float32Array for FP32, BigInt64Array for INT64, Uint8Array of 0/1 for
   * BOOL, raw Uint16Array bits for FP16), or strings for BYTES. Outputs: the same, or plain arrays.
   */
  readonly data: TensorValues;
  /** BYTES inputs: the elements as bytes, for binary data that is not text. */
  readonly bytes?: readonly Uint8Array[];
}

/** An output a model returns: `data` may also be a plain array of numbers, bigints, booleans or strings. */
export interface OutputTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorValues;
}

export interface ModelResponse {
  readonly outputs: readonly OutputTensor[];
}

/**
 * Sends a decoupled model's responses: any number, the last one marked final (it may carry no response).
 * An Error is a response that fails alone, the request going on (Triton's response sent with an error);
 * marked final, it ends the request with that error.
 */
export interface ResponseSender {
  send(response?: ModelResponse | Error, options?: { readonly final?: boolean }): void;
}

export interface ModelRequest {
  readonly id: string;
  readonly inputs: readonly ModelTensor[];
  /** The input of that name, or undefined when the request left an optional input out. */
  input(name: string): ModelTensor | undefined;
  /** The outputs the client asked for. */
  readonly requestedOutputs: readonly string[];
  readonly parameters: Readonly<Record<string, string | number | boolean>>;
  /** Decoupled models only. */
  readonly responseSender: ResponseSender;
  /**
   * Aborts when the request is cancelled: its client went away (a closed HTTP connection, a cancelled
   * gRPC call) or the model that called this one gave up. Stop working on it: whatever the model still
   * returns for it is dropped. Pass it on to what the model awaits (`fetch`, timers) to stop those too.
   */
  readonly signal: AbortSignal;
  /** Whether the request has been cancelled (Triton's Python `request.is_cancelled()`). */
  isCancelled(): boolean;
}

/** A call to another model from inside a model. */
export interface ModelCall {
  readonly model: string;
  /** A specific version; the newest ready one when left out. */
  readonly version?: number;
  readonly inputs: readonly OutputTensor[];
  /** Which outputs to compute; all when left out. */
  readonly outputs?: readonly string[];
  readonly parameters?: Readonly<Record<string, string | number | boolean>>;
  readonly id?: string;
  /**
   * The request this call serves (one of those `execute` received). When that request is traced, the
   * call is traced as its child, as Triton's Python backend does with `trace=request.trace()`; when it
   * is cancelled, so is the call (a call still queued in the other model then never runs).
   */
  readonly parent?: ModelRequest;
}

/** What a model call returns: the outputs, or the error that the called model (or validation) gave. */
export interface CallResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly outputs: readonly ModelTensor[];
  output(name: string): ModelTensor | undefined;
  readonly error?: { readonly status: StatusCode; readonly message: string };
}

export interface ModelLog {
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  verbose(message: string): void;
}

/** The argument of `initialize`, in the spirit of Triton's Python backend `args`. */
export interface InitializeArgs {
  /** The model configuration as GET /v2/models/{m}/config shows it. */
  readonly modelConfig: Readonly<Record<string, unknown>>;
  readonly modelName: string;
  readonly modelVersion: number;
  /** The model's folder. */
  readonly modelRepository: string;
  readonly modelInstanceName: string;
  readonly modelInstanceKind: 'CPU';
  /** Runs a request on any loaded model through its scheduler; errors come back in the response. */
  infer(call: ModelCall): Promise<CallResponse>;
  /** Every response of a call, for decoupled models; an error ends the stream as its last item. */
  inferStream(call: ModelCall): AsyncIterable<CallResponse>;
  readonly log: ModelLog;
}

/**
 * The default export of a model file. `execute` returns one response (or Error) per request, in
 * order; a decoupled model sends through `request.responseSender` instead and returns nothing.
 */
export interface JavaScriptModel {
  initialize?(args: InitializeArgs): void | Promise<void>;
  execute(requests: readonly ModelRequest[]): ReadonlyArray<ModelResponse | Error> | void | Promise<ReadonlyArray<ModelResponse | Error> | void>;
  finalize?(): void | Promise<void>;
}

/** The optional static hook: receives the configuration (Triton JSON) and returns it completed. */
export type AutoCompleteConfig = (config: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>;
