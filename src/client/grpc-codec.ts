import { isDataType } from '../core/data-type.js';
import type { ParameterValue, TensorData } from '../core/tensor.js';
import { ClientError } from './errors.js';
import { outputDataFromBytes, outputDataFromJson } from './http-codec.js';
import { type PreparedInput, inputBytes } from './infer-input.js';
import { InferResult, type InferOutput } from './infer-result.js';
import type { InferOptions } from './types.js';
import { requestParameters, versionString } from './wire-messages.js';
import { CONTENTS_FIELD, type InferParameterMessage, parameterValues } from '../frontends/grpc/grpc-wire.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A parameter value as an InferParameter: integers as int64 (uint64 beyond its range), other numbers as double. */
export function parameterMessage(value: ParameterValue): InferParameterMessage {
  if (typeof value === 'boolean') return { bool_param: value };
  if (typeof value === 'string') return { string_param: value };
  if (typeof value === 'bigint') {
    if (value >= INT64_MIN && value <= INT64_MAX) return { int64_param: value.toString() };
    return { uint64_param: value.toString() };
  }
  return Number.isSafeInteger(value) ? { int64_param: String(value) } : { double_param: value };
}

export function parameterMessages(parameters: Readonly<Record<string, ParameterValue>> | undefined): Record<string, InferParameterMessage> {
  return Object.fromEntries(Object.entries(parameters ?? {}).map(([key, value]) => [key, parameterMessage(value)]));
}

/**
 * A ModelInferRequest as Triton's clients send it: every input's data in `raw_input_contents`, in
 * input order (views of the caller's arrays; BYTES serialized with their 4-byte lengths).
 */
export function encodeModelInferRequest(modelName: string, inputs: readonly PreparedInput[], options: InferOptions): object {
  const parameters = parameterMessages(requestParameters(options));
  // Triton's gRPC server reads `priority` as a uint64 parameter, as tritonclient sends it.
  if (options.priority !== undefined && Number.isSafeInteger(options.priority) && options.priority >= 0) {
    parameters.priority = { uint64_param: String(options.priority) };
  }
  return {
    model_name: modelName,
    model_version: versionString(options.version),
    id: options.id ?? '',
    parameters,
    inputs: inputs.map((input) => ({ name: input.name, datatype: input.datatype, shape: input.shape, parameters: parameterMessages(input.parameters) })),
    outputs: (options.outputs ?? []).map((output) => ({
      name: output.name,
      parameters: parameterMessages({ ...output.parameters, ...(output.classCount !== undefined ? { classification: output.classCount } : {}) }),
    })),
    raw_input_contents: inputs.map((input) => {
      const bytes = inputBytes(input);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }),
  };
}

type Wire = Record<string, unknown>;

/**
 * Decodes a ModelInferResponse: outputs from `raw_output_contents` (as Triton and Nereid answer) or,
 * from servers that use them, from the typed `contents`.
 */
export function decodeModelInferResponse(message: unknown): InferResult {
  const response = message as Wire;
  const raw = (response.raw_output_contents ?? []) as Uint8Array[];
  const outputs: InferOutput[] = ((response.outputs ?? []) as Wire[]).map((output, index) => {
    const name = String(output.name);
    const datatype = output.datatype;
    if (!isDataType(datatype)) throw new ClientError(`output '${name}' has an unknown datatype ${JSON.stringify(datatype)}`);
    const shape = ((output.shape ?? []) as unknown[]).map(Number);
    let data: TensorData;
    if (raw.length > 0) {
      const bytes = raw[index];
      if (bytes === undefined) throw new ClientError(`the response has ${raw.length} raw_output_contents for ${(response.outputs as unknown[]).length} outputs`);
      data = outputDataFromBytes(name, datatype, bytes);
    } else {
      const field = datatype === 'FP16' || datatype === 'BF16' ? undefined : CONTENTS_FIELD[datatype];
      const contents = (output.contents ?? {}) as Wire;
      if (field === undefined) throw new ClientError(`output '${name}' is ${datatype} but came without raw contents`);
      const values = (contents[field] ?? []) as unknown[];
      data =
        datatype === 'BYTES'
          ? (values as Uint8Array[]).map((element) => new Uint8Array(element.buffer, element.byteOffset, element.byteLength))
          : outputDataFromJson(name, datatype, shape, values);
    }
    return { name, datatype, shape, data, parameters: parameterValues(output.parameters as Record<string, InferParameterMessage> | undefined) };
  });
  return new InferResult({
    modelName: String(response.model_name ?? ''),
    modelVersion: String(response.model_version ?? ''),
    id: String(response.id ?? ''),
    parameters: parameterValues(response.parameters as Record<string, InferParameterMessage> | undefined),
    outputs,
  });
}
