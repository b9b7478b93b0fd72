import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import { concatBatch, splitBatch } from '../../scheduling/batch.js';
import { checkOutputs } from '../tensor-io.js';
import { epochMs, msToNs } from '../worker-thread.js';
import type { Forest } from './forest.js';
import { INPUT_NAME, OUTPUT_NAME, TREESHAP_NAME, computeOutput, outputDims, treeshapDims } from './fil-outputs.js';
import type { FilSettings } from './fil-settings.js';
import type { TreeShap } from './tree-shap.js';

export interface FilInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly forest: Forest;
  readonly settings: FilSettings;
  /** Present when the configuration declares treeshap_output. */
  readonly treeShap?: TreeShap;
}

/**
 * One instance of a tree model: the batch's rows are stacked into one float32 matrix and evaluated
 * on the calling thread (predict.ts), with no worker to supervise. The forest is read-only, so every
 * instance of a model shares the one the backend parsed.
 *
 * NOTE: evaluation runs on the main thread (docs/benchmarks.md, "Tree models"): one row of the
 * example model takes about 10 µs, with no message to a worker and back. The price is that a large
 * batch holds the event loop (16,384 rows of a 500-tree depth-8 forest: 1.6 s on the loaded
 * benchmark machine) and that a model's instances share one core; max_batch_size bounds the first.
 */
export class FilInstance implements ModelInstance {
  readonly name: string;
  readonly #options: FilInstanceOptions;

  constructor(options: FilInstanceOptions) {
    this.name = options.name;
    this.#options = options;
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const { spec, forest, settings, treeShap } = this.#options;
    const startMs = epochMs();
    const inputs: Tensor[] = requests.map((request) => request.inputs.find((input) => input.name === INPUT_NAME)!);
    const batch = concatBatch(inputs);
    const rows = batch.shape[0]!;
    const features = batch.data as Float32Array;
    const inputEndMs = epochMs();
    const wantsShap = treeShap !== undefined && requests.some((request) => request.outputs === undefined || request.outputs.some((output) => output.name === TREESHAP_NAME));
    const outputs: Tensor[] = [{ name: OUTPUT_NAME, dataType: 'FP32', shape: [rows, ...outputDims(forest, settings)], data: computeOutput(forest, settings, features, rows) }];
    if (wantsShap) {
      const dims = treeshapDims(forest);
      const contributions = new Float32Array(rows * dims.reduce((product, dim) => product * dim, 1));
      treeShap.contributions(features, rows, contributions);
      outputs.push({ name: TREESHAP_NAME, dataType: 'FP32', shape: [rows, ...dims], data: contributions });
    }
    const inferEndMs = epochMs();
    const sizes = inputs.map((input) => input.shape[0]!);
    const pieces = outputs.map((output) => splitBatch(output, sizes));
    const responses = requests.map((request, index) => {
      try {
        return checkOutputs(spec, pieces.map((split) => split[index]!), { requested: request.outputs?.map((output) => output.name) });
      } catch (error) {
        return error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
      }
    });
    return { responses, timing: { inputNs: msToNs(inputEndMs - startMs), inferNs: msToNs(inferEndMs - inputEndMs), outputNs: msToNs(epochMs() - inferEndMs) } };
  }

  async close(): Promise<void> {}
}
