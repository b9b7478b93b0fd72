import type { IncomingHttpHeaders } from 'node:http';

/** Where the binary data extension's tensor bytes start in a body: its JSON header's length, when given and within the body. */
function binaryDataOffset(headers: IncomingHttpHeaders, size: number): number | undefined {
  const value = headers['inference-header-content-length'];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^[0-9]+$/.test(text)) return undefined;
  const offset = Number(text);
  return offset > 0 && offset < size ? offset : undefined;
}

/** Bodies from this size on are placed so that their binary data is aligned. */
const MIN_ALIGNED_BODY_BYTES = 4096;

/**
 * A request body's chunks as one buffer (`size` bytes in all). NOTE: when the body carries binary
 * tensor data after a JSON header (Inference-Header-Content-Length), the buffer is placed so that
 * the data starts on an 8-byte boundary: the tensors are then views of the body, not copies
 * (tensor-data.ts viewFixedSize copies misaligned bytes), and a body is copied at most once on its
 * way to a backend, where a 123 KB body in two chunks used to be copied twice (docs/benchmarks.md,
 * "Tree models"). `allocate(n)` gives that buffer: n bytes at offset 0 of memory of its own (a BodyPool's
 * `take` for memory used again).
 */
export function joinBody(
  chunks: readonly Buffer[],
  size: number,
  headers: IncomingHttpHeaders,
  allocate: (byteLength: number) => Buffer = Buffer.allocUnsafeSlow,
): Buffer {
  const first = chunks[0];
  const dataOffset = binaryDataOffset(headers, size);
  if (first === undefined) return Buffer.alloc(0);
  // A small body stays as it comes: copying its few misaligned tensor bytes costs less than a buffer of its own.
  if (dataOffset === undefined || size < MIN_ALIGNED_BODY_BYTES || (chunks.length === 1 && (first.byteOffset + dataOffset) % 8 === 0)) {
    return chunks.length === 1 ? first : Buffer.concat(chunks, size);
  }
  const padding = (8 - (dataOffset % 8)) % 8;
  // A buffer of its own, at offset 0 of its memory (allocUnsafe may hand out a slice of a shared pool).
  const body = allocate(padding + size).subarray(padding);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
