import { fileURLToPath } from 'node:url';
import { readForest } from '../../src/backends/fil/read-forest.js';
import { computeOutput } from '../../src/backends/fil/fil-outputs.js';
import { runBackendConformance } from '../helpers/backend-conformance.js';

const repository = fileURLToPath(new URL('../fixtures/conformance/fil', import.meta.url));
const NOT_FP32_ROWS = 'a fil model takes one FP32 input of [features] and answers FP32 predictions';
/** Four rows of six features; what the model answers for them is checked against XGBoost in fil-backend.test.ts. */
const ROWS = [
  [0.5, -1, 2, 0.25, 0, 1],
  [-3, 1, -0.5, 2, 3, -2],
  [-2, 0.75, 0, 1.5, -1, 0.5],
  [1, 1, 1, 1, 1, 1],
];
const forest = await readForest('rows', `${repository}/rows/1/xgboost.json`, 'xgboost_json');
const settings = { modelType: 'xgboost_json', isClassifier: false, predictProba: false, threshold: 0.5, ignored: [] } as const;

runBackendConformance({
  backend: 'fil',
  repository,
  modelFile: 'xgboost.json',
  workerKind: 'worker thread',
  crashesOnRequest: false,
  poisonError: '',
  unsupported: {
    identity: NOT_FP32_ROWS,
    batching: `${NOT_FP32_ROWS} (no BYTES), and every row of the right width is a valid input, so no request can fail alone in a batch`,
    reshape: NOT_FP32_ROWS,
    bad_output: 'the fil backend computes its outputs from the configuration it checked against the model file at load, so no output can break it',
    crashy: 'the fil backend runs no model code: its evaluator (native or JavaScript) has no process of its own to crash',
    slow: 'a tree model is not slow on purpose, and the fil backend has no worker to hold a request while others queue',
  },
  batchProbe: {
    model: 'rows',
    request: (index) => ({ inputs: [{ name: 'input__0', datatype: 'FP32', shape: [1, 6], data: ROWS[index] }] }),
    outputs: (index) => [
      {
        name: 'output__0',
        datatype: 'FP32',
        shape: [1, 1],
        data: [...computeOutput(forest, settings, Float32Array.from(ROWS[index]!), 1)],
      },
    ],
  },
});
