import {
  type BytesElements,
  readBytesElements,
  serializedByteLength,
  writeBytesElements,
} from '../protocol/tensor-data.js';
import { ELEMENTS_PER_SLICE, yieldToEventLoop } from '../util/yield-slices.js';

/*
 * Triton's serialized BYTES layout for tensors that came from or go to a client, read and written in
 * slices of ELEMENTS_PER_SLICE elements with a yield to the event loop between them, so that millions
 * of elements in one request never hold the loop for long.
 */

/**
 * How serialized BYTES data ends when it ends inside an element: with fewer than 4 bytes where an
 * element's length should be, or with fewer bytes than the length an element gave itself. Triton's
 * core counts the second element but not the first (InferenceRequest::ValidateBytesInputs).
 */
export type CutElement =
  | { readonly part: 'length'; readonly available: number }
  | { readonly part: 'string'; readonly length: number; readonly available: number };

/** Client bytes split into their whole elements, and how they end when they end inside one. */
export interface SplitBytes {
  readonly elements: BytesElements;
  readonly cut: CutElement | undefined;
}

/** Splits client bytes in Triton's serialized BYTES layout, yielding to the event loop between slices of elements. */
export async function deserializeBytesSliced(bytes: Uint8Array): Promise<SplitBytes> {
  const elements: BytesElements = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < bytes.byteLength; ) {
    if (offset > 0) await yieldToEventLoop();
    const before = elements.length;
    const stop = readBytesElements(bytes, view, elements, offset, ELEMENTS_PER_SLICE);
    if (typeof stop === 'string') {
      for (let index = before; index < elements.length; index++) offset += 4 + elements[index]!.byteLength;
      const remaining = bytes.byteLength - offset;
      const cut: CutElement = remaining < 4 ? { part: 'length', available: remaining } : { part: 'string', length: view.getUint32(offset, true), available: remaining - 4 };
      return { elements, cut };
    }
    offset = stop;
  }
  return { elements, cut: undefined };
}

/** Writes BYTES elements in Triton's serialized layout for a reply, yielding to the event loop between slices of elements. */
export async function serializeBytesSliced(elements: BytesElements): Promise<Uint8Array> {
  const out = new Uint8Array(serializedByteLength(elements));
  const view = new DataView(out.buffer);
  let offset = 0;
  for (let start = 0; start < elements.length; start += ELEMENTS_PER_SLICE) {
    if (start > 0) await yieldToEventLoop();
    offset = writeBytesElements(elements, out, view, start, Math.min(elements.length, start + ELEMENTS_PER_SLICE), offset);
  }
  return out;
}
