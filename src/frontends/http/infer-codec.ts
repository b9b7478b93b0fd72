import { type InferRequest, type InferResponse, NereidError, type RequestedOutput, type Tensor } from '../../core/index.js';
import type { ModelMetadata } from '../../protocol/metadata.js';
import type { ParameterValue, Parameters } from '../../protocol/parameters.js';
import { asBytes, elementCount } from '../../protocol/tensor-data.js';
import { DATA_TYPE_NAMES, dataTypeByteSize, isDataType } from '../../protocol/data-type.js';
import { type JsonValue, describeJson } from '../../protocol/json-body.js';
import { parseRequestJsonRemembered } from './request-json-memo.js';
import { checkRequestParameters } from '../request-parameters.js';
import { type RequestRegions, SHARED_MEMORY_SOURCE, takeHttpRegionReference } from '../shared-memory/tensor-regions.js';
import { fixedSizeDataFromBytes, tensorBytes, tensorDataFromBytes } from '../tensor-bytes.js';
import { tensorDataFromJson, tensorDataToJson } from '../tensor-json.js';

/** How each output goes back: as JSON `data` or as binary after the JSON header. */
export interface OutputEncoding {
  readonly isBinaryByDefault: boolean;
  readonly isBinaryByOutput: ReadonlyMap<string, boolean>;
}

export interface DecodedRequest {
  readonly request: InferRequest;
  readonly encoding: OutputEncoding;
}

