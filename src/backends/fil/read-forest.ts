import { readFile } from 'node:fs/promises';
import { NereidError } from '../../kernel/errors.js';
import type { Forest } from './forest.js';
import { forestFromLightgbmText } from './lightgbm-text.js';
import { ModelFileError } from './model-file-error.js';
import { decodeUbjson } from './ubjson.js';
import { forestFromXgboostBinary } from './xgboost-binary.js';
import { forestFromXgboostDocument } from './xgboost-model.js';

/** FIL's `model_type` values and the file each reads by default (fil_backend docs/model_config.md). */
export const MODEL_TYPES = {
  xgboost: 'xgboost.model',
  xgboost_json: 'xgboost.json',
  xgboost_ubj: 'xgboost.ubj',
  lightgbm: 'model.txt',
  treelite_checkpoint: 'checkpoint.tl',
} as const;

export type ModelType = keyof typeof MODEL_TYPES;

/**
 * XGBoost writes NaN and ±Infinity as bare words (a categorical split's condition is NaN), which
 * JSON.parse refuses: NaN becomes null (read as NaN) and the infinities 1e999, which parses to them.
 */
function parseXgboostJson(text: string): unknown {
  const patched = text.replace(/([[,:]\s*)(-?)(NaN|Infinity|inf)(?=\s*[,\]}])/g, (_, before: string, sign: string, word: string) => `${before}${word === 'NaN' ? 'null' : `${sign}1e999`}`);
  try {
    return JSON.parse(patched);
  } catch (error) {
    throw new ModelFileError(`is not valid JSON: ${(error as Error).message}`);
  }
}

/** The forest in `bytes`, read as `modelType`. Throws ModelFileError for a malformed file. */
export function parseForest(bytes: Uint8Array, modelType: ModelType): Forest {
  switch (modelType) {
    case 'xgboost_json':
      return forestFromXgboostDocument(parseXgboostJson(new TextDecoder().decode(bytes)));
    case 'xgboost_ubj':
      return forestFromXgboostDocument(decodeUbjson(bytes));
    case 'xgboost':
      return forestFromXgboostBinary(bytes);
    case 'lightgbm':
      return forestFromLightgbmText(new TextDecoder().decode(bytes));
    case 'treelite_checkpoint':
      throw new ModelFileError(
        "is a Treelite checkpoint, whose binary layout is Treelite's internal memory image (it changes between Treelite versions and has no published specification), so Nereid cannot read it; export the model as XGBoost JSON or LightGBM text instead (scripts/convert_sklearn_model.py converts scikit-learn forests)",
      );
  }
}

/** Reads and parses the model file of a version; any failure is an INVALID_ARG naming the model and file. */
export async function readForest(modelName: string, path: string, modelType: ModelType): Promise<Forest> {
  const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new NereidError('INVALID_ARG', `model '${modelName}': cannot read model file '${path}' (model_type '${modelType}'): ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  try {
    return parseForest(bytes, modelType);
  } catch (error) {
    if (error instanceof ModelFileError || error instanceof RangeError) {
      throw new NereidError('INVALID_ARG', `model '${modelName}': model file '${path}' (model_type '${modelType}') ${error.message}`);
    }
    throw error;
  }
}
