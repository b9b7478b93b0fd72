import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { clone, create } from '@bufbuild/protobuf';
import {
  type ModelConfig,
  ModelConfigSchema,
  ModelInputSchema,
  ModelOutputSchema,
} from '../../protocol/gen/model_config_pb.js';
import { configDataTypeOf } from '../../config/model-spec.js';
import { resolveConfinedPath } from '../../kernel/confined-path.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import type { Backend, BackendContext, BackendModel, InstanceSpec, ModelFiles } from '../backend.js';
import type { ModelInstance } from '../../kernel/model-instance.js';
import { type OnnxModelInfo, type OnnxTensorInfo, readOnnxModelInfo } from './model-metadata.js';
import { executionThreads } from './execution-threads.js';
import { type InlineOptions, inlineOptionsOf } from './inline-options.js';
import { OrtInstance } from './ort-instance.js';
import { ortTypeOf } from './ort-tensors.js';
import { sessionOptionsFromConfig } from './session-options.js';

const DEFAULT_MODEL_FILENAME = 'model.onnx';

/**
 * The model file of a version folder: `default_model_filename` or model.onnx, a file, or a folder
 * holding model.onnx (Triton's layout for models with external weights).
 */
async function resolveModelPath(files: ModelFiles, config: ModelConfig): Promise<string> {
  const name = config.defaultModelFilename || DEFAULT_MODEL_FILENAME;
  const path = join(files.versionDir, name);
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) {
    throw new NereidError('INVALID_ARG', `model '${files.modelName}' version ${files.version}: no model file at '${path}'`);
  }
  return resolveConfinedPath({ folder: files.versionDir, path: info.isDirectory() ? join(name, DEFAULT_MODEL_FILENAME) : name, field: `model '${files.modelName}' version ${files.version}: default_model_filename` });
}

/** True when every input and output has a leading wildcard dimension, so requests can be stacked on it. */
function supportsBatching(info: OnnxModelInfo): boolean {
  return [...info.inputs, ...info.outputs].every((tensor) => tensor.shape.length > 0 && tensor.shape[0] === -1);
}

function shapeToDims(shape: readonly number[], batchDims: number): bigint[] {
  return shape.slice(batchDims).map((dim) => BigInt(dim));
}

/**
 * Triton's auto-complete for ONNX models: a config without inputs or outputs gets them from the graph,
 * and max_batch_size 0 becomes `default-max-batch-size` when the graph can batch and the config's
 * dims (if any) leave the batch dimension out.
 */
async function autoCompleteConfig(files: ModelFiles, config: ModelConfig, context: BackendContext): Promise<ModelConfig> {
  const info = await readOnnxModelInfo(await resolveModelPath(files, config));
  const completed = clone(ModelConfigSchema, config);
  if (completed.maxBatchSize === 0 && supportsBatching(info)) {
    const ranksLeaveOutBatch = [...completed.input.map((t) => [t.name, t.dims.length] as const), ...completed.output.map((t) => [t.name, t.dims.length] as const)]
      .every(([name, rank]) => {
        const graphTensor = [...info.inputs, ...info.outputs].find((tensor) => tensor.name === name);
        return graphTensor === undefined || rank === graphTensor.shape.length - 1;
      });
    if (ranksLeaveOutBatch) completed.maxBatchSize = context.defaultMaxBatchSize;
  }
  const batchDims = completed.maxBatchSize > 0 ? 1 : 0;
  if (completed.input.length === 0) {
    completed.input = info.inputs.map((tensor) =>
      create(ModelInputSchema, { name: tensor.name, dataType: configDataTypeOf(tensor.dataType), dims: shapeToDims(tensor.shape, batchDims) }),
    );
  }
  if (completed.output.length === 0) {
    completed.output = info.outputs.map((tensor) =>
      create(ModelOutputSchema, { name: tensor.name, dataType: configDataTypeOf(tensor.dataType), dims: shapeToDims(tensor.shape, batchDims) }),
    );
  }
  return completed;
}

