/**
 * What a FIL model answers, per row (fil_backend docs/model_config.md, "Inputs and Outputs"):
 *
 * | settings                          | output__0 dims | value                                          |
 * |-----------------------------------|----------------|------------------------------------------------|
 * | regressor                         | [groups]       | the transformed prediction ([1] but multiclass)|
 * | classifier                        | [1]            | the class id: p > threshold (binary), argmax   |
 * | predict_proba (binary)            | [2]            | [1 - p, p]                                     |
 * | predict_proba (multiclass)        | [classes]      | each class's probability                       |
 *
 * `treeshap_output` (an extra output, when configured) is [features + 1] for one group and
 * [classes, features + 1] for multiclass: the contributions in margin space, bias last (tree-shap.ts).
 */
import type { Forest } from './forest.js';
import type { FilSettings } from './fil-settings.js';
import { predictMargins, transformMargins } from './predict.js';

export const INPUT_NAME = 'input__0';
export const OUTPUT_NAME = 'output__0';
export const TREESHAP_NAME = 'treeshap_output';

/** The classes of a classifier: 2 for a binary model (one group), else one per group. */
export const classCount = (forest: Forest): number => (forest.numGroups === 1 ? 2 : forest.numGroups);

/** output__0's dims (without the batch dimension) for these settings. */
export function outputDims(forest: Forest, settings: Pick<FilSettings, 'isClassifier' | 'predictProba'>): number[] {
  if (settings.predictProba) return [classCount(forest)];
  if (settings.isClassifier) return [1];
  return [forest.numGroups];
}

/** treeshap_output's dims (without the batch dimension). */
export function treeshapDims(forest: Forest): number[] {
  return forest.numGroups === 1 ? [forest.numFeatures + 1] : [forest.numGroups, forest.numFeatures + 1];
}

/** output__0 for `rows` rows of `input`: `rows * outputDims` values, row-major. */
export function computeOutput(forest: Forest, settings: FilSettings, input: Float32Array, rows: number): Float32Array {
  const margins = new Float64Array(rows * forest.numGroups);
  predictMargins(forest, input, rows, margins);
  return outputFromMargins(forest, settings, margins, rows);
}

/** output__0 for `rows` rows from their margins (predictMargins), which it transforms in place. */
export function outputFromMargins(forest: Forest, settings: FilSettings, values: Float64Array, rows: number): Float32Array {
  const groups = forest.numGroups;
  transformMargins(forest, values, rows);
  if (settings.predictProba) {
    if (groups > 1) return Float32Array.from(values);
    const out = new Float32Array(rows * 2);
    for (let row = 0; row < rows; row++) {
      out[row * 2] = 1 - values[row]!;
      out[row * 2 + 1] = values[row]!;
    }
    return out;
  }
  if (!settings.isClassifier) return Float32Array.from(values);
  const out = new Float32Array(rows);
  for (let row = 0; row < rows; row++) {
    if (groups === 1) {
      out[row] = values[row]! > settings.threshold ? 1 : 0;
      continue;
    }
    let best = 0;
    for (let g = 1; g < groups; g++) if (values[row * groups + g]! > values[row * groups + best]!) best = g;
    out[row] = best;
  }
  return out;
}
