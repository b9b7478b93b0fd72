import type { ModelState, RepositoryIndexEntry } from '../protocol/repository-index.js';
import type { Model } from './model.js';

export interface VersionState {
  readonly version: number;
  state: ModelState;
  /** Why the version is not READY; empty when it is. */
  reason: string;
  model?: Model;
  /** The estimated memory of the loaded version (memory-estimate.ts); set while it is loaded. */
  memoryBytes?: number;
}

/** Everything known about one model folder: its versions, or why none could be considered. */
export interface ModelEntry {
  readonly name: string;
  /** `--model-namespacing`: the repository the model is in, as the server was given it (Triton's ModelIdentifier namespace). */
  readonly namespace?: string;
  readonly modelDir: string;
  readonly versions: Map<number, VersionState>;
  /** Set when the model failed before any version could load (unreadable or invalid config, no backend). */
  error?: string;
  /** Not loaded on purpose: never asked for in EXPLICIT mode or with loading on demand, unloaded, or evicted. */
  isUnloaded?: boolean;
  /** The key each model its load asked for (an ensemble's steps) was found under, by the name asked for: `--model-namespacing` links them again when models come and go (repository-manager.ts, #linkedKey). */
  readonly links?: Map<string, string>;
  /** The status of a load that failed as a whole: INVALID_ARG (Triton's), or UNAVAILABLE when the budget refused it. */
  errorStatus?: 'INVALID_ARG' | 'UNAVAILABLE';
}

/** The model's lines of the repository index: one per version, or one without a version for a failure of the whole model. */
export function indexEntries(entry: ModelEntry): RepositoryIndexEntry[] {
  if (entry.error !== undefined) return [{ name: entry.name, version: '', state: 'UNAVAILABLE', reason: entry.error }];
  return [...entry.versions.values()]
    .sort((a, b) => a.version - b.version)
    .map((version) => ({ name: entry.name, version: String(version.version), state: version.state, reason: version.reason }));
}
