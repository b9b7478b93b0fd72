/**
 * The KServe v2 binary data extension, as the benchmark's clients and the naive server speak it
 * (Triton `docs/protocol/extension_binary_data.md`): a JSON header of `Inference-Header-Content-Length`
 * bytes, then each binary tensor's raw little-endian bytes, in order, sized by `binary_data_size`.
 * Only what the benchmark needs: fixed-size numeric tensors.
 */

export interface BinaryTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array;
}

export interface BinaryMessage {
  readonly body: Buffer;
  readonly headerLength: number;
}

/** One inference request whose inputs all travel as binary data and whose outputs come back binary. */
export function encodeInferRequest(inputs: readonly BinaryTensor[]): BinaryMessage {
  const header = {
    inputs: inputs.map((input) => ({
      name: input.name,
      shape: input.shape,
      datatype: input.datatype,
      parameters: { binary_data_size: input.bytes.byteLength },
    })),
    parameters: { binary_data_output: true },
  };
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...inputs.map((input) => input.bytes)]), headerLength: json.byteLength };
}

/** An inference response with every output as binary data. */
export function encodeInferResponse(modelName: string, outputs: readonly BinaryTensor[]): BinaryMessage {
  const header = {
    model_name: modelName,
    model_version: '1',
    outputs: outputs.map((output) => ({
      name: output.name,
      datatype: output.datatype,
      shape: output.shape,
      parameters: { binary_data_size: output.bytes.byteLength },
    })),
  };
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...outputs.map((output) => output.bytes)]), headerLength: json.byteLength };
}

interface WireTensor {
  name: string;
  datatype: string;
  shape: number[];
  parameters?: { binary_data_size?: number };
  data?: unknown;
}

/**
 * Splits a request or response body into its JSON header and its tensors (`inputs` or `outputs`).
 * Binary tensors are views into `body`; tensors sent as JSON `data` are returned with `data` and no bytes.
 * `headerLength` undefined means the whole body is JSON.
 */
export function decodeInferMessage(
  body: Buffer,
  headerLength: number | undefined,
  field: 'inputs' | 'outputs',
): { header: Record<string, unknown>; tensors: Array<BinaryTensor | (Omit<BinaryTensor, 'bytes'> & { data: unknown })> } {
  const jsonEnd = headerLength ?? body.byteLength;
  if (!Number.isInteger(jsonEnd) || jsonEnd < 0 || jsonEnd > body.byteLength) {
    throw new Error(`Inference-Header-Content-Length ${headerLength} does not fit a body of ${body.byteLength} bytes`);
  }
  const header = JSON.parse(body.subarray(0, jsonEnd).toString('utf8')) as Record<string, unknown>;
  const wire = (header[field] ?? []) as WireTensor[];
  let offset = jsonEnd;
  const tensors = wire.map((tensor) => {
    const size = tensor.parameters?.binary_data_size;
    if (size === undefined) return { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, data: tensor.data };
    if (offset + size > body.byteLength) throw new Error(`${field} '${tensor.name}': binary_data_size ${size} runs past the end of the body`);
    const bytes = body.subarray(offset, offset + size);
    offset += size;
    return { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, bytes };
  });
  if (offset !== body.byteLength) throw new Error(`the body has ${body.byteLength - offset} bytes past the last binary tensor`);
  return { header, tensors };
}

/** Copies little-endian FP32 bytes into an aligned Float32Array (the bytes may sit at any offset). */
export function toFloat32(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
