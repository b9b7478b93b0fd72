import type { ModelConfig } from '../protocol/gen/model_config_pb.js';
import { type Logger, isConfigurableLogger } from '../logging/logger.js';
import { type LogSettingsMessage, updateLogSettings } from './log-settings.js';
import type { RepositoryManager } from '../repository/repository-manager.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest, InferResponse } from '../kernel/infer-request.js';
import type { ModelCaller } from '../kernel/model-caller.js';
import type { UnloadOptions } from '../kernel/model-control.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import type { ModelMetadata, ServerMetadata } from '../protocol/metadata.js';
import type { RepositoryIndexEntry } from '../protocol/repository-index.js';
import type { ModelStatistics } from '../protocol/statistics.js';
import type { RequestTrace } from '../kernel/request-trace.js';
import { TraceManager } from './tracing/trace-manager.js';
import type { TraceContextCarrier } from './tracing/open-telemetry-tracer.js';
import { DEFAULT_TRACE_SETTINGS, type TraceSettingsUpdate, traceSettingsMessage } from '../kernel/trace-settings.js';

export interface InferenceServerOptions {
  readonly repository: RepositoryManager;
  /** Runs requests on the repository's models (the same router models use to call models). */
  readonly router: ModelCaller & {
    inferNow?(request: InferRequest): InferResponse | undefined;
    inferWith?(request: InferRequest, done: (result: InferResponse | Error) => void): boolean;
  };
  /** Server name in the metadata (`--id`). */
  readonly id: string;
  readonly version: string;
  /** `--strict-readiness`: ready only when every model is ready. */
  readonly isStrictReadiness: boolean;
  /** When it is a ConfigurableLogger, the logging extension can change its settings. */
  readonly logger: Logger;
  /** `--allow-log-file-update`: the logging extension may point the log at another file (default false). */
  readonly isLogFileUpdateAllowed?: boolean;
  /**
   * `--allow-client-shm`: the front ends serve the shared memory extensions, listed then as Triton lists
   * them (system_shared_memory, and cuda_shared_memory, which a Triton without GPU support lists too).
   */
  readonly isSharedMemoryServed?: boolean;
  /** The trace extension (`--trace-config`); without it, tracing starts OFF with Triton's default settings. */
  readonly traceManager?: TraceManager;
}

/** The trace settings by Triton's wire names (docs/protocol/extension_trace.md). */
export type TraceSettingsMessage = ReturnType<typeof traceSettingsMessage>;

/**
 * Protocol extensions Nereid implements, as listed in server metadata, in Triton's order (core
 * src/server.cc, InferenceServer's constructor). Only what works end to end belongs here: clients
 * decide what to call from this list. `schedule_policy` is the dynamic batcher's priority levels and
 * queue policies (timeouts, queue sizes).
 */
const EXTENSIONS = [
  'classification',
  'sequence',
  'model_repository',
  'model_repository(unload_dependents)',
  'schedule_policy',
  'model_configuration',
  'binary_tensor_data',
  'parameters',
  'statistics',
  'trace',
  'logging',
] as const;

/** With `isSharedMemoryServed`: in Triton's order, after model_configuration. */
const SHARED_MEMORY_EXTENSIONS = ['system_shared_memory', 'cuda_shared_memory'] as const;
const EXTENSIONS_WITH_SHARED_MEMORY: readonly string[] = EXTENSIONS.flatMap((name) =>
  name === 'model_configuration' ? [name, ...SHARED_MEMORY_EXTENSIONS] : [name],
);

/**
 * The in-process API every front end uses: health, metadata, configuration and inference.
 * Front ends translate their protocol to these calls and nothing else.
 */
export class InferenceServer {
  readonly #options: InferenceServerOptions;
  #isShuttingDown = false;

  readonly #traces: TraceManager;

  constructor(options: InferenceServerOptions) {
    this.#options = options;
    this.#traces = options.traceManager ?? new TraceManager({ initial: DEFAULT_TRACE_SETTINGS, logger: options.logger });
  }

  isLive(): boolean {
    return true;
  }

