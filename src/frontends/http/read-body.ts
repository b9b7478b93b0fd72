import type { IncomingMessage } from 'node:http';
import { NereidError } from '../../core/index.js';

/** The error of a request whose client went away before its body's end. */
export const clientDisconnected = (): NereidError =>
  new NereidError('CANCELLED', 'the client closed the connection before sending the whole request body', { reason: 'CLIENT_DISCONNECTED' });

/**
 * The error of a body over `limit` bytes. Triton's words (qa/L0_http/http_input_size_limit_test.py looks
 * for them): "Request JSON size" for a body that is all JSON, "exceeds the maximum allowed value" and
 * the flag to raise it.
 */
export function bodyTooLarge(req: IncomingMessage, size: string, limit: number): NereidError {
  const what = req.headers['inference-header-content-length'] === undefined ? 'Request JSON size' : 'Request size';
  return new NereidError('INVALID_ARG', `${what} of ${size} exceeds the maximum allowed value of ${limit} bytes. Use --http-max-input-size to increase the limit.`, {
    reason: 'BODY_TOO_LARGE',
  });
}

/**
 * Reads a node:http request's body as it came, refusing more than `limit` bytes. NOTE: an oversized
 * body is refused as soon as the limit is passed, without reading the rest: the answer says
 * `Connection: close` (errors.ts), the socket keeps draining (so the client, still writing, reads the
 * 400 rather than a reset) until node closes it once the answer is out.
 */
export async function readBodyChunks(req: IncomingMessage, limit: number): Promise<{ readonly chunks: Buffer[]; readonly size: number }> {
  const tooLarge = (size: string): NereidError => bodyTooLarge(req, size, limit);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw tooLarge(`${declared} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      chunks.length = 0;
      req.resume();
      reject(tooLarge(`more than ${limit} bytes`));
    };
    const disconnected = (): void => reject(clientDisconnected());
    req.on('data', onData);
    req.once('end', resolve);
    req.once('error', disconnected);
    req.once('close', () => {
      if (!req.complete) disconnected();
    });
  });
  return { chunks, size };
}
