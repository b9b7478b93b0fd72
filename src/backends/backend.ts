import type { ModelConfig } from '../config/gen/model_config_pb.js';
import type { NereidError } from '../core/errors.js';
import type { InferRequest } from '../core/infer-request.js';
import type { ModelSpec } from '../core/model-spec.js';
import type { Tensor } from '../core/tensor.js';
import type { Logger } from '../logging/logger.js';

/** Where a model version's files are. */
export interface ModelFiles {
  readonly modelName: string;
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
}

export interface InstanceSpec {
  /** `<group name>_<index within group>`, as Triton names instances. */
  readonly name: string;
  /** Number of instances of this model version in all, to share the cores fairly. */
  readonly instanceCount: number;
}

/**
 * A backend: a small factory registered by name in backends/index.ts. The lifecycle is Triton's
 * (TRITONBACKEND_ModelInitialize, ModelInstanceInitialize, ModelInstanceExecute).
 */
export interface Backend {
  /** The config `backend:` name. */
  readonly name: string;
  /** The file a version folder holds when the config names no `default_model_filename`. */
  readonly defaultModelFilename: string;
  /**
   * Fills what the config leaves out (inputs, outputs, max_batch_size) from the model itself.
   * Returns a new config; the argument is not changed.
   */
  autoCompleteConfig?(files: ModelFiles, config: ModelConfig, context: BackendContext): Promise<ModelConfig>;
  /** Loads one model version. The caller owns the result and must `unload()` it. */
  loadModel(files: ModelFiles, config: ModelConfig, spec: ModelSpec, context: BackendContext): Promise<BackendModel>;
}

export interface BackendModel {
  /** Starts one instance; it is ready to execute when the promise resolves. */
  createInstance(spec: InstanceSpec): Promise<ModelInstance>;
  unload(): Promise<void>;
}

/**
 * Where one execution's time went, in Triton's terms (docs/protocol/extension_statistics.md):
 * preparing the inputs, running the model, and extracting the outputs.
 */
export interface ComputeTiming {
  readonly inputNs: number;
  readonly inferNs: number;
  readonly outputNs: number;
}

export interface ExecuteResult {
  /** One entry per request, in request order: its output tensors, or its error. */
  readonly responses: ReadonlyArray<readonly Tensor[] | NereidError>;
  readonly timing: ComputeTiming;
}

export interface ModelInstance {
  readonly name: string;
  /**
   * Runs one batch of validated requests in one execution. Each request gets the output tensors
   * named in its `outputs` (all when undefined); one bad request fails only itself.
   * The instance reads the requests' input tensors and keeps no reference after the promise settles.
   */
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult>;
  /** Stops the instance; in-flight executions fail. */
  close(): Promise<void>;
}
