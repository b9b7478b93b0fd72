import type { Backend, BackendModel, LoadContext, ModelFiles } from '../backends/backend.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import { clone, create } from '@bufbuild/protobuf';
import { type ModelConfig, ModelConfigSchema, ModelTransactionPolicySchema } from '../protocol/gen/model_config_pb.js';
import { backendSpecOf, loadModelSpec } from '../config/model-spec.js';
import { responseCacheRefusal } from '../config/response-cache-refusal.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { NereidError } from '../kernel/errors.js';
import { modelKey } from '../kernel/model-id.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import type { Tensor } from '../kernel/tensor.js';
import { type ModelMetricSettings, ModelStatistics, type StatisticsObserver } from '../metrics/model-statistics.js';
import { firstResponseBucketsOf } from '../metrics/model-metrics-config.js';
import { CachingScheduler } from '../scheduling/caching-scheduler.js';
import { type SchedulingOptions, createScheduler } from '../scheduling/create-scheduler.js';
import { loadStateSpecs } from '../scheduling/sequence-states.js';
import { InstancePool } from '../scheduling/instance-pool.js';
import { RateLimitedInstance } from '../scheduling/rate-limited-instance.js';
import type { InstanceRateLimit, RateLimiter, RateLimiterRegistration } from '../scheduling/rate-limiter.js';
import type { ResponseCacheStore } from '../scheduling/response-cache.js';
import { abortable } from '../util/abortable.js';
import { warmUp } from './warmup.js';
import type { CloseOptions, Scheduler } from '../scheduling/scheduler.js';

export interface LoadModelOptions {
  readonly files: ModelFiles;
  /** Normalised and validated. */
  readonly config: ModelConfig;
  readonly backend: Backend;
  readonly context: LoadContext;
  /**
   * Makes what receives every request and execution of this version (the metrics' summaries and
   * histograms), once the load knows whether its requests go through the response cache and whether
   * it is decoupled (Triton's MetricModelReporter::Create takes both, and its model_metrics).
   */
  readonly observerFor?: (settings: ModelMetricSettings) => StatisticsObserver;
  /** The largest request a client may send (`--http-max-input-size`); no warmup sample may be larger. */
  readonly maxInputBytes: number;
  /**
   * Aborts the load (its timeout): the load rejects with the signal's reason once every instance it
   * started or was starting is stopped (see SupervisedInstance.start for a worker still initializing).
   */
  readonly signal?: AbortSignal;
  /** `--cache-config`: the server's response cache, used when the config has `response_cache { enable: true }`. */
  readonly responseCache?: ResponseCacheStore;
  /** `--rate-limit=execution_count`: every instance then executes only with its resources allocated. */
  readonly rateLimiter?: RateLimiter;
}

/**
 * Numbers each load of a model version, so that a reload never hits responses of the files it replaced
 * in the local cache. A shared cache (Redis) cannot tell loads apart: its keys are the same on every
 * server, and entries of replaced files stay until Redis evicts them (as in Triton).
 */
let nextLoadId = 1;

/** What one instance group asks of the rate limiter (every Nereid instance runs on the CPU, device 0). */
function rateLimitOf(group: ModelConfig['instanceGroup'][number]): InstanceRateLimit {
  const limiter = group.rateLimiter;
  return {
    resources: (limiter?.resources ?? []).map((resource) => ({ name: resource.name, count: resource.count, isGlobal: resource.global })),
    priority: limiter?.priority ?? 0,
    deviceId: 0,
  };
}

/** A loaded model version: its configuration, its instances and the scheduler that feeds them. */
export class Model {
  readonly config: ModelConfig;
  readonly spec: ModelSpec;
  readonly statistics: ModelStatistics;
  readonly #backendModel: BackendModel;
  readonly #instances: readonly ModelInstance[];
  readonly #scheduler: Scheduler;

