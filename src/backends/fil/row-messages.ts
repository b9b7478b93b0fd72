import type { Forest } from './forest.js';
import type { FilSettings } from './fil-settings.js';

/** What a row worker starts with: the forest (copied into the worker once) and the settings. */
export interface RowWorkerInit {
  readonly forest: Forest;
  readonly settings: FilSettings;
  readonly hasShap: boolean;
}

/** A slice of a batch's rows to evaluate. */
export interface RowTask {
  readonly id: number;
  readonly input: Float32Array;
  readonly rows: number;
  readonly wantsShap: boolean;
}

export interface RowResult {
  readonly id: number;
  readonly output: Float32Array;
  readonly contributions?: Float32Array;
}
