import { type DataType, isDataType } from '../protocol/data-type.js';
import type { ParameterValue } from '../protocol/parameters.js';
import { type TensorData, allocateFixedSize, deserializeBytes, elementCount, viewFixedSize } from '../protocol/tensor-data.js';
import { ClientError } from './errors.js';
import { type PreparedInput, type PreparedSharedMemoryInput, inputBytes, inputJsonValues, sharedMemoryParameters } from './infer-input.js';
import { InferResult, type InferOutput } from './infer-result.js';
import type { InferOptions } from './types.js';
import { requestParameters } from './wire-messages.js';
import { parseJsonBody } from '../protocol/json-body.js';

/** An encoded request body: the JSON header, then the binary tensors, to be written in order. */
export interface EncodedInferRequest {
  readonly chunks: readonly Uint8Array[];
  /** The JSON header's length (the Inference-Header-Content-Length header) when binary data follows it. */
  readonly headerLength: number | undefined;
  readonly byteLength: number;
}

function formatNumber(value: number): string {
  // Python's json and Triton's parser read these bare tokens (the server's json-body.ts does too).
  // String(-0) is '0': the sign of a negative zero would be lost. '-0.0' keeps it for Python's json too.
  if (Object.is(value, -0)) return '-0.0';
  if (Number.isFinite(value)) return String(value);
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/**
 * JSON text for the request header. Unlike JSON.stringify it writes bigints digit for digit (INT64 and
 * UINT64 data, 64-bit parameters) and non-finite floats as bare NaN/Infinity, and leaves out undefined.
 */
export function jsonText(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return formatNumber(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i++) text += (i > 0 ? ',' : '') + jsonText(value[i]);
        return `${text}]`;
      }
      const members = Object.entries(value)
        .filter(([, member]) => member !== undefined)
        .map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`);
      return `{${members.join(',')}}`;
    }
    default:
      return 'null';
  }
}

/** Whether parameters hold a bigint or a non-finite number, which JSON.stringify cannot write. */
function hasSpecialNumber(parameters: Readonly<Record<string, ParameterValue>> | undefined): boolean {
  for (const key in parameters) {
    const value = parameters[key];
    if (typeof value === 'bigint' || (typeof value === 'number' && !Number.isFinite(value))) return true;
  }
  return false;
}

/** JSON cannot carry FP16 or BF16 (Triton refuses them as JSON): they travel binary in either mode. */
const isBinaryOnly = (datatype: DataType): boolean => datatype === 'FP16' || datatype === 'BF16';

/**
 * Encodes an inference request body (docs/protocol/extension_binary_data.md): with `isBinary`, every
 * input's bytes follow the JSON header (as views of the caller's arrays: no copy) and every output is
 * asked for as binary; otherwise tensors are JSON `data`.
 */
export function encodeHttpInferRequest(inputs: ReadonlyArray<PreparedInput | PreparedSharedMemoryInput>, options: InferOptions, isBinary: boolean): EncodedInferRequest {
  const tensors: Uint8Array[] = [];
  let sharedMemoryInputs = 0;
  const inputJson = inputs.map((input) => {
    const parameters: Record<string, ParameterValue> = { ...input.parameters };
    const head = { name: input.name, shape: input.shape, datatype: input.datatype };
    if (input.data === undefined) {
      sharedMemoryInputs++;
      return { ...head, parameters };
    }
    if (isBinary || isBinaryOnly(input.datatype)) {
      const bytes = inputBytes(input);
      tensors.push(bytes);
      parameters.binary_data_size = bytes.byteLength;
      return { ...head, parameters };
    }
    return { ...head, ...(Object.keys(parameters).length > 0 ? { parameters } : {}), data: inputJsonValues(input) };
  });
  const parameters = requestParameters(options);
  let outputs: object[] | undefined;
  if (options.outputs !== undefined) {
    outputs = options.outputs.map((output) => {
      const outputParameters: Record<string, ParameterValue> = { ...output.parameters };
      if (output.classCount !== undefined) outputParameters.classification = output.classCount;
      if (output.sharedMemory !== undefined) Object.assign(outputParameters, sharedMemoryParameters(`output '${output.name}'`, output.sharedMemory));
      // An output written into shared memory takes no binary_data (Triton refuses both at once).
      const isOutputBinary = outputParameters.shared_memory_region === undefined && (output.binaryData ?? isBinary);
      if (isOutputBinary) outputParameters.binary_data = true;
      return { name: output.name, ...(Object.keys(outputParameters).length > 0 ? { parameters: outputParameters } : {}) };
    });
  } else if (isBinary) {
    parameters.binary_data_output = true;
  }
  const headerJson = {
    ...(options.id !== undefined && options.id !== '' ? { id: options.id } : {}),
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    inputs: inputJson,
    ...(outputs !== undefined ? { outputs } : {}),
  };
  // JSON.stringify is several times faster; jsonText is needed only for what it cannot write.
  const isPlain = tensors.length + sharedMemoryInputs === inputs.length && !hasSpecialNumber(parameters) && inputs.every((input) => !hasSpecialNumber(input.parameters));
  const header = Buffer.from(isPlain ? JSON.stringify(headerJson) : jsonText(headerJson));
  let byteLength = header.byteLength;
  for (const tensor of tensors) byteLength += tensor.byteLength;
  return { chunks: [header, ...tensors], headerLength: tensors.length > 0 ? header.byteLength : undefined, byteLength };
}

/**
 * Parses the JSON of an inference response. JSON.parse suffices unless the text holds an integer beyond
 * 2^53 (INT64/UINT64 data) or bare NaN/Infinity; those go through the lossless parser the server uses.
 */
export function parseInferJson(text: string): unknown {
  try {
    return /\d{16}|NaN|Infinity/.test(text) ? parseJsonBody(text, 'inference response') : JSON.parse(text);
  } catch (error) {
    throw new ClientError(`the server's inference response is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

const utf8 = new TextEncoder();

/** An output's JSON `data` (flat or nested) as the data type's typed array. */
export function outputDataFromJson(name: string, datatype: DataType, shape: readonly number[], data: unknown): TensorData {
  const flat = Array.isArray(data) ? (data.flat(Infinity) as unknown[]) : [data];
  const count = elementCount(shape);
  if (flat.length !== count) throw new ClientError(`output '${name}': its shape [${shape.join(',')}] has ${count} elements but its data holds ${flat.length}`);
  if (datatype === 'BYTES') return flat.map((value) => utf8.encode(String(value)));
  if (isBinaryOnly(datatype)) throw new ClientError(`output '${name}' is ${datatype} but came as JSON, which cannot carry it`);
  const out = allocateFixedSize(datatype, count);
  if (datatype === 'BOOL') {
    flat.forEach((value, i) => (out[i] = value === true || value === 1 ? 1 : 0));
  } else if (datatype === 'INT64' || datatype === 'UINT64') {
    flat.forEach((value, i) => ((out as BigInt64Array)[i] = BigInt(value as number | bigint)));
  } else {
    flat.forEach((value, i) => (out[i] = Number(value)));
  }
  return out;
}

/** An output's raw bytes (binary data, gRPC raw contents) as its data: a view when aligned, BYTES split. */
export function outputDataFromBytes(name: string, datatype: DataType, bytes: Uint8Array): TensorData {
  if (datatype !== 'BYTES') return viewFixedSize(datatype, bytes);
  const elements = deserializeBytes(bytes);
  if (typeof elements === 'string') throw new ClientError(`output '${name}': malformed BYTES data: ${elements}`);
  return elements;
}

type Wire = Record<string, unknown>;

/** A tensor's `parameters` object, without the binary data extension's own entries. */
export function tensorParameters(parameters: unknown): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries((parameters ?? {}) as Wire)) {
    if (key === 'binary_data_size' || key === 'binary_data') continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') out[key] = value;
  }
  return out;
}

