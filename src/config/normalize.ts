import { clone, create } from '@bufbuild/protobuf';
import {
  ModelConfigSchema,
  ModelInstanceGroup_Kind,
  ModelInstanceGroupSchema,
  ModelOptimizationPolicySchema,
  ModelOptimizationPolicy_PinnedMemoryBufferSchema,
  ModelVersionPolicySchema,
  ModelVersionPolicy_LatestSchema,
  type ModelConfig,
  type ModelInstanceGroup,
} from '../protocol/gen/model_config_pb.js';

export interface NormalizeOptions {
  /** The model's folder name: fills an empty `name` and names the default instance group. */
  readonly modelName: string;
  /** Ids of the GPUs this server may use. Nereid runs on CPU, so the default is none. */
  readonly gpuIds?: readonly number[];
}

/** Triton's default idle time of a sequence (core src/constants.h SEQUENCE_IDLE_DEFAULT_MICROSECONDS). */
export const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000n;

/**
 * Returns a copy of `config` with the defaults Triton fills in before it validates and loads a model, so
 * that GET config shows what Triton would show. The input is not modified. Running it twice changes
 * nothing more, so it can run again after a backend's auto-complete (as Triton does in
 * TritonModel::UpdateModelConfig).
 *
 * From Triton core src/model_config_utils.cc:
 * - AutoCompleteBackendFields, the parts that need no model files: `name` from the folder; `backend`,
 *   `platform` and `default_model_filename` from whichever of them is given (see fillBackendFields).
 * - NormalizeModelConfig: `version_policy` unset → `latest { num_versions: 1 }`; `dynamic_batching` with no
 *   `preferred_batch_size` → `[max_batch_size]` when max_batch_size > 0 (else left empty);
 *   `sequence_batching.max_sequence_idle_microseconds` 0 → 1000000; `sequence_batching.oldest` with no
 *   `preferred_batch_size` → `[max_batch_size]` when max_batch_size > 0; for models without
 *   `ensemble_scheduling`, `optimization.input_pinned_memory` and `output_pinned_memory` unset →
 *   `{ enable: true }` (which also makes `optimization` itself present).
 * - NormalizeInstanceGroup (skipped for ensembles): no group → one group named after the model (no
 *   suffix); a group with no name → `<model>_<index>`; KIND_AUTO → KIND_GPU when GPUs exist and every
 *   listed GPU does, else KIND_CPU; `count` < 1 → 1, or 2 for KIND_CPU groups of the `onnxruntime` and
 *   `tensorflow` backends (SetDefaultInstanceCount); KIND_GPU with no `gpus` → every available GPU.
 *   Triton's backend-preferred groups (TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup) are not
 *   modelled.
 */
export function normalizeModelConfig(config: ModelConfig, options: NormalizeOptions): ModelConfig {
  const result = clone(ModelConfigSchema, config);
  fillBackendFields(result, options.modelName);
  applyModelDefaults(result);
  normalizeInstanceGroups(result, options.gpuIds ?? []);
  return result;
}

/**
 * The backend, platform and default model file that imply each other, per Triton's AutoCompleteBackendFields
 * and src/constants.h. Only empty fields are filled.
 */
function fillBackendFields(config: ModelConfig, modelName: string): void {
  if (config.name === '') {
    config.name = modelName;
  }
  const fill = (backend: string, platform: string, filename: string): void => {
    config.backend ||= backend;
    config.platform ||= platform;
    config.defaultModelFilename ||= filename;
  };
  const { platform, backend } = config;
  const filename = config.defaultModelFilename;
  if (platform === 'tensorflow_savedmodel' || platform === 'tensorflow_graphdef') {
    // The TensorFlow backend needs its platform; the file name follows from it.
    fill('tensorflow', platform, platform === 'tensorflow_savedmodel' ? 'model.savedmodel' : 'model.graphdef');
  } else if (platform === '' && (backend === '' || backend === 'tensorflow') && filename === 'model.savedmodel') {
    fill('tensorflow', 'tensorflow_savedmodel', filename);
  } else if (platform === '' && (backend === '' || backend === 'tensorflow') && filename === 'model.graphdef') {
    fill('tensorflow', 'tensorflow_graphdef', filename);
  } else if (backend === 'tensorrt' || (backend === '' && (platform === 'tensorrt_plan' || filename === 'model.plan'))) {
    fill('tensorrt', 'tensorrt_plan', 'model.plan');
  } else if (
    backend === 'onnxruntime' ||
    (backend === '' && (platform === 'onnxruntime_onnx' || filename === 'model.onnx'))
  ) {
    fill('onnxruntime', 'onnxruntime_onnx', 'model.onnx');
  } else if (backend === 'openvino' || (backend === '' && filename === 'model.xml')) {
    config.backend = 'openvino';
    config.defaultModelFilename ||= 'model.xml';
  } else if (backend === 'pytorch' || (backend === '' && (PYTORCH_PLATFORMS.includes(platform) || PYTORCH_FILES.includes(filename)))) {
    // LibTorch and AOTInductor models share the pytorch backend; with no platform, LibTorch is assumed.
    config.backend = 'pytorch';
    if (platform === '') {
      config.platform = 'pytorch_libtorch';
      config.defaultModelFilename ||= 'model.pt';
    } else if (platform === 'torch_aoti') {
      config.defaultModelFilename ||= 'model.pt2';
    }
  } else if (backend === 'python' || (backend === '' && filename === 'model.py')) {
    config.backend = 'python';
    config.defaultModelFilename ||= 'model.py';
  }
}

