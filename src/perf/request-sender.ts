import { ClientError, GrpcClient, HttpClient, type InferInput, type InferOptions, type InferResult, type ModelMetadata } from '../client/index.js';
import type { SendRequest } from './load-generator.js';
import type { PerfOptions } from './perf-options.js';
import type { SequenceSource } from './sequence-source.js';

/** Sends the measured requests; `close()` ends what it opened (the stream, in streaming mode). */
export interface RequestSender {
  readonly send: SendRequest;
  close(): Promise<void>;
}

/**
 * The request of each send: the input sets in turn, all outputs (binary unless --output-tensor-format
 * json asks for JSON, as perf_analyzer does), and the version, format and compression flags.
 */
export interface RequestSenderOptions {
  readonly client: HttpClient | GrpcClient;
  readonly options: PerfOptions;
  readonly metadata: ModelMetadata;
  /** The inputs of the requests, taken in turn. */
  readonly inputSets: readonly InferInput[][];
  /** For a sequence model: gives every request its sequence id and flags. */
  readonly sequences?: SequenceSource;
}

/** Runs `send` with the next sequence step's fields (none without a sequence source), then hands the sequence back. */
async function inSequence(sequences: SequenceSource | undefined, send: (fields: Pick<InferOptions, 'sequenceId' | 'sequenceStart' | 'sequenceEnd'>) => Promise<void>): Promise<void> {
  if (sequences === undefined) return send({});
  const step = await sequences.next();
  try {
    await send({ sequenceId: step.sequenceId, sequenceStart: step.sequenceStart, sequenceEnd: step.sequenceEnd });
  } finally {
    step.release();
  }
}

export function createRequestSender({ client, options, metadata, inputSets, sequences }: RequestSenderOptions): RequestSender {
  let next = 0;
  const nextInputs = (): readonly InferInput[] => inputSets[next++ % inputSets.length]!;
  const inferOptions: InferOptions = {
    ...(options.modelVersion !== undefined ? { version: options.modelVersion } : {}),
    compression: options.compression,
    ...(client instanceof HttpClient
      ? {
          binaryData: options.isInputBinary,
          headers: options.headers,
          // Only when the two formats differ must the outputs be named, each with its format.
          ...(options.isOutputBinary !== options.isInputBinary ? { outputs: metadata.outputs.map((output) => ({ name: output.name, binaryData: options.isOutputBinary })) } : {}),
        }
      : {}),
  };
  if (client instanceof GrpcClient && options.isStreaming) return createStreamSender(client, options, nextInputs, sequences);
  return {
    send: () =>
      inSequence(sequences, async (fields) => {
        await client.infer(options.modelName, nextInputs(), { ...inferOptions, ...fields });
      }),
    close: async () => {},
  };
}

/**
 * Streaming mode (--streaming): every request goes out on one ModelStreamInfer stream; a background
 * loop reads the responses and settles each request's promise by its id.
 */
function createStreamSender(client: GrpcClient, options: PerfOptions, nextInputs: () => readonly InferInput[], sequences: SequenceSource | undefined): RequestSender {
  const stream = client.stream({ compression: options.compression });
  const pending = new Map<string, { resolve: (result: InferResult) => void; reject: (error: Error) => void }>();
  let streamError: Error | undefined;
  const reading = (async () => {
    try {
      for await (const response of stream) {
        const waiter = pending.get(response.id);
        pending.delete(response.id);
        if (response.error !== undefined) waiter?.reject(response.error);
        else waiter?.resolve(response.result);
      }
    } catch (error) {
      streamError = error as Error;
    }
    for (const waiter of pending.values()) waiter.reject(streamError ?? new ClientError('the stream ended before this request was answered'));
    pending.clear();
  })();
  return {
    send: () =>
      inSequence(sequences, (fields) => {
        if (streamError !== undefined) return Promise.reject(streamError);
        return new Promise<void>((resolve, reject) => {
          const id = stream.send(options.modelName, nextInputs(), { ...(options.modelVersion !== undefined ? { version: options.modelVersion } : {}), ...fields });
          pending.set(id, { resolve: () => resolve(), reject });
        });
      }),
    close: async () => {
      stream.end();
      await reading;
    },
  };
}
