import { promisify } from 'node:util';
import { type ZlibOptions, deflate, gunzip, gzip, inflate } from 'node:zlib';

/** The HTTP body compressions of Triton's clients and servers (Content-Encoding, Accept-Encoding). */
export type ContentEncoding = 'gzip' | 'deflate';

/** Compresses a body (zlib, off the main thread). */
export const compressBody: Readonly<Record<ContentEncoding, (body: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gzip),
  deflate: promisify(deflate),
};

/** Decompresses a body; `maxOutputLength` makes zlib fail with ERR_BUFFER_TOO_LARGE past it. */
export const decompressBody: Readonly<Record<ContentEncoding, (body: Buffer, options?: ZlibOptions) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
};
