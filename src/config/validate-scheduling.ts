import { NereidError } from '../kernel/errors.js';
import {
  DataType,
  ModelQueuePolicy_TimeoutAction,
  ModelSequenceBatching_Control_Kind as ControlKind,
  type ModelConfig,
  type ModelDynamicBatching,
  type ModelEnsembling,
  type ModelQueuePolicy,
  type ModelSequenceBatching,
} from '../protocol/gen/model_config_pb.js';
import { responseCacheRefusal } from './response-cache-refusal.js';

/**
 * Checks the scheduling choice (dynamic batching, sequence batching or ensemble scheduling) as Triton's
 * ValidateModelConfig and ValidateEnsembleSchedulingConfig do (core src/model_config_utils.cc).
 *
 * NOTE: like Triton, batching with max_batch_size 0 is allowed (a sequence batcher routes sequences even
 * without batching); only preferred batch sizes are held to 1..max_batch_size.
 */
export function validateScheduling(config: ModelConfig, file: string): void {
  const scheduling = config.schedulingChoice;
  switch (scheduling.case) {
    case 'dynamicBatching':
      validateDynamicBatching(config, scheduling.value, file);
      break;
    case 'sequenceBatching':
      validateSequenceBatching(config, scheduling.value, file);
      break;
    case 'ensembleScheduling':
      validateEnsemble(config, scheduling.value, file);
      break;
    default:
      if (config.platform === 'ensemble') {
        throw invalid(file, `platform is 'ensemble' but ensemble_scheduling is not set; expected ensemble_scheduling { step [ ... ] }`);
      }
  }
}

function checkPreferredSizes(sizes: readonly number[], path: string, maxBatchSize: number, file: string): void {
  sizes.forEach((size, index) => {
    if (size <= 0 || size > maxBatchSize) {
      const expected = maxBatchSize > 0 ? `a size from 1 to max_batch_size (${maxBatchSize})` : 'no preferred sizes, since max_batch_size is 0';
      throw invalid(file, `${path}[${index}] is ${size}; expected ${expected}`);
    }
  });
}

function validateDynamicBatching(config: ModelConfig, batching: ModelDynamicBatching, file: string): void {
  checkPreferredSizes(batching.preferredBatchSize, 'dynamic_batching.preferred_batch_size', config.maxBatchSize, file);
  const levels = batching.priorityLevels;
  if (levels !== 0n) {
    const level = batching.defaultPriorityLevel;
    if (level === 0n || level > levels) {
      throw invalid(file, `dynamic_batching.default_priority_level is ${level}; expected a level from 1 to priority_levels (${levels})`);
    }
    for (const key of Object.keys(batching.priorityQueuePolicy)) {
      if (BigInt(key) === 0n || BigInt(key) > levels) {
        throw invalid(file, `dynamic_batching.priority_queue_policy has level ${key}; expected levels from 1 to priority_levels (${levels})`);
      }
    }
  }
  if (batching.preserveOrdering) {
    if (levels > 1n) {
      throw invalid(file, `dynamic_batching.preserve_ordering is true with priority_levels ${levels}; expected at most 1 priority level when responses keep request order`);
    }
    const policies: Array<[string, ModelQueuePolicy | undefined]> = [
      ['default_queue_policy', batching.defaultQueuePolicy],
      ...Object.entries(batching.priorityQueuePolicy).map(([key, policy]): [string, ModelQueuePolicy] => [`priority_queue_policy[${key}]`, policy]),
    ];
    for (const [name, policy] of policies) {
      if (policy !== undefined && policy.defaultTimeoutMicroseconds !== 0n && policy.timeoutAction === ModelQueuePolicy_TimeoutAction.DELAY) {
        throw invalid(file, `dynamic_batching.${name}.timeout_action is DELAY while preserve_ordering is true; expected REJECT (or no timeout)`);
      }
    }
  }
}

