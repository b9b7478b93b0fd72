import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackendContext, LoadContext } from '../backends/backend.js';
import type { ModelSpec } from '../core/model-spec.js';
import { NereidError } from '../core/errors.js';
import type { Logger } from '../logging/logger.js';
import type { StatisticsObserver } from '../metrics/model-statistics.js';
import type { CloseOptions } from '../scheduling/scheduler.js';
import { type IndexEntry, type ModelEntry, indexEntries } from './model-lifecycle.js';
import { type LoadOverride, removeOverrideFolder, writeOverrideFiles } from './load-override.js';
import { Model } from './model.js';
import { prepareModelConfig } from './prepare-model-config.js';
import { selectVersions } from './version-policy.js';

/**
 * Triton's --model-control-mode: load everything at start (NONE), load and unload through the API
 * (EXPLICIT), or follow the repository's folders (POLL).
 */
export type ModelControlMode = 'none' | 'explicit' | 'poll';

export interface RepositoryOptions {
  readonly repositoryPaths: readonly string[];
  readonly controlMode: ModelControlMode;
  /** EXPLICIT mode: the models to load at start-up (`--load-model`); `*` means all. */
  readonly startupModels: readonly string[];
  /** How long an unload or reload waits for the old versions' accepted requests before stopping them. */
  readonly unloadTimeoutMs: number;
  readonly isAutoCompleteEnabled: boolean;
  readonly context: BackendContext;
  readonly logger: Logger;
  /** Who else sees each loaded version's requests and executions (the metrics). */
  readonly observerFor?: (modelName: string, version: number) => StatisticsObserver;
}

/** Folders Triton keeps inside a model folder that are not versions: no warning for these. */
const KNOWN_SUBFOLDERS = new Set(['configs', 'warmup', 'initial_state']);
const VERSION_FOLDER = /^[1-9][0-9]*$/;

/**
 * Finds the models in the repositories, loads the versions their policies select, and answers which
 * model version serves a request. A model that fails to load is recorded as UNAVAILABLE with its
 * reason and never keeps the others from loading.
 */
export class RepositoryManager {
  readonly #options: RepositoryOptions;
  readonly #models = new Map<string, ModelEntry>();
  readonly #locks = new Map<string, Promise<void>>();
  /** Models whose load is waiting for other models to load (an ensemble for its steps' models). */
  readonly #waits = new Map<string, Set<string>>();
  /** POLL mode: what each loaded model's folder looked like when it was loaded. */
  readonly #fingerprints = new Map<string, string>();
  #pollTimer: NodeJS.Timeout | undefined;

  constructor(options: RepositoryOptions) {
    this.#options = options;
  }