  isReady(): boolean {
    if (this.#isShuttingDown) return false;
    return !this.#options.isStrictReadiness || this.#options.repository.isEveryModelReady();
  }

  isModelReady(name: string, version?: number): boolean {
    try {
      return this.#options.repository.getModel(name, version).isHealthy;
    } catch {
      return false;
    }
  }

  serverMetadata(): ServerMetadata {
    const extensions = this.#options.isSharedMemoryServed === true ? EXTENSIONS_WITH_SHARED_MEMORY : EXTENSIONS;
    return { name: this.#options.id, version: this.#options.version, extensions };
  }

  /**
   * The model's metadata. With `--load-on-demand` a model that is not loaded is loaded first, as an
   * inference request would: tritonclient asks for the metadata before it infers.
   */
  async modelMetadata(name: string, version?: number): Promise<ModelMetadata> {
    await this.#options.repository.prepareModel(name);
    const model = this.#options.repository.getModel(name, version);
    const { spec } = model;
    const batchPrefix = spec.maxBatchSize > 0 ? [-1] : [];
    return {
      name: spec.name,
      versions: this.#options.repository.readyVersions(name).map(String),
      platform: spec.platform,
      inputs: spec.inputs.map((input) => ({ name: input.name, datatype: input.dataType, shape: [...batchPrefix, ...input.dims] })),
      outputs: spec.outputs.map((output) => ({ name: output.name, datatype: output.dataType, shape: [...batchPrefix, ...output.dims] })),
    };
  }

  /**
   * What the front ends need to know of a model version (does it batch, is it decoupled, its tensors),
   * so that none of them reads the protobuf configuration to decide (loading it on demand, as infer does).
   */
  async modelSpec(name: string, version?: number): Promise<ModelSpec> {
    await this.#options.repository.prepareModel(name);
    return this.#options.repository.getModel(name, version).spec;
  }

  /** The model version's configuration with the defaults filled in (loading it on demand, as infer does). */
  async modelConfig(name: string, version?: number): Promise<ModelConfig> {
    await this.#options.repository.prepareModel(name);
    return this.#options.repository.getModel(name, version).config;
  }

  /**
   * Every model version the repositories hold, with its state and the reason when it is not READY
   * (the model repository extension's index); `isReadyOnly` keeps the READY ones.
   */
  repositoryIndex(isReadyOnly = false): RepositoryIndexEntry[] {
    const entries = this.#options.repository.index();
    return isReadyOnly ? entries.filter((entry) => entry.state === 'READY') : entries;
  }

  /**
   * Loads or reloads a model (the repository extension, EXPLICIT control mode). Load parameters as
   * Triton takes them: `config`, a JSON model configuration used instead of config.pbtxt, and
   * `file:<version>/<name>`, model files (the bytes; HTTP sends base64, which its front end decodes),
   * which need `config` too. Other parameters are ignored.
   */
  async loadModel(name: string, parameters: Readonly<Record<string, string | Uint8Array | boolean | number | bigint>> = {}): Promise<void> {
    const config = parameters.config;
    if (config !== undefined && typeof config !== 'string') {
      throw new NereidError('INVALID_ARG', `load parameter 'config' must be a JSON string holding the model configuration`);
    }
    const files = new Map<string, Uint8Array>();
    for (const [key, value] of Object.entries(parameters)) {
      if (!key.startsWith('file:')) continue;
      if (!(value instanceof Uint8Array)) throw new NereidError('INVALID_ARG', `load parameter '${key}' must hold the file's bytes`);
      files.set(key.slice('file:'.length), value);
    }
    if (files.size > 0 && config === undefined) {
      throw new NereidError('INVALID_ARG', `load parameters 'file:...' need a 'config' parameter too: the configuration of the model the files make up`);
    }
    await this.#options.repository.loadModel(name, config === undefined && files.size === 0 ? undefined : { ...(config !== undefined ? { configJson: config } : {}), files });
  }

  /** Adds a model repository while the server runs, the subfolders `mapping` names known by their mapped names (EXPLICIT mode). */
  registerModelRepository(repository: string, mapping: ReadonlyMap<string, string>): Promise<void> {
    return this.#options.repository.registerRepository(repository, mapping);
  }

  /** Removes a repository registerModelRepository added. */
  unregisterModelRepository(repository: string): void {
    this.#options.repository.unregisterRepository(repository);
  }

  /** Unloads a model once its accepted requests are done; with `unloadDependents`, the models it was loaded with too. */
  unloadModel(name: string, options: UnloadOptions = {}): Promise<void> {
    return this.#options.repository.unloadModel(name, options);
  }

  /** The log settings after applying `changes` (none: just read them), by Triton's wire names. */
  logSettings(changes: Readonly<Record<string, unknown>> = {}): LogSettingsMessage {
    const { logger } = this.#options;
    return updateLogSettings(isConfigurableLogger(logger) ? logger : undefined, changes, this.#options.isLogFileUpdateAllowed === true);
  }

  /**
   * Statistics of one model version, all versions of a model, or every model (statistics extension):
   * of READY versions only. A named model with none READY (unknown, not loaded, failed) and a version
   * not READY are Triton's INVALID_ARG errors (core tritonserver.cc `TRITONSERVER_ServerModelStatistics`).
   */
  modelStatistics(name?: string, version?: number): ModelStatistics[] {
    const { repository } = this.#options;
    if (name !== undefined) {
      const readyVersions = repository.readyVersions(name);
      if (readyVersions.length === 0) throw new NereidError('INVALID_ARG', `requested model '${name}' is not available`);
      if (version !== undefined && !readyVersions.includes(version)) {
        throw new NereidError('INVALID_ARG', `requested model version is not available for model '${name}'`);
      }
    }
    return repository.readyModels(name, version).map((model) => model.statistics.snapshot());
  }

  /**
   * Validates a request against its model and runs it. Rejects with a NereidError for this request
   * alone; other requests are never affected. A decoupled model is refused: use `inferStream`.
   */
  async infer(request: InferRequest): Promise<InferResponse> {
    this.#admit(request);
    return this.#options.router.infer(request);
  }

  /**
   * `infer` run to the end in this step when the model can run the request at once (RequestRouter.inferNow):
   * the response, or undefined (nothing done) when it cannot; throws what `infer` would reject with.
   */
  inferNow(request: InferRequest): InferResponse | undefined {
    this.#refuseWhenShuttingDown();
    let response: InferResponse | undefined;
    try {
      response = this.#options.router.inferNow?.(request);
    } catch (error) {
      this.#logAdmitted(request);
      throw error;
    }
    // Logged as `infer` logs it, unless `infer` is to be called (and logs it) after all.
    if (response !== undefined) this.#logAdmitted(request);
    return response;
  }

  /**
   * `infer` with a callback in place of the promise, where the model's scheduler takes one
   * (RequestRouter.inferWith): true once the request is enqueued, and `done` then gets its response or
   * the error `infer` would reject with, exactly once; false, nothing done, when it cannot. Throws
   * what `infer` would reject with before the request is enqueued.
   */
  inferWith(request: InferRequest, done: (result: InferResponse | Error) => void): boolean {
    this.#refuseWhenShuttingDown();
    let isEnqueued: boolean;
    try {
      isEnqueued = this.#options.router.inferWith?.(request, done) === true;
    } catch (error) {
      this.#logAdmitted(request);
      throw error;
    }
    if (isEnqueued) this.#logAdmitted(request);
    return isEnqueued;
  }

  /**
   * Runs a request and delivers each of its responses: one, or any number from a decoupled model,
   * whose responses may be errors that fail themselves alone (Triton's responses sent with an error).
   * `onAccepted` is called once the request has passed validation and goes to its model's scheduler
   * (Triton's TRITONSERVER_ServerInferAsync returning success): a failure before it refuses the
   * request, a failure after it is the request's last response.
   */
  async inferStream(request: InferRequest, onResponse: (response: InferResponse | NereidError) => void, onAccepted?: () => void): Promise<void> {
    this.#admit(request);
    return this.#options.router.inferStream(request, onResponse, onAccepted);
  }

  #admit(request: InferRequest): void {
    this.#refuseWhenShuttingDown();
    this.#logAdmitted(request);
  }

  #refuseWhenShuttingDown(): void {
    if (this.#isShuttingDown) throw new NereidError('UNAVAILABLE', 'the server is shutting down and takes no new requests');
  }

  #logAdmitted(request: InferRequest): void {
    const { logger } = this.#options;
    if (logger.isVerbose?.(1) === false) return;
    const version = request.modelVersion === undefined ? '' : ` version ${request.modelVersion}`;
    logger.verbose(1, 'server', `[request id: ${request.id || '<id_unknown>'}] infer for model '${request.modelName}'${version}`);
  }

  /**
   * A trace for a request to `modelName` when the trace settings sample it (the trace extension);
   * undefined for most requests. The front end that starts a trace ends it once its answer is sent.
   */
  startTrace(modelName: string, carrier?: TraceContextCarrier): RequestTrace | undefined {
    return this.#traces.sample(modelName, carrier);
  }

  /**
   * The trace settings of the server, or of one model (its overrides over the server's), after
   * applying `update` when one is given: a value sets a setting, null clears it (a model's falls back
   * to the server's, the server's to its start-up value). A model must be ready, as in Triton.
   */
  traceSettings(modelName?: string, update?: TraceSettingsUpdate): TraceSettingsMessage {
    if (modelName !== undefined && !this.isModelReady(modelName)) {
      throw new NereidError('INVALID_ARG', `Request for unknown model : ${modelName}`);
    }
    if (update !== undefined) this.#traces.update(modelName, update);
    return traceSettingsMessage(this.#traces.settings(modelName));
  }

  /** Writes the traces still in memory to the trace file (at shutdown). */
  flushTraces(): Promise<void> {
    return this.#traces.flush();
  }

  /** Requests accepted and not yet answered, across all models. */
  get inflightCount(): number {
    return this.#options.repository.inflightCount;
  }

  /** Stops taking new requests (readiness turns false); accepted ones still complete. */
  beginShutdown(): void {
    this.#isShuttingDown = true;
  }

  /** Unloads every model once accepted requests are done; forced, at once, failing those still running. */
  async unloadAll(options?: { readonly isForced?: boolean }): Promise<void> {
    await this.#options.repository.unloadAll(options);
  }
}
