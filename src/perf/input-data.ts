import { readFile } from 'node:fs/promises';
import type { DataType } from '../protocol/data-type.js';
import { type FixedSizeArray, allocateFixedSize, deserializeBytes, elementCount, viewFixedSize } from '../protocol/tensor-data.js';
import { ClientError, type InferInput, type ModelMetadata } from '../client/index.js';
import { prepareInput } from '../client/infer-input.js';
import type { InputDataSource } from './perf-options.js';
import type { Random } from './random.js';

export class InputDataError extends Error {
  override readonly name = 'InputDataError';
}

export interface InputDataOptions {
  /** The model's max_batch_size: 0 when it does not batch (no batch dimension). */
  readonly maxBatchSize: number;
  readonly batchSize: number;
  /** `--shape`: shapes of variable-size inputs, without the batch dimension. */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly source: InputDataSource;
  readonly stringLength: number;
  readonly random: Random;
}

/** One input's data for one batch item: a typed array, or BYTES elements. */
type ItemData = { readonly dims: readonly number[]; readonly values: FixedSizeArray | readonly (string | Uint8Array)[] };

const PRINTABLE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random values a model can take whatever it does with them: small non-negative integers, floats in [0.5, 1). */
function randomValues(datatype: DataType, count: number, options: InputDataOptions): ItemData['values'] {
  const { random } = options;
  if (datatype === 'BYTES') {
    return Array.from({ length: count }, () => Array.from({ length: options.stringLength }, () => PRINTABLE[Math.floor(random() * PRINTABLE.length)]).join(''));
  }
  const out = allocateFixedSize(datatype, count);
  for (let i = 0; i < count; i++) {
    switch (datatype) {
      case 'BOOL':
        out[i] = random() < 0.5 ? 0 : 1;
        break;
      case 'FP32':
      case 'FP64':
        out[i] = 0.5 + random() / 2;
        break;
      case 'FP16': // 0x3800..0x3bff: 0.5 to 1 in IEEE half precision
        out[i] = 0x3800 | Math.floor(random() * 0x400);
        break;
      case 'BF16': // 0x3f00..0x3f7f: 0.5 to 1 in bfloat16
        out[i] = 0x3f00 | Math.floor(random() * 0x80);
        break;
      case 'INT64':
      case 'UINT64':
        (out as BigInt64Array)[i] = BigInt(Math.floor(random() * 100));
        break;
      default:
        out[i] = Math.floor(random() * 100);
    }
  }
  return out;
}

function zeroValues(datatype: DataType, count: number): ItemData['values'] {
  return datatype === 'BYTES' ? new Array<string>(count).fill('') : allocateFixedSize(datatype, count);
}

/** The shape of one batch item of an input: its dims without the batch dimension, `--shape` filling the variable ones. */
function itemDims(input: ModelMetadata['inputs'][number], options: InputDataOptions, shapeOverride?: readonly number[]): number[] {
  const dims = options.maxBatchSize > 0 ? input.shape.slice(1) : [...input.shape];
  const given = shapeOverride ?? options.shapes.get(input.name);
  if (given !== undefined) return [...given];
  if (dims.some((dim) => dim < 0)) {
    throw new InputDataError(
      `input '${input.name}' has a variable shape [${dims.join(',')}]${options.maxBatchSize > 0 ? ' (without the batch dimension)' : ''}; give its size with --shape ${input.name}:${dims.map((dim) => (dim < 0 ? 'N' : dim)).join(',')}`,
    );
  }
  return dims;
}

/** perf_analyzer's JSON input data: `{"data": [{"INPUT": [..] | {"content": [..] | {"b64": ".."}, "shape": [..]} | {"b64": ".."}}, ...]}`. */
async function readDataFile(path: string): Promise<Array<Record<string, unknown>>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new InputDataError(`--input-data ${path}: ${(error as Error).message}`);
  }
  const data = (json as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length === 0) throw new InputDataError(`--input-data ${path}: expected {"data": [ {"INPUT_NAME": [...], ...}, ... ]} with at least one entry`);
  if (data.some((entry) => Array.isArray(entry))) {
    throw new InputDataError(`--input-data ${path}: streams of entries (arrays in "data") are for sequence models, which nereid perf does not drive`);
  }
  return data as Array<Record<string, unknown>>;
}

