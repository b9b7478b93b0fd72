/**
 * Messages between an ONNX Runtime instance (main thread) and its worker thread.
 * Fixed-size tensor data travels as transferred ArrayBuffers (never SharedArrayBuffer: ORT rejects it);
 * string tensors as string arrays.
 */
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';

export interface WorkerTensor {
  readonly name: string;
  readonly type: OrtTensor.Type;
  readonly dims: readonly number[];
  /**
   * A typed array over its own ArrayBuffer (transferred); for 'string' tensors, the strings' UTF-8 bytes
   * in Triton's serialized BYTES layout (transferred too). NOTE: not an array of strings: cloning millions
   * of strings blocked the main thread for seconds, and making them took more.
   */
  readonly data: Exclude<OrtTensor.DataType, readonly string[]>;
}

export interface WorkerInit {
  readonly modelPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
}

export interface RunMessage {
  readonly type: 'run';
  readonly id: number;
  readonly feeds: readonly WorkerTensor[];
  readonly fetches: readonly string[];
}

/** Skip the runs still queued and exit once the current one returns. */
export interface CloseMessage {
  readonly type: 'close';
}

export type WorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'load-error'; readonly message: string }
  | {
      readonly type: 'result';
      readonly id: number;
      readonly outputs: readonly WorkerTensor[];
      /** When session.run started and returned, in epoch milliseconds (for compute statistics). */
      readonly runStartMs: number;
      readonly runEndMs: number;
    }
  | { readonly type: 'run-error'; readonly id: number; readonly message: string };
