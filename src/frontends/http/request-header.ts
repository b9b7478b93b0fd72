import { NereidError, type RequestedOutput } from '../../core/index.js';
import type { ParameterValue, Parameters } from '../../protocol/parameters.js';
import { DATA_TYPE_NAMES, type DataType, dataTypeByteSize, isDataType } from '../../protocol/data-type.js';
import { type JsonValue, describeJson } from '../../protocol/json-body.js';
import { parseRequestJson } from './request-json.js';
import { checkRequestParameterKey } from '../request-parameters.js';
import { type RegionReference, httpRegionReference } from '../shared-memory/tensor-regions.js';
import { NON_BOOLEAN, NON_STRING, NON_UNSIGNED, jsonUnsigned } from '../triton-json.js';

/** How each output goes back: as JSON `data` or as binary after the JSON header. */
export interface OutputEncoding {
  readonly isBinaryByDefault: boolean;
  readonly isBinaryByOutput: ReadonlyMap<string, boolean>;
}

/** One input as the JSON header describes it; its data is found per request (the body, the JSON, a region). */
export interface HeaderInput {
  readonly name: string;
  readonly dataType: DataType;
  readonly shape: readonly number[];
  /** Its parameters, without binary_data_size and the shared memory ones. */
  readonly parameters: Parameters;
  readonly region: RegionReference | undefined;
  /** binary_data_size: the input's bytes follow the JSON in the body. */
  readonly binarySize: number | undefined;
  /** The JSON `data`, when neither binary nor in a region. */
  readonly data: JsonValue | undefined;
}

/**
 * An inference request's JSON header, checked and decoded: everything but the tensors' data, which
 * each request brings. Shared by every request sent with the same header text (see requestHeaderOf),
 * so it is frozen.
 */
export interface RequestHeader {
  readonly id: string;
  readonly parameters: Parameters;
  readonly encoding: OutputEncoding;
  readonly inputs: readonly HeaderInput[];
  readonly outputs: readonly RequestedOutput[] | undefined;
  /** Outputs the client wants written into a region, in request order (the first request of a name decides). */
  readonly outputRegions: ReadonlyArray<readonly [string, RegionReference]>;
  /**
   * Nothing uses shared memory and no input is BYTES sent as binary data (whose decoding yields): the
   * request decodes in one step (decodeInferRequestNow).
   */
  readonly isDecodableNow: boolean;
}

type JsonObject = { [key: string]: JsonValue };

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isParameterValue = (value: JsonValue): value is ParameterValue =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean';

/** A tensor's `parameters`; one that is not an object has no members, as TritonJson's Find sees it. */
const parametersOf = (tensor: JsonObject): JsonObject | undefined => (isObject(tensor.parameters) ? tensor.parameters : undefined);

const unableToParse = (key: string, reason: string): NereidError => new NereidError('INVALID_ARG', `Unable to parse '${key}': ${reason}`);

/**
 * The request's `parameters`, member by member in the order written, as Triton's HTTP front end reads
 * them, in its texts (HTTPAPIServer::ParseJsonTritonParams, src/http_server.cc): `sequence_id` an
 * unsigned integer or else a string, `sequence_start`, `sequence_end` and `binary_data_output`
 * booleans, `priority` and `timeout` unsigned integers, a `triton_` key as checkRequestParameterKey
 * says, any other a string, number or boolean. binary_data_output stays in the front end.
 */
