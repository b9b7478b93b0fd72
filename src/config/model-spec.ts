import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DataType as ConfigDataType, type ModelConfig } from '../protocol/gen/model_config_pb.js';
import { type DataType, dataTypeFromConfig, dataTypeToConfig } from '../protocol/data-type.js';
import { resolveConfinedPath } from '../kernel/confined-path.js';
import { NereidError } from '../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../kernel/model-spec.js';

/** The config enum (TYPE_FP32) for a wire data type (FP32). */
export function configDataTypeOf(dataType: DataType): ConfigDataType {
  return ConfigDataType[dataTypeToConfig(dataType) as keyof typeof ConfigDataType];
}

/** The wire data type for a config enum value; throws for TYPE_INVALID (validation rejects it first). */
export function dataTypeOfConfig(value: ConfigDataType): DataType {
  const dataType = dataTypeFromConfig(ConfigDataType[value] ?? '');
  if (dataType === undefined) throw new NereidError('INVALID_ARG', `data type ${ConfigDataType[value] ?? value} has no wire name`);
  return dataType;
}

const toNumbers = (values: readonly bigint[]): number[] => values.map((value) => Number(value));

/**
 * Derives the request-facing description of a model version from its validated configuration,
 * reading the outputs' label files from the model folder.
 */
export async function loadModelSpec(config: ModelConfig, version: number, modelDir: string): Promise<ModelSpec> {
  const inputs: TensorSpec[] = config.input.map((input) => ({
    name: input.name,
    dataType: dataTypeOfConfig(input.dataType),
    dims: toNumbers(input.dims),
    ...(input.reshape !== undefined ? { reshape: toNumbers(input.reshape.shape) } : {}),
    isOptional: input.optional,
  }));
  const outputs: TensorSpec[] = await Promise.all(
    config.output.map(async (output) => ({
      name: output.name,
      dataType: dataTypeOfConfig(output.dataType),
      dims: toNumbers(output.dims),
      ...(output.reshape !== undefined ? { reshape: toNumbers(output.reshape.shape) } : {}),
      isOptional: false,
      ...(output.labelFilename ? { labels: await readLabels(modelDir, output.labelFilename, config.name) } : {}),
    })),
  );
  return {
    name: config.name,
    version,
    platform: config.platform,
    backend: config.backend,
    maxBatchSize: config.maxBatchSize,
    isDecoupled: config.modelTransactionPolicy?.decoupled === true,
    inputs,
    outputs,
    inputByName: new Map(inputs.map((input) => [input.name, input])),
    outputByName: new Map(outputs.map((output) => [output.name, output])),
  };
}

/** A label file, named relative to the model folder and read only from inside it. */
async function readLabels(modelDir: string, labelFilename: string, modelName: string): Promise<string[]> {
  const path = join(modelDir, labelFilename);
  await stat(path).catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `model '${modelName}': cannot read label file '${path}': ${error.message}`);
  });
  const confined = await resolveConfinedPath({ folder: modelDir, path: labelFilename, field: `model '${modelName}': label_filename` });
  const text = await readFile(confined, 'utf8').catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `model '${modelName}': cannot read label file '${path}': ${error.message}`);
  });
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
