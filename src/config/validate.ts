import { NereidError } from '../kernel/errors.js';
import { ModelInstanceGroup_Kind, type ModelConfig } from '../protocol/gen/model_config_pb.js';
import { responseCacheRefusal } from './response-cache-refusal.js';
import { validateScheduling } from './validate-scheduling.js';
import { validateTensors } from './validate-tensors.js';

export interface ValidateOptions {
  /** The config file, to start every message with. */
  readonly file: string;
  isKnownBackend(name: string): boolean;
  isKnownPlatform(name: string): boolean;
  /** Backend and platform names to list when one is unknown. */
  readonly knownBackends?: readonly string[];
  readonly knownPlatforms?: readonly string[];
  /** The model's folder name; when given, a different `name` is an error. */
  readonly modelName?: string;
  /** Ids of the GPUs this server may use; none by default. */
  readonly gpuIds?: readonly number[];
}

/**
 * Checks a normalized configuration as Triton does before loading a model (core src/model_config_utils.cc
 * ValidateModelConfig, ValidateInstanceGroup, ValidateModelIOConfig) and throws INVALID_ARG at the first
 * problem, as `<file>: <field path> <what is wrong>; expected <what>`:
 *
 *     models/simple/config.pbtxt: input[0].dims[1] is 0; expected an integer >= 1, or -1 for a variable-size dimension
 *
 * Beyond Triton: input and output names must be unique, a platform or backend must be one this server
 * knows, and an instance group count must be at least 1 (normalisation fills it).
 */
export function validateModelConfig(config: ModelConfig, options: ValidateOptions): void {
  const { file } = options;
  if (config.name === '') {
    throw invalid(file, `name is empty; expected the model's name`);
  }
  if (options.modelName !== undefined && config.name !== options.modelName) {
    throw invalid(file, `name '${config.name}' differs from the model folder '${options.modelName}'; expected the folder name`);
  }
  validateBackend(config, options);
  if (config.maxBatchSize < 0) {
    throw invalid(file, `max_batch_size is ${config.maxBatchSize}; expected 0 (no batching) or a positive batch size`);
  }
  if (config.versionPolicy?.policyChoice.case === undefined) {
    throw invalid(file, `version_policy is not set; expected latest, all or specific (normalizeModelConfig fills latest)`);
  }
  validateScheduling(config, file);
  if (config.modelTransactionPolicy?.decoupled === true && config.responseCache?.enable === true) {
    throw invalid(file, responseCacheRefusal(config.name, 'decoupled'));
  }
  validateModelMetrics(config, file);
  validateInstanceGroups(config, options);
  validateTensors(config, file);
}

/** Backends whose platform Triton checks (GetBackendType / GetBackendTypeFromPlatform). */
const PLATFORMS_OF_BACKEND: Readonly<Record<string, readonly string[]>> = {
  tensorflow: ['tensorflow_graphdef', 'tensorflow_savedmodel'],
  tensorrt: ['tensorrt_plan'],
  onnxruntime: ['onnxruntime_onnx'],
  // NOTE: Triton maps backend 'pytorch' to LibTorch only, so it rejects torch_aoti although its own
  // auto-fill produces that pair; we accept both.
  pytorch: ['pytorch_libtorch', 'torch_aoti'],
};

function validateBackend(config: ModelConfig, options: ValidateOptions): void {
  const { file } = options;
  const { backend, platform } = config;
  const backends = listing('backends', options.knownBackends);
  const platforms = listing('platforms', options.knownPlatforms);
  if (platform === 'ensemble') {
    if (backend !== '') {
      throw invalid(file, `backend is '${backend}' for platform 'ensemble'; expected no backend for an ensemble`);
    }
    return;
  }
  if (backend === '' && platform === '') {
    throw invalid(file, `backend and platform are both empty; expected a backend${backends} or a platform${platforms}`);
  }
  if (backend === '') {
    const what = options.isKnownPlatform(platform) ? `platform '${platform}' was not mapped to a backend` : `platform '${platform}' is unknown`;
    throw invalid(file, `backend is empty and ${what}; expected a backend${backends} or a known platform${platforms}`);
  }
  if (!options.isKnownBackend(backend)) {
    throw invalid(file, `backend '${backend}' is unknown; expected a backend this server has${backends}`);
  }
  const allowed = PLATFORMS_OF_BACKEND[backend];
  if (allowed !== undefined && platform !== '' && !allowed.includes(platform)) {
    throw invalid(file, `platform '${platform}' does not match backend '${backend}'; expected platform ${allowed.map((p) => `'${p}'`).join(' or ')}`);
  }
  // Any other platform goes with any other backend, as in Triton (the Python backend ignores it).
}

