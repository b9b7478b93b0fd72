/**
 * The messages between Nereid and a Python stub process, field by field (frame-codec.ts carries them;
 * python/nereid_stub/wire.py and protocol.py are the other side and must change with this file).
 *
 *   tensor    = str name, u8 dataType (index in DATA_TYPE_CODES), u8 rank, i64 dims[rank], block data
 *               (fixed-size types: raw little-endian elements; BYTES: Triton's 4-byte-length layout)
 *   value     = u8 tag, then bool u8 │ int i64 │ uint u64 │ double f64 │ string str
 *   request   = str id, value correlationId, u32 flags, u32 n, (str key, value)[n] parameters,
 *               u32 n, str[n] requestedOutputs, u32 n, tensor[n] inputs
 *   response  = u8 hasError, then u8 errorCode, str message │ u32 n, tensor[n] outputs,
 *               u32 n, (str key, value)[n] parameters
 *
 *   Nereid → stub                                    stub → Nereid
 *   INIT          str argsJson                       READY
 *   AUTO_COMPLETE str configJson                     FAILED        str message
 *   EXECUTE       u32 execId, u32 n, request[n]      CONFIG        str configJson
 *   BLS_RESPONSE  u32 blsId, u8 isFinal,             EXECUTE_DONE  u32 execId, i64 startNs, i64 endNs, u8 outcome, then
 *                 u8 hasResponse, [response]                      Responses: u32 n, (u32 releaseFlags, [response])[n]
 *                                                                 │ Failed: str message
 *                                                                 │ Returned: u32 n, u32 releaseFlags[n]
 *   PING          u32 sequence                       RESPONSE      u32 execId, u32 index, u32 flags, u8 hasResponse, [response]
 *   FINALIZE                                         BLS_REQUEST   u32 blsId, u8 isStream, str model, i64 version,
 *                                                                  u8 hasParent, [u32 execId, u32 index], request
 *   API_RESPONSE  u32 callId, u8 isError, then       PONG          u32 sequence
 *                 str resultJson │ u8 errorCode,     LOG           u8 level, str where, str message
 *                 str message                        API_REQUEST   u32 callId, str method, str argsJson (stub-api.ts)
 *   CANCEL        u32 execId, u32 index
 *
 * releaseFlags are the request's `set_release_flags`: with REQUEST_RELEASE_RESCHEDULE it has no
 * response (the model returned None for it) and runs again; else it ends with its response.
 */
import type { DataType } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import type { StatusCode } from '../../protocol/status-code.js';
import type { Parameters, ParameterValue } from '../../protocol/parameters.js';
import type { Tensor } from '../../kernel/tensor.js';
import { asBytes, deserializeBytes, serializeBytes, viewFixedSize, type FixedSizeArray, type BytesElements } from '../../protocol/tensor-data.js';
import type { FrameReader, FrameWriter } from './frame-codec.js';

export const Kind = {
  Init: 1,
  Execute: 2,
  BlsResponse: 3,
  Ping: 4,
  Finalize: 5,
  AutoComplete: 6,
  /** Request `index` of execution `execId` was cancelled: its `is_cancelled()` turns true. */
  Cancel: 7,
  ApiResponse: 8,
  Ready: 16,
  Failed: 17,
  ExecuteDone: 18,
  Response: 19,
  BlsRequest: 20,
  Pong: 21,
  Log: 22,
  Config: 23,
  ApiRequest: 24,
} as const;

export const Outcome = { Responses: 0, Failed: 1, Returned: 2 } as const;

/** pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL: the last response of a request. */
export const RESPONSE_COMPLETE_FINAL = 1;
/** pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE: the request runs again in a later execution. */
export const REQUEST_RELEASE_RESCHEDULE = 2;
/** pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START and _END. */
export const REQUEST_FLAG_SEQUENCE_START = 1;
export const REQUEST_FLAG_SEQUENCE_END = 2;

