import { randomFillSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { ModelConfig, ModelWarmup } from '../protocol/gen/model_config_pb.js';
import { dataTypeOfConfig } from '../config/model-spec.js';
import { dataTypeByteSize } from '../protocol/data-type.js';
import { resolveConfinedPath } from '../kernel/confined-path.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import type { Tensor } from '../kernel/tensor.js';
import { allocateFixedSize, deserializeBytes, elementCount, viewFixedSize } from '../protocol/tensor-data.js';
import { validateRequest } from '../kernel/validate-request.js';

/** The data of one warmup input: zeros, random bytes, or the file `<model>/warmup/<name>` (raw, as binary data; inside that folder). */
async function warmupData(dataType: Tensor['dataType'], shape: readonly number[], source: ModelWarmup['inputs'][string]['inputDataType'], modelDir: string): Promise<Tensor['data']> {
  const count = elementCount(shape);
  if (source.case === 'inputDataFile') {
    const path = await resolveConfinedPath({ folder: join(modelDir, 'warmup'), path: source.value, field: 'input_data_file' });
    const bytes = await readFile(path);
    if (dataType === 'BYTES') {
      const elements = deserializeBytes(bytes);
      if (typeof elements === 'string') throw new NereidError('INVALID_ARG', `warmup file '${source.value}': ${elements}`);
      return elements;
    }
    if (bytes.byteLength !== count * dataTypeByteSize(dataType)) {
      throw new NereidError('INVALID_ARG', `warmup file '${source.value}' holds ${bytes.byteLength} bytes; shape [${shape.join(',')}] of ${dataType} needs ${count * dataTypeByteSize(dataType)}`);
    }
    return viewFixedSize(dataType, bytes);
  }
  if (dataType === 'BYTES') {
    // Triton's zero data for BYTES is empty strings; its random data, one-byte strings.
    return Array.from({ length: count }, () => (source.case === 'randomData' ? Buffer.from([97 + Math.floor(Math.random() * 26)]) : Buffer.alloc(0)));
  }
  const data = allocateFixedSize(dataType, count);
  if (source.case === 'randomData') {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    randomFillSync(bytes);
    // Keep floats finite and booleans 0/1: random bits would make NaN, and BOOL is one bit of a byte.
    if (dataType === 'FP32' || dataType === 'FP64') (data as Float32Array).forEach((_, i, array) => (array[i] = Math.random()));
    if (dataType === 'BOOL') bytes.forEach((value, i) => (bytes[i] = value & 1));
    if (dataType === 'FP16' || dataType === 'BF16') bytes.fill(0);
  }
  return data;
}

/** The most runs one warmup sample may ask for (`count`); Triton sets no bound, and a warmup is a few runs. */
export const MAX_WARMUP_COUNT = 1000;

export interface WarmUpOptions {
  readonly config: ModelConfig;
  readonly spec: ModelSpec;
  readonly instances: readonly ModelInstance[];
  readonly modelDir: string;
  /** The largest request body a client may send (`--http-max-input-size`); no warmup sample may be larger. */
  readonly maxInputBytes: number;
  /** Aborts between runs (the load timeout). */
  readonly signal?: AbortSignal;
}

/**
 * Refuses a sample bigger than the model's limits before any of its data is made: a batch beyond
 * `max_batch_size`, more input bytes than a client may send, more than MAX_WARMUP_COUNT runs.
 * BYTES elements count their 4-byte length prefix, as on the wire.
 */
function checkLimits(sample: ModelWarmup, spec: ModelSpec, maxInputBytes: number): void {
  if (spec.maxBatchSize > 0 && sample.batchSize > spec.maxBatchSize) {
    throw new NereidError('INVALID_ARG', `batch_size ${sample.batchSize} is larger than max_batch_size ${spec.maxBatchSize}`);
  }
  if (sample.count > MAX_WARMUP_COUNT) {
    throw new NereidError('INVALID_ARG', `count ${sample.count} is more than the ${MAX_WARMUP_COUNT} runs a warmup sample may ask for`);
  }
  const batch = spec.maxBatchSize > 0 ? Math.max(1, sample.batchSize) : 1;
  let bytes = 0;
  for (const input of Object.values(sample.inputs)) {
    const dataType = dataTypeOfConfig(input.dataType);
    const elements = input.dims.reduce((product, dim) => product * Math.max(0, Number(dim)), batch);
    bytes += elements * (dataType === 'BYTES' ? 4 : dataTypeByteSize(dataType));
  }
  if (bytes > maxInputBytes) {
    throw new NereidError('INVALID_ARG', `its inputs hold ${bytes} bytes, more than the ${maxInputBytes} a request may hold (--http-max-input-size)`);
  }
}

/**
 * Runs the config's `model_warmup` samples on every instance, `count` times each (at least once),
 * before the version is declared READY, as Triton does. A sample that fails, or breaks the limits
 * above, makes the load fail, with the sample named in the reason.
 */
export async function warmUp({ config, spec, instances, modelDir, maxInputBytes, signal }: WarmUpOptions): Promise<void> {
  for (const sample of config.modelWarmup) {
    const where = `model '${config.name}': warmup sample '${sample.name}'`;
    let request: InferRequest;
    try {
      checkLimits(sample, spec, maxInputBytes);
      const inputs: Tensor[] = await Promise.all(
        Object.entries(sample.inputs).map(async ([name, input]) => {
          const dataType = dataTypeOfConfig(input.dataType);
          const dims = input.dims.map(Number);
          const shape = spec.maxBatchSize > 0 ? [Math.max(1, sample.batchSize), ...dims] : dims;
          return { name, dataType, shape, data: await warmupData(dataType, shape, input.inputDataType, modelDir) };
        }),
      );
      request = validateRequest(spec, { modelName: config.name, id: `warmup:${sample.name}`, inputs, parameters: {} });
    } catch (error) {
      throw new NereidError('INVALID_ARG', `${where}: ${(error as Error).message}`);
    }
    for (const instance of instances) {
      for (let run = 0; run < Math.max(1, sample.count); run++) {
        signal?.throwIfAborted();
        const { responses } = await instance.execute([request]);
        const response = responses[0];
        if (response instanceof NereidError) throw new NereidError('INVALID_ARG', `${where} failed on instance '${instance.name}': ${response.message}`);
      }
    }
  }
}
