import { type DescField, type Message, create, equals } from '@bufbuild/protobuf';
import { type ReflectMessage, isReflectList, isReflectMap, isReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { NereidError } from '../kernel/errors.js';
import { type ModelConfig, ModelConfigSchema } from '../protocol/gen/model_config_pb.js';

/**
 * What Nereid does with one field of model_config.proto:
 * - `supported`: read and applied (for a message, its own fields are checked against their rows);
 * - `refused`: changes behaviour in Triton and is not built here, so setting it fails the load;
 * - `ignored`: accepted and left unread by design, with the reason (it has no effect in Triton either
 *   on a server without GPUs, or it only describes the model to clients).
 */
export type FieldDecision =
  | { readonly decision: 'supported' }
  | { readonly decision: 'refused'; readonly because: string; readonly fix: string }
  | { readonly decision: 'ignored'; readonly because: string };

const supported: FieldDecision = { decision: 'supported' };
const refused = (because: string, fix = 'remove it to load the model'): FieldDecision => ({ decision: 'refused', because, fix });
const ignored = (because: string): FieldDecision => ({ decision: 'ignored', because });

const NO_GPU = 'Nereid runs every instance on the CPU';
const TENSORRT_ONLY = 'it is a TensorRT feature and Nereid has no TensorRT backend';

/**
 * Every field of model_config.proto that a loaded config can reach, by message type and proto field
 * name. The messages below a refused or ignored field have no rows: nothing inside them is read.
 * supported-fields.test.ts checks that every field of every message reachable through supported
 * fields has a row, so a field added to model_config.proto fails that test until it is decided.
 */
export const SUPPORTED_FIELDS: Readonly<Record<string, Readonly<Record<string, FieldDecision>>>> = {
  'inference.ModelConfig': {
    name: supported,
    platform: supported,
    backend: supported,
    runtime: refused('Nereid picks the runtime from the backend and cannot load another one'),
    version_policy: supported,
    max_batch_size: supported,
    input: supported,
    output: supported,
    batch_input: refused('Nereid has no ragged batching, so it cannot build batch inputs'),
    batch_output: refused('Nereid has no ragged batching, so it cannot scatter batch outputs'),
    optimization: supported,
    dynamic_batching: supported,
    sequence_batching: supported,
    ensemble_scheduling: supported,
    instance_group: supported,
    default_model_filename: supported,
    cc_model_filenames: ignored(`chooses a file by GPU compute capability; ${NO_GPU}, where Triton uses default_model_filename too`),
    metric_tags: ignored('Triton itself does not read it'),
    parameters: supported,
    model_warmup: supported,
    model_operations: refused('Nereid loads no custom operation libraries'),
    model_transaction_policy: supported,
    model_repository_agents: refused('Nereid has no repository agents'),
    // Used with the server's --cache-config; without one the model loads uncached (Triton needs both too) and a warning says so.
    response_cache: supported,
    model_metrics: supported,
  },
  'inference.ModelMetrics': { metric_control: supported },
  'inference.ModelMetrics.MetricControl': { metric_identifier: supported, histogram_options: supported },
  'inference.ModelMetrics.MetricControl.MetricIdentifier': { family: supported },
  'inference.ModelMetrics.MetricControl.HistogramOptions': { buckets: supported },
  'inference.ModelVersionPolicy': { latest: supported, all: supported, specific: supported },
  'inference.ModelVersionPolicy.Latest': { num_versions: supported },
  'inference.ModelVersionPolicy.All': {},
  'inference.ModelVersionPolicy.Specific': { versions: supported },
  'inference.ModelInput': {
    name: supported,
    data_type: supported,
    format: ignored("describes the layout to clients (tritonclient's image client reads it); Triton's backends other than TensorRT do not act on it"),
    dims: supported,
    reshape: supported,
    is_shape_tensor: refused(TENSORRT_ONLY),
    allow_ragged_batch: refused('Nereid has no ragged batching', 'remove it so that requests of equal shapes batch together'),
    optional: supported,
    is_non_linear_format_io: refused(TENSORRT_ONLY),
  },
  'inference.ModelOutput': {
    name: supported,
    data_type: supported,
    dims: supported,
    reshape: supported,
    label_filename: supported,
    is_shape_tensor: refused(TENSORRT_ONLY),
    is_non_linear_format_io: refused(TENSORRT_ONLY),
  },
  'inference.ModelTensorReshape': { shape: supported },
  'inference.ModelOptimizationPolicy': {
    // Applied by the onnxruntime backend, the only one with a graph optimiser.
    graph: supported,
    priority: refused('Nereid gives every model the same priority'),
    cuda: refused(NO_GPU),
    execution_accelerators: refused('Nereid runs ONNX Runtime with its CPU execution provider only'),
    input_pinned_memory: ignored(`pinned host memory only speeds up copies to a GPU; ${NO_GPU}`),
    output_pinned_memory: ignored(`pinned host memory only speeds up copies from a GPU; ${NO_GPU}`),
    gather_kernel_buffer_threshold: refused(`the gather kernel runs on a GPU; ${NO_GPU}`),
    eager_batching: refused('the dynamic batcher does not start batches eagerly'),
  },
  'inference.ModelOptimizationPolicy.Graph': { level: supported },
  'inference.ModelDynamicBatching': {
    preferred_batch_size: supported,
    max_queue_delay_microseconds: supported,
    preserve_ordering: supported,
    priority_levels: supported,
    default_priority_level: supported,
    default_queue_policy: supported,
    priority_queue_policy: supported,
  },
  'inference.ModelSequenceBatching': {
    direct: supported,
    oldest: supported,
    max_sequence_idle_microseconds: supported,
    control_input: supported,
    state: supported,
    iterative_sequence: supported,
  },
  'inference.ModelSequenceBatching.StrategyDirect': { max_queue_delay_microseconds: supported, minimum_slot_utilization: supported },
  'inference.ModelSequenceBatching.StrategyOldest': {
    max_candidate_sequences: supported,
    preferred_batch_size: supported,
    max_queue_delay_microseconds: supported,
    preserve_ordering: supported,
  },
  'inference.ModelSequenceBatching.ControlInput': { name: supported, control: supported },
  'inference.ModelSequenceBatching.Control': {
    kind: supported,
    int32_false_true: supported,
    fp32_false_true: supported,
    bool_false_true: supported,
    data_type: supported,
  },
  'inference.ModelSequenceBatching.State': {
    input_name: supported,
    output_name: supported,
    data_type: supported,
    dims: supported,
    initial_state: supported,
    use_same_buffer_for_input_output: ignored('a GPU memory optimisation of TensorRT-style backends; the server copies each state between executions'),
    use_growable_memory: ignored('a GPU memory optimisation; the server keeps each state as an ordinary tensor that may take any size'),
  },
  'inference.ModelSequenceBatching.InitialState': { data_type: supported, dims: supported, zero_data: supported, data_file: supported, name: supported },
  'inference.ModelQueuePolicy': {
    timeout_action: supported,
    default_timeout_microseconds: supported,
    allow_timeout_override: supported,
    max_queue_size: supported,
  },
  'inference.ModelEnsembling': {
    step: supported,
    // Triton's limit of the requests in flight at each step, across the ensemble's requests (0 is
    // none): the EnsembleScheduler's StepSlots.
    max_inflight_requests: supported,
  },
  'inference.ModelEnsembling.Step': {
    model_name: supported,
    model_version: supported,
    input_map: supported,
    output_map: supported,
    // Triton's model_config.proto reserves it for the server's use: --model-namespacing finds each
    // step's model (the ensemble's namespace first, then the only namespace holding its name).
    model_namespace: refused("Triton reserves it for the server's use; with --model-namespacing each step's model is found in the ensemble's namespace, or else in the only namespace that has its name"),
  },
  'inference.ModelInstanceGroup': {
    name: supported,
    // KIND_GPU is refused by validation (the server has no GPUs); the other kinds run on the CPU.
    kind: supported,
    count: supported,
    // Applied with --rate-limit=execution_count; with the default off, Triton too ignores it.
    rate_limiter: supported,
    gpus: refused(NO_GPU),
    secondary_devices: refused(NO_GPU),
    profile: refused(TENSORRT_ONLY),
    passive: refused('every instance Nereid starts takes requests', 'remove it to start the instances as ordinary ones'),
    host_policy: refused('Nereid has no host policies'),
  },
  'inference.ModelParameter': { string_value: supported },
  'inference.ModelWarmup': { name: supported, batch_size: supported, inputs: supported, count: supported },
  'inference.ModelWarmup.Input': { data_type: supported, dims: supported, zero_data: supported, random_data: supported, input_data_file: supported },
  'inference.ModelTransactionPolicy': { decoupled: supported },
  'inference.ModelResponseCache': { enable: supported },
  'inference.ModelRateLimiter': { resources: supported, priority: supported },
  'inference.ModelRateLimiter.Resource': { name: supported, global: supported, count: supported },
};

/**
 * Fails the load of a normalised config that sets a field Nereid does not implement, naming the field:
 *
 *     model 'seq': config field 'instance_group[0].rate_limiter' is not supported yet (Nereid has no rate limiter); remove it ...
 *
 * A field counts as set when it differs from its default: a non-zero scalar, a non-empty list or map,
 * the chosen member of a oneof, or a message with anything set inside (`response_cache { enable: false }`
 * is the default and loads). A field with no row in the table is refused, so nothing new is accepted
 * unread.
 */
export function refuseUnsupportedFields(config: ModelConfig): void {
  checkMessage(reflect(ModelConfigSchema, config), '', config.name);
}

function checkMessage(message: ReflectMessage, path: string, modelName: string): void {
  const rows = SUPPORTED_FIELDS[message.desc.typeName] ?? {};
  for (const field of message.fields) {
    if (!isNonDefault(message, field)) continue;
    const fieldPath = path === '' ? field.name : `${path}.${field.name}`;
    const decision = rows[field.name] ?? refused('Nereid has not decided how to handle this field');
    if (decision.decision === 'refused') {
      throw new NereidError(
        'INVALID_ARG',
        `model '${modelName}': config field '${fieldPath}' is not supported yet (${decision.because}); ${decision.fix}`,
        { reason: 'UNSUPPORTED_CONFIG_FIELD', details: { field: fieldPath } },
      );
    }
    if (decision.decision === 'supported') checkValue(message.get(field), fieldPath, modelName);
  }
}

/** Checks the messages a supported field holds: itself, each list item, each map value. */
function checkValue(value: unknown, path: string, modelName: string): void {
  if (isReflectMessage(value)) {
    checkMessage(value, path, modelName);
  } else if (isReflectList(value)) {
    for (const [index, item] of value.entries()) {
      if (isReflectMessage(item)) checkMessage(item, `${path}[${index}]`, modelName);
    }
  } else if (isReflectMap(value)) {
    for (const [key, item] of value.entries()) {
      if (isReflectMessage(item)) checkMessage(item, `${path}[${JSON.stringify(String(key))}]`, modelName);
    }
  }
}

function isNonDefault(message: ReflectMessage, field: DescField): boolean {
  if (!message.isSet(field)) return false;
  if (field.fieldKind !== 'message' || field.oneof !== undefined) return true;
  const value = message.get(field) as ReflectMessage;
  return !equals(field.message, value.message as Message, create(field.message));
}