/** Tensor data types by their wire code (the same list in python/nereid_stub/wire.py). */
export const DATA_TYPE_CODES: readonly DataType[] = [
  'BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BYTES', 'BF16',
];
const CODE_OF = new Map(DATA_TYPE_CODES.map((dataType, code) => [dataType, code]));

/** pb_utils.TritonError codes, in Triton's TRITONSERVER_Error_Code order. */
export const ERROR_CODES: readonly StatusCode[] = ['UNKNOWN', 'INTERNAL', 'NOT_FOUND', 'INVALID_ARG', 'UNAVAILABLE', 'UNSUPPORTED', 'ALREADY_EXISTS', 'CANCELLED'];

export function writeTensor(writer: FrameWriter, tensor: Tensor, shape: readonly number[] = tensor.shape): void {
  writer.str(tensor.name).u8(CODE_OF.get(tensor.dataType)!).u8(shape.length);
  for (const dim of shape) writer.i64(dim);
  writer.block(tensor.dataType === 'BYTES' ? serializeBytes(tensor.data as BytesElements) : asBytes(tensor.data as FixedSizeArray));
}

export function readTensor(reader: FrameReader): Tensor {
  const name = reader.str();
  const code = reader.u8();
  const dataType = DATA_TYPE_CODES[code];
  if (dataType === undefined) throw new NereidError('INTERNAL', `malformed message from the Python stub: tensor '${name}' has unknown data type code ${code}`);
  const rank = reader.u8();
  const shape: number[] = [];
  for (let i = 0; i < rank; i++) shape.push(reader.i64());
  const bytes = reader.block();
  if (dataType !== 'BYTES') return { name, dataType, shape, data: viewFixedSize(dataType, bytes) };
  const elements = deserializeBytes(bytes);
  if (typeof elements === 'string') throw new NereidError('INTERNAL', `malformed BYTES tensor '${name}' from the Python stub: ${elements}`);
  return { name, dataType, shape, data: elements };
}

const ValueTag = { Bool: 0, Int: 1, Uint: 2, Double: 3, String: 4 } as const;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function writeValue(writer: FrameWriter, value: ParameterValue): void {
  if (typeof value === 'boolean') writer.u8(ValueTag.Bool).u8(value ? 1 : 0);
  else if (typeof value === 'string') writer.u8(ValueTag.String).str(value);
  else if (typeof value === 'number' && !Number.isInteger(value)) writer.u8(ValueTag.Double).f64(value);
  else {
    const integer = BigInt(value);
    if (integer >= INT64_MIN && integer <= INT64_MAX) writer.u8(ValueTag.Int).i64(integer);
    else writer.u8(ValueTag.Uint).u64(BigInt.asUintN(64, integer));
  }
}

export function readValue(reader: FrameReader): ParameterValue {
  const tag = reader.u8();
  switch (tag) {
    case ValueTag.Bool:
      return reader.u8() !== 0;
    case ValueTag.Int:
      return exactNumber(reader.i64Exact());
    case ValueTag.Uint:
      return exactNumber(reader.u64());
    case ValueTag.Double:
      return reader.f64();
    case ValueTag.String:
      return reader.str();
    default:
      throw new NereidError('INTERNAL', `malformed message from the Python stub: unknown parameter value tag ${tag}`);
  }
}

/** A number when it is exact as one, else the bigint (as the front ends' codecs hold 64-bit values). */
const exactNumber = (value: bigint): number | bigint => (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value);

/** One request as the stub sees it: Triton's request fields rather than KServe parameters. */
export interface StubRequest {
  readonly id: string;
  /** Triton's correlation id: the `sequence_id` parameter, 0 when there is none. */
  readonly correlationId: ParameterValue;
  readonly flags: number;
  /** The parameters other than those Triton turns into request fields (see toStubRequestFields). */
  readonly parameters: Parameters;
  readonly requestedOutputs: readonly string[];
  readonly inputs: readonly Tensor[];
}

function writeParameters(writer: FrameWriter, parameters: Parameters): void {
  const entries = Object.entries(parameters);
  writer.u32(entries.length);
  for (const [key, value] of entries) {
    writer.str(key);
    writeValue(writer, value);
  }
}

