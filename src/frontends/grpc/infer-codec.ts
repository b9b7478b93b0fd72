import { create } from '@bufbuild/protobuf';
import { DATA_TYPE_NAMES, type DataType, dataTypeByteSize, isDataType } from '../../protocol/data-type.js';
import { type CutElement, type InferRequest, type InferResponse, NereidError, type Tensor } from '../../core/index.js';
import type { ParameterValue } from '../../protocol/parameters.js';
import { asBytes, elementCount } from '../../protocol/tensor-data.js';
import type { JsonValue } from '../../protocol/json-body.js';
import { parseModelVersion } from '../model-version.js';
import { checkRequestParameters } from '../request-parameters.js';
import { checkGrpcClassificationParameter, checkGrpcRequestParameterTypes } from './request-parameter-types.js';
import { type RequestRegions, SHARED_MEMORY_SOURCE, takeGrpcRegionReference } from '../shared-memory/tensor-regions.js';
import { byteSizeMismatch, fixedSizeDataFromBytes, type RequestOf, tensorBytes, tensorDataFromBytes } from '../tensor-bytes.js';
import { tensorDataFromJson } from '../tensor-json.js';
import { type InferParameter, type InferTensorContents, type ModelInferRequest, type ModelInferResponse, ModelInferResponseSchema } from '../../protocol/gen/grpc_service_pb.js';
import { CONTENTS_FIELD, parameterValues } from '../../protocol/infer-parameters.js';

function hasContents(contents: InferTensorContents | undefined): boolean {
  return contents !== undefined && Object.values(contents).some((values) => Array.isArray(values) && values.length > 0);
}

function fromContents(name: string, dataType: DataType, shape: readonly number[], contents: InferTensorContents | undefined, request: RequestOf): Tensor['data'] {
  if (dataType === 'FP16' || dataType === 'BF16') {
    throw new NereidError('INVALID_ARG', `input '${name}': ${dataType} data cannot travel in typed contents; send it in raw_input_contents`);
  }
  if (dataType === 'BYTES') {
    // The element count is checked against the shape by the core, in Triton's words and order (validate-request.ts).
    const elements = contents?.bytesContents ?? [];
    return elements.map((element) => new Uint8Array(element.buffer, element.byteOffset, element.byteLength));
  }
  const values: JsonValue[] = contents?.[CONTENTS_FIELD[dataType]] ?? [];
  const count = elementCount(shape);
  if (values.length !== count) {
    // Triton's core counts typed contents in bytes, as it does raw contents.
    const size = dataTypeByteSize(dataType);
    throw byteSizeMismatch(name, dataType, shape, count * size, values.length * size, `its ${CONTENTS_FIELD[dataType].replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)} holds ${values.length} values`, request);
  }
  return tensorDataFromJson(name, dataType, count, values);
}

const RAW_CONTENTS = { sizePhrase: 'its raw_input_contents holds' } as const;

/**
 * Decodes a ModelInferRequest: each input's data from its typed `contents` or, as Triton's clients
 * send it, from `raw_input_contents` in input order (views of the message, not copies). Inputs in
 * system shared memory take no raw entry (Triton's rule) and are leased from `regions`, which the
 * caller releases once the response is written; outputs asked in shared memory are noted there.
 */
