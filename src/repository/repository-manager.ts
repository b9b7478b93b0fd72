import { join } from 'node:path';
import type { BackendContext, LoadContext } from '../backends/backend.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import { NereidError } from '../kernel/errors.js';
import type { UnloadOptions } from '../kernel/model-control.js';
import type { Logger } from '../logging/logger.js';
import type { RepositoryIndexEntry } from '../protocol/repository-index.js';
import type { ModelMetricSettings, StatisticsObserver } from '../metrics/model-statistics.js';
import { type Clock, systemClock } from '../scheduling/clock.js';
import type { CloseOptions } from '../scheduling/scheduler.js';
import { DependencyGraph } from './dependency-graph.js';
import { KeyedMutex } from './keyed-mutex.js';
import { LoadFailureBackoff } from './load-failure-backoff.js';
import { LoadSlots } from './load-slots.js';
import { ModelLeases } from './model-leases.js';
import { type BudgetLimits, type LoadOrigin, ModelBudget, type Reservation } from './model-budget.js';
import { ModelEvictor } from './model-evictor.js';
import { estimateVersionBytes, folderBytes } from './memory-estimate.js';
import type { ModelEntry } from './model-lifecycle.js';
import { ModelLookup, ambiguousModel, hasReadyVersion, isReadyVersion } from './model-lookup.js';
import { type LoadOverride, refuseCodeFiles, writeOverrideFiles } from './load-override.js';
import { unloadVersions } from './unload-versions.js';
import { modelNotPolledError, validateModelName } from './model-name.js';
import { Model } from './model.js';
import { prepareModelConfig } from './prepare-model-config.js';
import { abortable } from '../util/abortable.js';
import { RegisteredRepositories } from './registered-repositories.js';
import { RepositoryPoller } from './repository-poller.js';
import { findModelFolders, findVersions, fingerprintFolders, scanRepositories } from './repository-scan.js';
import { type ModelId, type ScannedModel, modelKey } from '../kernel/model-id.js';
import { selectVersions } from './version-policy.js';
import type { ModelControlMode } from '../config/server-options.js';
import type { RateLimiter } from '../scheduling/rate-limiter.js';
import type { ResponseCacheStore } from '../scheduling/response-cache.js';


/** Why a model whose name more than one repository holds does not load. */
const duplicateNameMessage = (name: string, dirs: readonly string[]): string =>
  `model '${name}' appears in more than one repository (${dirs.join(', ')}); model names must be unique`;

export interface RepositoryOptions {
  readonly repositoryPaths: readonly string[];
  /**
   * `--model-namespacing`: models of the same name in different repositories are different models,
   * each in its repository's namespace (Triton's ModelIdentifier). Off: a name is one model.
   */
  readonly isModelNamespacing?: boolean;
  /** The namespace of each of `repositoryPaths`, by position: the repository as the server was given it (an object-storage path, for a local copy). */
  readonly repositoryNamespaces?: readonly string[];
  readonly controlMode: ModelControlMode;
  /** EXPLICIT mode: the models to load at start-up (`--load-model`); `*` means all. */
  readonly startupModels: readonly string[];
  /** How long an unload or reload waits for the old versions' accepted requests before stopping them. */
  readonly unloadTimeoutMs: number;
  readonly isAutoCompleteEnabled: boolean;
  readonly context: BackendContext;
  readonly logger: Logger;
  /** Who else sees each loaded version's requests and executions (the metrics). */
  readonly observerFor?: (model: ModelId, version: number, settings: ModelMetricSettings) => StatisticsObserver;
  /** Times the POLL mode's passes; the system clock unless a test drives it. */
  readonly clock?: Clock;
  /**
   * `--model-load-timeout-secs`: how long the load of one model (its config, then every version with
   * its instances and warmup) may take; a version still loading then is UNAVAILABLE, its instances stopped.
   */
  readonly loadTimeoutMs: number;
  /** `--http-max-input-size`: the largest request a client may send, and so the largest warmup sample. */
  readonly maxInputBytes: number;
  /** `--allow-model-code-upload`: load requests may bring files a backend runs as code (default false). */
  readonly isModelCodeUploadAllowed?: boolean;
  // Issue 19, many models:
  /** `--model-load-thread-count`: how many models load at once (Triton's default: 4). */
  readonly loadThreadCount?: number;
  /**
   * `--model-load-retry-count`: how many times a version whose load failed is loaded again before it
   * is UNAVAILABLE (Triton's ModelLifeCycle tries CreateModel that many more times); never past the
   * load's timeout.
   */
  readonly loadRetryCount?: number;
  /** `--model-config-name`: each model's configs/<name>.pbtxt, where it has one, instead of its config.pbtxt. */
  readonly modelConfigName?: string;
  /** `--load-on-demand`: a request for a model that is not loaded loads it (see prepareModel). */
  readonly isLoadOnDemand?: boolean;
  /** `--max-loaded-models` and `--model-memory-budget`; none: no limit. */
  readonly limits?: BudgetLimits;
  /** Who hears of each load and eviction (the metrics). */
  readonly events?: RepositoryEvents;
  // Issue 16, the response cache and the rate limiter:
  /** `--cache-config`: the response cache every model with `response_cache { enable: true }` shares. */
  readonly responseCache?: ResponseCacheStore;
  /** `--rate-limit=execution_count`: the rate limiter every instance asks before it executes. */
  readonly rateLimiter?: RateLimiter;
  /** Issue 18: brings the local copies of object-storage repositories up to date before each scan; throws when a store cannot be read. */
  readonly syncRepositories?: () => Promise<void>;
}

