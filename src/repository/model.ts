import type { Backend, BackendModel, LoadContext, ModelFiles } from '../backends/backend.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { ModelConfig } from '../protocol/gen/model_config_pb.js';
import { backendSpecOf, loadModelSpec } from '../config/model-spec.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import type { Tensor } from '../kernel/tensor.js';
import { ModelStatistics, type StatisticsObserver } from '../metrics/model-statistics.js';
import { type SequenceSchedulingOptions, createScheduler } from '../scheduling/create-scheduler.js';
import { loadStateSpecs } from '../scheduling/sequence-states.js';
import { InstancePool } from '../scheduling/instance-pool.js';
import { abortable } from '../util/abortable.js';
import { warmUp } from './warmup.js';
import type { CloseOptions, Scheduler } from '../scheduling/scheduler.js';

export interface LoadModelOptions {
  readonly files: ModelFiles;
  /** Normalised and validated. */
  readonly config: ModelConfig;
  readonly backend: Backend;
  readonly context: LoadContext;
  /** Receives every request and execution of this version (the metrics' summaries and histograms). */
  readonly observer?: StatisticsObserver;
  /** The largest request a client may send (`--http-max-input-size`); no warmup sample may be larger. */
  readonly maxInputBytes: number;
  /**
   * Aborts the load (its timeout): the load rejects with the signal's reason once every instance it
   * started or was starting is stopped (see SupervisedInstance.start for a worker still initializing).
   */
  readonly signal?: AbortSignal;
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
    observer: StatisticsObserver | undefined,
    sequence: SequenceSchedulingOptions,
  ) {
    this.config = config;
    this.spec = spec;
    this.statistics = new ModelStatistics(spec.name, spec.version, observer);
    this.#backendModel = backendModel;
    this.#instances = instances;
    this.#scheduler = backendModel.createScheduler?.(this.statistics) ?? createScheduler(config, new InstancePool(instances), this.statistics, sequence);
  }

  get name(): string {
    return this.spec.name;
  }

  get version(): number {
    return this.spec.version;
  }

  /** Loads the backend model, starts every instance of every instance group, and warms them up. */
  static async load({ files, config, backend, context, observer, maxInputBytes, signal }: LoadModelOptions): Promise<Model> {
    const spec = await loadModelSpec(config, files.version, files.modelDir);
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
    const instanceCount = config.instanceGroup.reduce((sum, group) => sum + group.count, 0);
    const started: Array<Promise<ModelInstance>> = [];
    // Validation has already refused KIND_GPU groups: every group here runs on the CPU.
    for (const group of config.instanceGroup) {
      for (let index = 0; index < group.count; index++) {
        started.push(backendModel.createInstance({ name: `${group.name}_${index}`, instanceCount, signal }));
      }
    }
    const results = await Promise.allSettled(started);
    const instances = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        await Promise.all(instances.map((instance) => instance.close()));
        await backendModel.unload();
      })());
    if (failure !== undefined) {
      await stop();
      throw failure.reason;
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
    return new Model(config, spec, backendModel, instances, observer, { stateSpecs, logger: context.logger });
  }

  /** False while one of its instances is down and being restarted. */
  get isHealthy(): boolean {
    return this.#instances.every((instance) => instance.isHealthy !== false);
  }

  /** Runs one validated request through the model's scheduler, which records its statistics. */
  infer(request: InferRequest): Promise<readonly Tensor[]> {
    return this.#scheduler.enqueue(request);
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
    await this.#scheduler.close(options);
    await this.#backendModel.unload();
  }
}
