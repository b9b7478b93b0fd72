import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import type { DataType } from '../protocol/data-type.js';
import {
  DataType as ConfigDataType,
  type ModelSequenceBatching,
  ModelSequenceBatching_Control_Kind as ControlKind,
} from '../protocol/gen/model_config_pb.js';

/** A request's correlation id: Triton's `sequence_id`, an unsigned integer or a string. */
export type CorrelationId = bigint | string;

/** What a request says about its sequence (Triton's correlation id and START / END flags). */
export interface SequenceFlags {
  /** Undefined when the request gives none, or gives 0 or "" (Triton: not in a sequence). */
  readonly correlationId: CorrelationId | undefined;
  readonly isStart: boolean;
  readonly isEnd: boolean;
}

/**
 * Reads the `sequence_id`, `sequence_start` and `sequence_end` parameters, which
 * kernel/validate-request.ts has checked: an unsigned integer or a string, and booleans.
 */
export function sequenceFlagsOf(request: InferRequest): SequenceFlags {
  const { sequence_id: id, sequence_start: start, sequence_end: end } = request.parameters;
  let correlationId: CorrelationId | undefined;
  if (typeof id === 'string') correlationId = id === '' ? undefined : id;
  else if (typeof id === 'number' || typeof id === 'bigint') correlationId = BigInt(id) === 0n ? undefined : BigInt(id);
  return { correlationId, isStart: start === true, isEnd: end === true };
}

/** A map key that keeps the uint64 1 and the string "1" apart, as Triton's SequenceId does. */
export const correlationKeyOf = (id: CorrelationId): string => (typeof id === 'string' ? `s:${id}` : `u:${id}`);

/** The id as Triton writes it in messages: the number's digits, or the string itself. */
export const formatCorrelationId = (id: CorrelationId): string => String(id);

/** One slot's control values for one execution. */
export interface SlotSignal {
  readonly isStart: boolean;
  readonly isEnd: boolean;
  /** False for the padding of an empty slot. */
  readonly isReady: boolean;
  readonly correlationId: CorrelationId | undefined;
}

interface BooleanControl {
  readonly kind: 'boolean';
  readonly name: string;
  readonly controlKind: ControlKind;
  readonly dataType: DataType;
  readonly falseValue: number | boolean;
  readonly trueValue: number | boolean;
}

interface CorrelationControl {
  readonly kind: 'corrid';
  readonly name: string;
  readonly dataType: DataType;
}

type Control = BooleanControl | CorrelationControl;

const CORRID_TYPES: Partial<Record<ConfigDataType, DataType>> = {
  [ConfigDataType.TYPE_UINT64]: 'UINT64',
  [ConfigDataType.TYPE_INT64]: 'INT64',
  [ConfigDataType.TYPE_UINT32]: 'UINT32',
  [ConfigDataType.TYPE_INT32]: 'INT32',
  [ConfigDataType.TYPE_STRING]: 'BYTES',
};

const encoder = new TextEncoder();

/**
 * The control inputs of config `sequence_batching.control_input` (Triton core
 * sequence_batch_scheduler.cc CreateBooleanControlTensors and SetControlTensors): START, END and
 * READY carry the configured false or true value, CORRID the correlation id in its data_type. Every
 * control tensor holds one element per request: shape [1, 1] for a model that batches, [1] otherwise.
 *
 *   slot:   0     1        2
 *   START   1     0        0      a request that starts its sequence, one that continues it,
 *   READY   1     1        0      and an empty slot (its padding request is not ready)
 */
export class SequenceControls {
  readonly #controls: readonly Control[];
  readonly #corridControl: Extract<Control, { kind: 'corrid' }> | undefined;
  readonly #shape: readonly number[];

  constructor(batching: ModelSequenceBatching, isBatching: boolean) {
    this.#shape = isBatching ? [1, 1] : [1];
    this.#controls = batching.controlInput.flatMap((input): Control[] =>
      input.control.map((control): Control => {
        if (control.kind === ControlKind.CONTROL_SEQUENCE_CORRID) {
          return { kind: 'corrid', name: input.name, dataType: CORRID_TYPES[control.dataType] ?? 'UINT64' };
        }
        const [dataType, values] =
          control.fp32FalseTrue.length > 0
            ? (['FP32', control.fp32FalseTrue] as const)
            : control.boolFalseTrue.length > 0
              ? (['BOOL', control.boolFalseTrue] as const)
              : (['INT32', control.int32FalseTrue] as const);
        return { kind: 'boolean', name: input.name, controlKind: control.kind, dataType, falseValue: values[0]!, trueValue: values[1]! };
      }),
    );
    this.#corridControl = this.#controls.find((control): control is Extract<Control, { kind: 'corrid' }> => control.kind === 'corrid');
  }

  /** The control tensors for one slot of an execution; a string id reaches a numeric control only as 0. */
  tensorsFor(signal: SlotSignal): Tensor[] {
    return this.#controls.map((control) => (control.kind === 'corrid' ? this.#corrid(control, signal.correlationId) : this.#boolean(control, signal)));
  }

  #boolean(control: BooleanControl, signal: SlotSignal): Tensor {
    const isTrue =
      control.controlKind === ControlKind.CONTROL_SEQUENCE_START
        ? signal.isStart
        : control.controlKind === ControlKind.CONTROL_SEQUENCE_END
          ? signal.isEnd
          : signal.isReady;
    const value = isTrue ? control.trueValue : control.falseValue;
    const data =
      control.dataType === 'FP32'
        ? Float32Array.of(Number(value))
        : control.dataType === 'BOOL'
          ? Uint8Array.of(value === true ? 1 : 0)
          : Int32Array.of(Number(value));
    return { name: control.name, dataType: control.dataType, shape: this.#shape, data };
  }

  /** Why the model's CORRID control cannot carry `id` (a string id for a numeric control), or undefined when it can. */
  refusalOf(id: CorrelationId, modelName: string): string | undefined {
    const control = this.#corridControl;
    if (control === undefined || control.dataType === 'BYTES' || typeof id !== 'string') return undefined;
    return `inference request for sequence ${id} to model '${modelName}' gives a string correlation ID, but control input '${control.name}' of kind CONTROL_SEQUENCE_CORRID has data type ${control.dataType}; send an unsigned integer sequence_id, or set the control's data_type to TYPE_STRING`;
  }

  #corrid(control: CorrelationControl, id: CorrelationId | undefined): Tensor {
    const shape = this.#shape;
    const name = control.name;
    if (control.dataType === 'BYTES') return { name, dataType: 'BYTES', shape, data: [encoder.encode(id === undefined ? '' : String(id))] };
    // A string id for a numeric control was refused at enqueue (refusalOf).
    const value = typeof id === 'bigint' ? id : 0n;
    // Triton truncates an id to a 32-bit control, as a cast in C++ does.
    switch (control.dataType) {
      case 'INT64':
        return { name, dataType: 'INT64', shape, data: BigInt64Array.of(BigInt.asIntN(64, value)) };
      case 'UINT32':
        return { name, dataType: 'UINT32', shape, data: Uint32Array.of(Number(BigInt.asUintN(32, value))) };
      case 'INT32':
        return { name, dataType: 'INT32', shape, data: Int32Array.of(Number(BigInt.asIntN(32, value))) };
      default:
        return { name, dataType: 'UINT64', shape, data: BigUint64Array.of(BigInt.asUintN(64, value)) };
    }
  }
}
