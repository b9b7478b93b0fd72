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

/**
 * The spec a backend runs a model with: besides the inputs a client sends, the sequence batcher's
 * control inputs and the implicit states' inputs and outputs, which the scheduler adds to every
 * request and takes back from every response (config sequence_batching.control_input and .state).
 * A model without sequence batching gets the client's spec itself.
 */
export function backendSpecOf(config: ModelConfig, spec: ModelSpec): ModelSpec {
  if (config.schedulingChoice.case !== 'sequenceBatching') return spec;
  const batching = config.schedulingChoice.value;
  const controls: TensorSpec[] = batching.controlInput.map((controlInput) => {
    const control = controlInput.control[0];
    const dataType: DataType =
      control === undefined ? 'INT32' : control.fp32FalseTrue.length > 0 ? 'FP32' : control.boolFalseTrue.length > 0 ? 'BOOL' : control.int32FalseTrue.length > 0 ? 'INT32' : dataTypeOfConfig(control.dataType);
    return { name: controlInput.name, dataType, dims: [1], isOptional: false };
  });
  const stateOf = (name: string, state: (typeof batching.state)[number]): TensorSpec => ({
    name,
    dataType: dataTypeOfConfig(state.dataType),
    dims: toNumbers(state.dims),
    isOptional: false,
  });
  const inputs = [...spec.inputs, ...controls, ...batching.state.map((state) => stateOf(state.inputName, state))];
  // A state output the config also lists under `output` is one the client may ask for (for debugging).
  const stateOutputs = batching.state.filter((state) => !spec.outputByName.has(state.outputName));
  const outputs = [...spec.outputs, ...stateOutputs.map((state) => stateOf(state.outputName, state))];
  return {
    ...spec,
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
