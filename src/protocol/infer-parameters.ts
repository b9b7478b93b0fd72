import type { DataType } from './data-type.js';
import type { ParameterValue } from './parameters.js';
import type { InferParameter, InferTensorContents } from './gen/grpc_service_pb.js';

/** The typed-contents fields of InferTensorContents. */
export type ContentsField = Exclude<keyof InferTensorContents, '$typeName' | '$unknown'>;

/** Which typed-contents field carries each data type; FP16 and BF16 have none (raw contents only). */
export const CONTENTS_FIELD: { readonly [T in Exclude<DataType, 'FP16' | 'BF16'>]: T extends 'BYTES' ? 'bytesContents' : Exclude<ContentsField, 'bytesContents'> } = {
  BOOL: 'boolContents',
  INT8: 'intContents',
  INT16: 'intContents',
  INT32: 'intContents',
  INT64: 'int64Contents',
  UINT8: 'uintContents',
  UINT16: 'uintContents',
  UINT32: 'uintContents',
  UINT64: 'uint64Contents',
  FP32: 'fp32Contents',
  FP64: 'fp64Contents',
  BYTES: 'bytesContents',
};

function parameterValue({ parameterChoice: choice }: InferParameter): ParameterValue | undefined {
  switch (choice.case) {
    case 'int64Param':
    case 'uint64Param':
      return Number.isSafeInteger(Number(choice.value)) ? Number(choice.value) : choice.value;
    case undefined:
      return undefined;
    default:
      return choice.value;
  }
}

/** A `parameters` map's values: 64-bit integers as numbers when exact, else bigints; unset oneofs left out. */
export function parameterValues(messages: Readonly<Record<string, InferParameter>>): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, message] of Object.entries(messages)) {
    const value = parameterValue(message);
    if (value !== undefined) out[key] = value;
  }
  return out;
}
