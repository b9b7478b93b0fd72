import { NereidError } from '../../core/index.js';

/** The Content-Type of a Vertex AI request with the binary data extension, its JSON header's length after it (Triton's). */
export const VERTEX_AI_BINARY_MIME = 'application/vnd.vertex-ai-triton.binary+json;json-header-size=';

/** C's atoi: leading white space, a sign, the digits up to the first other character; 0 without any. */
function atoi(text: string): number {
  const match = /^[ \t\n\v\f\r]*([+-]?[0-9]+)/.exec(text);
  return match === null ? 0 : Number(match[1]);
}

/**
 * The length of a Vertex AI request's JSON header (Triton's VertexAiAPIServer::GetInferenceHeaderLength):
 * the whole body unless the Content-Type is VERTEX_AI_BINARY_MIME with a length, which Vertex AI sends
 * in place of the Inference-Header-Content-Length header; 0 means the body is one raw input tensor.
 * Throws INVALID_ARG with Triton's texts for the MIME type elsewhere than at the start and for a
 * length outside the body.
 */
export function vertexAiHeaderLength(contentType: string | undefined, contentLength: number): number {
  const at = contentType?.indexOf(VERTEX_AI_BINARY_MIME) ?? -1;
  if (contentType === undefined || at === -1) return contentLength;
  if (at !== 0) throw new NereidError('INVALID_ARG', `expect MIME type for binary data starts with '${VERTEX_AI_BINARY_MIME}', got: ${contentType}`);
  const suffix = contentType.slice(VERTEX_AI_BINARY_MIME.length);
  const length = atoi(suffix);
  if (length < 0 || length > contentLength) {
    throw new NereidError('INVALID_ARG', `inference header size should be in range (0, ${contentLength}), got: ${suffix}`);
  }
  return length;
}
