import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRAME_HEADER_BYTES, FrameReader, FrameSplitter, FrameWriter } from './frame-codec.js';

const join = (parts: Uint8Array[]): Buffer => Buffer.concat(parts);

test('fields read back in order; the body is padded to a multiple of 8 and the header names its length and kind', () => {
  const frame = join(new FrameWriter().u8(7).u32(0xdeadbeef).i64(-5).u64(2n ** 64n - 1n).f64(0.1).str('héllo').finish(42));
  assert.equal(frame.readUInt32LE(0), frame.byteLength - FRAME_HEADER_BYTES);
  assert.equal(frame[4], 42);
  assert.equal((frame.byteLength - FRAME_HEADER_BYTES) % 8, 0);
  const reader = new FrameReader(frame.subarray(FRAME_HEADER_BYTES));
  assert.equal(reader.u8(), 7);
  assert.equal(reader.u32(), 0xdeadbeef);
  assert.equal(reader.i64(), -5);
  assert.equal(reader.u64(), 2n ** 64n - 1n);
  assert.equal(reader.f64(), 0.1);
  assert.equal(reader.str(), 'héllo');
});

test('data blocks start on a multiple of 8; large ones are passed on without a copy', () => {
  const small = new Uint8Array([1, 2, 3]);
  const large = new Uint8Array(64 * 1024).fill(9);
  const parts = new FrameWriter().u8(1).block(small).u8(2).block(large).finish(1);
  assert.ok(parts.includes(large), 'the large block is one of the parts, not a copy');
  const frame = join(parts);
  const body = frame.subarray(FRAME_HEADER_BYTES);
  const reader = new FrameReader(body);
  assert.equal(reader.u8(), 1);
  const first = reader.block();
  assert.deepEqual([...first], [1, 2, 3]);
  assert.equal((first.byteOffset - body.byteOffset) % 8, 0);
  assert.equal(reader.u8(), 2);
  const second = reader.block();
  assert.equal(second.byteLength, large.byteLength);
  assert.equal((second.byteOffset - body.byteOffset) % 8, 0);
  assert.ok(second.every((value) => value === 9));
});

test('reading past the end of a body is an error that says how far it got', () => {
  const reader = new FrameReader(new Uint8Array(4));
  reader.u32();
  assert.throws(() => reader.u8(), { message: 'malformed message from the Python stub: 1 more byte(s) needed at byte 4 of a 4-byte body' });
});

test('the splitter finds every frame however the stream is cut into chunks', () => {
  const frames = [
    join(new FrameWriter().str('first').finish(1)),
    join(new FrameWriter().block(new Uint8Array(40_000).fill(3)).finish(2)),
    join(new FrameWriter().finish(3)),
    join(new FrameWriter().u32(12345).finish(4)),
  ];
  const stream = Buffer.concat(frames);
  for (const chunkSize of [1, 3, 8, 100, 4096, stream.byteLength]) {
    const seen: Array<[number, number]> = [];
    const splitter = new FrameSplitter((kind, body) => seen.push([kind, body.byteLength]));
    for (let offset = 0; offset < stream.byteLength; offset += chunkSize) splitter.push(stream.subarray(offset, offset + chunkSize));
    assert.deepEqual(
      seen,
      frames.map((frame) => [frame[4]!, frame.byteLength - FRAME_HEADER_BYTES]),
      `chunks of ${chunkSize} bytes`,
    );
  }
});
