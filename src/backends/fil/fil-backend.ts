/**
 * Triton's FIL backend (`backend: "fil"`) for tree ensembles: XGBoost (JSON, UBJSON, legacy
 * binary), LightGBM text, and scikit-learn forests converted to LightGBM text
 * (scripts/convert_sklearn_model.py). Configuration as fil_backend docs/model_config.md describes
 * it (fil-settings.ts); tensors: input__0 FP32 [features], output__0 and optionally
 * treeshap_output (fil-outputs.ts). The file is parsed in TypeScript (no Python), once per model
 * version; every instance shares the forest.
 */
import { join } from 'node:path';
import { clone, create } from '@bufbuild/protobuf';
import { type ModelConfig, ModelConfigSchema, ModelInputSchema, ModelOutputSchema, DataType as ConfigDataType } from '../../protocol/gen/model_config_pb.js';
import { resolveConfinedPath } from '../../kernel/confined-path.js';
import { NereidError } from '../../kernel/errors.js';
import type { ModelSpec, TensorSpec } from '../../kernel/model-spec.js';
import type { Backend, BackendContext, ModelFiles } from '../backend.js';
import type { Forest } from './forest.js';
import { INPUT_NAME, OUTPUT_NAME, TREESHAP_NAME, classCount, outputDims, treeshapDims } from './fil-outputs.js';
import { FilInstance } from './fil-instance.js';
import { type FilSettings, readFilSettings } from './fil-settings.js';
import { createNativeForest } from './native-forest.js';
import { MODEL_TYPES, readForest } from './read-forest.js';
import { RowPool } from './row-pool.js';
import { TreeShap } from './tree-shap.js';
import { shapeText } from '../triton-backend-common.js';

/** The settings with `output_class` decided: when the config leaves it out, the objective decides (binary*, multi*: a classifier). */
function resolveSettings(config: ModelConfig, forest: Forest): FilSettings {
  const settings = readFilSettings(config);
  const isSet = config.parameters.output_class !== undefined || config.parameters.is_classifier !== undefined;
  return isSet ? settings : { ...settings, isClassifier: /^(binary|multi)/.test(forest.objective) };
}

async function modelPath(files: ModelFiles, config: ModelConfig, settings: FilSettings): Promise<string> {
  const name = config.defaultModelFilename || MODEL_TYPES[settings.modelType];
  return resolveConfinedPath({ folder: files.versionDir, path: name, field: `model '${files.modelName}' version ${files.version}: default_model_filename` });
}

async function loadForest(files: ModelFiles, config: ModelConfig): Promise<{ forest: Forest; settings: FilSettings; path: string }> {
  const settings = readFilSettings(config);
  const path = await modelPath(files, config, settings);
  const forest = await readForest(files.modelName, path, settings.modelType);
  return { forest, settings: resolveSettings(config, forest), path };
}

/** Fills input__0, output__0 and max_batch_size from the model file when the config leaves them out. */
async function autoCompleteConfig(files: ModelFiles, config: ModelConfig, context: BackendContext): Promise<ModelConfig> {
  const { forest, settings } = await loadForest(files, config);
  const completed = clone(ModelConfigSchema, config);
  if (completed.maxBatchSize === 0) completed.maxBatchSize = context.defaultMaxBatchSize;
  if (completed.input.length === 0) {
    completed.input = [create(ModelInputSchema, { name: INPUT_NAME, dataType: ConfigDataType.TYPE_FP32, dims: [BigInt(forest.numFeatures)] })];
  }
  if (completed.output.length === 0) {
    completed.output = [create(ModelOutputSchema, { name: OUTPUT_NAME, dataType: ConfigDataType.TYPE_FP32, dims: outputDims(forest, settings).map(BigInt) })];
  }
  return completed;
}

/**
 * Checks the configuration against the model file: the feature count, the class count (through
 * output__0's dims) and treeshap_output's dims. Each failure names what the config says and what
 * the file holds.
 */
