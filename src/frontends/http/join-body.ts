import type { IncomingHttpHeaders } from 'node:http';

/** Where the binary data extension's tensor bytes start in a body: its JSON header's length, when given and within the body. */
function binaryDataOffset(headers: IncomingHttpHeaders, size: number): number | undefined {
  const value = headers['inference-header-content-length'];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^[0-9]+$/.test(text)) return undefined;
  const offset = Number(text);
  return offset > 0 && offset < size ? offset : undefined;
}

/** Bodies from this size on get memory of their own; smaller ones a slice of node's shared pool. */
const MIN_OWN_MEMORY_BODY_BYTES = 4096;

/**
 * A request body's chunks as one buffer (`size` bytes in all). NOTE: when the body carries binary
 * tensor data after a JSON header (Inference-Header-Content-Length), the buffer is placed so that
 * the data starts on an 8-byte boundary: the tensors are then views of the body, not copies
 * (tensor-data.ts viewFixedSize copies misaligned bytes), and a body is copied at most once on its
 * way to a backend, where a 123 KB body in two chunks used to be copied twice (docs/benchmarks.md,
 * "Tree models"). A small body is copied into node's buffer pool (Buffer.allocUnsafe), at the offset
 * that aligns its data: the copy of its tensor bytes that viewFixedSize would make instead is memory
 * of its own, an allocation and a release outside the JavaScript heap per request (docs/benchmarks.md,
 * "The hot path").
 */
export function joinBody(chunks: readonly Buffer[], size: number, headers: IncomingHttpHeaders): Buffer {
  const first = chunks[0];
  const dataOffset = binaryDataOffset(headers, size);
  if (first === undefined) return Buffer.alloc(0);
  if (dataOffset === undefined || (chunks.length === 1 && (first.byteOffset + dataOffset) % 8 === 0)) {
    return chunks.length === 1 ? first : Buffer.concat(chunks, size);
  }
  // allocUnsafeSlow: a buffer of its own, at offset 0 of its memory (allocUnsafe hands out a slice of a shared pool).
  const memory = size < MIN_OWN_MEMORY_BODY_BYTES ? Buffer.allocUnsafe(size + 7) : Buffer.allocUnsafeSlow(size + 7);
  const shift = (8 - ((memory.byteOffset + dataOffset) % 8)) % 8;
  const body = memory.subarray(shift, shift + size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