function validateSequenceBatching(config: ModelConfig, batching: ModelSequenceBatching, file: string): void {
  if (config.responseCache?.enable === true) {
    throw invalid(file, responseCacheRefusal(config.name, 'sequence'));
  }
  const seenNames = new Set<string>();
  const seenKinds = new Set<ControlKind>();
  batching.controlInput.forEach((controlInput, index) => {
    const path = `sequence_batching.control_input[${index}]`;
    if (controlInput.name === '') {
      throw invalid(file, `${path}.name is empty; expected the name of the model input that carries the control`);
    }
    if (seenNames.has(controlInput.name)) {
      throw invalid(file, `${path}.name '${controlInput.name}' is already used by another control input; expected one control input per tensor`);
    }
    seenNames.add(controlInput.name);
    controlInput.control.forEach((control, controlIndex) => {
      const controlPath = `${path}.control[${controlIndex}]`;
      const kind = ControlKind[control.kind] ?? String(control.kind);
      if (seenKinds.has(control.kind)) {
        throw invalid(file, `${controlPath} repeats kind ${kind}; expected each control kind once`);
      }
      seenKinds.add(control.kind);
      const lists = [
        ['int32_false_true', control.int32FalseTrue.length],
        ['fp32_false_true', control.fp32FalseTrue.length],
        ['bool_false_true', control.boolFalseTrue.length],
      ] as const;
      const given = lists.filter(([, length]) => length > 0);
      if (control.kind === ControlKind.CONTROL_SEQUENCE_CORRID) {
        if (given.length > 0) {
          throw invalid(file, `${controlPath} of kind ${kind} sets ${given[0]![0]}; expected only data_type for a correlation id control`);
        }
        const allowed = [DataType.TYPE_UINT64, DataType.TYPE_INT64, DataType.TYPE_UINT32, DataType.TYPE_INT32, DataType.TYPE_STRING];
        if (!allowed.includes(control.dataType)) {
          throw invalid(file, `${controlPath}.data_type is ${DataType[control.dataType] ?? control.dataType}; expected TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING`);
        }
        return;
      }
      if (given.length !== 1) {
        const what = given.length === 0 ? 'sets none' : `sets ${given.map(([name]) => name).join(' and ')}`;
        throw invalid(file, `${controlPath} of kind ${kind} ${what}; expected exactly one of int32_false_true, fp32_false_true or bool_false_true`);
      }
      const [listName, length] = given[0]!;
      if (length !== 2) {
        throw invalid(file, `${controlPath}.${listName} has ${length} entries; expected 2, the false value then the true value`);
      }
    });
  });
  batching.state.forEach((state, index) => {
    const path = `sequence_batching.state[${index}]`;
    if (state.inputName === '' || state.outputName === '') {
      throw invalid(file, `${path} has an empty input_name or output_name; expected the model's state input and output`);
    }
    if (config.input.some((input) => input.name === state.inputName)) {
      throw invalid(file, `${path}.input_name '${state.inputName}' is also listed under input; expected the state input only in the state, the server feeds it`);
    }
    const initialState = state.initialState[0];
    if (state.initialState.length > 1) throw invalid(file, `${path}.initial_state has ${state.initialState.length} entries; expected at most one`);
    if (initialState !== undefined && initialState.dataType !== state.dataType) {
      throw invalid(file, `${path}.initial_state.data_type is ${DataType[initialState.dataType]}, but the state's data_type is ${DataType[state.dataType]}; expected the same`);
    }
  });
  for (const controlInput of batching.controlInput) {
    if (config.input.some((input) => input.name === controlInput.name)) {
      throw invalid(file, `control input '${controlInput.name}' is also listed under input; expected control inputs only in sequence_batching.control_input, the sequence batcher fills them`);
    }
  }
  const strategy = batching.strategyChoice;
  if (strategy.case === 'oldest') {
    if (strategy.value.maxCandidateSequences < 1) {
      throw invalid(file, `sequence_batching.oldest.max_candidate_sequences is ${strategy.value.maxCandidateSequences}; expected at least 1`);
    }
    checkPreferredSizes(strategy.value.preferredBatchSize, 'sequence_batching.oldest.preferred_batch_size', config.maxBatchSize, file);
  } else if (strategy.case === 'direct') {
    const utilization = strategy.value.minimumSlotUtilization;
    if (!(utilization >= 0 && utilization <= 1)) {
      throw invalid(file, `sequence_batching.direct.minimum_slot_utilization is ${utilization}; expected a fraction from 0.0 to 1.0`);
    }
  }
}

function validateEnsemble(config: ModelConfig, ensemble: ModelEnsembling, file: string): void {
  if (config.platform !== 'ensemble') {
    throw invalid(file, `ensemble_scheduling is set but platform is '${config.platform}'; expected platform 'ensemble'`);
  }
  if (config.instanceGroup.length > 0) {
    throw invalid(file, `instance_group is set for an ensemble; expected none, the composing models have their own instances`);
  }
  if (config.optimization !== undefined) {
    throw invalid(file, `optimization is set for an ensemble; expected none`);
  }
  if (config.modelWarmup.length > 0) {
    throw invalid(file, `model_warmup is set for an ensemble; expected none, warm up the composing models instead`);
  }
  if (ensemble.step.length === 0) {
    throw invalid(file, `ensemble_scheduling.step is empty; expected at least one step`);
  }
  checkEnsembleDataFlow(config, ensemble, file);
}