  /** Every model folder in the repositories, by model name (a name in two repositories has two folders). */
  async #scan(): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    for (const repository of this.#options.repositoryPaths) {
      const entries = await readdir(repository, { withFileTypes: true }).catch((error: Error) => {
        throw new NereidError('INVALID_ARG', `cannot read model repository '${repository}': ${error.message}`);
      });
      for (const entry of entries) {
        if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
        found.set(entry.name, [...(found.get(entry.name) ?? []), join(repository, entry.name)]);
      }
    }
    return found;
  }

  /**
   * Loads at start-up: every model in control mode NONE; in EXPLICIT mode those named by
   * `--load-model` (`*`: all), the others listed in the index as unloaded.
   */
  async loadAll(): Promise<void> {
    const { controlMode, startupModels } = this.#options;
    const isLoadedAtStart = (name: string): boolean => controlMode !== 'explicit' || startupModels.includes('*') || startupModels.includes(name);
    const found = await this.#scan();
    const missing = controlMode === 'explicit' ? startupModels.filter((name) => name !== '*' && !found.has(name)) : [];
    for (const name of missing) {
      this.#options.logger.error('repository', `--load-model '${name}': no model folder of that name in the model repositories`);
    }
    // Every load is registered before any runs, so that an ensemble can wait for its composing models.
    await Promise.all(
      [...found].map(([name, dirs]) =>
        this.#serialize(name, async () => {
          const print = controlMode === 'poll' ? await fingerprint(dirs) : '';
          this.#models.set(name, isLoadedAtStart(name) ? await this.#load(name, dirs) : unloadedEntry(name, dirs[0]!));
          if (controlMode === 'poll') this.#fingerprints.set(name, print);
        }),
      ),
    );
  }

  /**
   * Loads, or reloads, one model (the repository extension's load, EXPLICIT mode). A reload loads the
   * new versions fully before they replace the old ones, which finish the requests they have accepted;
   * if the new load fails, the old versions keep serving. Calls for one model run one at a time.
   */
  loadModel(name: string, override?: LoadOverride): Promise<void> {
    this.#checkExplicit('load');
    return this.#serialize(name, async () => {
      // Override files make a model folder of their own, in a private place; otherwise the repository's.
      const dirs = override !== undefined && override.files.size > 0 ? [await writeOverrideFiles(name, override.files)] : (await this.#scan()).get(name);
      if (dirs === undefined) {
        throw new NereidError('INVALID_ARG', `failed to load '${name}': no model folder of that name in ${this.#options.repositoryPaths.join(', ')}`);
      }
      await this.#replace(name, dirs, override?.configJson);
    });
  }

  /**
   * Loads a model's new versions fully, then swaps them in and unloads the old ones (which finish what
   * they accepted). If anything fails to load, the old versions keep serving and the error is thrown.
   */
  async #replace(name: string, dirs: readonly string[], configJson?: string): Promise<void> {
    const entry = await this.#load(name, dirs, configJson);
    const failure = entry.error ?? [...entry.versions.values()].find((state) => state.state !== 'READY')?.reason;
    if (failure !== undefined) {
      await unloadVersions(entry);
      // A model that was not serving is listed with the reason; one that was keeps serving.
      const current = this.#models.get(name);
      if (current === undefined || ![...current.versions.values()].some((state) => state.state === 'READY')) this.#models.set(name, entry);
      throw new NereidError('INVALID_ARG', `failed to load '${name}': ${failure}`);
    }
    const previous = this.#models.get(name);
    this.#models.set(name, entry);
    if (previous !== undefined) await unloadVersions(previous, this.#drainOptions());
  }

  /**
   * POLL mode: every `intervalMs`, models whose folders changed (config, labels, version folders or
   * files) are reloaded, new ones loaded and removed ones unloaded. A model caught half-written fails
   * to load and keeps its old versions serving; it is read again at the first poll that finds its
   * folder changed, which finishing the write does.
   */
  startPolling(intervalMs: number): void {
    let isPolling = false;
    this.#pollTimer = setInterval(() => {
      if (isPolling) return;
      isPolling = true;
      this.#poll().finally(() => (isPolling = false));
    }, intervalMs);
    this.#pollTimer.unref();
  }

  async #poll(): Promise<void> {
    const { logger } = this.#options;
    const found = await this.#scan().catch((error: Error) => {
      logger.error('repository', `poll: ${error.message}`);
      return undefined;
    });
    if (found === undefined) return;
    for (const [name, dirs] of found) {
      const print = await fingerprint(dirs);
      if (this.#fingerprints.get(name) === print) continue;
      // Recorded whether or not the load works: a broken model is tried again once its folder changes.
      this.#fingerprints.set(name, print);
      await this.#serialize(name, async () => {
        try {
          await this.#replace(name, dirs);
          logger.info('repository', `poll: loaded '${name}' after a change in its folder`);
        } catch (error) {
          logger.error('repository', `poll: ${(error as Error).message}; the folder is read again when it changes`);
        }
      });
    }
    for (const name of [...this.#fingerprints.keys()].filter((name) => !found.has(name))) {
      this.#fingerprints.delete(name);
      await this.#serialize(name, async () => {
        const entry = this.#models.get(name);
        this.#models.delete(name);
        if (entry !== undefined) await unloadVersions(entry, this.#drainOptions());
        logger.info('repository', `poll: unloaded '${name}', whose folder is gone`);
      });
    }
  }

  /** Unloads one model once its accepted requests are done (the repository extension's unload). */
  unloadModel(name: string): Promise<void> {
    this.#checkExplicit('unload');
    return this.#serialize(name, async () => {
      const entry = this.#models.get(name);
      if (entry === undefined) throw new NereidError('INVALID_ARG', `failed to unload '${name}': Request for unknown model: '${name}' is not found`);
      await unloadVersions(entry, this.#drainOptions());
      this.#models.set(name, unloadedEntry(name, entry.modelDir));
      this.#options.logger.info('repository', `successfully unloaded '${name}'`);
    });
  }

  /**
   * The spec of a model version another model depends on, once that model's load or unload in
   * progress has settled. In EXPLICIT mode a model that is not loaded is loaded now, as Triton loads
   * an ensemble's composing models with it. Models waiting for each other in a circle are refused.
   */
  async #requireModel(requester: string, name: string, version?: number): Promise<ModelSpec> {
    if (this.#isWaitingFor(name, requester)) {
      throw new NereidError('INVALID_ARG', `models '${requester}' and '${name}' depend on each other; expected the models an ensemble runs not to run the ensemble`);
    }
    const waits = this.#waits.get(requester) ?? new Set<string>();
    this.#waits.set(requester, waits.add(name));
    try {
      await this.#locks.get(name)?.catch(() => undefined);
      const entry = this.#models.get(name);
      const isLoaded = entry !== undefined && [...entry.versions.values()].some((state) => state.state === 'READY');
      if (!isLoaded && this.#options.controlMode === 'explicit' && entry !== undefined) await this.loadModel(name);
      return this.getModel(name, version).spec;
    } finally {
      waits.delete(name);
    }
  }

  /** True when loading `name` waits, directly or through others, for `target`. */
  #isWaitingFor(name: string, target: string, seen = new Set<string>()): boolean {
    if (name === target) return true;
    if (seen.has(name)) return false;
    seen.add(name);
    return [...(this.#waits.get(name) ?? [])].some((next) => this.#isWaitingFor(next, target, seen));
  }

  #loadContext(requester: string): LoadContext {
    return { ...this.#options.context, requireModel: (name, version) => this.#requireModel(requester, name, version) };
  }

  #drainOptions(): CloseOptions {
    return { drainTimeoutMs: this.#options.unloadTimeoutMs };
  }

  #checkExplicit(action: 'load' | 'unload'): void {
    if (this.#options.controlMode !== 'explicit') {
      // Triton refuses both in NONE and in POLL mode, where the repository's folders decide.
      throw new NereidError(
        'UNSUPPORTED',
        `cannot ${action} models: the model control mode is ${this.#options.controlMode.toUpperCase()}; start the server with --model-control-mode=explicit to load and unload through the API`,
      );
    }
  }

  /** Runs `task` after the previous load or unload of the same model has finished. */
  #serialize(name: string, task: () => Promise<void>): Promise<void> {
    const previous = this.#locks.get(name) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(task);
    this.#locks.set(name, next);
    return next;
  }

  /** Loads the versions of one model; failures are recorded in the entry, never thrown. */
  async #load(name: string, dirs: readonly string[], configJson?: string): Promise<ModelEntry> {
    const { logger } = this.#options;
    const modelDir = dirs[0]!;
    const entry: ModelEntry = { name, modelDir, versions: new Map() };
    if (dirs.length > 1) {
      entry.error = `model '${name}' appears in more than one repository (${dirs.join(', ')}); model names must be unique`;
      logger.error('repository', entry.error);
      return entry;
    }
    try {
      const available = await this.#findVersions(name, modelDir);
      const newest = available.length > 0 ? Math.max(...available) : undefined;
      const { config, backend } = await prepareModelConfig({
        name,
        modelDir,
        version: newest,
        versionDir: newest === undefined ? undefined : join(modelDir, String(newest)),
        isAutoCompleteEnabled: this.#options.isAutoCompleteEnabled,
        context: this.#options.context,
        ...(configJson !== undefined ? { configJson } : {}),
      });
      const { selected, missing } = selectVersions(config.versionPolicy, available);
      if (selected.length === 0 && missing.length === 0) {
        throw new NereidError('INVALID_ARG', `model '${name}' has no version folder (a folder named 1, 2, ... in '${modelDir}')`);
      }
      for (const version of missing) {
        entry.versions.set(version, { version, state: 'UNAVAILABLE', reason: `version ${version} is named in version_policy but '${join(modelDir, String(version))}' does not exist` });
      }
      await Promise.all(
        selected.map(async (version) => {
          entry.versions.set(version, { version, state: 'LOADING', reason: '' });
          const versionDir = join(modelDir, String(version));
          try {
            const model = await Model.load({
              files: { modelName: name, modelDir, version, versionDir },
              config,
              backend,
              context: this.#loadContext(name),
              observer: this.#options.observerFor?.(name, version),
            });
            entry.versions.set(version, { version, state: 'READY', reason: '', model });
            logger.info('repository', `successfully loaded '${name}' version ${version}`);
          } catch (error) {
            const reason = (error as Error).message;
            entry.versions.set(version, { version, state: 'UNAVAILABLE', reason });
            logger.error('repository', `failed to load '${name}' version ${version}: ${reason}`);
          }
        }),
      );
    } catch (error) {
      entry.error = (error as Error).message;
      logger.error('repository', `failed to load '${name}': ${entry.error}`);
    }
    return entry;
  }

  async #findVersions(name: string, modelDir: string): Promise<number[]> {
    const entries = await readdir(modelDir, { withFileTypes: true });
    const versions: number[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (VERSION_FOLDER.test(entry.name)) versions.push(Number(entry.name));
      else if (!KNOWN_SUBFOLDERS.has(entry.name)) {
        this.#options.logger.warning(
          'repository',
          `model '${name}': ignoring folder '${entry.name}', which is not a version (version folders are named 1, 2, ... without leading zeros)`,
        );
      }
    }
    return versions;
  }

  /**
   * The model version that serves a request: the given version, or the highest READY one.
   * Throws Triton's errors: unknown model INVALID_ARG, unknown version NOT_FOUND, not ready UNAVAILABLE.
   */
  getModel(name: string, version?: number): Model {
    const entry = this.#models.get(name);
    if (entry === undefined) throw new NereidError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);
    if (version === undefined) {
      const ready = [...entry.versions.values()].filter((state) => state.model !== undefined && state.state === 'READY');
      const newest = ready.sort((a, b) => b.version - a.version)[0];
      if (newest?.model === undefined) {
        throw new NereidError('UNAVAILABLE', `Request for unknown model: '${name}' has no available versions${entry.error !== undefined ? `: ${entry.error}` : ''}`);
      }
      return newest.model;
    }
    const state = entry.versions.get(version);
    if (state === undefined) {
      throw new NereidError('NOT_FOUND', `Request for unknown model: '${name}' version ${version} is not found`);
    }
    if (state.state !== 'READY' || state.model === undefined) {
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
    if (name !== undefined && !this.#models.has(name)) throw new NereidError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);
    const entries = name === undefined ? [...this.#models.values()].sort((a, b) => a.name.localeCompare(b.name)) : [this.#models.get(name)!];
    return entries.flatMap((entry) =>
      [...entry.versions.values()]
        .filter((state) => state.state === 'READY' && state.model !== undefined)
        .sort((a, b) => a.version - b.version)
        .map((state) => state.model!),
    );
  }

  /** Versions of a model that are READY, ascending. */
  readyVersions(name: string): number[] {
    const entry = this.#models.get(name);
    if (entry === undefined) return [];
    return [...entry.versions.values()].filter((state) => state.state === 'READY').map((state) => state.version).sort((a, b) => a - b);
  }

  /** True when every model found has every selected version READY, with none of its instances down. */
  isEveryModelReady(): boolean {
    return this.index().every((entry) => entry.state === 'READY') && this.readyModels().every((model) => model.isHealthy);
  }

  /** Triton's repository index: one entry per model version, sorted by name then version. */
  index(): IndexEntry[] {
    return [...this.#models.values()].sort((a, b) => a.name.localeCompare(b.name)).flatMap(indexEntries);
  }

  /** Requests accepted by any model and not yet answered. */
  get inflightCount(): number {
    let count = 0;
    for (const entry of this.#models.values()) {
      for (const state of entry.versions.values()) count += state.model?.inflightCount ?? 0;
    }
    return count;
  }

  /** Unloads every model: waits for accepted requests (unless forced), then stops the instances. */
  async unloadAll(options?: CloseOptions): Promise<void> {
    if (this.#pollTimer !== undefined) clearInterval(this.#pollTimer);
    await Promise.all([...this.#models.values()].map((entry) => unloadVersions(entry, options)));
  }
}

/** A model found in a repository and not loaded (EXPLICIT mode), as the index lists it. */
function unloadedEntry(name: string, modelDir: string): ModelEntry {
  return { name, modelDir, versions: new Map(), error: 'unloaded' };
}

/**
 * Unloads an entry's loaded versions: they turn UNLOADING, finish what they accepted, then stop; a
 * model made from a load request's files loses its private folder too.
 */
async function unloadVersions(entry: ModelEntry, options?: CloseOptions): Promise<void> {
  await Promise.all(
    [...entry.versions.values()].map(async (state) => {
      const model = state.model;
      if (model === undefined) return;
      state.state = 'UNLOADING';
      await model.unload(options);
      state.state = 'UNAVAILABLE';
      state.reason = 'unloaded';
      delete state.model;
    }),
  );
  await removeOverrideFolder(entry.modelDir);
}

/**
 * What a model's folder looks like: every file and folder below it (three levels: config, labels,
 * version folders and their files) with its size and modification time. A change anywhere changes it.
 */
async function fingerprint(dirs: readonly string[]): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      const info = await stat(path).catch(() => undefined);
      parts.push(`${path}:${info?.size ?? '?'}:${info?.mtimeMs ?? '?'}`);
      if (entry.isDirectory() && depth < 3) await walk(path, depth + 1);
    }
  };
  for (const dir of dirs) await walk(dir, 1);
  return parts.join('\n');
}
