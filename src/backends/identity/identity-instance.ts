import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import { withResponseParameters } from '../../kernel/response-parameters.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { Parameters } from '../../protocol/parameters.js';
import { type FixedSizeArray, type TensorData, allocateFixedSize, elementCount, serializedByteLength } from '../../protocol/tensor-data.js';
import { sleepMs } from '../sleep-ms.js';
import { backendShape, checkOutputs } from '../tensor-io.js';
import { instanceStopped } from '../triton-backend-common.js';
import { epochMs, msToNs } from '../worker-thread.js';

/** The parameters Triton's identity backend sets on every response it completes, to show how. */
const RESPONSE_PARAMETERS: Parameters = { param0: 'an example string parameter', param1: 42, param2: false };

export interface IdentityInstanceOptions {
  /** `<group name>_<index>`. */
  readonly name: string;
  /** The spec the model runs with (backendSpecOf: the sequence batcher's controls included). */
  readonly spec: ModelSpec;
  /** Each output's input, by name (identity-config.ts). */
  readonly inputOf: ReadonlyMap<string, string>;
  /** How long each execution waits before it copies (identity-config.ts instanceDelayMs). */
  readonly delayMs: number;
  /** Counts the bytes of each input copied to an output (the input_byte_size_counter metric). */
  readonly countInputBytes?: (bytes: number) => void;
}

/**
 * One instance of an identity model, on the main thread: each requested OUTPUT<i> is a copy of the
 * request's INPUT<i>, with its data type and the shape the model sees (the `reshape`, which the
 * output's shares); a missing optional input gives zeros of its dims (-1 as 1), after the batch size
 * of the request's first input when the model batches. Each response carries Triton's three example
 * parameters. As Triton's backend, the instance waits `delayMs` once per execution (a timer: other
 * requests go on meanwhile) and runs a request that is cancelled meanwhile to the end; closing it
 * ends the wait and fails that execution with UNAVAILABLE. Without a delay it answers in the
 * caller's step (`executeNow`).
 */
export class IdentityInstance implements ModelInstance {
  readonly name: string;
  readonly #options: IdentityInstanceOptions;
  readonly #closing = new AbortController();

  constructor(options: IdentityInstanceOptions) {
    this.name = options.name;
    this.#options = options;
  }

  get canExecuteNow(): boolean {
    return this.#options.delayMs === 0 && !this.#closing.signal.aborted;
  }

  executeNow(request: InferRequest): ExecuteResult {
    return this.#copy([request], epochMs());
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    if (this.#options.delayMs > 0 && !(await sleepMs(this.#options.delayMs, this.#closing.signal))) {
      throw instanceStopped(this.name, this.#options.spec.name, 'before the request finished');
    }
    return this.#copy(requests, startMs);
  }

  /** The batch's responses; the time since `startMs` (the delay included) is the compute time, as Triton reports it. */
  #copy(requests: readonly InferRequest[], startMs: number): ExecuteResult {
    const responses = requests.map((request) => {
      try {
        return withResponseParameters(this.#respond(request), RESPONSE_PARAMETERS);
      } catch (error) {
        return error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
      }
    });
    return { responses, timing: { inputNs: 0, inferNs: msToNs(epochMs() - startMs), outputNs: 0 } };
  }

  #respond(request: InferRequest): Tensor[] {
    const { spec, inputOf, countInputBytes } = this.#options;
    const isBatching = spec.maxBatchSize > 0;
    const requested = request.outputs?.map((output) => output.name) ?? spec.outputs.map((output) => output.name);
    const outputs: Tensor[] = [];
    for (const name of requested) {
      const inputName = inputOf.get(name);
      if (inputName === undefined) continue;
      const inputSpec = spec.inputByName.get(inputName)!;
      const input = request.inputs.find((tensor) => tensor.name === inputName);
      if (input === undefined) {
        outputs.push(zeroOutput(spec.name, name, inputSpec, isBatching ? (request.inputs[0]?.shape[0] ?? 0) : 0));
        continue;
      }
      countInputBytes?.(byteSize(input.data));
      outputs.push({ name, dataType: input.dataType, shape: backendShape(input.shape, inputSpec, isBatching), data: copyOf(input.data) });
    }
    return checkOutputs(spec, outputs, { requested });
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }
}

/**
 * The output of an optional input the request left out: zeros of the input's dims with -1 as 1,
 * after `batchSize` unless it is 0.
 */
function zeroOutput(modelName: string, name: string, inputSpec: TensorSpec, batchSize: number): Tensor {
  const dims = (inputSpec.reshape ?? inputSpec.dims).map((dim) => (dim === -1 ? 1 : dim));
  const shape = batchSize !== 0 ? [batchSize, ...dims] : dims;
  if (inputSpec.dataType === 'BYTES') {
    // Triton's backend sizes the zeros with GetByteSize, which has no size for BYTES, and fails the request.
    throw new NereidError('UNSUPPORTED', `model '${modelName}': optional input '${inputSpec.name}' is missing, and the identity backend has no zeros of BYTES for output '${name}'`);
  }
  return { name, dataType: inputSpec.dataType, shape, data: allocateFixedSize(inputSpec.dataType, elementCount(shape)) };
}

/** The bytes Triton counts for an input: its data, BYTES elements with their 4-byte length prefixes. */
const byteSize = (data: TensorData): number => (Array.isArray(data) ? serializedByteLength(data) : (data as FixedSizeArray).byteLength);

/** A copy the response owns: the input may be a view of the request's body, which the cache would keep alive. */
function copyOf(data: TensorData): TensorData {
  return Array.isArray(data) ? data.map((element) => element.slice()) : (data as FixedSizeArray).slice();
}
