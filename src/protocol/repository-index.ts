/*
 * The model repository extension's index (docs/protocol/extension_model_repository.md in Triton's
 * server repository): one entry per model version, as both transports carry it.
 */

/** A model version's state, as Triton names its ModelReadyState (Triton core `src/model_lifecycle.h`). */
export type ModelState = 'UNKNOWN' | 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

const MODEL_STATES: readonly ModelState[] = ['UNKNOWN', 'READY', 'UNAVAILABLE', 'LOADING', 'UNLOADING'];

/** The state a reply names; UNKNOWN for a state that is not one of Triton's (from another KServe server). */
export function modelStateOf(value: unknown): ModelState {
  return MODEL_STATES.find((state) => state === value) ?? 'UNKNOWN';
}

export interface RepositoryIndexEntry {
  readonly name: string;
  /** Empty when no version is loaded, or when the failure concerns the whole model rather than one version. */
  readonly version: string;
  readonly state: ModelState;
  /** Why the model is not ready; empty when it is. */
  readonly reason: string;
}

/** An entry in the HTTP reply: Triton leaves out an empty version and an empty reason. */
export interface RepositoryIndexEntryJson {
  readonly name: string;
  readonly version?: string;
  readonly state: ModelState;
  readonly reason?: string;
}
