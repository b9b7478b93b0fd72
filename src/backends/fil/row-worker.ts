/** A row worker of row-pool.ts: evaluates slices of batches with the forest it was started with. */
import { parentPort, workerData } from 'node:worker_threads';
import { computeOutput, treeshapDims } from './fil-outputs.js';
import type { RowResult, RowTask, RowWorkerInit } from './row-messages.js';
import { TreeShap } from './tree-shap.js';

const { forest, settings, hasShap } = workerData as RowWorkerInit;
const treeShap = hasShap ? new TreeShap(forest) : undefined;
const shapWidth = treeshapDims(forest).reduce((product, dim) => product * dim, 1);

parentPort!.on('message', (task: RowTask) => {
  const output = computeOutput(forest, settings, task.input, task.rows);
  let contributions: Float32Array | undefined;
  if (task.wantsShap && treeShap !== undefined) {
    contributions = new Float32Array(task.rows * shapWidth);
    treeShap.contributions(task.input, task.rows, contributions);
  }
  const result: RowResult = { id: task.id, output, ...(contributions !== undefined ? { contributions } : {}) };
  parentPort!.postMessage(result, [output.buffer as ArrayBuffer, ...(contributions !== undefined ? [contributions.buffer as ArrayBuffer] : [])]);
});