/** One entry's data for one input; `where` names them in errors. */
function fileItem(input: ModelMetadata['inputs'][number], entry: { readonly value: unknown; readonly where: string }, options: InputDataOptions): ItemData {
  const { value, where } = entry;
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const content = object !== undefined && 'content' in object ? object.content : value;
  const shape = object !== undefined && Array.isArray(object.shape) ? (object.shape as number[]) : undefined;
  const dims = itemDims(input, options, shape);
  const count = elementCount(dims);
  const b64 = typeof content === 'object' && content !== null && !Array.isArray(content) ? (content as { b64?: unknown }).b64 : undefined;
  if (typeof b64 === 'string') {
    const bytes = new Uint8Array(Buffer.from(b64, 'base64'));
    if (input.datatype !== 'BYTES') return { dims, values: viewFixedSize(input.datatype, bytes) };
    const elements = deserializeBytes(bytes);
    if (typeof elements === 'string') throw new InputDataError(`${where}: malformed BYTES data in "b64": ${elements}`);
    return { dims, values: elements };
  }
  if (!Array.isArray(content)) throw new InputDataError(`${where}: expected an array, {"content": ...} or {"b64": "..."}`);
  const flat = content.flat(Infinity) as unknown[];
  try {
    // The client's own checks convert the values and say which one is wrong.
    const prepared = prepareInput({ name: input.name, datatype: input.datatype, shape: [count], data: flat } as InferInput);
    return { dims, values: prepared.data as ItemData['values'] };
  } catch (error) {
    throw new InputDataError(`${where}: ${(error as Error).message}`);
  }
}

/** Joins batch items into one tensor of batch size items.length (or passes the one item on when the model does not batch). */
function batchInput(input: ModelMetadata['inputs'][number], items: readonly ItemData[], isBatching: boolean): InferInput {
  const dims = items[0]!.dims;
  for (const item of items) {
    if (item.dims.join(',') !== dims.join(',')) {
      throw new InputDataError(`input '${input.name}': the entries of one batch have different shapes [${dims.join(',')}] and [${item.dims.join(',')}]`);
    }
  }
  const shape = isBatching ? [items.length, ...dims] : [...dims];
  if (input.datatype === 'BYTES') {
    return { name: input.name, datatype: 'BYTES', shape, data: items.flatMap((item) => [...(item.values as readonly (string | Uint8Array)[])]) };
  }
  let data = items[0]!.values as FixedSizeArray;
  if (items.length > 1) {
    const count = items.reduce((sum, item) => sum + item.values.length, 0);
    const joined = allocateFixedSize(input.datatype, count);
    let offset = 0;
    for (const item of items) {
      (joined as Uint8Array).set(item.values as Uint8Array, offset);
      offset += item.values.length;
    }
    data = joined;
  }
  return { name: input.name, datatype: input.datatype, shape, data } as InferInput;
}

/**
 * The inputs of the requests to send, taken in turn: one set for random or zero data (made once, as
 * perf_analyzer does), one per batch of entries for a data file (entries k·b … k·b+b−1, wrapping).
 */
export async function buildRequestInputs(metadata: ModelMetadata, options: InputDataOptions): Promise<InferInput[][]> {
  const isBatching = options.maxBatchSize > 0;
  if (!isBatching && options.batchSize > 1) {
    throw new InputDataError(`model '${metadata.name}' does not batch (max_batch_size 0), so -b must be 1, not ${options.batchSize}`);
  }
  if (isBatching && options.batchSize > options.maxBatchSize) {
    throw new InputDataError(`-b ${options.batchSize} is more than model '${metadata.name}' takes (max_batch_size ${options.maxBatchSize})`);
  }
  for (const name of options.shapes.keys()) {
    if (!metadata.inputs.some((input) => input.name === name)) {
      throw new InputDataError(`--shape names input '${name}', but model '${metadata.name}' has ${metadata.inputs.map((input) => `'${input.name}'`).join(', ')}`);
    }
  }
  const itemCount = isBatching ? options.batchSize : 1;
  let sets: InferInput[][];
  if (options.source.kind === 'file') {
    const path = options.source.path;
    const entries = await readDataFile(path);
    const setCount = Math.ceil(entries.length / itemCount);
    sets = Array.from({ length: setCount }, (_, k) =>
      metadata.inputs.map((input) => {
        const items = Array.from({ length: itemCount }, (_, j) => {
          const index = (k * itemCount + j) % entries.length;
          const where = `--input-data ${path}: entry ${index}, input '${input.name}'`;
          const entry = entries[index]!;
          if (!(input.name in entry)) throw new InputDataError(`--input-data ${path}: entry ${index} has no data for input '${input.name}'`);
          return fileItem(input, { value: entry[input.name], where }, options);
        });
        return batchInput(input, items, isBatching);
      }),
    );
  } else {
    const { kind } = options.source;
    sets = [
      metadata.inputs.map((input) => {
        const dims = itemDims(input, options);
        const shape = isBatching ? [itemCount, ...dims] : dims;
        const count = elementCount(shape);
        const values = kind === 'zero' ? zeroValues(input.datatype, count) : randomValues(input.datatype, count, options);
        return { name: input.name, datatype: input.datatype, shape, data: values } as InferInput;
      }),
    ];
  }
  for (const set of sets) {
    for (const input of set) {
      try {
        prepareInput(input);
      } catch (error) {
        throw new InputDataError(error instanceof ClientError ? error.message : String(error));
      }
    }
  }
  return sets;
}
