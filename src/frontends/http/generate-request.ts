import { type InferRequest, type InferenceServer, NereidError, type Tensor } from '../../core/index.js';
import type { DataType } from '../../protocol/data-type.js';
import type { TensorMetadata } from '../../protocol/metadata.js';
import type { Parameters, ParameterValue } from '../../protocol/parameters.js';
import { type BytesElements, type FixedSizeArray, type TensorData, allocateFixedSize } from '../../protocol/tensor-data.js';
import { type JsonValue, parseJsonBody } from '../../protocol/json-body.js';
import { type JsonMember, jsonObjectMembers } from './json-members.js';
import { parseRequestJson } from './request-json.js';
import { NON_BOOLEAN, NON_NUMBER, NON_SIGNED, NON_STRING, NON_UNSIGNED } from '../triton-json.js';

export type GenerateTarget = { readonly modelName: string; readonly modelVersion: number | undefined };

// TritonJson's texts, answered 400 where Triton answers 500 (triton-json.ts); qa/L0_http checks only
// that they fail, and the text.
const SHAPE_MISMATCH = "Unable to parse 'data': Shape does not match true shape of 'data' field";

const PARAMETERS_KEYWORD = 'parameters';

interface Converted {
  readonly inputs: Tensor[];
  readonly parameters: Parameters;
}

/**
 * The generate extension's request, converted as Triton converts it (src/http_server.cc,
 * GenerateRequestClass::ConvertGenerateRequest and ExactMappingInput): each key in the order written,
 * a key given twice seen twice, each time with its first value (rapidjson's FindMember). A key naming
 * a model input becomes that input, shaped from the input's metadata shape (its fixed dimensions
 * first, the innermost variable one taking what remains, any other 1); `parameters` must be an object
 * whose keys convert the same way; any other key becomes a request parameter (a string, integer,
 * boolean or number). `id`, a string, is also the request's id.
 */
export async function decodeGenerateRequest(server: InferenceServer, target: GenerateTarget, body: Buffer): Promise<InferRequest> {
  const metadata = await server.modelMetadata(target.modelName, target.modelVersion);
  const text = body.toString('utf8');
  parseRequestJson(text, 'generate request');
  const members = jsonObjectMembers(text);
  if (members === undefined) throw new NereidError('INVALID_ARG', 'attempt to get members for non-object');
  const id = members.find((member) => member.name === 'id');
  const idValue = id === undefined ? '' : valueOf(id);
  if (typeof idValue !== 'string') throw new NereidError('INVALID_ARG', `Unable to parse 'id': ${NON_STRING}`);
  const inputs = new Map(metadata.inputs.map((input) => [input.name, input]));
  const converted: Converted = { inputs: [], parameters: {} };
  convertMembers(members, { inputs, converted, isTopLevel: true });
  return {
    modelName: target.modelName,
    ...(target.modelVersion !== undefined ? { modelVersion: target.modelVersion } : {}),
    id: idValue,
    inputs: converted.inputs,
    parameters: converted.parameters,
  };
}

interface Conversion {
  readonly inputs: ReadonlyMap<string, TensorMetadata>;
  readonly converted: Converted;
  readonly isTopLevel: boolean;
}

function convertMembers(members: readonly JsonMember[], conversion: Conversion): void {
  const first = new Map<string, JsonMember>();
  for (const member of members) if (!first.has(member.name)) first.set(member.name, member);
  for (const { name } of members) {
    const member = first.get(name)!;
    if (conversion.isTopLevel && name === PARAMETERS_KEYWORD) {
      convertParameters(member, conversion);
    } else {
      mapExactly(name, valueOf(member), conversion);
    }
  }
}

/** The `parameters` object: its keys convert as the top level's do, its errors prefixed as Triton's RETURN_MSG_IF_ERR prefixes them. */
function convertParameters(member: JsonMember, conversion: Conversion): void {
  if (conversion.inputs.has(PARAMETERS_KEYWORD)) {
    throw new NereidError('INVALID_ARG', `Keyword '${PARAMETERS_KEYWORD}' for nested schema also given as input tensor name`);
  }
  const nested = jsonObjectMembers(member.valueText);
  if (nested === undefined) {
    throw new NereidError('INVALID_ARG', `Expected JSON object for keyword: '${PARAMETERS_KEYWORD}': attempt to access JSON non-object as object`);
  }
  try {
    convertMembers(nested, { ...conversion, isTopLevel: false });
  } catch (error) {
    if (!(error instanceof NereidError)) throw error;
    throw new NereidError(error.status, `Converting keyword: '${PARAMETERS_KEYWORD}': ${error.message}`, { cause: error });
  }
}

function mapExactly(name: string, value: JsonValue, { inputs, converted }: Conversion): void {
  const input = inputs.get(name);
  if (input === undefined) {
    converted.parameters[name] = parameterValue(name, value);
    return;
  }
  const elementCount = Array.isArray(value) ? value.length : 1;
  if (input.datatype === 'BYTES') checkBytesLeaves(value);
  const shape = shapeFromMetadata(name, input.shape, elementCount);
  const data = readData(name, input.datatype, value, elementCount);
  if (converted.inputs.some((added) => added.name === name)) throw new NereidError('INVALID_ARG', `input '${name}' already exists in request`);
  converted.inputs.push({ name, dataType: input.datatype, shape, data });
}

