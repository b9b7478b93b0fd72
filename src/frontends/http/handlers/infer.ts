import type { IncomingHttpHeaders } from 'node:http';
import { type InferRequest, type InferResponse, type InferenceServer, NereidError, type RequestTrace } from '../../../core/index.js';
import { encodeResponse, encodeResponseNow } from '../cached-encoding.js';
import { type EncodedResponse, type OutputEncoding, decodeInferRequest, decodeInferRequestNow, decodeRawInferRequest } from '../infer-codec.js';
import type { Reply } from '../reply.js';
import type { SharedMemoryRegistry } from '../../shared-memory/shared-memory-registry.js';
import { RequestRegions } from '../../shared-memory/tensor-regions.js';
import { withForwarded } from '../../header-forwarding.js';
import type { Parameters } from '../../../protocol/parameters.js';

const HEADER_LENGTH = 'inference-header-content-length';

function readHeaderLength(headers: IncomingHttpHeaders): number | undefined {
  const value = headers[HEADER_LENGTH];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0]! : value;
  // Triton's text (HTTPAPIServer::GetInferenceHeaderLength); a negative length is refused by headerOf, in range terms.
  if (!/^-?[0-9]+$/.test(text.trim())) throw new NereidError('INVALID_ARG', `Unable to parse Inference-Header-Content-Length, got: ${text}`);
  return Number(text);
}

/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`, JSON, with the binary data extension or with tensors in
 * system shared memory; the regions the request used are released once its response is encoded.
 */
export async function handleInfer(
  server: InferenceServer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  request: {
    readonly headers: IncomingHttpHeaders;
    readonly body: Buffer;
    readonly sharedMemory?: SharedMemoryRegistry;
    readonly trace?: RequestTrace;
    /** Aborts when the client's connection closes first: the request is cancelled. */
    readonly signal?: AbortSignal;
    /** Parameters its headers forward (`--http-header-forward-pattern`), after its own. */
    readonly forwarded?: Parameters;
  },
): Promise<Reply> {
  const regions = RequestRegions.of(request.sharedMemory);
  try {
    return await infer(server, target, request, regions);
  } finally {
    regions.releaseAll();
  }
}

async function infer(
  server: InferenceServer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  {
    headers,
    body,
    trace,
    signal,
    forwarded,
  }: { readonly headers: IncomingHttpHeaders; readonly body: Buffer; readonly trace?: RequestTrace; readonly signal?: AbortSignal; readonly forwarded?: Parameters },
  regions: RequestRegions,
): Promise<Reply> {
  const headerLength = readHeaderLength(headers);
  const { request, encoding } =
    headerLength === 0
      ? await (async () => {
          const metadata = await server.modelMetadata(target.modelName, target.modelVersion);
          const isBatching = (await server.modelSpec(target.modelName, target.modelVersion)).maxBatchSize > 0;
          return decodeRawInferRequest(body, target, metadata, isBatching);
        })()
      : await decodeInferRequest(body, target, headerLength, regions);
  const admitted = { ...withForwarded(request, forwarded), ...(trace !== undefined ? { trace } : {}), ...(signal !== undefined ? { signal } : {}) };
  // A model that can run the request at once answers in this step, with no promise per stage.
  const response = server.inferNow(admitted) ?? (await server.infer(admitted));
  return encodeReply(response, request, encoding, regions);
}

/**
 * The reply to a response: a cached response reuses its encoded bytes (cached-encoding.ts); any that
 * needs no waiting is encoded in this step.
 */
function encodeReply(response: InferResponse, request: InferRequest, encoding: OutputEncoding, regions: RequestRegions): Reply | Promise<Reply> {
  const encoded = encodeResponseNow(response, request, encoding, regions);
  return encoded !== undefined ? inferReply(encoded) : encodeResponse(response, request, encoding, regions).then(inferReply);
}

function inferReply(encoded: EncodedResponse): Reply {
  const headers =
    encoded.headerLength === undefined
      ? JSON_HEADERS
      : { 'content-type': 'application/octet-stream', [HEADER_LENGTH]: String(encoded.headerLength) };
  return { status: 200, headers, chunks: encoded.chunks, isCompressible: true };
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/**
 * handleInfer for a request that uses no shared memory, has no BYTES input sent as binary data and is
 * not traced, decoded in this step: when its model can run it at once (InferenceServer.inferNow: an
 * idle instance on the main thread, a hit in the local response cache), answered in this step; when
 * its scheduler takes a callback (InferenceServer.inferWith: the dynamic batcher), answered from the
 * completion of its batch with no promise; otherwise with the reply to come. `answer` gets the reply
 * (or the promise of it, which may reject as handleInfer would) exactly once. False, nothing done,
 * for any other request: the caller then uses handleInfer. Throws what handleInfer would reject with
 * before `answer` is called. `forwarded`: as handleInfer's.
 */
export function handleInferNow(
  server: InferenceServer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  { headers, body, signal, forwarded }: { readonly headers: IncomingHttpHeaders; readonly body: Buffer; readonly signal: AbortSignal; readonly forwarded: Parameters | undefined },
  answer: (reply: Reply | Promise<Reply>) => void,
): boolean {
  const headerLength = readHeaderLength(headers);
  if (headerLength === 0) return false;
  const decoded = decodeInferRequestNow(body, target, headerLength, signal);
  if (decoded === undefined) return false;
  const { request, encoding } = decoded;
  const admitted = withForwarded(request, forwarded);
  const response = server.inferNow(admitted);
  if (response !== undefined) {
    answer(encodeReply(response, request, encoding, NO_REGIONS));
    return true;
  }
  const isEnqueued = server.inferWith(admitted, (result) => {
    let reply: Reply | Promise<Reply>;
    try {
      reply = result instanceof Error ? Promise.reject(result) : encodeReply(result, request, encoding, NO_REGIONS);
    } catch (error) {
      reply = Promise.reject(error);
    }
    answer(reply);
  });
  if (!isEnqueued) answer(inferLater(server, admitted, request, encoding));
  return true;
}

const NO_REGIONS = RequestRegions.of(undefined);

/** A decoded request that its model runs later (a busy or threaded instance), and its reply; `admitted` is the request with its forwarded parameters. */
async function inferLater(server: InferenceServer, admitted: InferRequest, request: InferRequest, encoding: OutputEncoding): Promise<Reply> {
  return encodeReply(await server.infer(admitted), request, encoding, NO_REGIONS);
}
