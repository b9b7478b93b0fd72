import { type InferRequest, type InferResponse, type InferenceServer, NereidError, type RequestTrace } from '../../../core/index.js';
import { elementCount } from '../../../protocol/tensor-data.js';
import { HTTP_STATUS } from '../../../protocol/status-code.js';
import { tensorDataToJson } from '../../tensor-json.js';
import { type GenerateTarget, decodeGenerateRequest } from '../generate-request.js';
import type { Reply } from '../reply.js';
import { AsyncQueue } from '../../../util/async-queue.js';
import { deferred } from '../../../util/deferred.js';
import { withForwarded } from '../../header-forwarding.js';
import type { Parameters } from '../../../protocol/parameters.js';

const EXACTLY_ONE_RESPONSE = 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/**
 * The generate extension's response, as Triton writes it (src/http_server.cc, GenerateRequestClass::
 * FinalizeResponse): `id` when the request had one, `model_name`, `model_version`, each response
 * parameter and each output by name (an output of one element as that element, any other as a flat
 * array); a name already taken keeps its first value; keys in byte order (Triton's std::map).
 */
export function encodeGenerateResponse(response: InferResponse): string {
  const fields = new Map<string, string>();
  const add = (key: string, json: string): void => {
    if (!fields.has(key)) fields.set(key, json);
  };
  if (response.id !== '') add('id', JSON.stringify(response.id));
  add('model_name', JSON.stringify(response.modelName));
  add('model_version', JSON.stringify(response.modelVersion));
  for (const [key, value] of Object.entries(response.parameters)) add(key, typeof value === 'bigint' ? value.toString() : JSON.stringify(value));
  for (const output of response.outputs) {
    const values = tensorDataToJson(output.name, output.dataType, output.data);
    add(output.name, elementCount(output.shape) === 1 ? values.slice(1, -1) : values);
  }
  return `{${[...fields.keys()]
    .sort()
    .map((key) => `${JSON.stringify(key)}:${fields.get(key)!}`)
    .join(',')}}`;
}

const errorJson = (error: Error): string => JSON.stringify({ error: error.message });
const sseEvent = (json: string): Buffer => Buffer.from(`data: ${json}\n\n`);

/** What a generate request carries besides its body: its trace, the signal of its connection, the parameters its headers forward. */
export interface GenerateContext {
  readonly trace: RequestTrace | undefined;
  readonly signal?: AbortSignal;
  readonly forwarded?: Parameters;
}

/** The request a generate body makes, with its context. */
async function generateRequest(server: InferenceServer, target: GenerateTarget, body: Buffer, { trace, signal, forwarded }: GenerateContext): Promise<InferRequest> {
  const decoded = withForwarded({ ...(await decodeGenerateRequest(server, target, body)), signal }, forwarded);
  return trace === undefined ? decoded : { ...decoded, trace };
}

/**
 * `POST .../generate`: exactly one response, as JSON; `signal` (the connection closed) cancels the
 * request. A request refused before it runs gets its error; one that ran answers with its only
 * response, or that response's error with its status, as Triton does.
 * NOTE: a model that sends no response, or more than one, fails with Triton's text, as INVALID_ARG
 * (400): the client asked /generate of a model that streams. Triton's error is INTERNAL, but it writes
 * it under the status of the first response (200 when it succeeded, or when none came), its chunked
 * reply having begun; qa/L0_http/generate_endpoint_test.py (test_zero_response, test_many_response)
 * checks only the text.
 */
export async function handleGenerate(server: InferenceServer, target: GenerateTarget, body: Buffer, context: GenerateContext): Promise<Reply> {
  const request = await generateRequest(server, target, body, context);
  const outcomes: Array<InferResponse | NereidError> = [];
  let isAccepted = false;
  try {
    await server.inferStream(
      request,
      (response) => outcomes.push(response),
      () => (isAccepted = true),
    );
  } catch (error) {
    if (!isAccepted || !(error instanceof NereidError)) throw error;
    outcomes.push(error);
  }
  if (outcomes.length !== 1) throw new NereidError('INVALID_ARG', EXACTLY_ONE_RESPONSE);
  const outcome = outcomes[0]!;
  if (outcome instanceof NereidError) throw outcome;
  return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [Buffer.from(encodeGenerateResponse(outcome))], isCompressible: true };
}

/**
 * `POST .../generate_stream`: each response as a server-sent event as soon as the model sends it. A
 * request refused before it runs (a bad body, a missing input) gets an ordinary JSON error. Once it
 * runs, the reply is a stream of events, `data: {"error": ...}` for an error (a response the model
 * sent with an error, after which the stream goes on, or the request's failure, which ends it), whose
 * status the first of them decides: 200 after a response (or when the model sent none), the error's
 * status when the first was an error (Triton's GenerateRequestClass::InferResponseComplete). A client that goes
 * away cancels the request (`signal`): a decoupled model is told, and what it still sends is dropped.
 */
export async function handleGenerateStream(server: InferenceServer, target: GenerateTarget, body: Buffer, context: GenerateContext): Promise<Reply> {
  const request = await generateRequest(server, target, body, context);
  const events = new AsyncQueue<Uint8Array>();
  const status = deferred<number>();
  let isAccepted = false;
  let hasResponded = false;
  void server
    .inferStream(
      request,
      (response) => {
        const isError = response instanceof NereidError;
        events.push(sseEvent(isError ? errorJson(response) : encodeGenerateResponse(response)));
        if (!hasResponded) status.resolve(isError ? HTTP_STATUS[response.status] : 200);
        hasResponded = true;
      },
      () => (isAccepted = true),
    )
    .then(
      () => status.resolve(200),
      (error: unknown) => {
        // Refused before it ran, or a bug (not a NereidError) before any event: the front end's error reply.
        if (!hasResponded && (!isAccepted || !(error instanceof NereidError))) {
          status.reject(error);
          return;
        }
        events.push(sseEvent(errorJson(error as Error)));
        status.resolve(error instanceof NereidError ? HTTP_STATUS[error.status] : 500);
      },
    )
    .finally(() => events.end());
  return { status: await status.promise, headers: SSE_HEADERS, chunks: [], stream: events };
}