interface EnsembleTensor {
  isWritten: boolean;
  isReady: boolean;
  /** Tensors that feed the step writing this one. */
  readonly sources: Set<string>;
  /** Tensors written by steps that read this one. */
  readonly consumers: Set<string>;
}

/**
 * Every ensemble input must be read, every ensemble output must be computable from the inputs, and every
 * other ensemble tensor must be both computable and read by some step (Triton's BuildEnsembleGraph and
 * the data-flow walk after it).
 */
function checkEnsembleDataFlow(config: ModelConfig, ensemble: ModelEnsembling, file: string): void {
  const tensors = new Map<string, EnsembleTensor>();
  const tensor = (name: string): EnsembleTensor => {
    let found = tensors.get(name);
    if (found === undefined) {
      found = { isWritten: false, isReady: false, sources: new Set(), consumers: new Set() };
      tensors.set(name, found);
    }
    return found;
  };
  ensemble.step.forEach((step, index) => {
    const path = `ensemble_scheduling.step[${index}]`;
    for (const [field, empty] of [['model_name', step.modelName === ''], ['input_map', Object.keys(step.inputMap).length === 0], ['output_map', Object.keys(step.outputMap).length === 0]] as const) {
      if (empty) {
        throw invalid(file, `${path}.${field} is empty; expected ${field === 'model_name' ? 'the name of the model this step runs' : `a map from ${field === 'input_map' ? 'model input' : 'model output'} names to ensemble tensor names`}`);
      }
    }
    const written = Object.values(step.outputMap);
    for (const name of written) {
      if (tensor(name).isWritten) {
        throw invalid(file, `${path}.output_map writes ensemble tensor '${name}', which another output already writes; expected each ensemble tensor written once`);
      }
      tensor(name).isWritten = true;
    }
    for (const source of Object.values(step.inputMap)) {
      for (const name of written) {
        tensor(name).sources.add(source);
        tensor(source).consumers.add(name);
      }
    }
  });
  const ready: string[] = [];
  config.input.forEach((input, index) => {
    const found = tensors.get(input.name);
    if (found === undefined) {
      throw invalid(file, `input[${index}] '${input.name}' is not read by any ensemble step; expected it in some step's input_map`);
    }
    found.isReady = true;
    ready.push(input.name);
  });
  while (ready.length > 0) {
    for (const name of tensors.get(ready.shift()!)!.consumers) {
      const next = tensors.get(name)!;
      if (!next.isReady && [...next.sources].every((source) => tensors.get(source)!.isReady)) {
        next.isReady = true;
        ready.push(name);
      }
    }
  }
  const outputs = new Set<string>();
  config.output.forEach((output, index) => {
    const found = tensors.get(output.name);
    if (found === undefined) {
      throw invalid(file, `output[${index}] '${output.name}' is not written by any ensemble step; expected it in some step's output_map`);
    }
    if (!found.isReady) {
      const why = whyUnreachable(output.name, tensors);
      throw invalid(file, `output[${index}] '${output.name}' cannot be computed from the ensemble inputs${why}; expected every step input to come from an ensemble input or another step`);
    }
    outputs.add(output.name);
  });
  for (const [name, found] of tensors) {
    if (!outputs.has(name) && (!found.isReady || found.consumers.size === 0)) {
      throw invalid(file, `ensemble tensor '${name}' is ${found.isReady ? 'never read by a later step' : 'never produced'}; expected every ensemble tensor to connect an input to an output`);
    }
  }
}

/**
 * Why a tensor cannot be computed: following the first source that cannot either, the walk ends at a
 * tensor no step writes, or comes back to one it has seen (a cycle between steps).
 */
function whyUnreachable(name: string, tensors: ReadonlyMap<string, EnsembleTensor>): string {
  const path = [name];
  let current = name;
  while (true) {
    const missing = [...tensors.get(current)!.sources].find((source) => !tensors.get(source)!.isReady);
    if (missing === undefined) return '';
    if (!tensors.get(missing)!.isWritten) return ` because ensemble tensor '${missing}' is never produced`;
    if (path.includes(missing)) return ` because ensemble tensor '${missing}' depends on itself (a cycle: ${[...path.slice(path.indexOf(missing)), missing].map((t) => `'${t}'`).join(' <- ')})`;
    path.push(missing);
    current = missing;
  }
}

function invalid(file: string, message: string): NereidError {
  return new NereidError('INVALID_ARG', `${file}: ${message}`);
}
