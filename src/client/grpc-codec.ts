import { type MessageInitShape, create } from '@bufbuild/protobuf';
import { isDataType } from '../protocol/data-type.js';
import type { ParameterValue } from '../protocol/parameters.js';
import type { TensorData } from '../protocol/tensor-data.js';
import { ClientError } from './errors.js';
import { outputDataFromBytes, outputDataFromJson } from './http-codec.js';
import { type PreparedInput, type PreparedSharedMemoryInput, inputBytes, sharedMemoryParameters } from './infer-input.js';
import { InferResult, type InferOutput } from './infer-result.js';
import type { InferOptions } from './types.js';
import { requestParameters, versionString } from './wire-messages.js';
import { type InferParameter, InferParameterSchema, type ModelInferRequest, ModelInferRequestSchema, type ModelInferResponse } from '../protocol/gen/grpc_service_pb.js';
import { CONTENTS_FIELD, parameterValues } from '../protocol/infer-parameters.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A parameter value as an InferParameter: integers as int64 (uint64 beyond its range), other numbers as double. */
export function parameterMessage(value: ParameterValue): InferParameter['parameterChoice'] {
  if (typeof value === 'boolean') return { case: 'boolParam', value };
  if (typeof value === 'string') return { case: 'stringParam', value };
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX ? { case: 'int64Param', value } : { case: 'uint64Param', value };
  return Number.isSafeInteger(value) ? { case: 'int64Param', value: BigInt(value) } : { case: 'doubleParam', value };
}

type ParameterInits = Record<string, MessageInitShape<typeof InferParameterSchema>>;

export function parameterMessages(parameters: Readonly<Record<string, ParameterValue>> | undefined): ParameterInits {
  return Object.fromEntries(Object.entries(parameters ?? {}).map(([key, value]) => [key, { parameterChoice: parameterMessage(value) }]));
}

/**
 * A ModelInferRequest as Triton's clients send it: every input's data in `raw_input_contents`, in
 * input order (views of the caller's arrays; BYTES serialized with their 4-byte lengths). An input in
 * shared memory carries the region in its parameters and takes no raw entry.
 */
export function encodeModelInferRequest(modelName: string, inputs: ReadonlyArray<PreparedInput | PreparedSharedMemoryInput>, options: InferOptions): ModelInferRequest {
  const parameters = parameterMessages(requestParameters(options));
  // Triton's gRPC server reads `priority` as a uint64 parameter, as tritonclient sends it.
  if (options.priority !== undefined && Number.isSafeInteger(options.priority) && options.priority >= 0) {
    parameters.priority = { parameterChoice: { case: 'uint64Param', value: BigInt(options.priority) } };
  }
  return create(ModelInferRequestSchema, {
    modelName,
    modelVersion: versionString(options.version),
    id: options.id ?? '',
    parameters,
    inputs: inputs.map((input) => ({
      name: input.name,
      datatype: input.datatype,
      shape: input.shape.map((dim) => BigInt(dim)),
      parameters: parameterMessages(input.parameters),
    })),
    outputs: (options.outputs ?? []).map((output) => ({
      name: output.name,
      parameters: parameterMessages({
        ...output.parameters,
        ...(output.classCount !== undefined ? { classification: output.classCount } : {}),
        ...(output.sharedMemory !== undefined ? sharedMemoryParameters(`output '${output.name}'`, output.sharedMemory) : {}),
      }),
    })),
    rawInputContents: inputs.flatMap((input) => (input.data === undefined ? [] : [inputBytes(input)])),
  });
}

/**
 * Decodes a ModelInferResponse: outputs from `raw_output_contents` (as Triton and Nereid answer) or,
 * from servers that use them, from the typed `contents`.
 */
export function decodeModelInferResponse(response: ModelInferResponse): InferResult {
  const raw = response.rawOutputContents;
  const outputs: InferOutput[] = response.outputs.map((output, index) => {
    const { name, datatype } = output;
    if (!isDataType(datatype)) throw new ClientError(`output '${name}' has an unknown datatype ${JSON.stringify(datatype)}`);
    const shape = output.shape.map(Number);
    let data: TensorData;
    if (raw.length > 0) {
      const bytes = raw[index];
      if (bytes === undefined) throw new ClientError(`the response has ${raw.length} raw_output_contents for ${response.outputs.length} outputs`);
      data = outputDataFromBytes(name, datatype, bytes);
    } else if (datatype === 'FP16' || datatype === 'BF16') {
      throw new ClientError(`output '${name}' is ${datatype} but came without raw contents`);
    } else if (datatype === 'BYTES') {
      data = (output.contents?.bytesContents ?? []).map((element) => new Uint8Array(element.buffer, element.byteOffset, element.byteLength));
    } else {
      data = outputDataFromJson(name, datatype, shape, output.contents?.[CONTENTS_FIELD[datatype]] ?? []);
    }
    return { name, datatype, shape, data, parameters: parameterValues(output.parameters) };
  });
  return new InferResult({
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    id: response.id,
    parameters: parameterValues(response.parameters),
    outputs,
  });
}