function readParameters(reader: FrameReader): Parameters {
  const parameters: Record<string, ParameterValue> = {};
  for (let count = reader.u32(); count > 0; count--) {
    const key = reader.str();
    parameters[key] = readValue(reader);
  }
  return parameters;
}

export function writeRequest(writer: FrameWriter, request: StubRequest, inputShape: (input: Tensor) => readonly number[] = (input) => input.shape): void {
  writer.str(request.id);
  writeValue(writer, request.correlationId);
  writer.u32(request.flags);
  writeParameters(writer, request.parameters);
  writer.u32(request.requestedOutputs.length);
  for (const name of request.requestedOutputs) writer.str(name);
  writer.u32(request.inputs.length);
  for (const input of request.inputs) writeTensor(writer, input, inputShape(input));
}

export function readRequest(reader: FrameReader): StubRequest {
  const id = reader.str();
  const correlationId = readValue(reader);
  const flags = reader.u32();
  const parameters = readParameters(reader);
  const requestedOutputs: string[] = [];
  for (let count = reader.u32(); count > 0; count--) requestedOutputs.push(reader.str());
  const inputs: Tensor[] = [];
  for (let count = reader.u32(); count > 0; count--) inputs.push(readTensor(reader));
  return { id, correlationId, flags, parameters, requestedOutputs, inputs };
}

/** A response as the stub sends or receives it: output tensors and response parameters, or pb_utils.TritonError. */
export type StubResponse = { readonly outputs: readonly Tensor[]; readonly parameters: Parameters } | { readonly error: NereidError };

export function writeResponse(writer: FrameWriter, response: StubResponse): void {
  if ('error' in response) {
    writer.u8(1).u8(Math.max(0, ERROR_CODES.indexOf(response.error.status))).str(response.error.message);
    return;
  }
  writer.u8(0).u32(response.outputs.length);
  for (const output of response.outputs) writeTensor(writer, output);
  writeParameters(writer, response.parameters);
}

export function readResponse(reader: FrameReader): StubResponse {
  if (reader.u8() !== 0) {
    const code = reader.u8();
    return { error: new NereidError(ERROR_CODES[code] ?? 'INTERNAL', reader.str()) };
  }
  const outputs: Tensor[] = [];
  for (let count = reader.u32(); count > 0; count--) outputs.push(readTensor(reader));
  return { outputs, parameters: readParameters(reader) };
}

/**
 * Parameters Triton turns into request fields rather than passing on: the sequence controls become
 * the correlation id and flags; priority, timeout and binary_data_output are the server's own.
 */
const RESERVED_PARAMETERS = new Set(['sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout', 'binary_data_output']);

/** The correlation id, flags and model parameters of a request's KServe parameters. */
export function toStubRequestFields(parameters: Parameters): Pick<StubRequest, 'correlationId' | 'flags' | 'parameters'> {
  const passed: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries(parameters)) if (!RESERVED_PARAMETERS.has(key)) passed[key] = value;
  const flags = (parameters.sequence_start === true ? REQUEST_FLAG_SEQUENCE_START : 0) | (parameters.sequence_end === true ? REQUEST_FLAG_SEQUENCE_END : 0);
  return { correlationId: parameters.sequence_id ?? 0, flags, parameters: passed };
}

/** The KServe parameters of a request a Python model makes (BLS): the inverse of toStubRequestFields. */
export function fromStubRequestFields(request: Pick<StubRequest, 'correlationId' | 'flags' | 'parameters'>): Parameters {
  const parameters: Record<string, ParameterValue> = { ...request.parameters };
  if (request.correlationId !== 0 && request.correlationId !== '') parameters.sequence_id = request.correlationId;
  if ((request.flags & REQUEST_FLAG_SEQUENCE_START) !== 0) parameters.sequence_start = true;
  if ((request.flags & REQUEST_FLAG_SEQUENCE_END) !== 0) parameters.sequence_end = true;
  return parameters;
}