function requestParametersOf(request: JsonObject): { readonly parameters: Parameters; readonly isBinaryByDefault: boolean } {
  const json = request.parameters;
  if (json === undefined) return { parameters: {}, isBinaryByDefault: false };
  if (!isObject(json)) throw new NereidError('INVALID_ARG', 'failed to get request params.: attempt to get members for non-object');
  const parameters: Record<string, ParameterValue> = {};
  let isBinaryByDefault = false;
  for (const key of Object.keys(json)) {
    const value = json[key]!;
    switch (key) {
      case 'sequence_id':
        if (typeof value !== 'string' && jsonUnsigned(value) === undefined) throw unableToParse(key, NON_STRING);
        break;
      case 'sequence_start':
      case 'sequence_end':
        if (typeof value !== 'boolean') throw unableToParse(key, NON_BOOLEAN);
        break;
      case 'priority':
      case 'timeout':
        if (jsonUnsigned(value) === undefined) throw unableToParse(key, NON_UNSIGNED);
        break;
      case 'binary_data_output':
        if (typeof value !== 'boolean') throw unableToParse(key, NON_BOOLEAN);
        isBinaryByDefault = value;
        continue;
      default:
        checkRequestParameterKey(key);
        if (!isParameterValue(value)) throw new NereidError('INVALID_ARG', `parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
    }
    parameters[key] = value as ParameterValue;
  }
  return { parameters, isBinaryByDefault };
}

/**
 * A tensor's parameters for the core: those the codec does not read itself, when they are a string,
 * number or boolean. Triton's HTTP front end reads only its own (binary data, shared memory,
 * classification), so a parameter of another kind is no error; it is left out. NOTE: built without
 * the keys the codec consumes rather than by deleting them afterwards: a `delete` turns an object into
 * a slow dictionary for every later reader of it.
 */
function tensorParameters(json: JsonObject | undefined, isConsumed: (key: string) => boolean): Parameters {
  const parameters: Record<string, ParameterValue> = {};
  if (json === undefined) return parameters;
  for (const key of Object.keys(json)) {
    const value = json[key]!;
    if (!isConsumed(key) && isParameterValue(value)) parameters[key] = value;
  }
  return parameters;
}

const INT64_MAX = 2n ** 63n - 1n;
const isDimension = (dim: JsonValue): dim is number | bigint => (typeof dim === 'bigint' || (typeof dim === 'number' && Number.isInteger(dim))) && dim >= 0;

/** Which input's shape is refused, and what it was. */
const notShape = (name: string, shape: JsonValue | undefined): string => `input '${name}': 'shape' must be an array of non-negative integers, got ${describeJson(shape)}`;

function readShape(input: JsonObject, name: string, dataType: DataType): number[] {
  const shape = input.shape;
  if (!Array.isArray(shape)) throw unableToParse('shape', notShape(name, shape));
  let product = 1;
  let isAllNumbers = true;
  for (const dim of shape) {
    // TritonJson's text for an element AsUInt refuses (qa/L0_http test_negative_dimensions), then which input.
    if (!isDimension(dim)) throw unableToParse('shape', `${NON_UNSIGNED} (${notShape(name, shape)})`);
    product *= Number(dim);
    if (typeof dim !== 'number') isAllNumbers = false;
  }
  // Exact in a double: no int64 overflow to look for (the common case, without a BigInt).
  if (product <= 2 ** 52 && isAllNumbers) return shape as number[];
  // Triton's overflow checks in int64 (http_server.cc; qa/L0_http test_buffer_size_overflow): the element count, then the byte size.
  const count = shape.reduce<bigint>((total, dim) => total * BigInt(dim as number | bigint), 1n);
  const dims = shape.map(String).join(',');
  if (count > INT64_MAX) throw new NereidError('INVALID_ARG', `input '${name}' with shape [${dims}] causes total element count to exceed maximum size of ${INT64_MAX}`);
  if (dataType !== 'BYTES' && count * BigInt(dataTypeByteSize(dataType)) > INT64_MAX) {
    throw new NereidError('INVALID_ARG', `byte size overflow for input '${name}': ${count} ${dataType} elements take more than ${INT64_MAX} bytes`);
  }
  if (shape.every((dim) => typeof dim === 'number' && Number.isSafeInteger(dim))) return shape as number[];
  throw unableToParse('shape', notShape(name, shape));
}

/** binary_data_size (CheckBinaryInputData, src/http_server.cc). */
function readBinaryDataSize(value: JsonValue): number {
  const size = jsonUnsigned(value);
  if (size === undefined) throw unableToParse('binary_data_size', NON_UNSIGNED);
  return Number(size);
}

function deepFreeze(value: JsonValue): JsonValue {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

const SHM_KEYS = ['shared_memory_region', 'shared_memory_offset', 'shared_memory_byte_size'];
const INPUT_CONSUMED = ['binary_data_size', ...SHM_KEYS];
const OUTPUT_CONSUMED = ['binary_data', ...SHM_KEYS];
const isInputConsumed = (key: string): boolean => INPUT_CONSUMED.includes(key);

/** An input as Triton's HTTP front end reads it (HTTPAPIServer::ParseJsonTritonIO, src/http_server.cc). */
function decodeInput(input: JsonValue, index: number): HeaderInput {
  if (!isObject(input)) throw new NereidError('INVALID_ARG', `inputs[${index}] must be a JSON object`);
  const json = parametersOf(input);
  // Triton's ValidateInputContentType: exactly one place for the data, before anything else.
  const given = [input.data !== undefined && 'data', json?.binary_data_size !== undefined && 'binary_data_size', json?.shared_memory_region !== undefined && 'shared_memory_region'].filter(
    (field) => field !== false,
  );
  if (given.length !== 1) {
    throw new NereidError(
      'INVALID_ARG',
      `Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But ${given.length === 0 ? 'no field is set' : `set ${given.map((field) => `'${field}'`).join(' ')}`}`,
    );
  }
  const name = input.name;
  if (typeof name !== 'string' || name === '') throw new NereidError('INVALID_ARG', `inputs[${index}] needs a 'name' string`);
  const dataType = input.datatype;
  if (!isDataType(dataType)) {
    throw new NereidError('INVALID_ARG', `input '${name}': unknown datatype ${describeJson(dataType)}; expected one of ${DATA_TYPE_NAMES.join(', ')}`);
  }
  const shape = readShape(input, name, dataType);
  const parameters = tensorParameters(json, isInputConsumed);
  // Binary data, or else (JSON data or a region) the shared memory parameters, each of its kind.
  const binarySize = json?.binary_data_size === undefined ? undefined : readBinaryDataSize(json.binary_data_size);
  const region = binarySize === undefined && json !== undefined ? httpRegionReference(json) : undefined;
  const data = input.data === undefined ? undefined : deepFreeze(input.data);
  return Object.freeze({ name, dataType, shape: Object.freeze(shape), parameters: Object.freeze(parameters), region, binarySize, data });
}

/**
 * The requested outputs as Triton's HTTP front end reads them (ParseJsonTritonIO, src/http_server.cc),
 * in its texts: shared memory with classification or binary data refused (ValidateOutputParameter),
 * `classification` an unsigned integer (0: none), the shared memory parameters, `binary_data` a boolean.
 */
function decodeOutputs(
  json: JsonValue,
  isBinaryByOutput: Map<string, boolean>,
  outputRegions: Array<readonly [string, RegionReference]>,
): RequestedOutput[] {
  if (!Array.isArray(json)) throw new NereidError('INVALID_ARG', "'outputs' must be an array");
  const requested = new Set<string>();
  return json.map((output, index) => {
    const parametersJson = isObject(output) ? parametersOf(output) : undefined;
    if (parametersJson?.shared_memory_region !== undefined) {
      if (parametersJson.classification !== undefined) throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'classification'");
      const binary = parametersJson.binary_data;
      if (binary !== undefined && typeof binary !== 'boolean') throw new NereidError('INVALID_ARG', `Unable to set 'binary_data': ${NON_BOOLEAN}`);
      if (binary === true) throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'binary_data'");
    }
    if (!isObject(output) || typeof output.name !== 'string') throw new NereidError('INVALID_ARG', `outputs[${index}] needs a 'name' string`);
    const classification = parametersJson?.classification;
    const classCount = classification === undefined ? undefined : jsonUnsigned(classification);
    if (classification !== undefined && classCount === undefined) throw new NereidError('INVALID_ARG', `Unable to set 'classification': ${NON_UNSIGNED}`);
    const region = parametersJson === undefined ? undefined : httpRegionReference(parametersJson);
    const isBinary = parametersJson?.binary_data;
    if (isBinary !== undefined && typeof isBinary !== 'boolean') throw unableToParse('binary_data', NON_BOOLEAN);
    // A classification of 0 asks for none.
    const parameters = tensorParameters(parametersJson, (key) => OUTPUT_CONSUMED.includes(key) || (key === 'classification' && classCount === 0));
    // The first request of an output decides how it comes back, as in Triton (its output map keeps the first entry).
    const isFirst = !requested.has(output.name);
    requested.add(output.name);
    if (isBinary !== undefined && isFirst) isBinaryByOutput.set(output.name, isBinary);
    if (region !== undefined && isFirst) outputRegions.push([output.name, region]);
    return Object.freeze({ name: output.name, parameters: Object.freeze(parameters) });
  });
}

/**
 * Decodes and checks an inference request's JSON header (the KServe v2 request object, less the data
 * it points to), in the order of Triton's HTTP front end: the id, the parameters, the inputs, the
 * outputs (HTTPAPIServer::EVBufferToInput, src/http_server.cc).
 */
export function decodeRequestHeader(text: string): RequestHeader {
  const json = parseRequestJson(text, 'inference request');
  if (!isObject(json)) throw new NereidError('INVALID_ARG', 'the inference request must be a JSON object');
  const id = json.id === undefined ? '' : json.id;
  if (typeof id !== 'string') throw unableToParse('id', NON_STRING);
  const { parameters, isBinaryByDefault } = requestParametersOf(json);
  if (!Array.isArray(json.inputs)) throw new NereidError('INVALID_ARG', "the inference request needs an 'inputs' array");
  const inputs = json.inputs.map(decodeInput);
  const isBinaryByOutput = new Map<string, boolean>();
  const outputRegions: Array<readonly [string, RegionReference]> = [];
  const outputs = json.outputs === undefined ? undefined : Object.freeze(decodeOutputs(json.outputs, isBinaryByOutput, outputRegions));
  const isDecodableNow =
    outputRegions.length === 0 && inputs.every((input) => input.region === undefined && (input.binarySize === undefined || input.dataType !== 'BYTES'));
  return Object.freeze({
    id,
    parameters: Object.freeze(parameters),
    encoding: Object.freeze({ isBinaryByDefault, isBinaryByOutput }),
    inputs: Object.freeze(inputs),
    outputs,
    outputRegions: Object.freeze(outputRegions),
    isDecodableNow,
  });
}

/** Headers longer than this are decoded every time (a JSON tensor's data makes them long and unlikely to repeat). */
const MAX_REMEMBERED_CHARS = 4096;
/** How many header texts are remembered at once; the memo starts over when full. */
const MAX_REMEMBERED = 64;

const remembered = new Map<string, RequestHeader>();

/**
 * decodeRequestHeader, remembering the last texts decoded: a client sends the same header with every
 * request of the same shapes and parameters (tritonclient, perf_analyzer and wrk all do), and decoding
 * it was a tenth of the main thread's work on an unbatched request (docs/benchmarks.md, "The hot
 * path"). A header that fails is decoded again each time, so it fails the same way each time.
 */
export function requestHeaderOf(text: string): RequestHeader {
  if (text.length > MAX_REMEMBERED_CHARS) return decodeRequestHeader(text);
  let header = remembered.get(text);
  if (header === undefined) {
    header = decodeRequestHeader(text);
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(text, header);
  }
  return header;
}