  private constructor(
    config: ModelConfig,
    spec: ModelSpec,
    backendModel: BackendModel,
    instances: readonly ModelInstance[],
    observerFor: ((settings: ModelMetricSettings) => StatisticsObserver) | undefined,
    scheduling: SchedulingOptions,
    responseCache: ResponseCacheStore | undefined,
  ) {
    this.config = config;
    this.spec = spec;
    const isResponseCacheEnabled = responseCache !== undefined && config.responseCache?.enable === true;
    this.statistics = new ModelStatistics(spec.name, spec.version, observerFor?.({ isResponseCacheEnabled, isDecoupled: spec.isDecoupled }), spec.namespace);
    this.#backendModel = backendModel;
    this.#instances = instances;
    const scheduler = backendModel.createScheduler?.(this.statistics) ?? createScheduler(config, new InstancePool(instances), this.statistics, scheduling);
    // Validation refuses the cache for decoupled models and sequence batching, as Triton does, and
    // `load` for an ensemble with a decoupled step.
    this.#scheduler = isResponseCacheEnabled
      ? new CachingScheduler({ scheduler, cache: responseCache, statistics: this.statistics, model: modelKey(spec), version: spec.version, loadId: responseCache.isShared ? 0 : nextLoadId++ })
      : scheduler;
  }

  get name(): string {
    return this.spec.name;
  }

  get version(): number {
    return this.spec.version;
  }

