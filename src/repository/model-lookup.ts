import { NereidError } from '../kernel/errors.js';
import type { RepositoryIndexEntry } from '../protocol/repository-index.js';
import { type ModelEntry, type VersionState, indexEntries } from './model-lifecycle.js';
import type { Model } from './model.js';

/** A version that can take requests: READY, with its loaded model. The one readiness check. */
export function isReadyVersion(state: VersionState): state is VersionState & { model: Model } {
  return state.state === 'READY' && state.model !== undefined;
}

/** True when at least one version of the model can take requests. */
export function hasReadyVersion(entry: ModelEntry | undefined): boolean {
  if (entry === undefined) return false;
  for (const state of entry.versions.values()) if (isReadyVersion(state)) return true;
  return false;
}

/** The highest READY version of an entry (what a request without a version is served by), or undefined. */
function newestReadyVersion(entry: ModelEntry): (VersionState & { model: Model }) | undefined {
  let newest: (VersionState & { model: Model }) | undefined;
  for (const state of entry.versions.values()) if (isReadyVersion(state) && (newest === undefined || state.version > newest.version)) newest = state;
  return newest;
}

/** An entry's versions that can take requests, ascending. */
function readyVersionsOf(entry: ModelEntry): Array<VersionState & { model: Model }> {
  return [...entry.versions.values()].filter(isReadyVersion).sort((a, b) => a.version - b.version);
}

const unknownModel = (name: string): NereidError => new NereidError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);

/**
 * The models the repository knows, by name, and the answers read from them: which version serves a
 * request, which are ready, the repository index. The repository manager changes the entries; this
 * only reads them.
 */
export class ModelLookup {
  readonly #entries = new Map<string, ModelEntry>();

  get(name: string): ModelEntry | undefined {
    return this.#entries.get(name);
  }

  set(name: string, entry: ModelEntry): void {
    this.#entries.set(name, entry);
  }

  delete(name: string): void {
    this.#entries.delete(name);
  }

  entries(): IterableIterator<ModelEntry> {
    return this.#entries.values();
  }

  /**
   * The model version that serves a request: the given version, or the highest READY one.
   * Throws Triton's errors: unknown model INVALID_ARG, unknown version NOT_FOUND, not ready UNAVAILABLE.
   */
  getModel(name: string, version?: number): Model {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw unknownModel(name);
    if (version === undefined) {
      // Found without sorting or copying: this runs for every request.
      const newest = newestReadyVersion(entry);
      if (newest === undefined) {
        throw new NereidError('UNAVAILABLE', `Request for unknown model: '${name}' has no available versions${entry.error !== undefined ? `: ${entry.error}` : ''}`);
      }
      return newest.model;
    }
    const state = entry.versions.get(version);
    if (state === undefined) {
      throw new NereidError('NOT_FOUND', `Request for unknown model: '${name}' version ${version} is not found`);
    }
    if (!isReadyVersion(state)) {
      throw new NereidError('UNAVAILABLE', `Request for unknown model: '${name}' version ${version} is not at ready state${state.reason ? `: ${state.reason}` : ''}`);
    }
    return state.model;
  }

  /**
   * The READY versions of one model, or of every model when `name` is undefined, sorted by name
   * then version; one version when `version` is given. Unknown names and versions throw as getModel.
   */
  readyModels(name?: string, version?: number): Model[] {
    if (name !== undefined && version !== undefined) return [this.getModel(name, version)];
    if (name !== undefined && !this.#entries.has(name)) throw unknownModel(name);
    const entries = name === undefined ? this.#sortedEntries() : [this.#entries.get(name)!];
    return entries.flatMap((entry) => readyVersionsOf(entry).map((state) => state.model));
  }

  /** Versions of a model that are READY, ascending. */
  readyVersions(name: string): number[] {
    const entry = this.#entries.get(name);
    return entry === undefined ? [] : readyVersionsOf(entry).map((state) => state.version);
  }

  /**
   * Triton's strict readiness (core src/server.cc `InferenceServer::IsReady`): true when every model
   * that is loaded, loading or failed has its versions READY with none of its instances down. A model
   * not loaded on purpose (never asked for in EXPLICIT mode, unloaded, evicted, or not yet loaded on
   * demand) and a version UNAVAILABLE because it was unloaded do not count, so a server in EXPLICIT
   * mode with no model loaded is ready.
   */
  isEveryModelReady(): boolean {
    const entries = this.#sortedEntries().filter((entry) => entry.isUnloaded !== true);
    const isVersionReady = (entry: RepositoryIndexEntry): boolean => entry.state === 'READY' || (entry.state === 'UNAVAILABLE' && entry.reason === 'unloaded');
    return entries.flatMap(indexEntries).every(isVersionReady) && this.readyModels().every((model) => model.isHealthy);
  }

  /** The index lines of the models that were to load and have a version not READY (the models not loaded on purpose left out). */
  failures(): RepositoryIndexEntry[] {
    return this.#sortedEntries()
      .filter((entry) => entry.isUnloaded !== true)
      .flatMap(indexEntries)
      .filter((entry) => entry.state !== 'READY');
  }

  /** Triton's repository index: one entry per model version, sorted by name then version. */
  index(): RepositoryIndexEntry[] {
    return this.#sortedEntries().flatMap(indexEntries);
  }

  /** Requests accepted by any model and not yet answered. */
  get inflightCount(): number {
    let count = 0;
    for (const entry of this.#entries.values()) {
      for (const state of entry.versions.values()) count += state.model?.inflightCount ?? 0;
    }
    return count;
  }

  #sortedEntries(): ModelEntry[] {
    return [...this.#entries.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
