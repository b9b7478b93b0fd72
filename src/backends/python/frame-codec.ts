/**
 * The byte layer between Nereid and a Python stub process: frames on a stream, and the little-endian
 * fields inside them. The same layout is written and read by python/nereid_stub/wire.py.
 *
 *     frame:  u32 bodyLength │ u8 kind │ 3 zero bytes │ body (bodyLength bytes, a multiple of 8)
 *
 * Fields in a body: u8, u32, i64, str (u32 byte length, then UTF-8), and data blocks that start on a
 * multiple of 8 from the body start, so that a frame read into a fresh buffer views as typed arrays
 * and numpy arrays without copying. Tensor data of any size travels in the frame itself: no shared
 * memory is used, so a small /dev/shm (Docker's 64 MB) never matters.
 */
import { NereidError } from '../../kernel/errors.js';

export const FRAME_HEADER_BYTES = 8;
/** Largest body a frame can announce (the length field is 32-bit). */
export const MAX_BODY_BYTES = 0xffff_fff8;
/** Data blocks at least this large are written from the caller's memory instead of copied. */
const ZERO_COPY_MIN_BYTES = 16 * 1024;

const pad8 = (length: number): number => (8 - (length % 8)) % 8;

/**
 * Builds one frame from fields. Small fields are packed into scratch buffers; large data blocks are
 * kept as the caller's views, so `finish()` returns several buffers for one vectored write. The
 * caller must not change those views until the frame is written.
 */
export class FrameWriter {
  readonly #parts: Uint8Array[] = [new Uint8Array(FRAME_HEADER_BYTES)];
  #scratch: Buffer = Buffer.allocUnsafe(256);
  #scratchUsed = 0;
  #bodyBytes = 0;

  u8(value: number): this {
    this.#reserve(1).writeUInt8(value, this.#scratchUsed);
    this.#advance(1);
    return this;
  }

  u32(value: number): this {
    this.#reserve(4).writeUInt32LE(value, this.#scratchUsed);
    this.#advance(4);
    return this;
  }

  i64(value: number | bigint): this {
    this.#reserve(8).writeBigInt64LE(BigInt(value), this.#scratchUsed);
    this.#advance(8);
    return this;
  }

  u64(value: bigint): this {
    this.#reserve(8).writeBigUInt64LE(value, this.#scratchUsed);
    this.#advance(8);
    return this;
  }

  f64(value: number): this {
    this.#reserve(8).writeDoubleLE(value, this.#scratchUsed);
    this.#advance(8);
    return this;
  }

  str(value: string): this {
    const length = Buffer.byteLength(value, 'utf8');
    this.u32(length);
    this.#reserve(length).write(value, this.#scratchUsed, 'utf8');
    this.#advance(length);
    return this;
  }

  /** A data block: its length, zero padding to a multiple of 8, then its bytes. */
  block(data: Uint8Array): this {
    if (data.byteLength > MAX_BODY_BYTES) {
      throw new NereidError('INVALID_ARG', `a tensor of ${data.byteLength} bytes is larger than the 4 GiB a Python backend message can carry`);
    }
    this.u32(data.byteLength);
    this.#zeros(pad8(this.#bodyBytes));
    if (data.byteLength < ZERO_COPY_MIN_BYTES) {
      this.#reserve(data.byteLength).set(data, this.#scratchUsed);
      this.#advance(data.byteLength);
    } else {
      this.#flushScratch();
      this.#parts.push(data);
      this.#bodyBytes += data.byteLength;
    }
    return this;
  }

  /** The frame's buffers in order: header, then body padded to a multiple of 8. */
  finish(kind: number): Uint8Array[] {
    this.#zeros(pad8(this.#bodyBytes));
    this.#flushScratch();
    if (this.#bodyBytes > MAX_BODY_BYTES) {
      throw new NereidError('INVALID_ARG', `a Python backend message of ${this.#bodyBytes} bytes exceeds the 4 GiB limit of one message`);
    }
    const header = new DataView(this.#parts[0]!.buffer);
    header.setUint32(0, this.#bodyBytes, true);
    header.setUint8(4, kind);
    return this.#parts;
  }

  #zeros(count: number): void {
    if (count === 0) return;
    this.#reserve(count).fill(0, this.#scratchUsed, this.#scratchUsed + count);
    this.#advance(count);
  }

  #reserve(bytes: number): Buffer {
    if (this.#scratchUsed + bytes > this.#scratch.byteLength) {
      this.#flushScratch();
      this.#scratch = Buffer.allocUnsafe(Math.max(bytes, this.#scratch.byteLength * 2));
    }
    return this.#scratch;
  }

