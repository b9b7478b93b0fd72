import { isDataType } from '../protocol/data-type.js';
import type { ParameterValue } from '../protocol/parameters.js';
import { modelStateOf } from '../protocol/repository-index.js';
import { ClientError } from './errors.js';
import type { Duration, InferOptions, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata, TensorMetadata } from './types.js';

/**
 * The HTTP protocol's JSON replies brought to the client's camelCase types (the gRPC replies:
 * grpc-messages.ts), and what both clients send alike: versions, infer parameters, the `config` load
 * parameter. Numbers are taken from JSON numbers or decimal strings.
 */
type Wire = Record<string, unknown>;

const numberOf = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0));
const stringOf = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function durationOf(value: unknown): Duration {
  const wire = (value ?? {}) as Wire;
  return { count: numberOf(wire.count), ns: numberOf(wire.ns) };
}

export function statisticsFromWire(message: unknown): ModelStatistics[] {
  return arrayOf((message as Wire | undefined)?.model_stats).map((entry) => {
    const stats = entry as Wire;
    const inference = (stats.inference_stats ?? {}) as Wire;
    return {
      name: stringOf(stats.name),
      version: stringOf(stats.version),
      lastInference: numberOf(stats.last_inference),
      inferenceCount: numberOf(stats.inference_count),
      executionCount: numberOf(stats.execution_count),
      inferenceStats: {
        success: durationOf(inference.success),
        fail: durationOf(inference.fail),
        queue: durationOf(inference.queue),
        computeInput: durationOf(inference.compute_input),
        computeInfer: durationOf(inference.compute_infer),
        computeOutput: durationOf(inference.compute_output),
        cacheHit: durationOf(inference.cache_hit),
        cacheMiss: durationOf(inference.cache_miss),
      },
      batchStats: arrayOf(stats.batch_stats).map((batch) => {
        const wire = batch as Wire;
        return {
          batchSize: numberOf(wire.batch_size),
          computeInput: durationOf(wire.compute_input),
          computeInfer: durationOf(wire.compute_infer),
          computeOutput: durationOf(wire.compute_output),
        };
      }),
      responseStats: Object.fromEntries(
        Object.entries((stats.response_stats ?? {}) as Wire).map(([index, value]) => {
          const wire = value as Wire;
          return [
            index,
            {
              computeInfer: durationOf(wire.compute_infer),
              computeOutput: durationOf(wire.compute_output),
              success: durationOf(wire.success),
              fail: durationOf(wire.fail),
              emptyResponse: durationOf(wire.empty_response),
              cancel: durationOf(wire.cancel),
            },
          ];
        }),
      ),
    };
  });
}

function tensorMetadataOf(value: unknown): TensorMetadata {
  const wire = value as Wire;
  const datatype = wire.datatype;
  if (!isDataType(datatype)) throw new ClientError(`model metadata names an unknown datatype ${JSON.stringify(datatype)} for tensor '${stringOf(wire.name)}'`);
  return { name: stringOf(wire.name), datatype, shape: arrayOf(wire.shape).map(numberOf) };
}

export function modelMetadataFromWire(message: unknown): ModelMetadata {
  const wire = message as Wire;
  return {
    name: stringOf(wire.name),
    versions: arrayOf(wire.versions).map(stringOf),
    platform: stringOf(wire.platform),
    inputs: arrayOf(wire.inputs).map(tensorMetadataOf),
    outputs: arrayOf(wire.outputs).map(tensorMetadataOf),
  };
}

export function serverMetadataFromWire(message: unknown): ServerMetadata {
  const wire = message as Wire;
  return { name: stringOf(wire.name), version: stringOf(wire.version), extensions: arrayOf(wire.extensions).map(stringOf) };
}

export function indexEntryFromWire(value: unknown): RepositoryIndexEntry {
  const wire = value as Wire;
  return { name: stringOf(wire.name), version: stringOf(wire.version), state: modelStateOf(wire.state), reason: stringOf(wire.reason) };
}

/** A version option as the protocols name it: digits, or empty for the server's choice. */
export function versionString(version: number | string | undefined): string {
  if (version === undefined || version === '') return '';
  const text = String(version);
  if (!/^[0-9]+$/.test(text)) throw new ClientError(`a model version must be a non-negative integer, got '${text}'`);
  return text;
}

/**
 * The request parameters an infer call sends: its own `parameters`, then Triton's named ones
 * (`priority`, `timeout`, `sequence_id`, `sequence_start`, `sequence_end`), as tritonclient sends them
 * (docs/protocol/extension_parameters.md, extension_sequence.md).
 */
export function requestParameters(options: InferOptions): Record<string, ParameterValue> {
  const parameters: Record<string, ParameterValue> = { ...options.parameters };
  if (options.priority !== undefined) parameters.priority = options.priority;
  if (options.timeoutUs !== undefined) parameters.timeout = options.timeoutUs;
  if (options.sequenceId !== undefined) {
    parameters.sequence_id = options.sequenceId;
    parameters.sequence_start = options.sequenceStart ?? false;
    parameters.sequence_end = options.sequenceEnd ?? false;
  } else if (options.sequenceStart !== undefined || options.sequenceEnd !== undefined) {
    throw new ClientError('sequenceStart and sequenceEnd need a sequenceId');
  }
  return parameters;
}

/** The `config` load parameter: JSON text, as both protocols carry it. */
export function configText(config: string | Readonly<Record<string, unknown>>): string {
  return typeof config === 'string' ? config : JSON.stringify(config);
}
