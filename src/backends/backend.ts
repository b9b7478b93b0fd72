import type { ModelConfig } from '../protocol/gen/model_config_pb.js';
import type { CustomMetrics } from '../metrics/custom-metrics.js';
import type { ModelControl } from '../kernel/model-control.js';
import type { ModelCaller } from '../kernel/model-caller.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import type { ModelInstance } from '../kernel/model-instance.js';
import type { Logger } from '../logging/logger.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import type { Scheduler } from '../scheduling/scheduler.js';

/** Where a model version's files are. */
export interface ModelFiles {
  readonly modelName: string;
  /** `--model-namespacing`: the repository the model is in, as the server was given it (model-id.ts). */
  readonly namespace?: string;
  /** `<repository>/<model>` */
  readonly modelDir: string;
  readonly version: number;
  /** `<repository>/<model>/<version>` */
  readonly versionDir: string;
}

/** Server-wide settings a backend may read (from `--backend-config`). */
export interface BackendContext {
  readonly logger: Logger;
  /** `--backend-config=default-max-batch-size=N`, Triton's default 4. */
  readonly defaultMaxBatchSize: number;
  /** Cores the backends may use in all; instance thread counts are derived from it. */
  readonly cpuCount: number;
  /** `--backend-config=onnxruntime,execution-thread-count=N`: the threads ONNX Runtime sessions share; absent: cpuCount. */
  readonly onnxExecutionThreadCount?: number;
  /** Runs requests on other loaded models (model-to-model calls, ensemble steps). */
  readonly caller: ModelCaller;
  /** Models' own metrics on /metrics (absent: the server serves no metrics). */
  readonly customMetrics?: CustomMetrics;
  /** Loads and unloads models on a model's behalf (Triton's model loading API). */
  readonly modelControl?: ModelControl;
}

/** What a backend may ask of the repository while it loads a model. */
export interface LoadContext extends BackendContext {
  /**
   * The spec of another model version once its load has settled; in EXPLICIT mode a model that is not
   * loaded is loaded first (an ensemble's composing models). Throws when it cannot be served.
   */
  requireModel(name: string, version?: number): Promise<ModelSpec>;
}

export interface InstanceSpec {
  /** `<group name>_<index within group>`, as Triton names instances. */
  readonly name: string;
  /** Number of instances of this model version in all, to share the cores fairly. */
  readonly instanceCount: number;
  /**
   * Aborts when the model's load timeout passes: the instance stops starting and its promise rejects
   * with the signal's reason (SupervisedInstance.start).
   */
  readonly signal?: AbortSignal;
}

/**
 * A backend: a small factory registered by name in backends/index.ts. The lifecycle is Triton's
 * (TRITONBACKEND_ModelInitialize, ModelInstanceInitialize, ModelInstanceExecute).
 */
export interface Backend {
  /** The config `backend:` name. */
  readonly name: string;
  /**
   * The file a version folder holds when the config names no `default_model_filename`; '' for a
   * backend that reads no model file (identity), which is then never picked by a file it finds.
   */
  readonly defaultModelFilename: string;
  /**
   * Whether loading the model runs its files as code (a module, a script, a pickle), so that files
   * from a load request need the operator's opt-in (`--allow-model-code-upload`).
   */
  readonly isModelFileCode: boolean;
  /**
   * Fills what the config leaves out (inputs, outputs, max_batch_size) from the model itself.
   * Returns a new config; the argument is not changed.
   */
  autoCompleteConfig?(files: ModelFiles, config: ModelConfig, context: BackendContext): Promise<ModelConfig>;
  /** Loads one model version. The caller owns the result and must `unload()` it. */
  loadModel(files: ModelFiles, config: ModelConfig, spec: ModelSpec, context: LoadContext): Promise<BackendModel>;
}

export interface BackendModel {
  /** Starts one instance; it is ready to execute when the promise resolves. */
  createInstance(spec: InstanceSpec): Promise<ModelInstance>;
  /**
   * A model without instances of its own (an ensemble) schedules its requests itself; every other
   * model gets the scheduler its config asks for.
   */
  createScheduler?(statistics: ModelStatistics): Scheduler;
  /**
   * Set by a model whose decoupled-ness is known only once it is loaded (an ensemble with a decoupled
   * step); the loaded model is then decoupled whatever its config says, as Triton does.
   */
  readonly isDecoupled?: boolean;
  unload(): Promise<void>;
}

