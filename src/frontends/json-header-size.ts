import { NereidError } from '../core/index.js';

/** The Content-Type of a Vertex AI request or reply with the binary data extension, its JSON header's length after it (Triton's). */
export const VERTEX_AI_BINARY_MIME = 'application/vnd.vertex-ai-triton.binary+json;json-header-size=';

/** The same for SageMaker (Triton's sagemaker_server.cc). */
export const SAGEMAKER_BINARY_MIME = 'application/vnd.sagemaker-triton.binary+json;json-header-size=';

/** C's atoi: leading white space, a sign, the digits up to the first other character; 0 without any. */
function atoi(text: string): number {
  const match = /^[ \t\n\v\f\r]*([+-]?[0-9]+)/.exec(text);
  return match === null ? 0 : Number(match[1]);
}

/**
 * The length of a request's JSON header on the Vertex AI and SageMaker ports (Triton's
 * GetInferenceHeaderLength overrides there): the whole body unless the Content-Type is `mime` with a
 * length, which those platforms send in place of the Inference-Header-Content-Length header; 0 means
 * the body is one raw input tensor. Throws INVALID_ARG with Triton's texts for the MIME type elsewhere
 * than at the start and for a length outside the body.
 */
export function jsonHeaderSize(mime: string, contentType: string | undefined, contentLength: number): number {
  const at = contentType?.indexOf(mime) ?? -1;
  if (contentType === undefined || at === -1) return contentLength;
  if (at !== 0) throw new NereidError('INVALID_ARG', `expect MIME type for binary data starts with '${mime}', got: ${contentType}`);
  const suffix = contentType.slice(mime.length);
  const length = atoi(suffix);
  if (length < 0 || length > contentLength) {
    throw new NereidError('INVALID_ARG', `inference header size should be in range (0, ${contentLength}), got: ${suffix}`);
  }
  return length;
}
