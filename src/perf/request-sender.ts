import {
  ClientError,
  GrpcClient,
  HttpClient,
  type InferInput,
  type InferOptions,
  type InferResult,
  type ModelMetadata,
  type SharedMemoryInput,
  SystemSharedMemoryRegion,
} from '../client/index.js';
import { inputBytes, prepareInput } from '../client/infer-input.js';
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

type Inputs = ReadonlyArray<InferInput | SharedMemoryInput>;

export async function createRequestSender({ client, options, metadata, inputSets, sequences }: RequestSenderOptions): Promise<RequestSender> {
  const shared = options.sharedMemory === 'system' ? await placeInSharedMemory(client, metadata, inputSets, options.outputSharedMemoryBytes) : undefined;
  const sets: readonly Inputs[] = shared?.inputSets ?? inputSets;
  let next = 0;
  const nextInputs = (): Inputs => sets[next++ % sets.length]!;
  const inferOptions: InferOptions = shared !== undefined ? { ...baseOptions(client, options, metadata), outputs: shared.outputs } : baseOptions(client, options, metadata);
  const sender = client instanceof GrpcClient && options.isStreaming ? createStreamSender(client, options, nextInputs, sequences, shared?.outputs) : createUnarySender(client, options, inferOptions, nextInputs, sequences);
  if (shared === undefined) return sender;
  return {
    send: sender.send,
    close: async () => {
      await sender.close();
      await shared.release();
    },
  };
}

/**
 * --shared-memory system, as perf_analyzer does it: each input set's tensors written once into a
 * region of their own, every output into its stretch (--output-shared-memory-size bytes) of one output
 * region that all requests share; the regions are registered before the first request and
 * unregistered and removed at the end.
 */
async function placeInSharedMemory(
  client: HttpClient | GrpcClient,
  metadata: ModelMetadata,
  inputSets: readonly InferInput[][],
  outputBytes: number,
): Promise<{ readonly inputSets: SharedMemoryInput[][]; readonly outputs: NonNullable<InferOptions['outputs']>; release(): Promise<void> }> {
  const prefix = `nereid_perf_${process.pid}`;
  const regions: Array<{ readonly name: string; readonly region: SystemSharedMemoryRegion }> = [];
  const release = async (): Promise<void> => {
    for (const { name, region } of regions) {
      await client.unregisterSystemSharedMemory(name).catch(() => undefined);
      region.close();
    }
  };
  try {
    const placedSets = [];
    for (const [index, inputs] of inputSets.entries()) {
      const bytes = inputs.map((input) => inputBytes(prepareInput(input)));
      const name = `${prefix}_input_${index}`;
      const region = SystemSharedMemoryRegion.create(`/${name}`, bytes.reduce((total, tensor) => total + tensor.byteLength, 0));
      regions.push({ name, region });
      let offset = 0;
      const placed: SharedMemoryInput[] = inputs.map((input, position) => {
        const byteSize = region.write(bytes[position]!, offset);
        const entry = { name: input.name, datatype: input.datatype, shape: input.shape, sharedMemory: { region: name, byteSize, offset } };
        offset += byteSize;
        return entry;
      });
      await client.registerSystemSharedMemory(name, region.key, region.byteSize);
      placedSets.push(placed);
    }
    const outputName = `${prefix}_output`;
    const outputRegion = SystemSharedMemoryRegion.create(`/${outputName}`, Math.max(1, outputBytes * metadata.outputs.length));
    regions.push({ name: outputName, region: outputRegion });
    await client.registerSystemSharedMemory(outputName, outputRegion.key, outputRegion.byteSize);
    const outputs = metadata.outputs.map((output, index) => ({ name: output.name, sharedMemory: { region: outputName, byteSize: outputBytes, offset: index * outputBytes } }));
    return { inputSets: placedSets, outputs, release };
  } catch (error) {
    await release();
    throw error;
  }
}

function baseOptions(client: HttpClient | GrpcClient, options: PerfOptions, metadata: ModelMetadata): InferOptions {
  return {
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
}

function createUnarySender(client: HttpClient | GrpcClient, options: PerfOptions, inferOptions: InferOptions, nextInputs: () => Inputs, sequences: SequenceSource | undefined): RequestSender {
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
function createStreamSender(client: GrpcClient, options: PerfOptions, nextInputs: () => Inputs, sequences: SequenceSource | undefined, outputs?: InferOptions['outputs']): RequestSender {
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
          const id = stream.send(options.modelName, nextInputs(), {
            ...(options.modelVersion !== undefined ? { version: options.modelVersion } : {}),
            ...(outputs !== undefined ? { outputs } : {}),
            ...fields,
          });
          pending.set(id, { resolve: () => resolve(), reject });
        });
      }),
    close: async () => {
      stream.end();
      await reading;
    },
  };
}
