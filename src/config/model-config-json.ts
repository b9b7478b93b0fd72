import {
  ScalarType,
  fromJson,
  toBinary,
  toJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
} from '@bufbuild/protobuf';
import { reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { base64Encode } from '@bufbuild/protobuf/wire';
import { NereidError } from '../kernel/errors.js';
import { closestName } from './closest-name.js';
import { ModelConfigSchema, type ModelConfig } from '../protocol/gen/model_config_pb.js';
import { MAX_JSON_DEPTH, tooDeepAt } from '../protocol/json-body.js';

/**
 * The three JSON forms of a model configuration:
 *
 * - `modelConfigToProtoJson`: canonical proto3 JSON with proto field names, fields at their default left
 *   out, enums by name, 64-bit integers as strings (the form of test/fixtures/triton-configs/expected.json).
 * - `modelConfigToTritonJson`: the exact text Triton's `GET /v2/models/{m}/config` answers with.
 * - `modelConfigFromJson`: reads the JSON Triton's load API accepts (`parameters.config`).
 */
export function modelConfigToProtoJson(config: ModelConfig): JsonObject {
  return toJson(ModelConfigSchema, config, { useProtoFieldName: true }) as JsonObject;
}

/**
 * Writes the configuration as Triton's HTTP `GET /v2/models/{m}[/versions/{v}]/config` body (and the
 * `model_config` string Triton hands its Python backend). Triton's server src/http_server.cc
 * (HandleModelConfig) asks the core for config version 1, which core src/model_config_utils.cc
 * (ModelConfigToJson) prints with protobuf's MessageToJsonString and then patches:
 *
 * - `preserve_proto_field_names` and `always_print_primitive_fields`: proto field names, and every field
 *   without presence is printed even at its default (`"label_filename":""`, `"gpus":[]`,
 *   `"parameters":{}`, `"format":"FORMAT_NONE"`). Unset message fields and unset oneof members are left
 *   out. Fields come in .proto declaration order; we also sort map entries by key.
 * - int64/uint64 values come out of protobuf as strings; Triton rewrites a fixed list of them as JSON
 *   numbers (INT64_AS_NUMBER below: dims, reshape, max_queue_delay_microseconds, model_version, ...).
 *   The others stay strings: map keys (`priority_queue_policy`), `secondary_devices.device_id`, the
 *   CUDA graph `dim`s and, through a lookup on the wrong object in Triton's code,
 *   `sequence_batching.state.initial_state.dims`.
 * - A configuration with every field at its default prints as the empty string.
 *
 * The result is compact JSON text: a string, so 64-bit values beyond 2^53 stay exact. Samples of real
 * responses (the densenet_onnx quick start) match this field for field.
 */
export function modelConfigToTritonJson(config: ModelConfig): string {
  if (toBinary(ModelConfigSchema, config).length === 0) {
    return '';
  }
  return writeMessage(reflect(ModelConfigSchema, config), '');
}

/** Paths (proto field names, list and map levels left out) of the int64 fields Triton prints as numbers. */
const INT64_AS_NUMBER: ReadonlySet<string> = new Set([
  'input.dims',
  'input.reshape.shape',
  'output.dims',
  'output.reshape.shape',
  'version_policy.specific.versions',
  'dynamic_batching.max_queue_delay_microseconds',
  'dynamic_batching.priority_levels',
  'dynamic_batching.default_priority_level',
  'dynamic_batching.default_queue_policy.default_timeout_microseconds',
  'dynamic_batching.priority_queue_policy.default_timeout_microseconds',
  'sequence_batching.max_sequence_idle_microseconds',
  'sequence_batching.oldest.max_queue_delay_microseconds',
  'sequence_batching.direct.max_queue_delay_microseconds',
  'sequence_batching.state.dims',
  'ensemble_scheduling.step.model_version',
  'model_warmup.inputs.dims',
]);

function writeMessage(message: ReflectMessage, path: string): string {
  const members: string[] = [];
  for (const field of message.desc.fields) {
    if ((field.oneof !== undefined || field.fieldKind === 'message') && !message.isSet(field)) {
      continue;
    }
    const fieldPath = path === '' ? field.name : `${path}.${field.name}`;
    members.push(`${JSON.stringify(field.name)}:${writeField(message, field, fieldPath)}`);
  }
  return `{${members.join(',')}}`;
}

function writeField(message: ReflectMessage, field: DescField, path: string): string {
  switch (field.fieldKind) {
    case 'scalar':
      return writeScalar(field.scalar, message.get(field), path);
    case 'enum':
      return writeEnum(field.enum, message.get(field));
    case 'message':
      return writeMessage(message.get(field), path);
    case 'list': {
      const items: string[] = [];
      for (const item of message.get(field)) {
        if (field.listKind === 'scalar') {
          items.push(writeScalar(field.scalar, item, path));
        } else if (field.listKind === 'enum') {
          items.push(writeEnum(field.enum, item as number));
        } else {
          items.push(writeMessage(item as ReflectMessage, path));
        }
      }
      return `[${items.join(',')}]`;
    }
    case 'map': {
      const entries = [...message.get(field)].sort(([a], [b]) => compareKeys(a, b));
      const members = entries.map(([key, value]) => {
        let text: string;
        if (field.mapKind === 'scalar') {
          text = writeScalar(field.scalar, value, path);
        } else if (field.mapKind === 'enum') {
          text = writeEnum(field.enum, value as number);
        } else {
          text = writeMessage(value as ReflectMessage, path);
        }
        return `${JSON.stringify(String(key))}:${text}`;
      });
      return `{${members.join(',')}}`;
    }
  }
}

function writeScalar(type: ScalarType, value: unknown, path: string): string {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return INT64_AS_NUMBER.has(path) ? String(value) : JSON.stringify(String(value));
    case ScalarType.FLOAT:
      return writeFloat(value as number, true);
    case ScalarType.DOUBLE:
      return writeFloat(value as number, false);
    case ScalarType.STRING:
      return JSON.stringify(value);
    case ScalarType.BYTES:
      return JSON.stringify(base64Encode(value as Uint8Array));
    default:
      return String(value);
  }
}