/** What the repository tells the metrics. */
export interface RepositoryEvents {
  /** A model finished loading (at least one version READY), and why it was loaded. */
  onModelLoaded(model: ModelId, origin: LoadOrigin): void;
  /** A model loaded on demand was unloaded to make room for another. */
  onModelEvicted(model: ModelId): void;
}

/** Where a load's model comes from: a config override, whether its files came with the request, and why it loads. */
interface LoadSource {
  readonly configJson?: string;
  readonly isUploaded: boolean;
  readonly origin: LoadOrigin;
}

/** A load's outcome: the entry, and the room the budget holds for it until the caller settles it. */
interface LoadResult {
  readonly entry: ModelEntry;
  readonly reservation?: Reservation;
}

/**
 * Finds the models in the repositories, loads the versions their policies select, and answers which
 * model version serves a request (through ModelLookup). A model that fails to load is recorded as
 * UNAVAILABLE with its reason and never keeps the others from loading. The loads and unloads of one
 * model run one at a time (KeyedMutex); a model whose load needs others waits for them
 * (DependencyGraph refuses circles); POLL mode follows the folders (RepositoryPoller). No load
 * takes longer than `loadTimeoutMs`, so no model keeps start-up from finishing.
 *
 * Issue 19, many models: at most `loadThreadCount` models load at once (LoadSlots). With
 * `isLoadOnDemand`, a request for a model that is not loaded loads it (prepareModel), and modes NONE
 * and POLL load nothing at start-up. Before each load, ModelBudget keeps `--max-loaded-models` and
 * `--model-memory-budget` by unloading the least recently used models that were loaded on demand.
 */
export class RepositoryManager {
  readonly #options: RepositoryOptions;
  readonly #models = new ModelLookup();
  readonly #mutex = new KeyedMutex();
  /** Repositories registered while the server runs (registerRepository). */
  readonly #registered = new RegisteredRepositories();
  /** Models whose load is waiting for other models to load (an ensemble for its steps' models). */
  readonly #dependencies = new DependencyGraph();
  readonly #poller: RepositoryPoller;
  readonly #slots: LoadSlots;
  readonly #budget: ModelBudget;
  readonly #evictor: ModelEvictor;
  /** Loads on demand under way, by model: the requests that find one wait for it. */
  readonly #demandLoads = new Map<string, Promise<void>>();
  /** Models asked for by requests that may not have enqueued yet (see prepareModel). */
  readonly #leases = new ModelLeases();
  /** Loads on demand that failed lately: requests get their error without loading again (load-failure-backoff.ts). */
  readonly #failedLoads: LoadFailureBackoff;
  /** Whether a limit may make room by evicting (`--max-loaded-models`, `--model-memory-budget`). */
  readonly #isEvicting: boolean;
  /**
   * EXPLICIT mode: models loaded only because an ensemble that runs them was loaded, never named by a
   * load (Triton's nodes without `explicitly_load_`); `unload_dependents` unloads them with the ensemble.
   */
  readonly #loadedAsDependency = new Set<string>();
  /** EXPLICIT mode: each model's folders as they were (fingerprintFolders) when it was last loaded from them. */
  readonly #loadedPrints = new Map<string, string>();
  /** `--model-namespacing`: what each key the scans found stands for (a key without one is a name: model-id.ts). */
  readonly #ids = new Map<string, ModelId>();