/** Checks the config's inputs and outputs against the graph, as Triton's onnxruntime backend does at load. */
function checkAgainstModel(spec: ModelSpec, info: OnnxModelInfo): void {
  const batchDims = spec.maxBatchSize > 0 ? 1 : 0;
  const check = (kind: 'input' | 'output', tensors: readonly TensorSpec[], graph: readonly OnnxTensorInfo[]): void => {
    for (const tensor of tensors) {
      if (ortTypeOf(tensor.dataType) === undefined) {
        throw new NereidError('INVALID_ARG', `model '${spec.name}': ${kind} '${tensor.name}' has data type ${tensor.dataType}, which onnxruntime-node cannot hold`);
      }
      const graphTensor = graph.find((candidate) => candidate.name === tensor.name);
      if (graphTensor === undefined) {
        throw new NereidError(
          'INVALID_ARG',
          `model '${spec.name}': configuration expects ${kind} '${tensor.name}', but the ONNX model's ${kind}s are ${graph.map((t) => `'${t.name}'`).join(', ')}`,
        );
      }
      if (graphTensor.dataType !== tensor.dataType) {
        throw new NereidError(
          'INVALID_ARG',
          `model '${spec.name}': ${kind} '${tensor.name}' is ${tensor.dataType} in the configuration but ${graphTensor.dataType} in the ONNX model`,
        );
      }
      const dims = tensor.reshape ?? tensor.dims;
      const rank = dims.length + batchDims;
      if (graphTensor.shape.length !== rank) {
        const hint = batchDims === 0 && graphTensor.shape.length === rank + 1 ? ' (set max_batch_size > 0 if the first dimension is the batch)' : '';
        throw new NereidError(
          'INVALID_ARG',
          `model '${spec.name}': ${kind} '${tensor.name}' has ${rank} dimensions with the configuration (max_batch_size ${spec.maxBatchSize}, dims [${dims.join(',')}]) but ${graphTensor.shape.length} in the ONNX model [${graphTensor.shape.join(',')}]${hint}`,
        );
      }
    }
  };
  check('input', spec.inputs, info.inputs);
  check('output', spec.outputs, info.outputs);
  const unconfigured = info.inputs.filter((input) => !spec.inputByName.has(input.name));
  if (unconfigured.length > 0) {
    throw new NereidError(
      'INVALID_ARG',
      `model '${spec.name}': the ONNX model needs input(s) ${unconfigured.map((t) => `'${t.name}'`).join(', ')}, which the configuration does not list`,
    );
  }
}

class OnnxRuntimeModel implements BackendModel {
  /** Read at load, so that a bad `inline_batches` fails it. */
  readonly #inlineOptions: InlineOptions;

  constructor(
    readonly modelPath: string,
    readonly config: ModelConfig,
    readonly spec: ModelSpec,
    readonly context: BackendContext,
  ) {
    this.#inlineOptions = inlineOptionsOf(config);
  }

  async createInstance(instance: InstanceSpec): Promise<ModelInstance> {
    executionThreads.count = this.context.onnxExecutionThreadCount ?? this.context.cpuCount;
    return OrtInstance.start({
      name: instance.name,
      spec: this.spec,
      modelPath: this.modelPath,
      sessionOptions: sessionOptionsFromConfig(this.config, { instanceCount: instance.instanceCount, cpuCount: this.context.cpuCount }),
      logger: this.context.logger,
      signal: instance.signal,
      ...this.#inlineOptions,
    });
  }

  async unload(): Promise<void> {}
}

export const onnxRuntimeBackend: Backend = {
  name: 'onnxruntime',
  defaultModelFilename: DEFAULT_MODEL_FILENAME,
  isModelFileCode: false,
  autoCompleteConfig,
  async loadModel(files, config, spec, context) {
    const modelPath = await resolveModelPath(files, config);
    checkAgainstModel(spec, await readOnnxModelInfo(modelPath));
    return new OnnxRuntimeModel(modelPath, config, spec, context);
  },
};
