import {
  type DataType,
  type InferRequest,
  type InferResponse,
  NereidError,
  type ParameterValue,
  type Tensor,
  asBytes,
  elementCount,
  isDataType,
  serializeBytes,
} from '../../core/index.js';
import type { JsonValue } from '../http/json-body.js';
import { tensorDataFromBytes } from '../tensor-bytes.js';
import { CONTENTS_FIELD, type InferParameterMessage, type TensorContentsMessage, parameterValues } from './grpc-wire.js';
import { tensorDataFromJson } from '../tensor-json.js';

/**
 * The messages as @grpc/proto-loader hands them over (keepCase, longs as strings, bytes as Buffers,
 * defaults filled, oneofs named): wire names, as the .proto spells them.
 */
export interface ModelInferRequestMessage {
  model_name: string;
  model_version: string;
  id: string;
  parameters?: Record<string, InferParameterMessage>;
  inputs?: Array<{
    name: string;
    datatype: string;
    shape?: string[];
    parameters?: Record<string, InferParameterMessage>;
    contents?: TensorContentsMessage | null;
  }>;
  outputs?: Array<{ name: string; parameters?: Record<string, InferParameterMessage> }>;
  raw_input_contents?: Buffer[];
}

export interface ModelInferResponseMessage {
  model_name: string;
  model_version: string;
  id: string;
  parameters: Record<string, InferParameterMessage>;
  outputs: Array<{ name: string; datatype: string; shape: number[] }>;
  raw_output_contents: Uint8Array[];
}

function hasContents(contents: TensorContentsMessage | null | undefined): boolean {
  return contents !== null && contents !== undefined && Object.values(contents).some((values) => Array.isArray(values) && values.length > 0);
}

function fromContents(name: string, dataType: DataType, shape: readonly number[], contents: TensorContentsMessage): Tensor['data'] {
  const count = elementCount(shape);
  if (dataType === 'FP16' || dataType === 'BF16') {
    throw new NereidError('INVALID_ARG', `input '${name}': ${dataType} data cannot travel in typed contents; send it in raw_input_contents`);
  }
  const values = (contents[CONTENTS_FIELD[dataType]] ?? []) as unknown[];
  if (dataType === 'BYTES') {
    if (values.length !== count) {
      throw new NereidError('INVALID_ARG', `unexpected number of elements for input '${name}': its shape has ${count} elements but bytes_contents holds ${values.length}`);
    }
    return (values as Buffer[]).map((element) => new Uint8Array(element.buffer, element.byteOffset, element.byteLength));
  }
  const asJson = dataType === 'INT64' || dataType === 'UINT64' ? (values as string[]).map((text) => BigInt(text)) : (values as JsonValue[]);
  return tensorDataFromJson(name, dataType, count, asJson as JsonValue);
}

const RAW_CONTENTS = { name: 'raw contents', sizePhrase: 'its raw_input_contents holds' } as const;

/**
 * Decodes a ModelInferRequest: each input's data from its typed `contents` or, as Triton's clients
 * send it, from `raw_input_contents` in input order (views of the message, not copies).
 */
export function decodeModelInferRequest(message: ModelInferRequestMessage): InferRequest {
  const version = message.model_version;
  if (version !== '' && !/^[0-9]+$/.test(version)) {
    throw new NereidError('INVALID_ARG', `model_version must be a number or empty, got '${version}'`);
  }
  const inputs = message.inputs ?? [];
  const raw = message.raw_input_contents ?? [];
  if (raw.length > 0 && raw.length !== inputs.length) {
    throw new NereidError(
      'INVALID_ARG',
      `raw_input_contents has ${raw.length} entries but the request has ${inputs.length} inputs; give one raw entry per input, in input order`,
    );
  }
  const tensors: Tensor[] = inputs.map((input, index) => {
    const { name } = input;
    if (!isDataType(input.datatype)) {
      throw new NereidError(
        'INVALID_ARG',
        `input '${name}': unknown datatype "${input.datatype}"; expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16`,
      );
    }
    const shape = (input.shape ?? []).map((dim) => Number(dim));
    if (shape.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
      throw new NereidError('INVALID_ARG', `input '${name}': shape must hold non-negative integers, got [${shape.join(',')}]`);
    }
    if (raw.length > 0 && hasContents(input.contents)) {
      throw new NereidError('INVALID_ARG', `input '${name}' has both contents and raw_input_contents; give one`);
    }
    const data = raw.length > 0 ? tensorDataFromBytes(name, input.datatype, shape, raw[index]!, RAW_CONTENTS) : fromContents(name, input.datatype, shape, input.contents ?? {});
    return { name, dataType: input.datatype, shape, data, parameters: parameterValues(input.parameters) };
  });
  const outputs = message.outputs?.map((output) => ({ name: output.name, parameters: parameterValues(output.parameters) }));
  return {
    modelName: message.model_name,
    ...(version !== '' ? { modelVersion: Number(version) } : {}),
    id: message.id,
    inputs: tensors,
    ...(outputs !== undefined && outputs.length > 0 ? { outputs } : {}),
    parameters: parameterValues(message.parameters),
  };
}

function toParameterMessage(value: ParameterValue): InferParameterMessage {
  if (typeof value === 'boolean') return { bool_param: value };
  if (typeof value === 'string') return { string_param: value };
  if (typeof value === 'bigint') return value >= 0n ? { uint64_param: value.toString() } : { int64_param: value.toString() };
  return Number.isInteger(value) ? { int64_param: String(value) } : { double_param: value };
}

/** Encodes a response as Triton does: every output's data in raw_output_contents, in output order. */
export function encodeModelInferResponse(response: InferResponse): ModelInferResponseMessage {
  return {
    model_name: response.modelName,
    model_version: response.modelVersion,
    id: response.id,
    parameters: Object.fromEntries(Object.entries(response.parameters).map(([key, value]) => [key, toParameterMessage(value)])),
    outputs: response.outputs.map((output) => ({ name: output.name, datatype: output.dataType, shape: [...output.shape] })),
    raw_output_contents: response.outputs.map((output) =>
      Array.isArray(output.data) ? serializeBytes(output.data) : asBytes(output.data as Exclude<Tensor['data'], Uint8Array[]>),
    ),
  };
}