  constructor(options: RepositoryOptions) {
    this.#options = options;
    this.#slots = new LoadSlots(options.loadThreadCount ?? 4);
    const clock = options.clock ?? systemClock;
    this.#failedLoads = new LoadFailureBackoff(() => clock.nowUs() / 1000);
    this.#budget = new ModelBudget(options.limits ?? {});
    this.#isEvicting = options.limits?.maxLoadedModels !== undefined || options.limits?.memoryBudgetBytes !== undefined;
    this.#evictor = new ModelEvictor({
      budget: this.#budget,
      models: this.#models,
      mutex: this.#mutex,
      leases: this.#leases,
      drainOptions: () => this.#drainOptions(),
      logger: options.logger,
      ...(options.events !== undefined ? { events: options.events } : {}),
    });
    this.#poller = new RepositoryPoller({
      clock,
      logger: options.logger,
      scan: async () => new Map([...(await this.#scan())].map(([key, model]) => [key, model.dirs])),
      fingerprint: fingerprintFolders,
      reload: (key, dirs) =>
        this.#mutex.run(key, async () => {
          // With loading on demand a model not loaded stays so: the next request loads the new files.
          if (options.isLoadOnDemand === true && !hasReadyVersion(this.#models.get(key))) {
            this.#failedLoads.forget(key);
            this.#models.set(key, unloadedEntry(this.#idOf(key), dirs[0]!));
            return 'listed';
          }
          await this.#replace(key, dirs, { isUploaded: false, origin: 'poll' });
          return 'loaded';
        }),
      remove: (key) =>
        this.#mutex.run(key, async () => {
          const entry = this.#models.get(key);
          this.#models.delete(key);
          this.#budget.forget(key);
          this.#failedLoads.forget(key);
          if (entry !== undefined) await unloadVersions(entry, this.#drainOptions());
        }),
      ...(options.isModelNamespacing === true ? { afterChanges: () => this.#relinkEnsembles('poll') } : {}),
    });
  }

  get #isNamespacing(): boolean {
    return this.#options.isModelNamespacing === true;
  }

  /** What a key stands for: the model the scans found under it, or the model of that name (keys without a namespace). */
  #idOf(key: string): ModelId {
    return this.#ids.get(key) ?? { name: key };
  }

  /**
   * Every model folder of the repositories, by key (model-id.ts): by name, or with namespacing by
   * namespace and name. A repository the server started with that cannot be read throws; a registered
   * one whose folder went away is skipped (its models cannot load), not every load failed.
   */
  async #scan(): Promise<Map<string, ScannedModel>> {
    await this.#options.syncRepositories?.();
    const { repositoryPaths, repositoryNamespaces, logger } = this.#options;
    const models = new Map<string, ScannedModel>();
    const add = (namespace: string, found: ReadonlyMap<string, readonly string[]>): void => {
      for (const [name, dirs] of found) {
        const id: ModelId = this.#isNamespacing ? { name, namespace } : { name };
        const key = modelKey(id);
        const known = models.get(key);
        if (known !== undefined) known.dirs.push(...dirs);
        else models.set(key, { ...id, dirs: [...dirs] });
        if (this.#isNamespacing) this.#ids.set(key, id);
      }
    };
    for (const [index, repository] of repositoryPaths.entries()) {
      add(repositoryNamespaces?.[index] ?? repository, this.#registered.withoutMapped(await scanRepositories([repository])));
    }
    for (const repository of this.#registered.paths) {
      const inside = await scanRepositories([repository]).catch((error: Error) => {
        logger.warning('repository', error.message);
        return new Map<string, string[]>();
      });
      add(repository, this.#registered.withoutMapped(inside));
    }
    // A mapped folder is known by its mapped name only, in its registration's namespace.
    for (const [repository, mapping] of this.#registered.mappings()) add(repository, new Map([...mapping].map(([name, folder]) => [name, [folder]])));
    return models;
  }

  /**
   * Loads at start-up: every model in control modes NONE and POLL; in EXPLICIT mode those named by
   * `--load-model` (`*`: all), the others listed in the index as unloaded. With loading on demand,
   * NONE and POLL load none: each model loads when first requested.
   */
  async loadAll(): Promise<void> {
    const { controlMode, startupModels } = this.#options;
    const isLoadedAtStart = (name: string): boolean =>
      controlMode === 'explicit' ? startupModels.includes('*') || startupModels.includes(name) : this.#options.isLoadOnDemand !== true;
    const found = await this.#scan();
    const names = new Set([...found.values()].map((model) => model.name));
    const missing = controlMode === 'explicit' ? startupModels.filter((name) => name !== '*' && !names.has(name)) : [];
    for (const name of missing) {
      this.#options.logger.error('repository', `--load-model '${name}': no model folder of that name in the model repositories`);
    }
    // Every load is registered before any runs, so that an ensemble can wait for its composing models.
    await Promise.all(
      [...found].map(([key, model]) =>
        this.#mutex.run(key, async () => {
          const { dirs } = model;
          const isLoaded = isLoadedAtStart(model.name);
          const print = controlMode === 'poll' || (controlMode === 'explicit' && isLoaded) ? await fingerprintFolders(dirs) : '';
          this.#models.set(key, isLoaded ? await this.#loadAndSettle(key, dirs, 'startup') : unloadedEntry(model, dirs[0]!));
          if (controlMode === 'poll') this.#poller.remember(key, print);
          else if (controlMode === 'explicit' && isLoaded) this.#loadedPrints.set(key, print);
        }),
      ),
    );
  }

  /**
   * Loads, or reloads, one model (the repository extension's load, EXPLICIT mode). A reload loads the
   * new versions fully before they replace the old ones, which finish the requests they have accepted;
   * if the new load fails, the old versions keep serving. Calls for one model run one at a time.
   */
  async loadModel(name: string, override?: LoadOverride): Promise<void> {
    this.#checkExplicit('load');
    validateModelName('load', name);
    // Files sent with the load make a model without a namespace, as in Triton.
    if (!this.#isNamespacing || (override !== undefined && override.files.size > 0)) return this.#loadExplicitly(name, override, false);
    // With namespacing, every model of that name loads, in each namespace, with the same config if one is given (Triton's Poll).
    const keys = keysNamed(await this.#scan(), name);
    if (keys.length === 0) throw modelNotPolledError(name, `no model folder of that name in ${this.#options.repositoryPaths.join(', ')}`);
    const outcomes = await Promise.allSettled(keys.map((key) => this.#loadExplicitly(key, override, false)));
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as NereidError);
    // Triton's one line per namespace that failed, each `load failed for model '<namespace>::<name>': ...`.
    if (failures.length > 0) throw new NereidError(failures[0]!.status, failures.map((error) => error.message).join(''));
  }

  /** EXPLICIT mode's load of one key; `isDependency`: for an ensemble that runs the model, so nothing to do once it is ready. */
  #loadExplicitly(name: string, override: LoadOverride | undefined, isDependency: boolean): Promise<void> {
    return this.#mutex.run(name, async () => {
      if (isDependency && hasReadyVersion(this.#models.get(name))) return;
      // Override files make a model folder of their own, in a private place; otherwise the repository's.
      const isUploaded = override !== undefined && override.files.size > 0;
      if (isUploaded && !this.#options.isModelCodeUploadAllowed) refuseCodeFiles(override.files);
      const scanned = isUploaded ? undefined : await this.#scan();
      const dirs = isUploaded ? [await writeOverrideFiles(name, override.files)] : scanned?.get(name)?.dirs;
      if (dirs === undefined) {
        throw modelNotPolledError(name, `no model folder of that name in ${this.#options.repositoryPaths.join(', ')}`);
      }
      // As Triton's LoadUnloadModel loads only what its poll finds added or modified: a model whose every
      // version serves, loaded from folders unchanged since, stays as it is (qa/L0_metrics: its load time too).
      const isFromRepository = !isUploaded && override?.configJson === undefined;
      const print = isFromRepository ? await fingerprintFolders(dirs) : undefined;
      const loaded = this.#models.get(name);
      if (print !== undefined && print === this.#loadedPrints.get(name) && loaded !== undefined && isFullyReady(loaded) && scanned !== undefined && this.#isLinkedAsNow(loaded, scanned)) {
        this.#options.logger.verbose(1, 'repository', `'${name}' is unchanged since its load: not loaded again`);
      } else {
        this.#loadedPrints.delete(name);
        await this.#replace(name, dirs, { isUploaded, origin: 'api', ...(override?.configJson !== undefined ? { configJson: override.configJson } : {}) });
        if (print !== undefined) this.#loadedPrints.set(name, print);
      }
      if (isDependency) this.#loadedAsDependency.add(name);
      else this.#loadedAsDependency.delete(name);
    });
  }

  /**
   * Makes a model ready for a request's getModel: with loading on demand, a model that is in a
   * repository and not loaded is loaded first; requests that come during the load wait for it, and a
   * failed load rejects each of them with its reason. Each request makes its model the most recently
   * used. A model in no repository is left to getModel's error.
   */
  async prepareModel(requested: string): Promise<void> {
    let name = this.#keyOf(requested);
    // With namespacing, a folder added since the last scan is found under its key by a scan of its own.
    if (this.#isNamespacing && this.#options.isLoadOnDemand === true && this.#models.get(name) === undefined) name = await this.#scannedKeyOf(requested);
    // Without --max-loaded-models or --model-memory-budget nothing is ever evicted: no lease, no
    // recency to keep, and no macrotask per request.
    if (!this.#isEvicting) return this.#demandLoad(name);
    // NOTE: the caller looks the model up and enqueues its request a few microtasks after this
    // settles; an eviction choosing the model in between would close it under the request. From the
    // call until the next macrotask after it settles, by when the request is enqueued and counted in
    // flight, the model is leased: no eviction picks it.
    const release = this.#leases.take(name);
    try {
      await this.#demandLoad(name);
      this.#budget.touch(name);
    } finally {
      setImmediate(release);
    }
  }

  /**
   * With --load-on-demand, the load of a model not ready, shared by the requests that wait for it; else
   * nothing to wait for. Within LOAD_RETRY_BACKOFF_MS of a failed load, its error without a new load.
   */
  #demandLoad(name: string): Promise<void> {
    if (this.#options.isLoadOnDemand !== true || hasReadyVersion(this.#models.get(name))) return Promise.resolve();
    let load = this.#demandLoads.get(name);
    if (load === undefined) {
      const failure = this.#failedLoads.recentFailure(name);
      if (failure !== undefined) return Promise.reject(failure);
      load = this.#loadOnDemand(name).then(
        () => {
          this.#demandLoads.delete(name);
        },
        (error: unknown) => {
          this.#demandLoads.delete(name);
          this.#failedLoads.record(name, error);
          throw error;
        },
      );
      this.#demandLoads.set(name, load);
    }
    return load;
  }

  /**
   * The key of the model a request names: the name itself without namespacing; with it, the key of the
   * one model of that name (throwing Triton's ambiguity error when there are several), or the name when
   * no model has it (left to getModel's error).
   */
  #keyOf(name: string): string {
    return this.#isNamespacing ? (this.#models.find(name) ?? name) : name;
  }

  /** With namespacing, the key of the one model the repositories hold under `name` (or as its key); `name` when none does. */
  async #scannedKeyOf(name: string): Promise<string> {
    const scanned = await this.#scan();
    const keys = scanned.has(name) ? [name] : keysNamed(scanned, name);
    if (keys.length > 1) throw ambiguousModel(name, keys.sort());
    return keys[0] ?? name;
  }

  /** Loads a model for a request, unless it is ready by then; a model in no repository is left to getModel's error. */
  #loadOnDemand(name: string): Promise<void> {
    return this.#mutex.run(name, async () => {
      if (hasReadyVersion(this.#models.get(name))) return;
      const dirs = this.#isNamespacing ? ((await this.#scan()).get(name)?.dirs ?? []) : await this.#foldersNamed(name);
      if (dirs.length === 0) return;
      this.#options.logger.info('repository', `loading '${name}' on demand: a request asked for it (--load-on-demand)`);
      await this.#replace(name, dirs, { isUploaded: false, origin: 'on_demand' });
    });
  }

  /** Without namespacing, the folders of the model `name`: the one a registration maps it to, or those of that name in the repositories. */
  async #foldersNamed(name: string): Promise<string[]> {
    const mapped = this.#registered.folderOf(name);
    if (mapped !== undefined) return [mapped];
    return (await findModelFolders([...this.#options.repositoryPaths, ...this.#registered.paths], name)).filter((dir) => !this.#registered.isMapped(dir));
  }

  /**
   * Loads a model's new versions fully, then swaps them in and unloads the old ones (which finish what
   * they accepted). If anything fails to load, the old versions keep serving and the error is thrown.
   */
  async #replace(name: string, dirs: readonly string[], source: LoadSource): Promise<void> {
    const { entry, reservation } = await this.#load(name, dirs, source);
    const failure = loadFailure(entry);
    if (failure !== undefined) {
      reservation?.cancel();
      await unloadVersions(entry);
      // A model that was not serving is listed with the reason; one that was keeps serving.
      if (!hasReadyVersion(this.#models.get(name))) this.#models.set(name, entry);
      throw new NereidError(entry.errorStatus ?? 'INVALID_ARG', `load failed for model '${name}': ${failure}\n`);
    }
    reservation?.commit();
    this.#options.events?.onModelLoaded(entry, source.origin);
    const previous = this.#models.get(name);
    this.#models.set(name, entry);
    if (previous !== undefined) await unloadVersions(previous, this.#drainOptions());
  }

  /** Loads a model at start-up: whatever loads serves, even when another version failed. */
  async #loadAndSettle(name: string, dirs: readonly string[], origin: LoadOrigin): Promise<ModelEntry> {
    const { entry, reservation } = await this.#load(name, dirs, { isUploaded: false, origin });
    if (hasReadyVersion(entry)) {
      reservation?.commit();
      this.#options.events?.onModelLoaded(entry, origin);
    } else {
      reservation?.cancel();
    }
    return entry;
  }

  /** POLL mode: re-reads the repositories every `intervalMs` (see RepositoryPoller). */
  startPolling(intervalMs: number): void {
    this.#poller.start(intervalMs);
  }

  /**
   * Adds a model repository while the server runs, its folders named by `mapping` (model name →
   * subfolder) known by those names (Triton's TRITONSERVER_ServerRegisterModelRepository, EXPLICIT mode
   * only); nothing loads until loadModel.
   */
  async registerRepository(repository: string, mapping: ReadonlyMap<string, string>): Promise<void> {
    this.#checkRegistrationMode('registration');
    await this.#registered.register(repository, mapping, this.#options.repositoryPaths);
    this.#options.logger.info('repository', `Model repository registered: ${repository}`);
  }

  /** Removes a repository registerRepository added; the models loaded from it keep serving until unloaded. */
  unregisterRepository(repository: string): void {
    this.#checkRegistrationMode('unregistration');
    this.#registered.unregister(repository);
    this.#options.logger.info('repository', `Model repository unregistered: ${repository}`);
  }

  /**
   * Unloads one model once its accepted requests are done (the repository extension's unload). A
   * name no repository holds unloads nothing and succeeds, as in Triton (core
   * `ModelRepositoryManager::LoadUnloadModel` finds no version to unload and returns success).
   *
   * With `unloadDependents`, the models it ran (an ensemble's steps) are unloaded after it, and theirs
   * after them, each only if, as in Triton (core `UpdateDependencyGraph` with `deleted_dependents`), no
   * load named it (it was loaded for an ensemble) and no other loaded model still runs it.
   */
  async unloadModel(name: string, options: UnloadOptions = {}): Promise<void> {
    this.#checkExplicit('unload');
    validateModelName('unload', name);
    // With namespacing, the models of that name in every namespace (Triton's global map).
    const keys = this.#isNamespacing ? this.#models.keysNamed(name) : [name];
    let pending: string[] = [];
    for (const key of keys) pending.push(...(await this.#mutex.run(key, () => this.#unloadNow(key))));
    if (options.unloadDependents !== true) return;
    while (pending.length > 0) {
      const next: string[] = [];
      for (const dependency of new Set(pending)) {
        next.push(
          ...(await this.#mutex.run(dependency, async () =>
            this.#loadedAsDependency.has(dependency) && !this.#budget.isNeeded(dependency) ? this.#unloadNow(dependency) : [],
          )),
        );
      }
      pending = next;
    }
  }

  /** Unloads a model (a task of its mutex); answers the models its load needed. */
  async #unloadNow(name: string): Promise<string[]> {
    const entry = this.#models.get(name);
    if (entry === undefined) return [];
    const dependencies = [...this.#budget.dependenciesOf(name)];
    await unloadVersions(entry, this.#drainOptions());
    this.#budget.forget(name);
    this.#loadedAsDependency.delete(name);
    this.#models.set(name, unloadedEntry(entry, entry.modelDir));
    this.#options.logger.info('repository', `successfully unloaded '${name}'`);
    return dependencies;
  }

  /**
   * The spec of a model version another model depends on, once that model's load or unload in
   * progress has settled. In EXPLICIT mode a model that is not loaded is loaded now, as Triton loads
   * an ensemble's composing models with it; for a model loaded on demand, its dependencies load on
   * demand too (and are unloaded only after it). Models waiting for each other in a circle are refused.
   * The requester's load slot is free during the wait.
   */
  async #requireModel(requester: string, links: Map<string, string>, asked: string, version?: number): Promise<ModelSpec> {
    // The repositories as they are now, when something registered since or a namespace may change the answer.
    const scanned = this.#isNamespacing || this.#registered.paths.length > 0 ? await this.#scan() : undefined;
    const name = this.#isNamespacing ? this.#linkedKey(requester, asked, scanned!) : asked;
    links.set(asked, name);
    if (this.#dependencies.isWaitingFor(name, requester)) {
      throw new NereidError('INVALID_ARG', `models '${requester}' and '${name}' depend on each other; expected the models an ensemble runs not to run the ensemble`);
    }
    const release = this.#dependencies.addWait(requester, name);
    // Leased until it counts as the requester's dependency, so that no other load evicts it first.
    const releaseLease = this.#leases.take(name);
    try {
      await this.#slots.whileWaiting(async () => {
        await this.#mutex.settled(name);
        // A repository registered since (SageMaker's multi-model endpoint) may hold a model of the same name
        // as one already serving: an ensemble from it must not run the other one's.
        const dirs = scanned?.get(name)?.dirs ?? [];
        if (dirs.length > 1) throw new NereidError('INVALID_ARG', duplicateNameMessage(name, dirs));
        const entry = this.#models.get(name);
        if (hasReadyVersion(entry)) return;
        if (this.#options.isLoadOnDemand === true && this.#budget.originOf(requester) === 'on_demand') await this.#loadOnDemand(name);
        // In EXPLICIT mode a model the server started without (in a repository registered since) loads too.
        else if (this.#options.controlMode === 'explicit' && (entry !== undefined || (scanned ?? (await this.#scan())).has(name))) await this.#loadExplicitly(name, undefined, true);
      });
      this.#budget.addDependency(requester, name);
      return this.getModel(name, version).spec;
    } finally {
      releaseLease();
      release();
    }
  }

  /**
   * With namespacing, the key of the model an ensemble's step names, as Triton's ConnectDependencyGraph
   * links it: the model of that name in the ensemble's namespace, or else the only one of that name in
   * any namespace; several elsewhere, or none, is Triton's error.
   */
  #linkedKey(requester: string, name: string, scanned: ReadonlyMap<string, ScannedModel>): string {
    const { namespace } = this.#idOf(requester);
    const own = modelKey(namespace === undefined ? { name } : { name, namespace });
    if (scanned.has(own)) return own;
    const elsewhere = keysNamed(scanned, name);
    // A model without a namespace, loaded from a load request's files, counts too.
    const unscoped = this.#models.get(name);
    if (unscoped !== undefined && unscoped.isUnloaded !== true) elsewhere.push(name);
    if (elsewhere.length === 1) return elsewhere[0]!;
    throw new NereidError('INVALID_ARG', `ensemble ${requester} contains models that are not available or ambiguous: ${name}`);
  }

  /** Whether each model a loaded model runs is still the one its steps' names would find now (always, without namespacing). */
  #isLinkedAsNow(entry: ModelEntry, scanned: ReadonlyMap<string, ScannedModel>): boolean {
    if (!this.#isNamespacing || entry.links === undefined || entry.links.size === 0) return true;
    const key = modelKey(entry);
    return [...entry.links].every(([name, linked]) => {
      try {
        return this.#linkedKey(key, name, scanned) === linked;
      } catch {
        return false;
      }
    });
  }

  /**
   * POLL mode with namespacing, after models appeared or went: reloads each loaded model whose steps
   * would now find other models, as Triton re-links and reloads its ensembles (an ensemble running
   * another namespace's model turns to its own namespace's once one appears, and back when it goes).
   */
  async #relinkEnsembles(origin: LoadOrigin): Promise<void> {
    const { logger } = this.#options;
    const scanned = await this.#scan().catch((error: Error) => {
      logger.error('repository', `poll: ${error.message}; ensembles are linked again at the next poll that finds a change`);
      return undefined;
    });
    if (scanned === undefined) return;
    for (const candidate of [...this.#models.entries()]) {
      const key = modelKey(candidate);
      await this.#mutex.run(key, async () => {
        // Read again under the mutex: a load, unload or eviction may have replaced it meanwhile.
        const entry = this.#models.get(key);
        if (entry === undefined || !hasReadyVersion(entry) || this.#isLinkedAsNow(entry, scanned)) return;
        try {
          await this.#replace(key, [entry.modelDir], { isUploaded: false, origin });
          logger.info('repository', `reloaded '${key}': a model it runs was added or removed`);
        } catch (error) {
          logger.error('repository', `failed to reload '${key}' after a model it runs was added or removed: ${(error as Error).message}`);
        }
      });
    }
  }

  #loadContext(requester: string, links: Map<string, string>): LoadContext {
    return { ...this.#options.context, requireModel: (name, version) => this.#requireModel(requester, links, name, version) };
  }

  #drainOptions(): CloseOptions {
    return { drainTimeoutMs: this.#options.unloadTimeoutMs };
  }

  /** Triton's refusal of a repository (un)registration outside EXPLICIT mode (core RegisterModelRepository), then the mode. */
  #checkRegistrationMode(action: 'registration' | 'unregistration'): void {
    if (this.#options.controlMode !== 'explicit') {
      throw new NereidError('UNSUPPORTED', `repository ${action} is not allowed if model control mode is not EXPLICIT (the mode is ${this.#options.controlMode.toUpperCase()})`);
    }
  }

  #checkExplicit(action: 'load' | 'unload'): void {
    if (this.#options.controlMode !== 'explicit') {
      // Triton refuses both in NONE and in POLL mode, where the repository's folders decide, with this
      // UNAVAILABLE (core ModelRepositoryManager::LoadUnloadModel); Nereid adds the mode and the fix.
      throw new NereidError(
        'UNAVAILABLE',
        `explicit model load / unload is not allowed if polling is enabled; cannot ${action} models: the model control mode is ${this.#options.controlMode.toUpperCase()}; start the server with --model-control-mode=explicit to load and unload through the API`,
      );
    }
  }

  /**
   * Loads the versions of one model once a load slot is free; failures are recorded in the entry,
   * never thrown. The load timeout aborts whatever is still loading: instances starting or warming
   * up are stopped first. Before the versions load, the budget makes room for them (evicting) or
   * refuses the load; the caller commits or cancels the returned reservation.
   */
  #load(name: string, dirs: readonly string[], source: LoadSource): Promise<LoadResult> {
    return this.#slots.run(() => this.#loadNow(name, dirs, source));
  }

  async #loadNow(name: string, dirs: readonly string[], source: LoadSource): Promise<LoadResult> {
    const { configJson } = source;
    const { logger, loadTimeoutMs } = this.#options;
    const modelDir = dirs[0]!;
    const id = this.#idOf(name);
    const entry: ModelEntry = { name: id.name, ...(id.namespace !== undefined ? { namespace: id.namespace } : {}), modelDir, versions: new Map(), links: new Map() };
    let reservation: Reservation | undefined;
    if (dirs.length > 1) {
      entry.error = duplicateNameMessage(name, dirs);
      logger.error('repository', entry.error);
      return { entry };
    }
    const timeout = new AbortController();
    const timeoutReason = `model '${name}' did not finish loading within ${loadTimeoutMs / 1000} s (--model-load-timeout-secs); its instances were stopped`;
    const timer = setTimeout(() => timeout.abort(new NereidError('UNAVAILABLE', timeoutReason)), loadTimeoutMs);
    const { signal } = timeout;
    const { observerFor } = this.#options;
    try {
      const available = await findVersions(modelDir, (folder) =>
        // Triton's warnings (core GetModelVersionFromPath), which qa/L0_lifecycle looks for in the log, then the model.
        logger.warning(
          'repository',
          folder.length > 1 && folder.startsWith('0')
            ? `ignore version directory '${folder}' which contains leading zeros in its directory name (model '${name}')`
            : `ignore version directory '${folder}' which fails to convert to integral number (model '${name}'; version folders are named 1, 2, ...)`,
        ),
      );
      const newest = available.length > 0 ? Math.max(...available) : undefined;
      const { config, backend } = await abortable(
        prepareModelConfig({
          name: id.name,
          modelDir,
          version: newest,
          versionDir: newest === undefined ? undefined : join(modelDir, String(newest)),
          isAutoCompleteEnabled: this.#options.isAutoCompleteEnabled,
          isModelCodeRefused: source.isUploaded && this.#options.isModelCodeUploadAllowed !== true,
          isNameMapped: this.#registered.isMapped(modelDir),
          context: this.#options.context,
          ...(configJson !== undefined ? { configJson } : {}),
          ...(this.#options.modelConfigName !== undefined ? { configName: this.#options.modelConfigName } : {}),
        }),
        signal,
      );
      const { selected, missing } = selectVersions(config.versionPolicy, available);
      if (selected.length === 0 && missing.length === 0) {
        throw new NereidError('INVALID_ARG', `model '${name}' has no version folder (a folder named 1, 2, ... in '${modelDir}')`);
      }
      for (const version of missing) {
        entry.versions.set(version, { version, state: 'UNAVAILABLE', reason: `version ${version} is named in version_policy but '${join(modelDir, String(version))}' does not exist` });
      }
      const instanceCount = config.instanceGroup.reduce((sum, group) => sum + group.count, 0);
      const versionBytes = await Promise.all(selected.map(async (version) => estimateVersionBytes(await folderBytes(join(modelDir, String(version))), instanceCount)));
      try {
        reservation = await this.#evictor.makeRoom(name, versionBytes.reduce((sum, bytes) => sum + bytes, 0), source.origin);
      } catch (error) {
        entry.errorStatus = 'UNAVAILABLE';
        throw error;
      }
      await Promise.all(
        selected.map(async (version) => {
          entry.versions.set(version, { version, state: 'LOADING', reason: '' });
          const versionDir = join(modelDir, String(version));
          const load = (): Promise<Model> =>
            Model.load({
              files: { modelName: id.name, ...(id.namespace !== undefined ? { namespace: id.namespace } : {}), modelDir, version, versionDir },
              config,
              backend,
              context: this.#loadContext(name, entry.links!),
              ...(observerFor !== undefined ? { observerFor: (settings: ModelMetricSettings) => observerFor(id, version, settings) } : {}),
              maxInputBytes: this.#options.maxInputBytes,
              signal,
              ...(this.#options.responseCache !== undefined ? { responseCache: this.#options.responseCache } : {}),
              ...(this.#options.rateLimiter !== undefined ? { rateLimiter: this.#options.rateLimiter } : {}),
            });
          try {
            const model = await this.#withRetries(load, signal, (attempt, error) =>
              logger.warning('repository', `failed to load '${name}' version ${version} (attempt ${attempt}), trying again (--model-load-retry-count): ${error.message}`),
            );
            entry.versions.set(version, { version, state: 'READY', reason: '', model, memoryBytes: versionBytes[selected.indexOf(version)]! });
            logger.info('repository', `successfully loaded '${name}' version ${version}`);
          } catch (error) {
            // Past the timeout, whatever the stopped instances answered is not the reason.
            const reason = signal.aborted ? timeoutReason : (error as Error).message;
            entry.versions.set(version, { version, state: 'UNAVAILABLE', reason });
            logger.error('repository', `failed to load '${name}' version ${version}: ${reason}`);
          }
        }),
      );
    } catch (error) {
      entry.error = (error as Error).message;
      logger.error('repository', `failed to load '${name}': ${entry.error}`);
    } finally {
      clearTimeout(timer);
    }
    return reservation === undefined ? { entry } : { entry, reservation };
  }

  /** Runs `load` once, then again after each failure, `loadRetryCount` times at most, while `signal` has not aborted. */
  async #withRetries<T>(load: () => Promise<T>, signal: AbortSignal, onRetry: (attempt: number, error: Error) => void): Promise<T> {
    const retries = this.#options.loadRetryCount ?? 0;
    for (let attempt = 1; ; attempt++) {
      try {
        return await load();
      } catch (error) {
        if (attempt > retries || signal.aborted) throw error;
        onRetry(attempt, error as Error);
      }
    }
  }

  /**
   * The model version that serves a request: the given version, or the highest READY one.
   * Throws Triton's errors: unknown model INVALID_ARG, unknown version NOT_FOUND, not ready UNAVAILABLE.
   */
  getModel(name: string, version?: number): Model {
    return this.#models.getModel(name, version);
  }

  /**
   * prepareModel and getModel in one step, for a request about to be enqueued in the same step (so no
   * eviction can come between): undefined when the model is to be loaded on demand first.
   */
  getModelNow(requested: string, version?: number): Model | undefined {
    const name = this.#keyOf(requested);
    if (this.#options.isLoadOnDemand === true && !hasReadyVersion(this.#models.get(name))) return undefined;
    const model = this.#models.getModel(name, version);
    if (this.#isEvicting) this.#budget.touch(name);
    return model;
  }

  /**
   * The READY versions of one model, or of every model when `name` is undefined, sorted by name
   * then version; one version when `version` is given. Unknown names and versions throw as getModel.
   */
  readyModels(name?: string, version?: number): Model[] {
    return this.#models.readyModels(name, version);
  }

  /** Versions of a model that are READY, ascending. */
  readyVersions(name: string): number[] {
    return this.#models.readyVersions(name);
  }

  /**
   * Triton's strict readiness: every model loaded, loading or failed has its versions READY with none
   * of its instances down; models not loaded on purpose (never asked for, unloaded, evicted) do not count.
   */
  isEveryModelReady(): boolean {
    return this.#models.isEveryModelReady();
  }

  /** Triton's repository index: one entry per model version, sorted by name then version. */
  index(): RepositoryIndexEntry[] {
    return this.#models.index();
  }

  /** The index lines of models that failed to load (`--exit-on-error`); models not loaded on purpose are not failures. */
  failures(): RepositoryIndexEntry[] {
    return this.#models.failures();
  }

  /** Requests accepted by any model and not yet answered. */
  get inflightCount(): number {
    return this.#models.inflightCount;
  }

  /** Models with a version loaded (READY), the count `--max-loaded-models` limits. */
  get loadedModelCount(): number {
    let count = 0;
    for (const entry of this.#models.entries()) if (hasReadyVersion(entry)) count++;
    return count;
  }

  /** The estimated memory of each loaded version (memory-estimate.ts), as the budget counts it. */
  memoryEstimates(): Array<{ readonly name: string; readonly namespace?: string; readonly version: number; readonly bytes: number }> {
    return [...this.#models.entries()].flatMap((entry) =>
      [...entry.versions.values()]
        .filter(isReadyVersion)
        .map((state) => ({ name: entry.name, ...(entry.namespace !== undefined ? { namespace: entry.namespace } : {}), version: state.version, bytes: state.memoryBytes ?? 0 })),
    );
  }

  /** Unloads every model: waits for accepted requests (unless forced), then stops the instances. */
  async unloadAll(options?: CloseOptions): Promise<void> {
    this.#poller.stop();
    await Promise.all([...this.#models.entries()].map((entry) => unloadVersions(entry, options)));
  }
}

/**
 * Why a load failed, in Triton's words after its `load failed for model '<m>': ` (core
 * model_repository_manager.cc and model_lifecycle.cc): the model's own error, or the first version
 * not READY as `version <v> is at UNAVAILABLE state: <reason>;`.
 */
function loadFailure(entry: ModelEntry): string | undefined {
  if (entry.error !== undefined) return entry.error;
  const version = [...entry.versions.values()].find((state) => !isReadyVersion(state));
  return version === undefined ? undefined : `version ${version.version} is at ${version.state} state: ${version.reason};`;
}

/** Every version of the model serves (none failed or is loading), and there is one at least. */
function isFullyReady(entry: ModelEntry | undefined): boolean {
  return entry !== undefined && entry.error === undefined && entry.versions.size > 0 && [...entry.versions.values()].every(isReadyVersion);
}

/** The keys of the scanned models named `name`, one per namespace that has it. */
function keysNamed(scanned: ReadonlyMap<string, ScannedModel>, name: string): string[] {
  return [...scanned].filter(([, model]) => model.name === name).map(([key]) => key);
}

/** A model found in a repository and not loaded (EXPLICIT mode, or loading on demand), as the index lists it. */
function unloadedEntry(id: ModelId, modelDir: string): ModelEntry {
  return { name: id.name, ...(id.namespace !== undefined ? { namespace: id.namespace } : {}), modelDir, versions: new Map(), error: 'unloaded', isUnloaded: true };
}