function valueOf(member: JsonMember): JsonValue {
  return parseJsonBody(member.valueText, 'generate request');
}

/** SetTritonParameterFromJsonParameter (src/http_server.cc): a string, an integer, a boolean or a number. */
function parameterValue(name: string, value: JsonValue): ParameterValue {
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint') return value;
  throw new NereidError('INVALID_ARG', `parameter '${name}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
}

/** JsonBytesArrayByteSize: every leaf of a BYTES value is a string. */
function checkBytesLeaves(value: JsonValue): void {
  for (const leaf of leaves(value)) {
    if (typeof leaf !== 'string') throw new NereidError('INVALID_ARG', `Unable to parse JSON bytes array: ${NON_STRING}`);
  }
}

/**
 * The shape Triton gives `elementCount` values of an input with metadata shape `dims`: the fixed
 * dimensions, innermost first, must divide the count; the innermost variable dimension takes what
 * remains of it and any other variable one is 1. `[1, 1]` takes one value; `[-1, -1]` three as [1, 3].
 */
function shapeFromMetadata(name: string, dims: readonly number[], elementCount: number): number[] {
  const fail = (): NereidError => new NereidError('INVALID_ARG', `The schema can not convert input '${name}' to tensor with proper shape`);
  let remaining = elementCount;
  for (let i = dims.length - 1; i >= 0; i--) {
    const dim = dims[i]!;
    if (dim === -1) continue;
    if (dim === 0 ? remaining !== 0 : remaining % dim !== 0) throw fail();
    remaining = dim === 0 ? 1 : remaining / dim;
  }
  const shape = [...dims];
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === -1) {
      shape[i] = remaining;
      remaining = 1;
    }
  }
  if (remaining !== 1) throw fail();
  return shape;
}

/** ReadDataFromJson: the leaves in row-major order, exactly `elementCount` of them, each of the data type's JSON kind. */
function readData(name: string, dataType: DataType, value: JsonValue, elementCount: number): TensorData {
  if (dataType === 'FP16' || dataType === 'BF16') {
    throw new NereidError('INVALID_ARG', `receiving ${dataType} data via JSON is not supported. Please use the binary data format for input ${name}`);
  }
  const values = leaves(value);
  if (dataType === 'BYTES') return values.map((leaf) => Buffer.from(leaf as string, 'utf8')) as BytesElements;
  const out = allocateFixedSize(dataType, elementCount);
  values.forEach((leaf, index) => {
    if (index >= elementCount) throw new NereidError('INVALID_ARG', SHAPE_MISMATCH);
    writeElement(out, dataType, index, leaf);
  });
  if (values.length !== elementCount) throw new NereidError('INVALID_ARG', SHAPE_MISMATCH);
  return out;
}

const INTEGER_BITS: Partial<Record<DataType, { readonly bits: number; readonly isSigned: boolean }>> = {
  INT8: { bits: 8, isSigned: true },
  INT16: { bits: 16, isSigned: true },
  INT32: { bits: 32, isSigned: true },
  INT64: { bits: 64, isSigned: true },
  UINT8: { bits: 8, isSigned: false },
  UINT16: { bits: 16, isSigned: false },
  UINT32: { bits: 32, isSigned: false },
  UINT64: { bits: 64, isSigned: false },
};
const INT64_MIN = -(2n ** 63n);
const UINT64_END = 2n ** 64n;

/**
 * One element, checked as TritonJson's AsBool, AsInt, AsUInt and AsDouble check it; an integer is
 * narrowed to its type's width as Triton's C++ cast narrows it (two's complement, the high bits dropped).
 */
function writeElement(out: FixedSizeArray, dataType: DataType, index: number, leaf: JsonValue): void {
  const fail = (text: string): never => {
    throw new NereidError('INVALID_ARG', `Unable to parse 'data': ${text}`);
  };
  if (dataType === 'BOOL') {
    if (typeof leaf !== 'boolean') fail(NON_BOOLEAN);
    out[index] = leaf ? 1 : 0;
    return;
  }
  const integer = INTEGER_BITS[dataType];
  if (integer === undefined) {
    if (typeof leaf !== 'number' && typeof leaf !== 'bigint') fail(NON_NUMBER);
    out[index] = Number(leaf);
    return;
  }
  const big = typeof leaf === 'bigint' ? leaf : typeof leaf === 'number' && Number.isSafeInteger(leaf) ? BigInt(leaf) : undefined;
  const isInRange = big !== undefined && (integer.isSigned ? big >= INT64_MIN && big < -INT64_MIN : big >= 0n && big < UINT64_END);
  if (!isInRange) fail(integer.isSigned ? NON_SIGNED : NON_UNSIGNED);
  const narrowed = integer.isSigned ? BigInt.asIntN(integer.bits, big!) : BigInt.asUintN(integer.bits, big!);
  out[index] = integer.bits === 64 ? narrowed : Number(narrowed);
}

/** The non-array values of `value`, nested arrays read in row-major order; a value that is no array is its own leaf. */
function leaves(value: JsonValue): JsonValue[] {
  return Array.isArray(value) ? (value.flat(Infinity as 1) as JsonValue[]) : [value];
}
