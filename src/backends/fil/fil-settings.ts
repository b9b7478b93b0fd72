/**
 * The FIL backend's config parameters, read as Triton's FIL backend documents them
 * (triton-inference-server/fil_backend docs/model_config.md): string values, converted when read.
 * A parameter Nereid does not know fails the load, naming the ones it knows.
 */
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { NereidError } from '../../kernel/errors.js';
import { refuseUnknownParameters } from '../triton-backend-common.js';
import { MODEL_TYPES, type ModelType } from './read-forest.js';

export interface FilSettings {
  readonly modelType: ModelType;
  /** `output_class` (or `is_classifier`, the name of FIL's newer releases): a classifier. */
  readonly isClassifier: boolean;
  /** `predict_proba`: one probability per class instead of the class id. */
  readonly predictProba: boolean;
  /** `threshold`: a binary classifier's positive decision is p > threshold (0.5 unset). */
  readonly threshold: number;
  /** GPU-only or tuning parameters that were set, which change nothing on Nereid's evaluator. */
  readonly ignored: ReadonlyArray<readonly [string, string]>;
}

/**
 * Parameters accepted and not acted on: they tune FIL's GPU kernels or its CPU memory layout, never
 * its predictions (docs/model_config.md, "Performance parameters"), and Nereid has one CPU evaluator.
 */
export const TUNING_PARAMETERS: ReadonlySet<string> = new Set([
  'storage_type',
  'algo',
  'threads_per_tree',
  'blocks_per_sm',
  'transfer_threshold',
  'use_experimental_optimizations',
  'layout',
  'align_bytes',
  'chunk_size',
  'cpu_nthread',
  'xgboost_allow_unknown_field',
]);

const KNOWN = ['model_type', 'output_class', 'is_classifier', 'predict_proba', 'threshold', ...TUNING_PARAMETERS];

function parseBoolean(config: ModelConfig, key: string, text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new NereidError('INVALID_ARG', `model '${config.name}': parameter ${key} is '${text}'; expected 'true' or 'false'`);
}

export function readFilSettings(config: ModelConfig): FilSettings {
  const parameter = (key: string): string | undefined => config.parameters[key]?.stringValue;
  refuseUnknownParameters(config, 'fil', KNOWN);
  const modelType = parameter('model_type') ?? 'xgboost';
  if (!(modelType in MODEL_TYPES)) {
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameter model_type is '${modelType}'; expected one of ${Object.keys(MODEL_TYPES).join(', ')}`);
  }
  const outputClass = parameter('output_class');
  const isClassifierText = parameter('is_classifier');
  if (outputClass !== undefined && isClassifierText !== undefined && outputClass !== isClassifierText) {
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameters output_class ('${outputClass}') and is_classifier ('${isClassifierText}') disagree; set one of them`);
  }
  const classText = outputClass ?? isClassifierText;
  const isClassifier = classText === undefined ? false : parseBoolean(config, outputClass !== undefined ? 'output_class' : 'is_classifier', classText);
  const probaText = parameter('predict_proba');
  const predictProba = probaText === undefined ? false : parseBoolean(config, 'predict_proba', probaText);
  const thresholdText = parameter('threshold');
  const threshold = thresholdText === undefined ? 0.5 : Number(thresholdText);
  if (thresholdText !== undefined && (thresholdText.trim() === '' || !Number.isFinite(threshold))) {
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameter threshold is '${thresholdText}'; expected a number such as 0.5`);
  }
  const ignored = Object.entries(config.parameters)
    .filter(([key]) => TUNING_PARAMETERS.has(key))
    .map(([key, value]) => [key, value.stringValue] as const);
  return { modelType: modelType as ModelType, isClassifier, predictProba, threshold, ignored };
}
