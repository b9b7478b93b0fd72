import type { IncomingHttpHeaders } from 'node:http';
import { type InferenceServer, NereidError, type RequestTrace } from '../../../core/index.js';
import { decodeInferRequest, decodeRawInferRequest, encodeInferResponse } from '../infer-codec.js';
import type { Reply } from '../reply.js';

const HEADER_LENGTH = 'inference-header-content-length';

function readHeaderLength(headers: IncomingHttpHeaders): number | undefined {
  const value = headers[HEADER_LENGTH];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0]! : value;
  if (!/^[0-9]+$/.test(text)) {
    throw new NereidError('INVALID_ARG', `Inference-Header-Content-Length must be a non-negative integer, got '${text}'`);
  }
  return Number(text);
}

/** `POST /v2/models/{m}[/versions/{v}]/infer`, JSON or with the binary data extension. */
export async function handleInfer(
  server: InferenceServer,
  target: { readonly modelName: string; readonly modelVersion: number | undefined },
  headers: IncomingHttpHeaders,
  body: Buffer,
  trace?: RequestTrace,
): Promise<Reply> {
  const headerLength = readHeaderLength(headers);
  const { request, encoding } =
    headerLength === 0
      ? await (async () => {
          const metadata = await server.modelMetadata(target.modelName, target.modelVersion);
          const isBatching = (await server.modelSpec(target.modelName, target.modelVersion)).maxBatchSize > 0;
          return decodeRawInferRequest(body, target, metadata, isBatching);
        })()
      : await decodeInferRequest(body, target, headerLength);
  const response = await server.infer(trace === undefined ? request : { ...request, trace });
  const encoded = await encodeInferResponse(response, encoding);
  const responseHeaders =
    encoded.headerLength === undefined
      ? { 'content-type': 'application/json' }
      : { 'content-type': 'application/octet-stream', [HEADER_LENGTH]: String(encoded.headerLength) };
  return { status: 200, headers: responseHeaders, chunks: encoded.chunks, isCompressible: true };
}
