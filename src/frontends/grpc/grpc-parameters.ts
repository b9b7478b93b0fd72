import type { ParameterValue } from '../../core/index.js';

/**
 * InferParameter as @grpc/proto-loader takes and gives it (a oneof; 64-bit integers as decimal
 * strings). Shared by the server's codec and the client's, and free of the server's modules.
 */
export interface InferParameterMessage {
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'double_param' | 'uint64_param';
  bool_param?: boolean;
  int64_param?: string;
  string_param?: string;
  double_param?: number;
  uint64_param?: string;
}

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