  #advance(bytes: number): void {
    this.#scratchUsed += bytes;
    this.#bodyBytes += bytes;
  }

  #flushScratch(): void {
    if (this.#scratchUsed === 0) return;
    this.#parts.push(this.#scratch.subarray(0, this.#scratchUsed));
    this.#scratch = this.#scratch.subarray(this.#scratchUsed);
    this.#scratchUsed = 0;
  }
}

/** Reads the fields of one frame body in order; every read checks the body is long enough. */
export class FrameReader {
  readonly #body: Uint8Array;
  readonly #view: DataView;
  #offset = 0;

  constructor(body: Uint8Array) {
    this.#body = body;
    this.#view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  }

  u8(): number {
    this.#need(1);
    return this.#view.getUint8(this.#offset++);
  }

  u32(): number {
    this.#need(4);
    const value = this.#view.getUint32(this.#offset, true);
    this.#offset += 4;
    return value;
  }

  i64(): number {
    return Number(this.i64Exact());
  }

  i64Exact(): bigint {
    this.#need(8);
    const value = this.#view.getBigInt64(this.#offset, true);
    this.#offset += 8;
    return value;
  }

  u64(): bigint {
    this.#need(8);
    const value = this.#view.getBigUint64(this.#offset, true);
    this.#offset += 8;
    return value;
  }

  f64(): number {
    this.#need(8);
    const value = this.#view.getFloat64(this.#offset, true);
    this.#offset += 8;
    return value;
  }

  str(): string {
    const length = this.u32();
    this.#need(length);
    const text = Buffer.from(this.#body.buffer, this.#body.byteOffset + this.#offset, length).toString('utf8');
    this.#offset += length;
    return text;
  }

  /** A data block, as a view of the body (no copy). */
  block(): Uint8Array {
    const length = this.u32();
    this.#offset += pad8(this.#offset);
    this.#need(length);
    const data = this.#body.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return data;
  }

  #need(bytes: number): void {
    if (this.#offset + bytes > this.#body.byteLength) {
      throw new NereidError('INTERNAL', `malformed message from the Python stub: ${bytes} more byte(s) needed at byte ${this.#offset} of a ${this.#body.byteLength}-byte body`);
    }
  }
}

/**
 * Cuts a byte stream into frames. A frame that lies inside one chunk is passed on as a view of it;
 * one that spans chunks is assembled into a new buffer.
 */
export class FrameSplitter {
  readonly #onFrame: (kind: number, body: Uint8Array) => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(onFrame: (kind: number, body: Uint8Array) => void) {
    this.#onFrame = onFrame;
  }

  push(chunk: Buffer): void {
    let data = chunk;
    if (this.#pendingBytes > 0) {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.byteLength;
      const frameBytes = this.#pendingFrameBytes();
      if (frameBytes === undefined || this.#pendingBytes < frameBytes) return;
      data = Buffer.concat(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    let offset = 0;
    while (data.byteLength - offset >= FRAME_HEADER_BYTES) {
      const bodyBytes = data.readUInt32LE(offset);
      const end = offset + FRAME_HEADER_BYTES + bodyBytes;
      if (end > data.byteLength) break;
      this.#onFrame(data[offset + 4]!, data.subarray(offset + FRAME_HEADER_BYTES, end));
      offset = end;
    }
    if (offset < data.byteLength) {
      this.#pending.push(data.subarray(offset));
      this.#pendingBytes = data.byteLength - offset;
    }
  }

  /**
   * Bytes of the frame the pending data starts, once its header is complete. A header cut into
   * pieces is joined once, so that a frame arriving in many small chunks costs no more than one copy.
   */
  #pendingFrameBytes(): number | undefined {
    if (this.#pendingBytes < FRAME_HEADER_BYTES) return undefined;
    if (this.#pending[0]!.byteLength < 4) this.#pending = [Buffer.concat(this.#pending, this.#pendingBytes)];
    return FRAME_HEADER_BYTES + this.#pending[0]!.readUInt32LE(0);
  }
}
