import type { DataType } from '../protocol/data-type.js';
import type { ParameterValue } from '../protocol/parameters.js';
import type { TensorData, TensorDataByType } from '../protocol/tensor-data.js';
import { ClientError } from './errors.js';

/**
 * One output tensor of a response. `data` is the data type's typed array (see TensorDataByType: BOOL
 * as a Uint8Array of 0/1, FP16 and BF16 as raw 16-bit patterns, INT64/UINT64 as BigInt arrays) or,
 * for BYTES, one Uint8Array per element. Arrays may be views of the response's bytes.
 */
export interface InferOutput {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
}

const utf8 = new TextDecoder();

/** What an inference response holds. */
export interface InferResultFields {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The request's id, echoed; empty when it had none. */
  readonly id: string;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly outputs: readonly InferOutput[];
}

/** An inference response, the same whichever protocol it came over. */
export class InferResult implements InferResultFields {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly outputs: readonly InferOutput[];
  #byName: ReadonlyMap<string, InferOutput> | undefined;

  constructor(fields: InferResultFields) {
    this.modelName = fields.modelName;
    this.modelVersion = fields.modelVersion;
    this.id = fields.id;
    this.parameters = fields.parameters;
    this.outputs = fields.outputs;
  }

  /** The output of that name; throws if the response has none. */
  output(name: string): InferOutput {
    this.#byName ??= new Map(this.outputs.map((output) => [output.name, output]));
    const output = this.#byName.get(name);
    if (output === undefined) {
      const names = this.outputs.map((o) => `'${o.name}'`).join(', ');
      throw new ClientError(`the response of model '${this.modelName}' has no output '${name}'; it has ${names === '' ? 'none' : names}`);
    }
    return output;
  }

  /**
   * An output's data. Given the data type it expects, checks it and returns the matching typed array
   * (`result.data('OUTPUT0', 'INT32')` is an Int32Array).
   */
  data<T extends DataType>(name: string, datatype: T): TensorDataByType[T];
  data(name: string): TensorData;
  data(name: string, datatype?: DataType): TensorData {
    const output = this.output(name);
    if (datatype !== undefined && output.datatype !== datatype) {
      throw new ClientError(`output '${name}' of model '${this.modelName}' is ${output.datatype}, not ${datatype}`);
    }
    return output.data;
  }

  /** A BYTES output's elements decoded as UTF-8 strings. */
  strings(name: string): string[] {
    return (this.data(name, 'BYTES') as Uint8Array[]).map((element) => utf8.decode(element));
  }
}
