import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** A body up to this size is copied into one buffer before it is written: cheaper than a write per chunk. */
const SMALL_BODY_BYTES = 16 * 1024;

/** Writes a whole reply: Content-Length, then the chunks, as one write where they are small. */
export function writeReply(req: IncomingMessage, res: ServerResponse, status: number, headers: OutgoingHttpHeaders, chunks: readonly Uint8Array[]): void {
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  headers['content-length'] = length;
  res.writeHead(status, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // Header, JSON and tensors leave in one write: a small body as one buffer (node then sends it with
  // the head), a large one as the chunks it is, corked.
  if (chunks.length <= 1 || length <= SMALL_BODY_BYTES) {
    res.end(chunks.length <= 1 ? chunks[0] : Buffer.concat(chunks, length));
    return;
  }
  res.cork();
  for (const chunk of chunks) res.write(chunk);
  res.end();
  res.uncork();
}

/** Writes a reply's head, then each piece as it comes (chunked encoding), waiting when the client reads slowly; stops if it goes away. */
export async function writeStreamedReply(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, stream: AsyncIterable<Uint8Array>): Promise<void> {
  res.writeHead(status, headers);
  res.flushHeaders();
  for await (const piece of stream) {
    if (res.destroyed) break;
    if (!res.write(piece)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
  }
  res.end();
}