/**
 * Protobuf prints a float with 6 significant digits when they read back as the same float, else 9
 * (SimpleFtoa), so 0.1f prints as 0.1 rather than 0.10000000149011612; doubles as JavaScript does.
 */
function writeFloat(value: number, isFloat32: boolean): string {
  if (!Number.isFinite(value)) {
    return JSON.stringify(Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity');
  }
  if (!isFloat32) {
    return JSON.stringify(value);
  }
  const short = Number(value.toPrecision(6));
  return JSON.stringify(Math.fround(short) === value ? short : Number(value.toPrecision(9)));
}

function writeEnum(desc: DescEnum, value: number): string {
  const name = desc.value[value]?.name;
  return name === undefined ? String(value) : JSON.stringify(name);
}

function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = BigInt(a as bigint | number);
  const y = BigInt(b as bigint | number);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Reads a model configuration from JSON as Triton's load API does (core src/model_config_utils.cc
 * JsonToModelConfig): proto field names or their lowerCamelCase JSON names, integers as numbers or
 * strings, enum names in any letter case, unknown fields rejected. `json` is JSON text or a parsed value;
 * `source` labels error messages. Throws INVALID_ARG naming the field:
 *
 *     load request config: invalid value "eight" in field 'max_batch_size'; expected an integer
 */
export function modelConfigFromJson(json: string | JsonValue, source = 'model configuration JSON'): ModelConfig {
  let value: JsonValue;
  if (typeof json === 'string') {
    const deepAt = tooDeepAt(json);
    if (deepAt !== -1) throw new NereidError('INVALID_ARG', `${source}: invalid JSON: arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels (at character ${deepAt})`);
    try {
      value = JSON.parse(json) as JsonValue;
    } catch (error) {
      throw new NereidError('INVALID_ARG', `${source}: invalid JSON: ${describeSyntaxError(json, error)}`);
    }
  } else {
    value = json;
  }
  const prepared = prepareMessage(ModelConfigSchema, value, '', source);
  try {
    return fromJson(ModelConfigSchema, prepared);
  } catch (error) {
    // prepareMessage checks what fromJson checks; this is a backstop that still names the field.
    throw new NereidError('INVALID_ARG', `${source}: ${(error as Error).message}`, { cause: error });
  }
}

