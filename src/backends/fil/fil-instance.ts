import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import { concatBatch, splitBatch } from '../../scheduling/batch.js';
import { checkOutputs } from '../tensor-io.js';
import { epochMs, msToNs } from '../worker-thread.js';
import type { Forest } from './forest.js';
import { INPUT_NAME, OUTPUT_NAME, TREESHAP_NAME, computeOutput, outputDims, outputFromMargins, treeshapDims } from './fil-outputs.js';
import type { FilSettings } from './fil-settings.js';
import type { NativeForest } from './native-forest.js';
import type { RowPool } from './row-pool.js';
import type { TreeShap } from './tree-shap.js';

/**
 * Rows × trees from which a batch goes to the row pool rather than the main thread: below it, the
 * copies to and from the workers cost more than the second core gives (1,024 rows of the 100-tree
 * example go, 64 rows of a 500-tree forest stay).
 */
const POOL_MIN_WORK = 50_000;

/**
 * Rows × trees from which the native evaluator runs off the event loop, on `threadCount` of its
 * parked threads: walking, at 4 to 13 ns a row and tree, 20,000 take 80 to 260 µs on the main thread,
 * against 15 to 40 µs to wake the threads and come back (bench/tree-evaluators.ts, "hand-off";
 * docs/benchmarks.md, "Tree models"). The complete-tree kernels take about 1 ns a row and tree, so
 * the same 100 µs or more of work is 100,000 of them and more: 1,024 rows of the 100-tree example
 * (about 100 µs) stay on the main thread, which measured 350 to 410 µs a request over HTTP against
 * 480 to 570 off it on a busy 2-core machine.
 */
const NATIVE_OFF_THREAD_MIN_WORK = { walk: 20_000, complete: 200_000 } as const;

export interface FilInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly forest: Forest;
  readonly settings: FilSettings;
  /** Present when the configuration declares treeshap_output. */
  readonly treeShap?: TreeShap;
  /** The native evaluator (native-forest.ts); absent: predict.ts on the main thread or the pool. */
  readonly native?: NativeForest;
  /** The threads a large batch may use: the instance's share of the cores. */
  readonly threadCount: number;
  /** JavaScript worker threads for large batches, when the native evaluator is absent or SHAP values are asked. */
  readonly pool?: RowPool;
}

/**
 * One instance of a tree model: the batch's rows are stacked into one float32 matrix and evaluated
 * (predict.ts). The forest is read-only, so every instance of a model shares the one the backend parsed.
 *
 * NOTE: small batches run on the main thread (docs/benchmarks.md, "Tree models"): one row of the
 * example model takes a few µs, with no hand-over to another thread and back. With the native
 * evaluator, batches of NATIVE_OFF_THREAD_MIN_WORK rows × trees or more (fewer for the walk than for
 * the complete-tree kernels, which are faster) run on its own threads (parked
 * between batches), cut across `threadCount` of them, and the event loop stays free. Without it (or when SHAP values
 * are asked, which only predict.ts and tree-shap.ts compute), batches of POOL_MIN_WORK rows × trees
 * or more are cut across the instance's row pool (row-pool.ts); without a pool (one core per
 * instance) or once it has failed, they run here too, holding the event loop meanwhile.
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
    // NOTE: a lone request's rows are evaluated where they lie (for HTTP, a view of the received body):
    // the evaluators only read them, and the request holds them until execute returns.
    const batch = inputs.length === 1 ? inputs[0]! : concatBatch(inputs);
    const rows = batch.shape[0]!;
    const features = batch.data as Float32Array;
    const inputEndMs = epochMs();
    const wantsShap = treeShap !== undefined && requests.some((request) => request.outputs === undefined || request.outputs.some((output) => output.name === TREESHAP_NAME));
    const { output, contributions } = await this.#evaluate(features, rows, wantsShap);
    const outputs: Tensor[] = [{ name: OUTPUT_NAME, dataType: 'FP32', shape: [rows, ...outputDims(forest, settings)], data: output }];
    if (contributions !== undefined) outputs.push({ name: TREESHAP_NAME, dataType: 'FP32', shape: [rows, ...treeshapDims(forest)], data: contributions });
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

  async #evaluate(features: Float32Array, rows: number, wantsShap: boolean): Promise<{ output: Float32Array; contributions?: Float32Array }> {
    const { forest, settings, treeShap, pool, native, threadCount } = this.#options;
    const work = rows * forest.roots.length;
    if (native !== undefined && !wantsShap) {
      const minWork = native.kernel === 'walk' ? NATIVE_OFF_THREAD_MIN_WORK.walk : NATIVE_OFF_THREAD_MIN_WORK.complete;
      const margins = work >= minWork ? await native.marginsOffThread(features, rows, threadCount) : native.margins(features, rows);
      return { output: outputFromMargins(forest, settings, margins, rows) };
    }
    if (pool?.isUsable === true && work >= POOL_MIN_WORK) {
      // A pool that fails under this batch has said so in the log; the batch runs here instead.
      const pooled = await pool.run(features, rows, wantsShap).catch(() => undefined);
      if (pooled !== undefined) return pooled;
    }
    const output = computeOutput(forest, settings, features, rows);
    if (!wantsShap || treeShap === undefined) return { output };
    const contributions = new Float32Array(rows * treeshapDims(forest).reduce((product, dim) => product * dim, 1));
    treeShap.contributions(features, rows, contributions);
    return { output, contributions };
  }

  async close(): Promise<void> {
    await this.#options.pool?.close();
  }
}