export interface EncodedResponse {
  /** Set when binary outputs follow the JSON: the JSON's length in bytes. */
  readonly headerLength: number | undefined;
  readonly chunks: readonly Uint8Array[];
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

function toParameters(json: JsonObject | undefined, where: string): Parameters {
  const parameters: Record<string, ParameterValue> = {};
  if (json === undefined) return parameters;
  for (const [key, value] of Object.entries(json)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
      parameters[key] = value;
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

const BINARY_DATA = { name: 'binary data', sizePhrase: 'binary_data_size is' } as const;

function readBinaryDataSize(parameters: Parameters, name: string): number | undefined {
  const size = parameters.binary_data_size;
  if (size === undefined) return undefined;
  const value = typeof size === 'bigint' ? Number(size) : size;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new NereidError('INVALID_ARG', `input '${name}': parameter 'binary_data_size' must be a non-negative integer, got ${String(size)}`);
  }
  return value;
}

function readBoolean(parameters: Parameters, key: string, where: string): boolean | undefined {
  const value = parameters[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new NereidError('INVALID_ARG', `${where}: parameter '${key}' must be true or false, got ${String(value)}`);
  return value;
}

/**
 * Decodes a KServe v2 inference request body: the JSON object, followed by binary tensor data when
 * `headerLength` (the Inference-Header-Content-Length header) is given (Triton's binary data extension,
 * docs/protocol/extension_binary_data.md). Binary inputs are views into `body`, not copies. Tensors in
 * system shared memory (docs/protocol/extension_shared_memory.md) are leased from `regions`, which the
 * caller releases once the response is written.
 */
export async function decodeInferRequest(
  body: Buffer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  headerLength: number | undefined,
  regions?: RequestRegions,
): Promise<DecodedRequest> {
  if (headerLength !== undefined && headerLength > body.byteLength) {
    throw new NereidError(
      'INVALID_ARG',
      `Inference-Header-Content-Length is ${headerLength} but the request body has only ${body.byteLength} bytes`,
    );
  }
  const jsonEnd = headerLength ?? body.byteLength;
  const json = parseRequestJsonRemembered(body.toString('utf8', 0, jsonEnd), 'inference request');
  if (!isObject(json)) throw new NereidError('INVALID_ARG', 'the inference request must be a JSON object');
  const id = json.id ?? '';
  if (typeof id !== 'string') throw new NereidError('INVALID_ARG', `'id' must be a string, got ${describeJson(id)}`);
  const parameters = toParameters(objectField(json, 'parameters', 'request'), 'request');
  const isBinaryByDefault = readBoolean(parameters, 'binary_data_output', 'request') ?? false;
  delete parameters.binary_data_output;

  if (!Array.isArray(json.inputs)) throw new NereidError('INVALID_ARG', "the inference request needs an 'inputs' array");
  let offset = jsonEnd;
  const inputs: Tensor[] = [];
  for (const [index, input] of json.inputs.entries()) {
    if (!isObject(input)) throw new NereidError('INVALID_ARG', `inputs[${index}] must be a JSON object`);
    const name = input.name;
    if (typeof name !== 'string' || name === '') throw new NereidError('INVALID_ARG', `inputs[${index}] needs a 'name' string`);
    const dataType = input.datatype;
    if (!isDataType(dataType)) {
      throw new NereidError(
        'INVALID_ARG',
        `input '${name}': unknown datatype ${describeJson(dataType)}; expected one of ${DATA_TYPE_NAMES.join(', ')}`,
      );
    }
    const shape = readShape(input, name);
    const tensorParameters = toParameters(objectField(input, 'parameters', `input '${name}'`), `input '${name}'`);
    if (tensorParameters.shared_memory_region !== undefined && (input.data !== undefined || tensorParameters.binary_data_size !== undefined)) {
      // Triton's ValidateInputContentType (src/http_server.cc), for the cases that involve shared memory.
      const given = `${input.data !== undefined ? " 'data'" : ''}${tensorParameters.binary_data_size !== undefined ? " 'binary_data_size'" : ''} 'shared_memory_region'`;
      throw new NereidError(
        'INVALID_ARG',
        `Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set${given}`,
      );
    }
    const region = takeHttpRegionReference(tensorParameters);
    const binarySize = readBinaryDataSize(tensorParameters, name);
    delete tensorParameters.binary_data_size;
    let data: Tensor['data'];
    if (region !== undefined) {
      data = await tensorDataFromBytes(name, dataType, shape, requireRegions(regions).readInput(region), SHARED_MEMORY_SOURCE);
    } else if (binarySize !== undefined) {
      if (input.data !== undefined) throw new NereidError('INVALID_ARG', `input '${name}' has both 'data' and binary_data_size; give one`);
      if (offset + binarySize > body.byteLength) {
        throw new NereidError(
          'INVALID_ARG',
          `input '${name}': binary_data_size ${binarySize} runs past the end of the body (${body.byteLength - offset} bytes of binary data remain)`,
        );
      }
      const bytes = body.subarray(offset, offset + binarySize);
      data = dataType === 'BYTES' ? await tensorDataFromBytes(name, dataType, shape, bytes, BINARY_DATA) : fixedSizeDataFromBytes(name, dataType, shape, bytes, BINARY_DATA);
      offset += binarySize;
    } else {
      if (input.data === undefined) throw new NereidError('INVALID_ARG', `input '${name}' has no 'data' and no binary_data_size parameter`);
      data = tensorDataFromJson(name, dataType, elementCount(shape), input.data);
    }
    inputs.push({ name, dataType, shape, data, parameters: tensorParameters });
  }
  if (offset !== body.byteLength) {
    throw new NereidError(
      'INVALID_ARG',
      `the request body has ${body.byteLength - jsonEnd} bytes of binary data but the inputs' binary_data_size add up to ${offset - jsonEnd}`,
    );
  }

  const isBinaryByOutput = new Map<string, boolean>();
  let outputs: RequestedOutput[] | undefined;
  if (json.outputs !== undefined) {
    if (!Array.isArray(json.outputs)) throw new NereidError('INVALID_ARG', "'outputs' must be an array");
    const requested = new Set<string>();
    outputs = json.outputs.map((output, index) => {
      if (!isObject(output) || typeof output.name !== 'string') throw new NereidError('INVALID_ARG', `outputs[${index}] needs a 'name' string`);
      const where = `output '${output.name}'`;
      const outputParameters = toParameters(objectField(output, 'parameters', where), where);
      if (outputParameters.shared_memory_region !== undefined) {
        // Triton's ValidateOutputParameter (src/http_server.cc).
        if (outputParameters.classification !== undefined) {
          throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'classification'");
        }
        if (outputParameters.binary_data === true) throw new NereidError('INVALID_ARG', "Output can't set both 'shared_memory_region' and 'binary_data'");
      }
      const isBinary = readBoolean(outputParameters, 'binary_data', where);
      delete outputParameters.binary_data;
      // The first request of an output decides how it comes back, as in Triton (its output map keeps the first entry).
      const isFirst = !requested.has(output.name);
      requested.add(output.name);
      if (isBinary !== undefined && isFirst) isBinaryByOutput.set(output.name, isBinary);
      const region = takeHttpRegionReference(outputParameters);
      if (region !== undefined && isFirst) requireRegions(regions).addOutput(output.name, region);
      return { name: output.name, parameters: outputParameters };
    });
  }
  const request: InferRequest = {
    modelName: target.modelName,
    ...(target.modelVersion !== undefined ? { modelVersion: target.modelVersion } : {}),
    id,
    inputs,
    ...(outputs !== undefined ? { outputs } : {}),
    parameters,
  };
  checkRequestParameters(request);
  return { request, encoding: { isBinaryByDefault, isBinaryByOutput } };
}

/**
 * Decodes a raw binary request (Inference-Header-Content-Length: 0): the whole body is the data of the
 * model's only input, for a batch of one, and every output comes back binary. The shape is deduced as
 * Triton's core does (src/infer_request.cc `Normalize`): at most one variable-sized dimension, sized
 * from the body; a BYTES input only when its shape is [1], the body being its one element.
 */
export async function decodeRawInferRequest(
  body: Buffer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  metadata: ModelMetadata,
  isBatching: boolean,
): Promise<DecodedRequest> {
  const [input, ...others] = metadata.inputs;
  if (input === undefined || others.length > 0) {
    throw new NereidError(
      'INVALID_ARG',
      `Raw request must only have 1 input (found 1) to be deduced but got ${metadata.inputs.length} inputs in '${metadata.name}' model configuration`,
    );
  }
  const dims = isBatching ? [1, ...input.shape.slice(1)] : [...input.shape];
  if (dims.filter((dim) => dim === -1).length > 1) {
    throw new NereidError(
      'INVALID_ARG',
      `The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`,
    );
  }
  const known = dims.reduce((product, dim) => (dim === -1 ? product : product * dim), 1);
  let data: Tensor['data'];
  if (input.datatype === 'BYTES') {
    if (dims.includes(-1) || known !== 1) {
      throw new NereidError('INVALID_ARG', `For BYTE datatype raw input '${input.name}', the model must have input shape [1]`);
    }
    data = [body];
  } else {
    const wildcard = dims.indexOf(-1);
    if (wildcard !== -1) dims[wildcard] = known === 0 ? 0 : Math.floor(body.byteLength / known / dataTypeByteSize(input.datatype));
    data = await tensorDataFromBytes(input.name, input.datatype, dims, body, BINARY_DATA);
  }
  const request: InferRequest = {
    modelName: target.modelName,
    ...(target.modelVersion !== undefined ? { modelVersion: target.modelVersion } : {}),
    id: '',
    inputs: [{ name: input.name, dataType: input.datatype, shape: dims, data }],
    parameters: {},
  };
  return { request, encoding: { isBinaryByDefault: true, isBinaryByOutput: new Map() } };
}

function requireRegions(regions: RequestRegions | undefined): RequestRegions {
  if (regions === undefined) throw new NereidError('UNSUPPORTED', 'shared memory is not available on this endpoint');
  return regions;
}

function parametersJson(parameters: Parameters): string {
  const entries = Object.entries(parameters).map(
    ([key, value]) => `${JSON.stringify(key)}:${typeof value === 'bigint' ? value.toString() : JSON.stringify(value)}`,
  );
  return `{${entries.join(',')}}`;
}

/** The start of a response's JSON, before its id: the model's name and version. */
export const responseHeadJson = (response: InferResponse): string =>
  `{"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)}`;

/** The response's `id` member, which follows the head ('' for no id). */
export const responseIdJson = (id: string): string => (id !== '' ? `,"id":${JSON.stringify(id)}` : '');

/**
 * Encodes an inference response: JSON with each output's `data`, or, for outputs sent as binary,
 * `parameters.binary_data_size` in the JSON and the bytes after it in output order. Fixed-size binary
 * outputs are views of the output tensors, not copies. Outputs requested in shared memory are written
 * into their regions and listed with their shape and no data, as Triton answers.
 */
export async function encodeInferResponse(response: InferResponse, encoding: OutputEncoding, regions?: RequestRegions): Promise<EncodedResponse> {
  if (regions?.hasOutputs === true) await regions.writeOutputs(response.outputs);
  const serialized = new Map<Tensor, Uint8Array>();
  for (const output of response.outputs) {
    if (Array.isArray(output.data) && isSentAsBinary(output, encoding, regions)) serialized.set(output, await tensorBytes(output.data));
  }
  return encodeWith(response, encoding, regions, serialized);
}

/**
 * encodeInferResponse in this step, for a response with nothing to write into shared memory and no
 * BYTES output sent as binary (whose serialization yields); undefined for any other.
 */
export function encodeInferResponseNow(response: InferResponse, encoding: OutputEncoding, regions?: RequestRegions): EncodedResponse | undefined {
  if (regions?.hasOutputs === true) return undefined;
  for (const output of response.outputs) if (Array.isArray(output.data) && isSentAsBinary(output, encoding, regions)) return undefined;
  return encodeWith(response, encoding, regions, undefined);
}

function isSentAsBinary(output: Tensor, encoding: OutputEncoding, regions: RequestRegions | undefined): boolean {
  return regions?.isOutputInRegion(output.name) !== true && (encoding.isBinaryByOutput.get(output.name) ?? encoding.isBinaryByDefault);
}

function encodeWith(
  response: InferResponse,
  encoding: OutputEncoding,
  regions: RequestRegions | undefined,
  serialized: ReadonlyMap<Tensor, Uint8Array> | undefined,
): EncodedResponse {
  const binaryChunks: Uint8Array[] = [];
  const outputs: string[] = [];
  for (const output of response.outputs) {
    const isBinary = encoding.isBinaryByOutput.get(output.name) ?? encoding.isBinaryByDefault;
    const head = `{"name":${JSON.stringify(output.name)},"datatype":"${output.dataType}","shape":[${output.shape.join(',')}]`;
    const extra = output.parameters && Object.keys(output.parameters).length > 0 ? `,"parameters":${parametersJson(output.parameters)}` : '';
    if (regions?.isOutputInRegion(output.name) === true) {
      outputs.push(`${head}${extra}}`);
      continue;
    }
    if (!isBinary) {
      outputs.push(`${head}${extra},"data":${tensorDataToJson(output.name, output.dataType, output.data)}}`);
      continue;
    }
    const bytes = Array.isArray(output.data) ? serialized!.get(output)! : asBytes(output.data);
    binaryChunks.push(bytes);
    outputs.push(`${head},"parameters":${parametersJson({ ...output.parameters, binary_data_size: bytes.byteLength })}}`);
  }
  const parameters = Object.keys(response.parameters).length > 0 ? `,"parameters":${parametersJson(response.parameters)}` : '';
  const json = Buffer.from(`${responseHeadJson(response)}${responseIdJson(response.id)}${parameters},"outputs":[${outputs.join(',')}]}`);
  return { headerLength: binaryChunks.length > 0 ? json.byteLength : undefined, chunks: [json, ...binaryChunks] };
}