function describeSyntaxError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message);
  if (position === null) {
    return message;
  }
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${message} (line ${line}, column ${column})`;
}

/**
 * Checks a JSON value against a message type, field by field, and returns a copy fromJson accepts (enum
 * names upper-cased). Errors name the field path: `input[0].dims[1]`, `parameters["key"].string_value`.
 */
function prepareMessage(desc: DescMessage, value: JsonValue, path: string, source: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(source, path, value, 'a JSON object');
  }
  const prepared: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const field = desc.fields.find((f) => f.name === key || f.jsonName === key);
    if (field === undefined) {
      const where = path === '' ? 'at the top level' : `in field '${path}'`;
      const names = desc.fields.map((f) => f.name);
      const guess = closestName(key, names);
      const hint = guess === undefined ? `expected one of ${names.join(', ')}` : `did you mean '${guess}'?`;
      throw new NereidError('INVALID_ARG', `${source}: unknown field '${key}' ${where}; ${hint}`);
    }
    if (item === null) {
      continue; // null means "default" in proto3 JSON
    }
    prepared[key] = prepareField(field, item, path === '' ? field.name : `${path}.${field.name}`, source);
  }
  return prepared;
}

function prepareField(field: DescField, value: JsonValue, path: string, source: string): JsonValue {
  switch (field.fieldKind) {
    case 'scalar':
      return prepareScalar(field.scalar, value, path, source);
    case 'enum':
      return prepareEnum(field.enum, value, path, source);
    case 'message':
      return prepareMessage(field.message, value, path, source);
    case 'list':
      if (!Array.isArray(value)) {
        throw invalid(source, path, value, 'a JSON array');
      }
      return value.map((item, index) => {
        const itemPath = `${path}[${index}]`;
        if (field.listKind === 'scalar') {
          return prepareScalar(field.scalar, item, itemPath, source);
        }
        return field.listKind === 'enum'
          ? prepareEnum(field.enum, item, itemPath, source)
          : prepareMessage(field.message, item, itemPath, source);
      });
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw invalid(source, path, value, 'a JSON object');
      }
      const prepared: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        const itemPath = `${path}[${JSON.stringify(key)}]`;
        if (field.mapKey !== ScalarType.STRING && !/^\d+$/.test(key)) {
          throw new NereidError('INVALID_ARG', `${source}: invalid key ${JSON.stringify(key)} in field '${path}'; expected a non-negative integer`);
        }
        if (field.mapKind === 'scalar') {
          prepared[key] = prepareScalar(field.scalar, item, itemPath, source);
        } else if (field.mapKind === 'enum') {
          prepared[key] = prepareEnum(field.enum, item, itemPath, source);
        } else {
          prepared[key] = prepareMessage(field.message, item, itemPath, source);
        }
      }
      return prepared;
    }
  }
}

const INTEGER_RANGES: Partial<Record<ScalarType, readonly [bigint, bigint]>> = {
  [ScalarType.INT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SINT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SFIXED32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.UINT32]: [0n, 2n ** 32n - 1n],
  [ScalarType.FIXED32]: [0n, 2n ** 32n - 1n],
  [ScalarType.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SINT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SFIXED64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.UINT64]: [0n, 2n ** 64n - 1n],
  [ScalarType.FIXED64]: [0n, 2n ** 64n - 1n],
};

function prepareScalar(type: ScalarType, value: JsonValue, path: string, source: string): JsonValue {
  const range = INTEGER_RANGES[type];
  if (range !== undefined) {
    const [min, max] = range;
    const expected = min < 0n ? 'an integer' : 'a non-negative integer';
    let integer: bigint;
    if (typeof value === 'number' && Number.isInteger(value)) {
      integer = BigInt(value);
    } else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
      integer = BigInt(value.trim());
    } else {
      throw invalid(source, path, value, expected);
    }
    if (integer < min || integer > max) {
      throw new NereidError('INVALID_ARG', `${source}: value ${String(value)} is out of range in field '${path}'; expected an integer from ${min} to ${max}`);
    }
    return value;
  }
  switch (type) {
    case ScalarType.BOOL:
      if (typeof value !== 'boolean') {
        throw invalid(source, path, value, 'true or false');
      }
      return value;
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      if (typeof value === 'number' || (typeof value === 'string' && isNumberText(value))) {
        return value;
      }
      throw invalid(source, path, value, 'a number');
    default:
      if (typeof value !== 'string') {
        throw invalid(source, path, value, 'a string');
      }
      return value;
  }
}

function isNumberText(text: string): boolean {
  return ['NaN', 'Infinity', '-Infinity'].includes(text) || (text.trim() !== '' && Number.isFinite(Number(text)));
}

function prepareEnum(desc: DescEnum, value: JsonValue, path: string, source: string): JsonValue {
  if (typeof value === 'number' && Number.isInteger(value)) {
    return value;
  }
  const names = desc.values.map((v) => v.name);
  if (typeof value === 'string') {
    const name = names.find((n) => n === value.toUpperCase());
    if (name !== undefined) {
      return name;
    }
    const guess = closestName(value, names);
    if (guess !== undefined) {
      throw new NereidError('INVALID_ARG', `${source}: unknown value ${JSON.stringify(value)} in field '${path}'; did you mean '${guess}'?`);
    }
  }
  throw invalid(source, path, value, `one of ${names.join(', ')}`);
}

function invalid(source: string, path: string, value: JsonValue, expected: string): NereidError {
  const where = path === '' ? 'for the configuration' : `in field '${path}'`;
  const shown = JSON.stringify(value);
  const text = shown.length > 40 ? `${shown.slice(0, 37)}...` : shown;
  return new NereidError('INVALID_ARG', `${source}: invalid value ${text} ${where}; expected ${expected}`);
}