export async function decodeModelInferRequest(message: ModelInferRequest, regions?: RequestRegions): Promise<InferRequest> {
  const version = parseModelVersion(message.modelVersion);
  checkGrpcRequestParameterTypes(message.parameters);
  const { inputs } = message;
  const raw = message.rawInputContents;
  const references = inputs.map((input) => {
    const parameters = parameterValues(input.parameters);
    return { parameters, region: takeGrpcRegionReference(input.name, parameters) };
  });
  const tensors: Tensor[] = [];
  const cutInputs = new Map<string, CutElement>();
  let rawIndex = 0;
  for (const [index, input] of inputs.entries()) {
    const { name } = input;
    if (!isDataType(input.datatype)) {
      throw new NereidError(
        'INVALID_ARG',
        `input '${name}': unknown datatype "${input.datatype}"; expected one of ${DATA_TYPE_NAMES.join(', ')}`,
      );
    }
    const shape = input.shape.map((dim) => Number(dim));
    if (shape.includes(-1)) {
      // Triton's core text (InferenceRequest::Normalize): a request gives every dimension.
      throw new NereidError('INVALID_ARG', `All input dimensions should be specified for input '${name}' for model '${message.modelName}', got [${input.shape.join(',')}]`);
    }
    if (shape.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
      throw new NereidError('INVALID_ARG', `input '${name}': shape must hold non-negative integers, got [${input.shape.join(',')}]`);
    }
    const { parameters, region } = references[index]!;
    let data: Tensor['data'];
    if (region !== undefined) {
      if (hasContents(input.contents)) {
        // Triton's text (InferGRPCToInput, src/grpc/infer_handler.cc).
        throw new NereidError('INVALID_ARG', `unexpected 'content' provided when using shared memory for input tensor '${name}' for model '${message.modelName}'`);
      }
      if (regions === undefined) throw new NereidError('UNSUPPORTED', 'shared memory is not available on this endpoint');
      data = await tensorDataFromBytes(name, input.datatype, shape, regions.readInput(region), SHARED_MEMORY_SOURCE, message, cutInputs);
    } else {
      // Triton's texts (InferGRPCToInputHelper, src/grpc/infer_handler.cc): raw entries go to the inputs
      // outside shared memory in order; one missing fails, entries left over are ignored.
      if (raw.length > 0 && hasContents(input.contents)) {
        throw new NereidError('INVALID_ARG', `contents field must not be specified when using raw_input_contents for '${name}' for model '${message.modelName}'`);
      }
      if (raw.length > 0 && rawIndex >= raw.length) {
        throw new NereidError('INVALID_ARG', `unable to find data for input tensor '${name}' for model '${message.modelName}' in request.`);
      }
      if (raw.length === 0) data = fromContents(name, input.datatype, shape, input.contents, message);
      else if (input.datatype === 'BYTES') data = await tensorDataFromBytes(name, input.datatype, shape, raw[rawIndex++]!, RAW_CONTENTS, message, cutInputs);
      else data = fixedSizeDataFromBytes(name, input.datatype, shape, raw[rawIndex++]!, RAW_CONTENTS, message);
    }
    tensors.push({ name, dataType: input.datatype, shape, data, parameters });
  }
  const outputs = message.outputs.map((output) => {
    checkGrpcClassificationParameter(output.parameters);
    const parameters = parameterValues(output.parameters);
    const region = takeGrpcRegionReference(output.name, parameters);
    if (region !== undefined) {
      if (regions === undefined) throw new NereidError('UNSUPPORTED', 'shared memory is not available on this endpoint');
      regions.addOutput(output.name, region);
    }
    return { name: output.name, parameters };
  });
  const request: InferRequest = {
    modelName: message.modelName,
    ...(version !== undefined ? { modelVersion: version } : {}),
    id: message.id,
    inputs: tensors,
    ...(outputs.length > 0 ? { outputs } : {}),
    parameters: parameterValues(message.parameters),
    ...(cutInputs.size > 0 ? { cutBytesInputs: cutInputs } : {}),
  };
  checkRequestParameters(request);
  return request;
}

function toParameterMessage(value: ParameterValue): InferParameter['parameterChoice'] {
  if (typeof value === 'boolean') return { case: 'boolParam', value };
  if (typeof value === 'string') return { case: 'stringParam', value };
  if (typeof value === 'bigint') return value >= 0n ? { case: 'uint64Param', value } : { case: 'int64Param', value };
  return Number.isInteger(value) ? { case: 'int64Param', value: BigInt(value) } : { case: 'doubleParam', value };
}

const NO_BYTES = new Uint8Array(0);

/**
 * Encodes a response as Triton does: every output's data in raw_output_contents, in output order. An
 * output asked in shared memory is written into its region; its raw entry is empty, so the entries
 * still line up with the outputs.
 */
export async function encodeModelInferResponse(response: InferResponse, regions?: RequestRegions): Promise<ModelInferResponse> {
  if (regions?.hasOutputs === true) await regions.writeOutputs(response.outputs);
  const rawOutputContents: Uint8Array[] = [];
  for (const output of response.outputs) {
    if (regions?.isOutputInRegion(output.name) === true) {
      rawOutputContents.push(NO_BYTES);
      continue;
    }
    rawOutputContents.push(Array.isArray(output.data) ? await tensorBytes(output.data) : asBytes(output.data));
  }
  return create(ModelInferResponseSchema, {
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    id: response.id,
    parameters: Object.fromEntries(Object.entries(response.parameters).map(([key, value]) => [key, { parameterChoice: toParameterMessage(value) }])),
    outputs: response.outputs.map((output) => ({ name: output.name, datatype: output.dataType, shape: output.shape.map((dim) => BigInt(dim)) })),
    rawOutputContents,
  });
}
