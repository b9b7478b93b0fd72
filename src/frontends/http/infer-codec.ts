import { type CutElement, type InferRequest, type InferResponse, NereidError, type Tensor } from '../../core/index.js';
import type { ModelMetadata } from '../../protocol/metadata.js';
import type { Parameters } from '../../protocol/parameters.js';
import { asBytes, elementCount } from '../../protocol/tensor-data.js';
import { type DataType, dataTypeByteSize } from '../../protocol/data-type.js';
import { type HeaderInput, type OutputEncoding, type RequestHeader, requestHeaderOf } from './request-header.js';
import { binaryResponseJson } from './response-json-memo.js';
import { type RequestRegions, SHARED_MEMORY_SOURCE } from '../shared-memory/tensor-regions.js';
import { fixedSizeDataFromBytes, tensorBytes, tensorDataFromBytes } from '../tensor-bytes.js';
import { tensorDataFromJson, tensorDataToJson } from '../tensor-json.js';

export type { OutputEncoding } from './request-header.js';

export interface DecodedRequest {
  readonly request: InferRequest;
  readonly encoding: OutputEncoding;
}

export interface EncodedResponse {
  /** Set when binary outputs follow the JSON: the JSON's length in bytes. */
  readonly headerLength: number | undefined;
  readonly chunks: readonly Uint8Array[];
}

const BINARY_DATA = { sizePhrase: 'binary_data_size is' } as const;

/** The body's JSON header, decoded (remembered by its text). */
function headerOf(body: Buffer, headerLength: number | undefined): RequestHeader {
  if (headerLength !== undefined && (headerLength < 0 || headerLength > body.byteLength)) {
    // Triton's text (HTTPAPIServer::GetInferenceHeaderLength).
    throw new NereidError('INVALID_ARG', `inference header size should be in range (0, ${body.byteLength}), got: ${headerLength}`);
  }
  return requestHeaderOf(body.toString('utf8', 0, headerLength ?? body.byteLength));
}

/** An input's binary data: the `binarySize` bytes of the body from `offset`. */
/** The input's binary data; past the body's end, Triton's text (HTTPAPIServer's binary input parsing), then what remained. */
function binaryBytes(body: Buffer, offset: number, input: HeaderInput, binarySize: number, modelName: string): Buffer {
  if (offset + binarySize > body.byteLength) {
    const remaining = body.byteLength - offset;
    throw new NereidError(
      'INVALID_ARG',
      `unexpected size for input '${input.name}', expecting ${binarySize - remaining} additional bytes for model '${modelName}' (binary_data_size ${binarySize}, ${remaining} bytes of binary data remain)`,
    );
  }
  return body.subarray(offset, offset + binarySize);
}

/** Binary data left over after every input's: Triton's text, then the counts. */
function checkBinaryTotal(body: Buffer, jsonEnd: number, offset: number, modelName: string): void {
  if (offset !== body.byteLength) {
    throw new NereidError(
      'INVALID_ARG',
      `unexpected additional input data for model '${modelName}' (the request body has ${body.byteLength - jsonEnd} bytes of binary data but the inputs' binary_data_size add up to ${offset - jsonEnd})`,
    );
  }
}

function requestOf(
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  header: RequestHeader,
  inputs: Tensor[],
  cutInputs: ReadonlyMap<string, CutElement>,
): InferRequest {
  return {
    modelName: target.modelName,
    ...(target.modelVersion !== undefined ? { modelVersion: target.modelVersion } : {}),
    id: header.id,
    inputs,
    ...(header.outputs !== undefined ? { outputs: header.outputs } : {}),
    parameters: header.parameters,
    ...(cutInputs.size > 0 ? { cutBytesInputs: cutInputs } : {}),
  };
}

/**
 * requestOf with every member present (modelVersion and outputs possibly undefined) and the signal:
 * the requests of the one-step lane all have one shape, so the code that reads them stays monomorphic.
 */
function laneRequestOf(
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  header: RequestHeader,
  inputs: Tensor[],
  signal: AbortSignal,
): InferRequest {
  return { modelName: target.modelName, modelVersion: target.modelVersion, id: header.id, inputs, outputs: header.outputs, parameters: header.parameters, signal };
}

/**
 * Decodes a KServe v2 inference request body: the JSON object, followed by binary tensor data when
 * `headerLength` (the Inference-Header-Content-Length header) is given (Triton's binary data extension,
 * docs/protocol/extension_binary_data.md). Binary inputs are views into `body`, not copies. Tensors in
 * system shared memory (docs/protocol/extension_shared_memory.md) are leased from `regions`, which the
 * caller releases once the response is written. The request's parameters and requested outputs are
 * its header's (request-header.ts), shared and frozen.
 */
