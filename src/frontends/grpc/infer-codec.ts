import { create } from '@bufbuild/protobuf';
import { DATA_TYPE_NAMES, type DataType, isDataType } from '../../protocol/data-type.js';
import { type InferRequest, type InferResponse, NereidError, type Tensor, serializeBytesSliced } from '../../core/index.js';
import type { ParameterValue } from '../../protocol/parameters.js';
import { asBytes, elementCount } from '../../protocol/tensor-data.js';
import type { JsonValue } from '../../protocol/json-body.js';
import { parseModelVersion } from '../model-version.js';
import { checkRequestParameters, checkTensorParameters } from '../request-parameters.js';
import { tensorDataFromBytes } from '../tensor-bytes.js';
import { tensorDataFromJson } from '../tensor-json.js';
import { type InferParameter, type InferTensorContents, type ModelInferRequest, type ModelInferResponse, ModelInferResponseSchema } from '../../protocol/gen/grpc_service_pb.js';
import { CONTENTS_FIELD, parameterValues } from '../../protocol/infer-parameters.js';

function hasContents(contents: InferTensorContents | undefined): boolean {
  return contents !== undefined && Object.values(contents).some((values) => Array.isArray(values) && values.length > 0);
}

function fromContents(name: string, dataType: DataType, shape: readonly number[], contents: InferTensorContents | undefined): Tensor['data'] {
  if (dataType === 'FP16' || dataType === 'BF16') {
    throw new NereidError('INVALID_ARG', `input '${name}': ${dataType} data cannot travel in typed contents; send it in raw_input_contents`);
  }
  if (dataType === 'BYTES') {
    // The element count is checked against the shape by the core, in Triton's words (validate-request.ts).
    const elements = contents?.bytesContents ?? [];
    return elements.map((element) => new Uint8Array(element.buffer, element.byteOffset, element.byteLength));
  }
  const values: JsonValue[] = contents?.[CONTENTS_FIELD[dataType]] ?? [];
  return tensorDataFromJson(name, dataType, elementCount(shape), values);
}

const RAW_CONTENTS = { name: 'raw contents', sizePhrase: 'its raw_input_contents holds' } as const;

/**
 * Decodes a ModelInferRequest: each input's data from its typed `contents` or, as Triton's clients
 * send it, from `raw_input_contents` in input order (views of the message, not copies).
 */
export async function decodeModelInferRequest(message: ModelInferRequest): Promise<InferRequest> {
  const version = parseModelVersion(message.modelVersion);
  const { inputs } = message;
  const raw = message.rawInputContents;
  if (raw.length > 0 && raw.length !== inputs.length) {
    throw new NereidError(
      'INVALID_ARG',
      `raw_input_contents has ${raw.length} entries but the request has ${inputs.length} inputs; give one raw entry per input, in input order`,
    );
  }
  const tensors: Tensor[] = [];
  for (const [index, input] of inputs.entries()) {
    const { name } = input;
    if (!isDataType(input.datatype)) {
      throw new NereidError(
        'INVALID_ARG',
        `input '${name}': unknown datatype "${input.datatype}"; expected one of ${DATA_TYPE_NAMES.join(', ')}`,
      );
    }
    const shape = input.shape.map((dim) => Number(dim));
    if (shape.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
      throw new NereidError('INVALID_ARG', `input '${name}': shape must hold non-negative integers, got [${input.shape.join(',')}]`);
    }
    const parameters = parameterValues(input.parameters);
    checkTensorParameters('input', name, parameters);
    if (raw.length > 0 && hasContents(input.contents)) {
      throw new NereidError('INVALID_ARG', `input '${name}' has both contents and raw_input_contents; give one`);
    }
    const data = raw.length > 0 ? await tensorDataFromBytes(name, input.datatype, shape, raw[index]!, RAW_CONTENTS) : fromContents(name, input.datatype, shape, input.contents);
    tensors.push({ name, dataType: input.datatype, shape, data, parameters });
  }
  const outputs = message.outputs.map((output) => ({ name: output.name, parameters: parameterValues(output.parameters) }));
  const request: InferRequest = {
    modelName: message.modelName,
    ...(version !== undefined ? { modelVersion: version } : {}),
    id: message.id,
    inputs: tensors,
    ...(outputs.length > 0 ? { outputs } : {}),
    parameters: parameterValues(message.parameters),
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

/** Encodes a response as Triton does: every output's data in raw_output_contents, in output order. */
export async function encodeModelInferResponse(response: InferResponse): Promise<ModelInferResponse> {
  const rawOutputContents: Uint8Array[] = [];
  for (const output of response.outputs) {
    rawOutputContents.push(Array.isArray(output.data) ? await serializeBytesSliced(output.data) : asBytes(output.data as Exclude<Tensor['data'], Uint8Array[]>));
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
