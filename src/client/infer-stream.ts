import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import { AbortError, ClientError, ServerError } from './errors.js';
import { decodeModelInferResponse, encodeModelInferRequest } from './grpc-codec.js';
import { prepareAnyInput } from './infer-input.js';
import type { InferResult } from './infer-result.js';
import type { Compression, InferInput, InferOptions, SharedMemoryInput } from './types.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../protocol/gen/grpc_service_pb.js';

export interface StreamOptions {
  /** The deadline of the whole stream; default: the client's `timeoutMs`. */
  readonly timeoutMs?: number;
  /** Cancels the stream: the iteration ends with an AbortError. */
  readonly signal?: AbortSignal;
  readonly compression?: Compression;
}

/** What each request of a stream takes: the infer options that travel in the message. */
export type StreamInferOptions = Omit<InferOptions, 'timeoutMs' | 'signal' | 'headers' | 'binaryData' | 'compression'>;

/** One answer of a stream: the result, or the error of that one request; `id` names the request. */
export type StreamResponse =
  | { readonly id: string; readonly result: InferResult; readonly error?: undefined }
  | { readonly id: string; readonly result?: undefined; readonly error: ClientError };

/**
 * A ModelStreamInfer call (GrpcClient.stream): `send` writes requests, iteration yields their
 * responses as the server answers them. Iterate it once; breaking out of the loop cancels the stream.
 *
 *     waiting responses ─▶ [r1, r2, …] ─▶ next() ─▶ for await
 *     a next() with nothing waiting parks in #waiter until 'data' or the end arrives
 */
export class InferStream implements AsyncIterable<StreamResponse> {
  readonly #call: ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse>;
  readonly #responses: StreamResponse[] = [];
  #waiter: { resolve: (result: IteratorResult<StreamResponse>) => void; reject: (error: Error) => void } | undefined;
  #isInputEnded = false;
  #finished: { readonly error: ClientError | undefined } | undefined;
  #streamError: ClientError | undefined;
  #cancelledWith: ClientError | undefined;
  #nextId = 0;
  readonly #onFinished: Array<() => void> = [];
  readonly #signal: AbortSignal | undefined;

  /** Resolves once the stream has ended, however it ended. */
  readonly whenFinished: Promise<void>;

  constructor(
    open: () => ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse>,
    options: StreamOptions,
    toError: (error: ServiceError, what: string) => ClientError,
  ) {
    this.whenFinished = new Promise((resolve) => this.#onFinished.push(resolve));
    this.#signal = options.signal;
    if (this.#signal?.aborted === true) throw new AbortError('the stream', this.#signal.reason);
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#call = open();
    this.#call.on('data', (message: ModelStreamInferResponse) => this.#push(responseOf(message)));
    this.#call.on('error', (error: ServiceError) => {
      this.#streamError ??= this.#cancelledWith ?? toError(error, 'the stream');
    });
    this.#call.on('end', () => this.#finish());
    this.#call.on('close', () => this.#finish());
  }

  /**
   * Sends one request on the stream and returns its id (the one given, or a new one, unique in this
   * stream), by which its response can be recognised.
   */
  send(modelName: string, inputs: ReadonlyArray<InferInput | SharedMemoryInput>, options: StreamInferOptions = {}): string {
    if (this.#isInputEnded || this.#finished !== undefined) throw new ClientError('cannot send on a stream that was ended, cancelled or has failed');
    const id = options.id ?? `stream-${++this.#nextId}`;
    this.#call.write(encodeModelInferRequest(modelName, inputs.map(prepareAnyInput), { ...options, id }));
    return id;
  }

  /** No more requests: the iteration ends once the server has answered those sent. */
  end(): void {
    if (this.#isInputEnded) return;
    this.#isInputEnded = true;
    this.#call.end();
  }

  /** Cancels the stream: requests not yet answered are dropped, and the iteration ends with an AbortError. */
  cancel(reason?: unknown): void {
    this.cancelWith(new AbortError('the stream', reason ?? 'cancelled by the client'));
  }

  /** Cancels with the given error (GrpcClient.close() uses it). */
  readonly cancelWith = (error: ClientError): void => {
    if (this.#finished !== undefined) return;
    this.#cancelledWith ??= error;
    this.#streamError = this.#cancelledWith;
    this.#call.cancel();
  };

  readonly #onAbort = (): void => this.cancel(this.#signal!.reason);

  [Symbol.asyncIterator](): AsyncIterator<StreamResponse> {
    return {
      next: () => {
        const response = this.#responses.shift();
        if (response !== undefined) return Promise.resolve({ value: response, done: false });
        if (this.#finished !== undefined) {
          return this.#finished.error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.#finished.error);
        }
        if (this.#waiter !== undefined) return Promise.reject(new ClientError('an InferStream is iterated once, by one loop at a time'));
        return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
      },
      return: () => {
        if (this.#finished === undefined) this.cancelWith(new AbortError('the stream', 'the loop over it stopped'));
        this.#responses.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #push(response: StreamResponse): void {
    const waiter = this.#waiter;
    if (waiter === undefined) {
      this.#responses.push(response);
      return;
    }
    this.#waiter = undefined;
    waiter.resolve({ value: response, done: false });
  }

  #finish(): void {
    if (this.#finished !== undefined) return;
    const error = this.#cancelledWith ?? this.#streamError;
    this.#finished = { error };
    this.#signal?.removeEventListener('abort', this.#onAbort);
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter !== undefined) {
      if (error === undefined) waiter.resolve({ value: undefined, done: true });
      else waiter.reject(error);
    }
    for (const resolve of this.#onFinished) resolve();
  }
}

function responseOf(message: ModelStreamInferResponse): StreamResponse {
  const id = message.inferResponse?.id ?? '';
  if (message.errorMessage !== '') {
    // A stream carries only the message of a failed request, no status code.
    return { id, error: new ServerError('UNKNOWN', message.errorMessage, { protocol: 'grpc', grpcCode: undefined }) };
  }
  try {
    if (message.inferResponse === undefined) return { id, error: new ClientError('a stream response came with neither infer_response nor error_message') };
    return { id, result: decodeModelInferResponse(message.inferResponse) };
  } catch (error) {
    return { id, error: error instanceof ClientError ? error : new ClientError(String(error)) };
  }
}
