import type { Model } from './model.js';

/** A model version's state as Triton's repository index reports it. */
export type ModelState = 'UNKNOWN' | 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

export interface VersionState {
  readonly version: number;
  state: ModelState;
  /** Why the version is not READY; empty when it is. */
  reason: string;
  model?: Model;
}

/** Everything known about one model folder: its versions, or why none could be considered. */
export interface ModelEntry {
  readonly name: string;
  readonly modelDir: string;
  readonly versions: Map<number, VersionState>;
  /** Set when the model failed before any version could load (unreadable or invalid config, no backend). */
  error?: string;
}

export interface IndexEntry {
  readonly name: string;
  /** Empty when the failure concerns the whole model rather than one version. */
  readonly version: string;
  readonly state: ModelState;
  readonly reason: string;
}

export function indexEntries(entry: ModelEntry): IndexEntry[] {
  if (entry.error !== undefined) return [{ name: entry.name, version: '', state: 'UNAVAILABLE', reason: entry.error }];
  return [...entry.versions.values()]
    .sort((a, b) => a.version - b.version)
    .map((version) => ({ name: entry.name, version: String(version.version), state: version.state, reason: version.reason }));
}
