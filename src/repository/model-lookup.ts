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
 * Triton's refusal of a name that models of several namespaces share (core FindModelIdentifier); Nereid
 * adds the keys under which a request may name each of them.
 */
export const ambiguousModel = (name: string, keys: readonly string[]): NereidError =>
  new NereidError(
    'INVALID_ARG',
    `There are ${keys.length} identifiers of model '${name}' in global map, model namespace must be provided to resolve ambiguity. (Nereid: a request may name one of them as ${keys.map((key) => `'${key}'`).join(' or ')})`,
  );

/**
 * The models the repository knows, by key, and the answers read from them: which version serves a
 * request, which are ready, the repository index. The repository manager changes the entries; this
 * only reads them. A key is the model's name, or with `--model-namespacing` `<namespace>::<name>`
 * (model-id.ts); a request names a model by its name, which finds the one model of that name in any
 * namespace (Triton's FindModelIdentifier), or by its key.
 */
export class ModelLookup {
  readonly #entries = new Map<string, ModelEntry>();
  /** The keys of the namespaced entries (those whose key is not their name), by name. */
  readonly #keysByName = new Map<string, Set<string>>();

  get(key: string): ModelEntry | undefined {
    return this.#entries.get(key);
  }

  set(key: string, entry: ModelEntry): void {
    this.#entries.set(key, entry);
    if (key === entry.name) return;
    let keys = this.#keysByName.get(entry.name);
    if (keys === undefined) this.#keysByName.set(entry.name, (keys = new Set()));
    keys.add(key);
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    this.#entries.delete(key);
    const keys = entry === undefined ? undefined : this.#keysByName.get(entry.name);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.#keysByName.delete(entry!.name);
  }

  /**
   * The key of the model a request names: its key, or the one namespaced model of that name. When
   * several have it, those loaded (or loading, or failed) count, as Triton's global map holds them:
   * one is the model, several are Triton's ambiguity error, none (all unloaded) Triton's NOT_FOUND.
   * Undefined for an unknown name.
   */
  find(name: string): string | undefined {
    const namespaced = this.#keysByName.get(name);
    if (namespaced === undefined) return this.#entries.has(name) ? name : undefined;
    // A model without a namespace (loaded from a load request's files) is one of them, as in Triton.
    const keys = this.#entries.has(name) ? [name, ...namespaced] : [...namespaced];
    if (keys.length === 1) return keys[0];
    const loaded = keys.filter((key) => this.#entries.get(key)!.isUnloaded !== true);
    if (loaded.length > 1) throw ambiguousModel(name, loaded.sort());
    if (loaded.length === 0) {
      const known = [...keys].sort().map((key) => `'${key}'`).join(', ');
      throw new NereidError('NOT_FOUND', `Identifier of model '${name}' is not found in global map (Nereid: none of the models of that name is loaded: ${known})`);
    }
    return loaded[0];
  }

  /** The keys of every model of that name: the name itself, and those of its namespaced models. */
  keysNamed(name: string): string[] {
    return [...(this.#entries.has(name) ? [name] : []), ...(this.#keysByName.get(name) ?? [])];
  }

  /** The entry of the model a request names (see find). */
  #named(name: string): ModelEntry | undefined {
    if (this.#keysByName.size === 0) return this.#entries.get(name);
    const key = this.find(name);
    return key === undefined ? undefined : this.#entries.get(key);
  }

  entries(): IterableIterator<ModelEntry> {
    return this.#entries.values();
  }

  /**
   * The model version that serves a request: the given version, or the highest READY one.
   * Throws Triton's errors: unknown model INVALID_ARG, unknown version NOT_FOUND, not ready UNAVAILABLE.
   */
  getModel(name: string, version?: number): Model {
    const entry = this.#named(name);
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
    const named = name === undefined ? undefined : this.#named(name);
    if (name !== undefined && named === undefined) throw unknownModel(name);
    const entries = named === undefined ? this.#sortedEntries() : [named];
    return entries.flatMap((entry) => readyVersionsOf(entry).map((state) => state.model));
  }

  /** Versions of a model that are READY, ascending. */
  readyVersions(name: string): number[] {
    const entry = this.#named(name);
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

  /** Triton's repository index: one entry per model version, sorted by namespace, name, then version (a name in two namespaces is listed twice, without its namespace, as Triton lists it). */
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

  /** By namespace, then name, as Triton's set of ModelIdentifier orders them. */
  #sortedEntries(): ModelEntry[] {
    return [...this.#entries.values()].sort((a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name));
  }
}
