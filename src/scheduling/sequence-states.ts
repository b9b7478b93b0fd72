import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveConfinedPath } from '../kernel/confined-path.js';
import { NereidError } from '../kernel/errors.js';
import type { Tensor } from '../kernel/tensor.js';
import { type DataType, dataTypeByteSize, dataTypeFromConfig } from '../protocol/data-type.js';
import { DataType as ConfigDataType, type ModelConfig, type ModelSequenceBatching_State } from '../protocol/gen/model_config_pb.js';
import { type TensorData, allocateFixedSize, deserializeBytes, elementCount, viewFixedSize } from '../protocol/tensor-data.js';

/** One implicit state of config `sequence_batching.state`, with the tensor a sequence starts from. */
export interface StateSpec {
  readonly inputName: string;
  readonly outputName: string;
  /** Without the batch dimension. */
  readonly initial: { readonly dataType: DataType; readonly shape: readonly number[]; readonly data: TensorData };
}

const wireTypeOf = (value: ConfigDataType, what: string): DataType => {
  const dataType = dataTypeFromConfig(ConfigDataType[value] ?? '');
  if (dataType === undefined) throw new NereidError('INVALID_ARG', `${what} has data type ${ConfigDataType[value] ?? value}, which has no tensor type`);
  return dataType;
};

/**
 * The states of a model and what each sequence starts from (Triton
 * docs/user_guide/implicit_state_management.md "State Initialization"): an `initial_state` with
 * `zero_data` gives zeros of its dims, one with `data_file` the raw row-major contents of
 * `<model>/initial_state/<data_file>`; without one the state starts as zeros with every variable
 * dimension 1 (Triton leaves it uninitialised; the model reads START to know). Read once at load.
 */
export async function loadStateSpecs(config: ModelConfig, modelDir: string): Promise<StateSpec[]> {
  if (config.schedulingChoice.case !== 'sequenceBatching') return [];
  return Promise.all(config.schedulingChoice.value.state.map((state) => loadStateSpec(config.name, state, modelDir)));
}

async function loadStateSpec(modelName: string, state: ModelSequenceBatching_State, modelDir: string): Promise<StateSpec> {
  const what = `model '${modelName}' state '${state.inputName}'`;
  const initialState = state.initialState[0];
  if (initialState === undefined) {
    const dataType = wireTypeOf(state.dataType, what);
    const shape = state.dims.map((dim) => (dim === -1n ? 1 : Number(dim)));
    return { inputName: state.inputName, outputName: state.outputName, initial: { dataType, shape, data: zeros(dataType, elementCount(shape)) } };
  }
  const dataType = wireTypeOf(initialState.dataType, `${what} initial_state`);
  const shape = initialState.dims.map(Number);
  if (shape.some((dim) => dim < 0)) {
    throw new NereidError('INVALID_ARG', `${what}: initial_state dims [${shape.join(',')}] have a variable dimension; expected fixed dims`);
  }
  const count = elementCount(shape);
  if (initialState.stateData.case !== 'dataFile') {
    return { inputName: state.inputName, outputName: state.outputName, initial: { dataType, shape, data: zeros(dataType, count) } };
  }
  const folder = join(modelDir, 'initial_state');
  const path = await resolveConfinedPath({ folder, path: initialState.stateData.value, field: `${what}: initial_state.data_file` });
  const bytes = await readFile(path).catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `${what}: cannot read initial state file '${path}': ${error.message}`);
  });
  let data: TensorData;
  if (dataType === 'BYTES') {
    const elements = deserializeBytes(bytes);
    if (typeof elements === 'string' || elements.length !== count) {
      throw new NereidError('INVALID_ARG', `${what}: initial state file '${path}' does not hold ${count} length-prefixed strings`);
    }
    data = elements;
  } else {
    const expectedBytes = count * dataTypeByteSize(dataType);
    if (bytes.byteLength !== expectedBytes) {
      throw new NereidError('INVALID_ARG', `${what}: initial state file '${path}' has ${bytes.byteLength} bytes; expected ${expectedBytes} for dims [${shape.join(',')}] of ${dataType}`);
    }
    data = viewFixedSize(dataType, new Uint8Array(bytes));
  }
  return { inputName: state.inputName, outputName: state.outputName, initial: { dataType, shape, data } };
}

function zeros(dataType: DataType, count: number): TensorData {
  return dataType === 'BYTES' ? Array.from({ length: count }, () => new Uint8Array(0)) : allocateFixedSize(dataType, count);
}

/**
 * The implicit states of one sequence, keyed by input name: set from the initial states when a
 * request starts the sequence, replaced by each response's state outputs, dropped when the sequence
 * ends or idles out (the sequence object holding them is released).
 */
export class SequenceStates {
  readonly #specs: readonly StateSpec[];
  readonly #isBatching: boolean;

  constructor(specs: readonly StateSpec[], isBatching: boolean) {
    this.#specs = specs;
    this.#isBatching = isBatching;
  }

  get isEmpty(): boolean {
    return this.#specs.length === 0;
  }

  /** The names of the state outputs, which every request of the sequence asks the model for. */
  get outputNames(): readonly string[] {
    return this.#specs.map((spec) => spec.outputName);
  }

  /** The states a sequence starts with. */
  initial(): Map<string, Tensor> {
    return new Map(
      this.#specs.map((spec) => [
        spec.inputName,
        { name: spec.inputName, dataType: spec.initial.dataType, shape: this.#isBatching ? [1, ...spec.initial.shape] : spec.initial.shape, data: spec.initial.data },
      ]),
    );
  }

  /**
   * Takes each state output out of a response into `states` (as the next request's input), and
   * returns the outputs for the client: without the state outputs, except those the client asked for.
   * A state output the model did not return leaves that state as it was.
   */
  update(states: Map<string, Tensor>, outputs: readonly Tensor[], clientOutputs: ReadonlySet<string>): Tensor[] {
    for (const spec of this.#specs) {
      const output = outputs.find((candidate) => candidate.name === spec.outputName);
      if (output !== undefined) states.set(spec.inputName, { name: spec.inputName, dataType: output.dataType, shape: output.shape, data: output.data });
    }
    return outputs.filter((output) => clientOutputs.has(output.name) || !this.#specs.some((spec) => spec.outputName === output.name));
  }
}
