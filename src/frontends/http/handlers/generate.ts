import { type InferRequest, type InferResponse, type InferenceServer, NereidError, type RequestTrace } from '../../../core/index.js';
import type { Parameters } from '../../../protocol/parameters.js';
import { elementCount } from '../../../protocol/tensor-data.js';
import { tensorDataFromJson, tensorDataToJson } from '../../tensor-json.js';
import type { JsonValue } from '../../../protocol/json-body.js';
import { parseRequestJson } from '../request-json.js';
import type { Reply } from '../reply.js';
import { AsyncQueue } from '../../../util/async-queue.js';
import { deferred } from '../../../util/deferred.js';

type Target = { readonly modelName: string; readonly modelVersion: number | undefined };

/**
 * The generate extension's request (docs/protocol/extension_generate.md): every key naming a model
 * input becomes that input (a string, number or boolean is one element, an array its elements, with
 * a batch dimension of 1 added for a batching model); `parameters` and every other key become
 * request parameters.
 */
export async function decodeGenerateRequest(server: InferenceServer, target: Target, body: Buffer): Promise<InferRequest> {
  const json = parseRequestJson(body.toString('utf8'), 'generate request');
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new NereidError('INVALID_ARG', `generate request must be a JSON object such as {"text_input": "...", "parameters": {...}}`);
  }
  const metadata = await server.modelMetadata(target.modelName, target.modelVersion);
  const isBatching = (await server.modelSpec(target.modelName, target.modelVersion)).maxBatchSize > 0;
  const inputs: InferRequest['inputs'][number][] = [];
  const parameters: Parameters = {};
  const addParameter = (key: string, value: JsonValue): void => {
    if (value === null || typeof value === 'object') {
      throw new NereidError('INVALID_ARG', `generate request: '${key}' is neither a model input nor a parameter value (string, number or boolean); the model's inputs are ${metadata.inputs.map((i) => `'${i.name}'`).join(', ')}`);
    }
    parameters[key] = value;
  };
  for (const [key, value] of Object.entries(json)) {
    const input = metadata.inputs.find((candidate) => candidate.name === key);
    if (input !== undefined) {
      const count = Array.isArray(value) ? (value.flat(Infinity as 1) as JsonValue[]).length : 1;
      const shape = isBatching ? [1, count] : [count];
      inputs.push({ name: key, dataType: input.datatype, shape, data: tensorDataFromJson(key, input.datatype, count, value) });
    } else if (key === 'parameters') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new NereidError('INVALID_ARG', `generate request: 'parameters' must be an object`);
      for (const [name, parameter] of Object.entries(value)) addParameter(name, parameter);
    } else {
      addParameter(key, value);
    }
  }
  return { modelName: target.modelName, ...(target.modelVersion !== undefined ? { modelVersion: target.modelVersion } : {}), id: '', inputs, parameters };
}

/** The generate extension's response: model name and version, and each output by name (one element as itself). */
export function encodeGenerateResponse(response: InferResponse): string {
  const fields = [`"model_name":${JSON.stringify(response.modelName)}`, `"model_version":${JSON.stringify(response.modelVersion)}`];
  for (const output of response.outputs) {
    const values = tensorDataToJson(output.name, output.dataType, output.data);
    fields.push(`${JSON.stringify(output.name)}:${elementCount(output.shape) === 1 ? values.slice(1, -1) : values}`);
  }
  return `{${fields.join(',')}}`;
}

/** `POST .../generate`: exactly one response, as JSON; `signal` (the connection closed) cancels the request. */
export async function handleGenerate(server: InferenceServer, target: Target, body: Buffer, trace: RequestTrace | undefined, signal?: AbortSignal): Promise<Reply> {
  const decoded = { ...(await decodeGenerateRequest(server, target, body)), signal };
  const request = trace === undefined ? decoded : { ...decoded, trace };
  const responses: InferResponse[] = [];
  await server.inferStream(request, (response) => responses.push(response));
  if (responses.length !== 1) {
    throw new NereidError(
      'INVALID_ARG',
      `generate expects exactly 1 response, but model '${target.modelName}' sent ${responses.length}; use POST /v2/models/${target.modelName}/generate_stream for a model that streams`,
    );
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [Buffer.from(encodeGenerateResponse(responses[0]!))], isCompressible: true };
}

const sseEvent = (json: string): Buffer => Buffer.from(`data: ${json}\n\n`);

/**
 * `POST .../generate_stream`: each response as a server-sent event as soon as the model sends it. A
 * request that fails before its first response gets an ordinary JSON error; a failure after that is
 * an `{"error": ...}` event, the status having been sent already. A client that goes away cancels the
 * request (`signal`): a decoupled model is told, and what it still sends is dropped.
 */
export async function handleGenerateStream(server: InferenceServer, target: Target, body: Buffer, trace: RequestTrace | undefined, signal?: AbortSignal): Promise<Reply> {
  const decoded = { ...(await decodeGenerateRequest(server, target, body)), signal };
  const request = trace === undefined ? decoded : { ...decoded, trace };
  const events = new AsyncQueue<Uint8Array>();
  const firstResponse = deferred();
  let hasResponded = false;
  const ended = server
    .inferStream(request, (response) => {
      events.push(sseEvent(encodeGenerateResponse(response)));
      hasResponded = true;
      firstResponse.resolve();
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  // Wait for the first response or the end, whichever comes first, to know which status to send.
  const early = await Promise.race([firstResponse.promise.then(() => undefined), ended]);
  if (early !== undefined && !hasResponded) throw early;
  void ended.then((error) => {
    if (error !== undefined) events.push(sseEvent(JSON.stringify({ error: (error as Error).message })));
    events.end();
  });
  return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }, chunks: [], stream: events };
}