  /** Loads the backend model, starts every instance of every instance group, and warms them up. */
  static async load({ files, config, backend, context, observerFor: makeObserver, maxInputBytes, signal, responseCache, rateLimiter }: LoadModelOptions): Promise<Model> {
    const loadStartMs = performance.now();
    // The first-response histogram's buckets from model_metrics (Triton's MetricReporterConfig::ParseConfig), read once.
    const firstResponseBucketsMs = firstResponseBucketsOf(config, context.logger);
    // Called as the loaded version is made, its instances started and warmed up: the load time is known then.
    const observerFor =
      makeObserver === undefined
        ? undefined
        : (settings: ModelMetricSettings) =>
            makeObserver({ ...settings, ...(firstResponseBucketsMs !== undefined ? { firstResponseBucketsMs } : {}), loadSeconds: (performance.now() - loadStartMs) / 1000 });
    const loaded = await loadModelSpec(config, files.version, files.modelDir);
    const spec = files.namespace === undefined ? loaded : { ...loaded, namespace: files.namespace };
    const stateSpecs = await loadStateSpecs(config, files.modelDir);
    const loading = backend.loadModel(files, config, backendSpecOf(config, spec), context);
    let backendModel: BackendModel;
    try {
      backendModel = await abortable(loading, signal);
    } catch (error) {
      // A backend model that arrives after the load was abandoned is unloaded then.
      if (signal?.aborted === true) loading.then((late) => late.unload()).catch(() => {});
      throw error;
    }
    if (backendModel.isDecoupled === true && config.responseCache?.enable === true) {
      // An ensemble with a decoupled step is decoupled (Triton's ValidateEnsembleConfig sets its
      // model_transaction_policy), and Triton's ValidateModelConfig then refuses its response cache.
      await backendModel.unload();
      throw new NereidError('INVALID_ARG', responseCacheRefusal(config.name, 'decoupled'));
    }
    const instanceCount = config.instanceGroup.reduce((sum, group) => sum + group.count, 0);
    const started: Array<Promise<ModelInstance>> = [];
    const limits: InstanceRateLimit[] = [];
    // Validation has already refused KIND_GPU groups: every group here runs on the CPU.
    for (const group of config.instanceGroup) {
      for (let index = 0; index < group.count; index++) {
        started.push(backendModel.createInstance({ name: `${group.name}_${index}`, instanceCount, signal }));
        limits.push(rateLimitOf(group));
      }
    }
    const results = await Promise.allSettled(started);
    const instances = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    let registrations: RateLimiterRegistration[] = [];
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        for (const registration of registrations) registration.unregister();
        await Promise.all(instances.map((instance) => instance.close()));
        await backendModel.unload();
      })());
    if (failure !== undefined) {
      await stop();
      throw failure.reason;
    }
    // Registered before the warmup, so that resources the server lacks fail the load at once (Triton
    // registers each instance with the rate limiter as it creates it). The warmup runs unlimited.
    if (rateLimiter !== undefined && instances.length > 0) {
      try {
        registrations = rateLimiter.register(instances.map((instance, index) => ({ label: `${config.name}/${instance.name}`, limit: limits[index]! })));
      } catch (error) {
        await stop();
        throw error;
      }
    }
    // Stopping the instances fails a warmup run still executing, which ends the warmup.
    const stopOnAbort = (): void => void stop();
    signal?.addEventListener('abort', stopOnAbort, { once: true });
    try {
      await warmUp({ config, spec, instances, modelDir: files.modelDir, maxInputBytes, signal });
    } catch (error) {
      await stop();
      throw error;
    } finally {
      signal?.removeEventListener('abort', stopOnAbort);
    }
    if (config.responseCache?.enable === true && responseCache === undefined) {
      context.logger.warning('model', `model '${config.name}' enables response_cache, but the server has no cache (--cache-config local,size=BYTES): its responses are not cached`);
    }
    const scheduled = registrations.length > 0 ? instances.map((instance, index) => new RateLimitedInstance(instance, registrations[index]!)) : instances;
    if (backendModel.isDecoupled === true && !spec.isDecoupled) {
      // An ensemble with a decoupled step: Triton fills in its model_transaction_policy, and the config shows it.
      const decoupled = clone(ModelConfigSchema, config);
      decoupled.modelTransactionPolicy = create(ModelTransactionPolicySchema, { decoupled: true });
      return new Model(decoupled, { ...spec, isDecoupled: true }, backendModel, scheduled, observerFor, { stateSpecs, logger: context.logger }, responseCache);
    }
    return new Model(config, spec, backendModel, scheduled, observerFor, { stateSpecs, logger: context.logger }, responseCache);
  }

  /** Whether its requests go through the response cache (the per-model nv_cache_* metrics are shown then). */
  get isResponseCacheEnabled(): boolean {
    return this.#scheduler instanceof CachingScheduler;
  }

  /** False while one of its instances is down and being restarted. */
  get isHealthy(): boolean {
    return this.#instances.every((instance) => instance.isHealthy !== false);
  }

  recordFirstResponse(durationNs: number): void {
    this.statistics.recordFirstResponse(durationNs);
  }

  /** Runs one validated request through the model's scheduler, which records its statistics. */
  infer(request: InferRequest): Promise<readonly Tensor[]> {
    return this.#scheduler.enqueue(request);
  }

  /**
   * `infer` with a callback in place of the promise (Scheduler.enqueueWith): true once enqueued; false,
   * nothing done, when its scheduler takes none.
   */
  inferWith(request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void): boolean {
    const scheduler = this.#scheduler;
    if (scheduler.enqueueWith === undefined) return false;
    scheduler.enqueueWith(request, settle);
    return true;
  }

  /** Whether `inferNow` would run a request at this moment (Scheduler.canEnqueueNow). */
  get canInferNow(): boolean {
    return this.#scheduler.canEnqueueNow === true;
  }

  /** `infer` in this step when the scheduler can (Scheduler.enqueueNow); undefined when it cannot. */
  inferNow(request: InferRequest): readonly Tensor[] | undefined {
    return this.#scheduler.enqueueNow?.(request);
  }

  /** Requests accepted and not yet executing. */
  get pendingCount(): number {
    return this.#scheduler.queuedCount;
  }

  get inflightCount(): number {
    return this.#scheduler.inflightCount;
  }

  /** Waits for accepted requests to finish (unless forced; at most `drainTimeoutMs`), then stops the instances. */
  async unload(options?: CloseOptions): Promise<void> {
    try {
      await this.#scheduler.close(options);
      await this.#backendModel.unload();
    } finally {
      // Its series leave /metrics, as Triton's ~MetricModelReporter removes them.
      this.statistics.close();
    }
  }
}