/**
 * Decodes an inference response body: its JSON header and, when `headerLength` is given, the binary
 * outputs after it in output order (views of `body`, not copies).
 */
export async function decodeHttpInferResponse(body: Buffer, headerLength: number | undefined): Promise<InferResult> {
  if (headerLength !== undefined && (!Number.isSafeInteger(headerLength) || headerLength < 0 || headerLength > body.byteLength)) {
    throw new ClientError(`Inference-Header-Content-Length is ${headerLength} but the response body has ${body.byteLength} bytes`);
  }
  const jsonEnd = headerLength ?? body.byteLength;
  const json = parseInferJson(body.toString('utf8', 0, jsonEnd)) as Wire;
  let offset = jsonEnd;
  const outputs: InferOutput[] = (Array.isArray(json.outputs) ? json.outputs : []).map((value: unknown) => {
    const output = value as Wire;
    const name = String(output.name);
    const datatype = output.datatype;
    if (!isDataType(datatype)) throw new ClientError(`output '${name}' has an unknown datatype ${JSON.stringify(datatype)}`);
    const shape = (Array.isArray(output.shape) ? output.shape : []).map(Number);
    const size = ((output.parameters ?? {}) as Wire).binary_data_size;
    let data: TensorData;
    if (size !== undefined) {
      const byteSize = Number(size);
      if (!Number.isSafeInteger(byteSize) || offset + byteSize > body.byteLength) {
        throw new ClientError(`output '${name}': binary_data_size ${String(size)} runs past the end of the response (${body.byteLength - offset} bytes remain)`);
      }
      data = outputDataFromBytes(name, datatype, body.subarray(offset, offset + byteSize));
      offset += byteSize;
    } else if (output.data === undefined) {
      // Written into a shared memory region: the response carries its shape only.
      data = datatype === 'BYTES' ? [] : allocateFixedSize(datatype, 0);
    } else {
      data = outputDataFromJson(name, datatype, shape, output.data);
    }
    return { name, datatype, shape, data, parameters: tensorParameters(output.parameters) };
  });
  return new InferResult({
    modelName: String(json.model_name ?? ''),
    modelVersion: String(json.model_version ?? ''),
    id: typeof json.id === 'string' ? json.id : '',
    parameters: tensorParameters(json.parameters),
    outputs,
  });
}
