/**
 * The fil backend's native evaluator: native/fil (C++, N-API), built by `npm install`
 * (scripts/build-addons.mjs). It sums the trees exactly as predict.ts does (the same rules, the
 * same double sums in tree order), several times faster, and can cut a batch across threads off
 * the event loop (docs/benchmarks.md, "Tree models"). When the addon was not built or does not
 * load, or with NEREID_FIL_FALLBACK=1, the backend evaluates with predict.ts instead.
 */
import { createRequire } from 'node:module';
import type { Forest } from './forest.js';
import { finishMargins } from './predict.js';

/**
 * What sums a batch of 4 rows or more: `walk`, each row down each tree (any forest); or, for a
 * forest of numeric splits at most 5 deep, every split of every tree padded to a complete tree,
 * decided 16 rows at a time with the widest vectors the CPU has (`avx512`, `avx2`, `baseline`:
 * native/fil/complete-trees.h). `auto`: the fastest that fits the forest and the CPU.
 */
export type NativeKernel = 'auto' | 'walk' | 'avx512' | 'avx2' | 'baseline';

interface NativeAddon {
  create(forest: Forest, kernel?: NativeKernel): object;
  kernel(handle: object): Exclude<NativeKernel, 'auto'>;
  sumTrees(handle: object, input: Float32Array, rows: number, sums: Float64Array): void;
  sumTreesAsync(handle: object, input: Float32Array, rows: number, sums: Float64Array, threadCount: number): Promise<void>;
}

// Where `npm install` builds the addon; the same depth from src/ and dist/.
const ADDON_PATH = '../../../native/fil/build/Release/nereid_fil.node';

/** A forest copied into the native evaluator; every instance of a model shares it. */
export class NativeForest {
  readonly #addon: NativeAddon;
  readonly #forest: Forest;
  readonly #handle: object;
  #kernel: Exclude<NativeKernel, 'auto'> | undefined;

  /** Throws when `kernel` is not one this CPU runs. */
  constructor(addon: NativeAddon, forest: Forest, kernel: NativeKernel = 'auto') {
    this.#addon = addon;
    this.#forest = forest;
    this.#handle = addon.create(forest, kernel);
  }

  /** The kernel chosen for the forest: never `auto`. */
  get kernel(): Exclude<NativeKernel, 'auto'> {
    this.#kernel ??= this.#addon.kernel(this.#handle);
    return this.#kernel;
  }

  /** The margins of `rows` rows (predict.ts predictMargins), on the calling thread. */
  margins(input: Float32Array, rows: number): Float64Array {
    const sums = new Float64Array(rows * this.#forest.numGroups);
    this.#addon.sumTrees(this.#handle, input, rows, sums);
    finishMargins(this.#forest, sums, rows);
    return sums;
  }

  /**
   * The same, on `threadCount` of the addon's evaluator threads (started once, parked between
   * batches; the rows cut between them); the event loop stays free. `input` must not change until
   * the promise settles.
   */
  async marginsOffThread(input: Float32Array, rows: number, threadCount: number): Promise<Float64Array> {
    const sums = new Float64Array(rows * this.#forest.numGroups);
    await this.#addon.sumTreesAsync(this.#handle, input, rows, sums, threadCount);
    finishMargins(this.#forest, sums, rows);
    return sums;
  }
}

/** The native evaluator for a forest, or why the JavaScript one (predict.ts) is used instead. */
export type NativeForestChoice = { readonly native: NativeForest } | { readonly fallbackReason: string };

let addonLoad: { addon: NativeAddon } | { error: string } | undefined;

/**
 * The forest in the native evaluator when the addon loads; `NEREID_FIL_FALLBACK=1` (or
 * `isFallbackForced`) chooses the JavaScript evaluator without trying it.
 */
export function createNativeForest(forest: Forest, options: { readonly isFallbackForced?: boolean; readonly kernel?: NativeKernel } = {}): NativeForestChoice {
  if (options.isFallbackForced ?? process.env.NEREID_FIL_FALLBACK === '1') return { fallbackReason: 'NEREID_FIL_FALLBACK=1' };
  if (addonLoad === undefined) {
    try {
      addonLoad = { addon: createRequire(import.meta.url)(ADDON_PATH) as NativeAddon };
    } catch (error) {
      addonLoad = { error: `the native addon did not load (${(error as Error).message.split('\n', 1)[0]}); run 'npm rebuild' or 'node scripts/build-addons.mjs'` };
    }
  }
  if ('error' in addonLoad) return { fallbackReason: addonLoad.error };
  try {
    return { native: new NativeForest(addonLoad.addon, forest, options.kernel) };
  } catch (error) {
    return { fallbackReason: `the native evaluator refused the forest (${(error as Error).message})` };
  }
}
