import type { DataType, ParameterValue } from '../../core/index.js';

/*
 * Message shapes of grpc_service.proto as @grpc/proto-loader takes and gives them (keepCase, 64-bit
 * integers as decimal strings), shared by the server's codec and the client's. Free of the server's
 * modules, so that the client can use it alone.
 */

/** InferParameter: a oneof. */
export interface InferParameterMessage {
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'double_param' | 'uint64_param';
  bool_param?: boolean;
  int64_param?: string;
  string_param?: string;
  double_param?: number;
  uint64_param?: string;
}

/** InferTensorContents: a tensor's values in the typed field of its data type. */
export interface TensorContentsMessage {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: string[];
  uint_contents?: number[];
  uint64_contents?: string[];
  fp32_contents?: number[];
  fp64_contents?: number[];
  bytes_contents?: Buffer[];
}

/** Which typed-contents field carries each data type; FP16 and BF16 have none (raw contents only). */
export const CONTENTS_FIELD: Record<Exclude<DataType, 'FP16' | 'BF16'>, keyof TensorContentsMessage> = {
  BOOL: 'bool_contents',
  INT8: 'int_contents',
  INT16: 'int_contents',
  INT32: 'int_contents',
  INT64: 'int64_contents',
  UINT8: 'uint_contents',
  UINT16: 'uint_contents',
  UINT32: 'uint_contents',
  UINT64: 'uint64_contents',
  FP32: 'fp32_contents',
  FP64: 'fp64_contents',
  BYTES: 'bytes_contents',
};

function parameterValue(message: InferParameterMessage): ParameterValue | undefined {
  switch (message.parameter_choice) {
    case 'bool_param':
      return message.bool_param ?? false;
    case 'string_param':
      return message.string_param ?? '';
    case 'double_param':
      return message.double_param ?? 0;
    case 'int64_param':
    case 'uint64_param': {
      const text = message[message.parameter_choice] ?? '0';
      const value = Number(text);
      return Number.isSafeInteger(value) ? value : BigInt(text);
    }
    default:
      return undefined;
  }
}

/** A `parameters` map's values: 64-bit integers as numbers when exact, else bigints; unset oneofs left out. */
export function parameterValues(messages: Readonly<Record<string, InferParameterMessage>> | undefined): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, message] of Object.entries(messages ?? {})) {
    const value = parameterValue(message);
    if (value !== undefined) out[key] = value;
  }
  return out;
}