function checkAgainstModel(spec: ModelSpec, forest: Forest, settings: FilSettings, path: string): void {
  const fail = (message: string): never => {
    throw new NereidError('INVALID_ARG', `model '${spec.name}': ${message}`);
  };
  if (spec.maxBatchSize === 0) fail(`max_batch_size is 0, but the fil backend batches rows: set max_batch_size (for example 8192) and give input '${INPUT_NAME}' dims [${forest.numFeatures}]`);
  const check = (tensor: TensorSpec, kind: string, expected: readonly number[], meaning: string): void => {
    if (tensor.dataType !== 'FP32') fail(`${kind} '${tensor.name}' is ${tensor.dataType}; the fil backend takes and returns FP32 only`);
    const dims = tensor.reshape ?? tensor.dims;
    if (shapeText(dims) !== shapeText(expected)) fail(`${kind} '${tensor.name}' has dims ${shapeText(dims)} in the configuration, but the model file '${path}' ${meaning}, so ${shapeText(expected)} is expected`);
  };
  for (const input of spec.inputs) {
    if (input.name !== INPUT_NAME) fail(`input '${input.name}' is not one the fil backend reads; its one input is '${INPUT_NAME}'`);
    check(input, 'input', [forest.numFeatures], `has ${forest.numFeatures} features`);
  }
  if (!spec.inputByName.has(INPUT_NAME)) fail(`the configuration has no input '${INPUT_NAME}', the fil backend's one input`);
  const classes = classCount(forest);
  const meaning = settings.predictProba
    ? `has ${classes} classes (predict_proba: one probability per class)`
    : settings.isClassifier
      ? 'is a classifier without predict_proba (one class id per row)'
      : `has ${forest.numGroups} output${forest.numGroups === 1 ? '' : 's'} per row (a regressor: output_class is false)`;
  for (const output of spec.outputs) {
    if (output.name === OUTPUT_NAME) check(output, 'output', outputDims(forest, settings), meaning);
    else if (output.name === TREESHAP_NAME) check(output, 'output', treeshapDims(forest), `has ${forest.numFeatures} features and ${forest.numGroups} output group${forest.numGroups === 1 ? '' : 's'} (SHAP values: features + 1, bias last)`);
    else fail(`output '${output.name}' is not one the fil backend returns; its outputs are '${OUTPUT_NAME}' and '${TREESHAP_NAME}'`);
  }
  if (!spec.outputByName.has(OUTPUT_NAME)) fail(`the configuration has no output '${OUTPUT_NAME}', the fil backend's prediction`);
}

export const filBackend: Backend = {
  name: 'fil',
  defaultModelFilename: MODEL_TYPES.xgboost,
  isModelFileCode: false,
  autoCompleteConfig,
  async loadModel(files, config, spec, context) {
    const { forest, settings, path } = await loadForest(files, config);
    checkAgainstModel(spec, forest, settings, path);
    let treeShap: TreeShap | undefined;
    if (spec.outputByName.has(TREESHAP_NAME)) {
      try {
        treeShap = new TreeShap(forest);
      } catch (error) {
        throw new NereidError('INVALID_ARG', `model '${spec.name}': output '${TREESHAP_NAME}' cannot be computed: ${(error as Error).message}`);
      }
    }
    for (const [key, value] of settings.ignored) {
      context.logger.info('fil', `model '${spec.name}': parameter ${key} '${value}' tunes FIL's GPU or memory layout and changes no prediction; Nereid's CPU evaluator does not use it`);
    }
    const evaluator = createNativeForest(forest);
    const native = 'native' in evaluator ? evaluator.native : undefined;
    const evaluatorText = 'native' in evaluator ? `the native evaluator (${evaluator.native.kernel})` : `the JavaScript evaluator, because ${evaluator.fallbackReason}`;
    context.logger.info('fil', `model '${spec.name}': ${forest.roots.length} trees, ${forest.feature.length} nodes, ${forest.numFeatures} features, objective '${forest.objective}' from '${join(files.versionDir, '')}', evaluated by ${evaluatorText}`);
    return {
      createInstance: async (instance) => {
        // The cores are shared among the model's instances; with one core each, no pool.
        const threadCount = Math.max(1, Math.floor(context.cpuCount / instance.instanceCount));
        const needsPool = threadCount >= 2 && (native === undefined || treeShap !== undefined);
        const pool = needsPool ? new RowPool({ label: `instance '${instance.name}' of model '${spec.name}'`, forest, settings, hasShap: treeShap !== undefined, threadCount, logger: context.logger }) : undefined;
        return new FilInstance({ name: instance.name, spec, forest, settings, threadCount, ...(native !== undefined ? { native } : {}), ...(treeShap !== undefined ? { treeShap } : {}), ...(pool !== undefined ? { pool } : {}) });
      },
      unload: async () => {},
    };
  },
};
