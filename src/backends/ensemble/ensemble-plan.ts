import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import type { DataType } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import { modelKey } from '../../kernel/model-id.js';
import type { ModelSpec } from '../../kernel/model-spec.js';

/** One step of an ensemble, resolved against the model it runs. */
export interface PlanStep {
  /** Position in `ensemble_scheduling.step`, for messages. */
  readonly index: number;
  readonly modelName: string;
  /** What the step's requests name: the model's name, or with namespacing the key of the model the step was linked to (model-id.ts). */
  readonly modelKey: string;
  /** A fixed version, or undefined for the newest ready one (`model_version: -1`). */
  readonly modelVersion: number | undefined;
  /** Model input name ← ensemble tensor name. */
  readonly inputs: ReadonlyArray<{ readonly modelInput: string; readonly tensor: string }>;
  /** Model output name → ensemble tensor name. */
  readonly outputs: ReadonlyArray<{ readonly modelOutput: string; readonly tensor: string }>;
  /** The model sends any number of responses per request; each one feeds the steps after it. */
  readonly isDecoupled: boolean;
}

interface TensorFacts {
  readonly dataType: DataType;
  /** Full shape, batch dimension included as -1 where the owner batches. */
  readonly shape: readonly number[];
  readonly owner: string;
}

const formatShape = (shape: readonly number[]): string => `[${shape.join(',')}]`;
const fullShape = (maxBatchSize: number, dims: readonly number[]): number[] => (maxBatchSize > 0 ? [-1, ...dims] : [...dims]);
const isCompatible = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((dim, index) => dim === -1 || b[index] === -1 || dim === b[index]);

/**
 * Resolves an ensemble's steps against the composing models and checks what Triton checks when it
 * builds the ensemble: every model exists and is served, maps name real inputs and outputs, every
 * required input is fed, and each tensor's data type and shape agree between the step that writes it
 * and every step that reads it. The data flow itself (unmapped, doubly written, unreachable tensors,
 * cycles) was checked with the configuration.
 */
export async function planEnsemble(
  config: ModelConfig,
  spec: ModelSpec,
  requireModel: (name: string, version?: number) => Promise<ModelSpec>,
): Promise<PlanStep[]> {
  const scheduling = config.schedulingChoice;
  if (scheduling.case !== 'ensembleScheduling') throw new NereidError('INTERNAL', `model '${config.name}' is not an ensemble`);
  const steps = scheduling.value.step;
  const where = (index: number): string => `ensemble '${config.name}' step ${index} (model '${steps[index]!.modelName}')`;

  const composing = await Promise.all(
    steps.map(async (step, index) => {
      if (step.modelName === config.name) throw new NereidError('INVALID_ARG', `${where(index)}: an ensemble cannot run itself`);
      const version = step.modelVersion === -1n ? undefined : Number(step.modelVersion);
      try {
        return await requireModel(step.modelName, version);
      } catch (error) {
        throw new NereidError('INVALID_ARG', `${where(index)}: the model cannot be served: ${(error as Error).message}`);
      }
    }),
  );

  const facts = new Map<string, TensorFacts>();
  for (const input of spec.inputs) facts.set(input.name, { dataType: input.dataType, shape: fullShape(spec.maxBatchSize, input.dims), owner: `ensemble input '${input.name}'` });
  // Writers first, so that every reader can be checked against what it receives.
  composing.forEach((model, index) => {
    if (spec.maxBatchSize > 0 && model.maxBatchSize < spec.maxBatchSize) {
      throw new NereidError(
        'INVALID_ARG',
        `${where(index)}: the ensemble's max_batch_size is ${spec.maxBatchSize} but the model's is ${model.maxBatchSize}; expected every composing model to take batches at least as large as the ensemble's`,
      );
    }
    for (const [modelOutput, tensor] of Object.entries(steps[index]!.outputMap)) {
      const output = model.outputByName.get(modelOutput);
      if (output === undefined) {
        throw new NereidError('INVALID_ARG', `${where(index)}: output_map names '${modelOutput}', which is not an output of the model (outputs: ${model.outputs.map((o) => `'${o.name}'`).join(', ')})`);
      }
      facts.set(tensor, { dataType: output.dataType, shape: fullShape(model.maxBatchSize, output.dims), owner: `output '${modelOutput}' of step ${index}` });
    }
  });
  const agree = (tensor: string, expected: { dataType: DataType; shape: readonly number[] }, what: string): void => {
    const actual = facts.get(tensor)!;
    if (actual.dataType !== expected.dataType) {
      throw new NereidError('INVALID_ARG', `ensemble '${config.name}': tensor '${tensor}' is ${actual.dataType} (${actual.owner}) but ${what} expects ${expected.dataType}`);
    }
    if (!isCompatible(actual.shape, expected.shape)) {
      throw new NereidError(
        'INVALID_ARG',
        `ensemble '${config.name}': tensor '${tensor}' has shape ${formatShape(actual.shape)} (${actual.owner}) but ${what} expects ${formatShape(expected.shape)}`,
      );
    }
  };
  const plan = composing.map((model, index): PlanStep => {
    const step = steps[index]!;
    for (const [modelInput, tensor] of Object.entries(step.inputMap)) {
      const input = model.inputByName.get(modelInput);
      if (input === undefined) {
        throw new NereidError('INVALID_ARG', `${where(index)}: input_map names '${modelInput}', which is not an input of the model (inputs: ${model.inputs.map((i) => `'${i.name}'`).join(', ')})`);
      }
      agree(tensor, { dataType: input.dataType, shape: fullShape(model.maxBatchSize, input.dims) }, `input '${modelInput}' of step ${index}`);
    }
    const unfed = model.inputs.filter((input) => !input.isOptional && step.inputMap[input.name] === undefined);
    if (unfed.length > 0) {
      throw new NereidError('INVALID_ARG', `${where(index)}: the model's required input(s) ${unfed.map((i) => `'${i.name}'`).join(', ')} are not in the step's input_map`);
    }
    return {
      index,
      modelName: step.modelName,
      modelKey: modelKey(model),
      modelVersion: step.modelVersion === -1n ? undefined : Number(step.modelVersion),
      inputs: Object.entries(step.inputMap).map(([modelInput, tensor]) => ({ modelInput, tensor })),
      outputs: Object.entries(step.outputMap).map(([modelOutput, tensor]) => ({ modelOutput, tensor })),
      isDecoupled: model.isDecoupled,
    };
  });
  for (const output of spec.outputs) agree(output.name, { dataType: output.dataType, shape: fullShape(spec.maxBatchSize, output.dims) }, `ensemble output '${output.name}'`);
  return plan;
}
