import { promisify } from 'node:util';
import { type ZlibOptions, deflate, gunzip, gzip, inflate } from 'node:zlib';

/** The HTTP body compressions of Triton's clients and servers (Content-Encoding, Accept-Encoding). */
export type ContentEncoding = 'gzip' | 'deflate';

/** Compresses a body (zlib, off the main thread). */
export const compressBody: Readonly<Record<ContentEncoding, (body: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gzip),
  deflate: promisify(deflate),
};

/**
 * zlib's options for inflating at most `maxOutputBytes`. NOTE: zlib inflates into pieces of
 * `chunkSize` bytes, 16 KiB by default; a refused 64 MiB gzip bomb left 4,096 of them, which malloc kept
 * once they were freed (resident memory +70 MB for good, measured). One piece one byte larger than the
 * limit holds any accepted body whole (no copy to join pieces), makes zlib stop as soon as the limit is
 * passed, and comes from its own mapping (past glibc's largest mmap threshold, 32 MiB, at the default
 * limits), which goes back to the system once freed; only the pages written become resident.
 */
function inflateOptions(maxOutputBytes: number | undefined): ZlibOptions {
  return maxOutputBytes === undefined ? {} : { maxOutputLength: maxOutputBytes, chunkSize: maxOutputBytes + 1 };
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * Decompresses a body, stopping while it inflates once the output passes `maxOutputBytes` (when given):
 * zlib then fails with ERR_BUFFER_TOO_LARGE, so no buffer grows past the limit.
 */
export const decompressBody: Readonly<Record<ContentEncoding, (body: Buffer, maxOutputBytes?: number) => Promise<Buffer>>> = {
  gzip: (body, maxOutputBytes) => gunzipAsync(body, inflateOptions(maxOutputBytes)),
  deflate: (body, maxOutputBytes) => inflateAsync(body, inflateOptions(maxOutputBytes)),
};