const PYTORCH_PLATFORMS = ['pytorch_libtorch', 'libtorch', 'torch_aoti'];
const PYTORCH_FILES = ['model.pt', 'model.pt2'];

function applyModelDefaults(config: ModelConfig): void {
  if (config.versionPolicy === undefined) {
    config.versionPolicy = create(ModelVersionPolicySchema, {
      policyChoice: { case: 'latest', value: create(ModelVersionPolicy_LatestSchema, { numVersions: 1 }) },
    });
  }
  const scheduling = config.schedulingChoice;
  if (scheduling.case === 'dynamicBatching') {
    if (scheduling.value.preferredBatchSize.length === 0 && config.maxBatchSize > 0) {
      scheduling.value.preferredBatchSize.push(config.maxBatchSize);
    }
  } else if (scheduling.case === 'sequenceBatching') {
    const batcher = scheduling.value;
    if (batcher.maxSequenceIdleMicroseconds === 0n) {
      batcher.maxSequenceIdleMicroseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    }
    const strategy = batcher.strategyChoice;
    if (strategy.case === 'oldest' && strategy.value.preferredBatchSize.length === 0 && config.maxBatchSize > 0) {
      strategy.value.preferredBatchSize.push(config.maxBatchSize);
    }
  }
  if (scheduling.case !== 'ensembleScheduling') {
    const optimization = (config.optimization ??= create(ModelOptimizationPolicySchema));
    optimization.inputPinnedMemory ??= create(ModelOptimizationPolicy_PinnedMemoryBufferSchema, { enable: true });
    optimization.outputPinnedMemory ??= create(ModelOptimizationPolicy_PinnedMemoryBufferSchema, { enable: true });
  }
}

function normalizeInstanceGroups(config: ModelConfig, gpuIds: readonly number[]): void {
  if (config.schedulingChoice.case === 'ensembleScheduling') {
    return; // an ensemble has no instances of its own
  }
  if (config.instanceGroup.length === 0) {
    config.instanceGroup.push(create(ModelInstanceGroupSchema, { name: config.name }));
  }
  config.instanceGroup.forEach((group, index) => {
    if (group.name === '') {
      group.name = `${config.name}_${index}`;
    }
    if (group.kind === ModelInstanceGroup_Kind.AUTO) {
      const hasAllGpus = gpuIds.length > 0 && group.gpus.every((id) => gpuIds.includes(id));
      group.kind = hasAllGpus ? ModelInstanceGroup_Kind.GPU : ModelInstanceGroup_Kind.CPU;
    }
    if (group.count < 1) {
      group.count = defaultInstanceCount(group, config.backend);
    }
    if (group.kind === ModelInstanceGroup_Kind.GPU && group.gpus.length === 0) {
      group.gpus.push(...gpuIds);
    }
  });
}

/** Triton's SetDefaultInstanceCount: backends with cheap extra CPU instances opt into two. */
function defaultInstanceCount(group: ModelInstanceGroup, backend: string): number {
  const prefersTwoOnCpu = backend === 'onnxruntime' || backend === 'tensorflow';
  return group.kind === ModelInstanceGroup_Kind.CPU && prefersTwoOnCpu ? 2 : 1;
}
