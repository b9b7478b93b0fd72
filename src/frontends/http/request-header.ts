import { NereidError, type RequestedOutput } from '../../core/index.js';
import type { ParameterValue, Parameters } from '../../protocol/parameters.js';
import { DATA_TYPE_NAMES, type DataType, isDataType } from '../../protocol/data-type.js';
import { type JsonValue, describeJson } from '../../protocol/json-body.js';
import { parseRequestJson } from './request-json.js';
import { checkRequestParameters } from '../request-parameters.js';
import { type RegionReference, takeHttpRegionReference } from '../shared-memory/tensor-regions.js';

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

function objectField(parent: JsonObject, key: string, where: string): JsonObject | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new NereidError('INVALID_ARG', `${where}: '${key}' must be a JSON object, got ${describeJson(value)}`);
  return value;
}

/**
 * The parameters of a JSON object, checked. NOTE: built without the keys the codec consumes rather
 * than by deleting them afterwards: a `delete` turns an object into a slow dictionary for every
 * later reader of it.
 */
function toParameters(json: JsonObject | undefined, where: string, consumed: readonly string[] = []): Parameters {
  const parameters: Record<string, ParameterValue> = {};
  if (json === undefined) return parameters;
  for (const key of Object.keys(json)) {
    const value = json[key]!;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
      if (!consumed.includes(key)) parameters[key] = value;
    } else {
      throw new NereidError('INVALID_ARG', `${where}: parameter '${key}' must be a string, number or boolean, got ${describeJson(value)}`);
    }
  }
  return parameters;
}

function readShape(input: JsonObject, name: string): number[] {
  const shape = input.shape;
  if (!Array.isArray(shape) || !shape.every((dim) => typeof dim === 'number' && Number.isInteger(dim) && dim >= 0)) {
    throw new NereidError('INVALID_ARG', `Unable to parse 'shape': input '${name}': 'shape' must be an array of non-negative integers, got ${describeJson(shape)}`);
  }
  return shape as number[];
}

function readBinaryDataSize(json: JsonObject | undefined, name: string): number | undefined {
  const size = json?.binary_data_size;
  if (size === undefined) return undefined;
  const value = typeof size === 'bigint' ? Number(size) : size;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new NereidError('INVALID_ARG', `input '${name}': parameter 'binary_data_size' must be a non-negative integer, got ${String(size)}`);
  }
  return value;
}

function readBoolean(json: JsonObject | undefined, key: string, where: string): boolean | undefined {
  const value = json?.[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new NereidError('INVALID_ARG', `${where}: parameter '${key}' must be true or false, got ${String(value)}`);
  return value;
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

/** A tensor's region, from its (unchecked) JSON parameters, as takeHttpRegionReference reads them. */
const regionOf = (json: JsonObject | undefined): RegionReference | undefined => (json === undefined ? undefined : takeHttpRegionReference({ ...json } as Parameters));

function decodeInput(input: JsonValue, index: number): HeaderInput {
  if (!isObject(input)) throw new NereidError('INVALID_ARG', `inputs[${index}] must be a JSON object`);
  const name = input.name;
  if (typeof name !== 'string' || name === '') throw new NereidError('INVALID_ARG', `inputs[${index}] needs a 'name' string`);
  const dataType = input.datatype;
  if (!isDataType(dataType)) {
    throw new NereidError('INVALID_ARG', `input '${name}': unknown datatype ${describeJson(dataType)}; expected one of ${DATA_TYPE_NAMES.join(', ')}`);
  }
  const shape = readShape(input, name);
  const where = `input '${name}'`;
  const json = objectField(input, 'parameters', where);
  const parameters = toParameters(json, where, INPUT_CONSUMED);
  // Triton's ValidateInputContentType (src/http_server.cc): exactly one place for the data.
  const given = [input.data !== undefined && 'data', json?.binary_data_size !== undefined && 'binary_data_size', json?.shared_memory_region !== undefined && 'shared_memory_region'].filter(
    (field) => field !== false,
  );
  if (given.length !== 1) {
    throw new NereidError(
      'INVALID_ARG',
      `Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But ${given.length === 0 ? 'no field is set' : `set ${given.map((field) => `'${field}'`).join(' ')}`}`,
    );
  }
  const region = regionOf(json);
  const binarySize = region === undefined ? readBinaryDataSize(json, name) : undefined;
  const data = input.data === undefined ? undefined : deepFreeze(input.data);
  return Object.freeze({ name, dataType, shape: Object.freeze(shape), parameters: Object.freeze(parameters), region, binarySize, data });
}

function decodeOutputs(
  json: JsonValue,
  isBinaryByOutput: Map<string, boolean>,
  outputRegions: Array<readonly [string, RegionReference]>,
): RequestedOutput[] {
  if (!Array.isArray(json)) throw new NereidError('INVALID_ARG', "'outputs' must be an array");
  const requested = new Set<string>();
  return json.map((output, index) => {
    if (!isObject(output) || typeof output.name !== 'string') throw new NereidError('INVALID_ARG', `outputs[${index}] needs a 'name' string`);
    const where = `output '${output.name}'`;
    const parametersJson = objectField(output, 'parameters', where);
    const parameters = toParameters(parametersJson, where, OUTPUT_CONSUMED);
    if (parametersJson?.shared_memory_region !== undefined) {
      // Triton's ValidateOutputParameter (src/http_server.cc).
      if (parametersJson.classification !== undefined) throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'classification'");
      if (parametersJson.binary_data === true) throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'binary_data'");
    }
    const isBinary = readBoolean(parametersJson, 'binary_data', where);
    // The first request of an output decides how it comes back, as in Triton (its output map keeps the first entry).
    const isFirst = !requested.has(output.name);
    requested.add(output.name);
    if (isBinary !== undefined && isFirst) isBinaryByOutput.set(output.name, isBinary);
    const region = regionOf(parametersJson);
    if (region !== undefined && isFirst) outputRegions.push([output.name, region]);
    return Object.freeze({ name: output.name, parameters: Object.freeze(parameters) });
  });
}

/** Decodes and checks an inference request's JSON header (the KServe v2 request object, less the data it points to). */
export function decodeRequestHeader(text: string): RequestHeader {
  const json = parseRequestJson(text, 'inference request');
  if (!isObject(json)) throw new NereidError('INVALID_ARG', 'the inference request must be a JSON object');
  const id = json.id ?? '';
  if (typeof id !== 'string') throw new NereidError('INVALID_ARG', `'id' must be a string, got ${describeJson(id)}`);
  const parametersJson = objectField(json, 'parameters', 'request');
  const parameters = toParameters(parametersJson, 'request', ['binary_data_output']);
  const isBinaryByDefault = readBoolean(parametersJson, 'binary_data_output', 'request') ?? false;
  if (!Array.isArray(json.inputs)) throw new NereidError('INVALID_ARG', "the inference request needs an 'inputs' array");
  const inputs = json.inputs.map(decodeInput);
  const isBinaryByOutput = new Map<string, boolean>();
  const outputRegions: Array<readonly [string, RegionReference]> = [];
  const outputs = json.outputs === undefined ? undefined : Object.freeze(decodeOutputs(json.outputs, isBinaryByOutput, outputRegions));
  checkRequestParameters({ parameters });
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