export async function decodeInferRequest(
  body: Buffer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  headerLength: number | undefined,
  regions?: RequestRegions,
): Promise<DecodedRequest> {
  const header = headerOf(body, headerLength);
  const jsonEnd = headerLength ?? body.byteLength;
  let offset = jsonEnd;
  const inputs: Tensor[] = [];
  const cutInputs = new Map<string, CutElement>();
  const owner = { modelName: target.modelName, id: header.id };
  for (const input of header.inputs) {
    const { name, dataType, shape, region, binarySize } = input;
    let data: Tensor['data'];
    if (region !== undefined) {
      data = await tensorDataFromBytes(name, dataType, shape, requireRegions(regions).readInput(region), SHARED_MEMORY_SOURCE, owner, cutInputs);
    } else if (binarySize !== undefined) {
      const bytes = binaryBytes(body, offset, input, binarySize, target.modelName);
      data = dataType === 'BYTES' ? await tensorDataFromBytes(name, dataType, shape, bytes, BINARY_DATA, owner, cutInputs) : fixedSizeDataFromBytes(name, dataType, shape, bytes, BINARY_DATA, owner);
      offset += binarySize;
    } else {
      data = tensorDataFromJson(name, dataType, elementCount(shape), input.data!);
    }
    inputs.push({ name, dataType, shape, data, parameters: input.parameters });
  }
  checkBinaryTotal(body, jsonEnd, offset, target.modelName);
  for (const [name, region] of header.outputRegions) requireRegions(regions).addOutput(name, region);
  return { request: requestOf(target, header, inputs, cutInputs), encoding: header.encoding };
}

/**
 * decodeInferRequest in this step, for a request that uses no shared memory and has no BYTES input
 * sent as binary data (RequestHeader.isDecodableNow), cancelled by `signal`; undefined, nothing done,
 * for any other.
 */
export function decodeInferRequestNow(
  body: Buffer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  headerLength: number | undefined,
  signal: AbortSignal,
): DecodedRequest | undefined {
  const header = headerOf(body, headerLength);
  if (!header.isDecodableNow) return undefined;
  const jsonEnd = headerLength ?? body.byteLength;
  let offset = jsonEnd;
  const inputs: Tensor[] = [];
  const owner = { modelName: target.modelName, id: header.id };
  for (const input of header.inputs) {
    const { name, dataType, shape, binarySize } = input;
    let data: Tensor['data'];
    if (binarySize !== undefined) {
      const bytes = binaryBytes(body, offset, input, binarySize, target.modelName);
      data = fixedSizeDataFromBytes(name, dataType as Exclude<DataType, 'BYTES'>, shape, bytes, BINARY_DATA, owner);
      offset += binarySize;
    } else {
      data = tensorDataFromJson(name, dataType, elementCount(shape), input.data!);
    }
    inputs.push({ name, dataType, shape, data, parameters: input.parameters });
  }
  checkBinaryTotal(body, jsonEnd, offset, target.modelName);
  return { request: laneRequestOf(target, header, inputs, signal), encoding: header.encoding };
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
    data = fixedSizeDataFromBytes(input.name, input.datatype, dims, body, BINARY_DATA, { modelName: target.modelName, id: '' });
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
  if (regions?.hasOutputs !== true && serialized === undefined) {
    const binary = binaryOutputsOf(response, encoding);
    if (binary !== undefined) {
      const json = binaryResponseJson(response, encoding, binary.byteLengths, () => responseJson(response, encoding, regions, serialized, []));
      return { headerLength: json.byteLength, chunks: [json, ...binary.chunks] };
    }
  }
  const binaryChunks: Uint8Array[] = [];
  const json = responseJson(response, encoding, regions, serialized, binaryChunks);
  return { headerLength: binaryChunks.length > 0 ? json.byteLength : undefined, chunks: [json, ...binaryChunks] };
}

/** The bytes of each output, when every output is of a fixed-size type and goes as binary data; undefined otherwise. */
function binaryOutputsOf(response: InferResponse, encoding: OutputEncoding): { chunks: Uint8Array[]; byteLengths: number[] } | undefined {
  if (response.outputs.length === 0) return undefined;
  const chunks: Uint8Array[] = [];
  const byteLengths: number[] = [];
  for (const output of response.outputs) {
    if (Array.isArray(output.data) || !(encoding.isBinaryByOutput.get(output.name) ?? encoding.isBinaryByDefault)) return undefined;
    const bytes = asBytes(output.data);
    chunks.push(bytes);
    byteLengths.push(bytes.byteLength);
  }
  return { chunks, byteLengths };
}

/** The response's JSON header; the bytes of the outputs sent as binary are pushed onto `binaryChunks`, in order. */
function responseJson(
  response: InferResponse,
  encoding: OutputEncoding,
  regions: RequestRegions | undefined,
  serialized: ReadonlyMap<Tensor, Uint8Array> | undefined,
  binaryChunks: Uint8Array[],
): Buffer {
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
  return Buffer.from(`${responseHeadJson(response)}${responseIdJson(response.id)}${parameters},"outputs":[${outputs.join(',')}]}`);
}