function listing(what: string, names: readonly string[] | undefined): string {
  return names === undefined || names.length === 0 ? '' : ` (${what}: ${names.join(', ')})`;
}

function validateModelMetrics(config: ModelConfig, file: string): void {
  config.modelMetrics?.metricControl.forEach((control, index) => {
    const path = `model_metrics.metric_control[${index}]`;
    if (control.metricIdentifier === undefined || control.metricIdentifier.family === '') {
      throw invalid(file, `${path}.metric_identifier.family is empty; expected the name of a metric family, e.g. nv_inference_first_response_histogram_ms`);
    }
    const options = control.metricOptions;
    if (options.case !== 'histogramOptions') {
      throw invalid(file, `${path}.histogram_options is not set; expected histogram_options { buckets: [ ... ] }`);
    }
    if (options.value.buckets.length === 0) {
      throw invalid(file, `${path}.histogram_options.buckets is empty; expected at least one bucket boundary`);
    }
  });
}

function validateInstanceGroups(config: ModelConfig, options: ValidateOptions): void {
  const { file } = options;
  if (config.schedulingChoice.case === 'ensembleScheduling') {
    return;
  }
  if (config.instanceGroup.length === 0) {
    throw invalid(file, `instance_group is empty; expected at least one group (normalizeModelConfig adds one)`);
  }
  const gpuIds = options.gpuIds ?? [];
  config.instanceGroup.forEach((group, index) => {
    const path = `instance_group[${index}]`;
    const named = `${path} '${group.name}'`;
    if (group.count < 1) {
      throw invalid(file, `${path}.count is ${group.count}; expected at least 1 instance`);
    }
    switch (group.kind) {
      case ModelInstanceGroup_Kind.AUTO:
        throw new NereidError('INTERNAL', `${file}: ${named} still has kind KIND_AUTO; expected normalizeModelConfig to resolve it first`);
      case ModelInstanceGroup_Kind.GPU:
        if (gpuIds.length === 0) {
          // Triton's sentence for a server built without GPU support (core src/model_config_utils.cc), then how.
          throw invalid(
            file,
            `instance group ${group.name} of model ${config.name} has kind KIND_GPU but server does not support GPUs (${named}: Nereid runs models on the CPU; use KIND_CPU, KIND_AUTO or KIND_MODEL)`,
          );
        }
        group.gpus.forEach((gpu, gpuIndex) => {
          if (!gpuIds.includes(gpu)) {
            throw invalid(file, `${path}.gpus[${gpuIndex}] is ${gpu}, which is not available; expected one of ${gpuIds.join(', ')}`);
          }
        });
        break;
      case ModelInstanceGroup_Kind.CPU:
      case ModelInstanceGroup_Kind.MODEL:
        if (group.gpus.length > 0) {
          throw invalid(file, `${named} has kind KIND_${ModelInstanceGroup_Kind[group.kind]} but lists gpus; expected no gpus, or kind KIND_GPU`);
        }
        break;
      default:
        throw invalid(file, `${path}.kind ${group.kind} is unknown; expected KIND_CPU, KIND_GPU, KIND_AUTO or KIND_MODEL`);
    }
    group.profile.forEach((profile, profileIndex) => {
      if (config.platform !== 'tensorrt_plan') {
        throw invalid(file, `${named} sets profile with platform '${config.platform}'; expected profile only for platform 'tensorrt_plan'`);
      }
      if (!/^\s*\+?\d+/.test(profile)) {
        throw invalid(file, `${path}.profile[${profileIndex}] is '${profile}'; expected the index of a TensorRT optimization profile (0, 1, ...)`);
      }
    });
  });
}

function invalid(file: string, message: string): NereidError {
  return new NereidError('INVALID_ARG', `${file}: ${message}`);
}
