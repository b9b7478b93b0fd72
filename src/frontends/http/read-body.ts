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
 * The most chunks a chunked body may come in (Triton's kMaxChunkedChunks, src/http_server.cc): each is
 * an allocation and a callback, so a body of a million one-byte chunks costs far more than its bytes.
 */
export const MAX_CHUNKED_CHUNKS = 65_536;

/**
 * Reads a node:http request's body as it came, refusing more than `limit` bytes, or a chunked body in
 * more than MAX_CHUNKED_CHUNKS chunks with Triton's words. NOTE: node hands a chunked body over one
 * piece per chunk, so its pieces are counted; node does not tell where chunks begin, and a chunk split
 * between two reads of the socket comes as two pieces, so a body of tens of thousands of mid-size chunks
 * (a kilobyte each, near the 64 MiB input limit) may be refused a little before Triton would. NOTE: an oversized
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
  const isChunked = /chunked/i.test(String(req.headers['transfer-encoding'] ?? ''));
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NereidError): void => {
      req.off('data', onData);
      chunks.length = 0;
      req.resume();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      if (isChunked && chunks.length >= MAX_CHUNKED_CHUNKS) {
        refuse(
          new NereidError('INVALID_ARG', `Chunked request body exceeds maximum of ${MAX_CHUNKED_CHUNKS} non-empty chunks. Send fewer or larger HTTP chunks.`, {
            reason: 'BODY_TOO_LARGE',
          }),
        );
        return;
      }
      size += chunk.byteLength;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      refuse(tooLarge(`more than ${limit} bytes`));
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
