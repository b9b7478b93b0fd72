/**
 * Edge values of every data type, shared by the tests that send them through models: per data type, the
 * typed array sent in binary, and the JSON where JSON can carry it.
 */
export const VALUES = {
  BOOL: { array: new Uint8Array([1, 0, 1]), json: [true, false, true] },
  UINT8: { array: new Uint8Array([0, 1, 255]), json: [0, 1, 255] },
  UINT16: { array: new Uint16Array([0, 1, 65535]), json: [0, 1, 65535] },
  UINT32: { array: new Uint32Array([0, 1, 4294967295]), json: [0, 1, 4294967295] },
  UINT64: { array: new BigUint64Array([0n, 2n ** 53n + 1n, 2n ** 64n - 1n]), json: ['0', '9007199254740993', '18446744073709551615'] },
  INT8: { array: new Int8Array([-128, 0, 127]), json: [-128, 0, 127] },
  INT16: { array: new Int16Array([-32768, 0, 32767]), json: [-32768, 0, 32767] },
  INT32: { array: new Int32Array([-2147483648, 0, 2147483647]), json: [-2147483648, 0, 2147483647] },
  INT64: {
    array: new BigInt64Array([-(2n ** 63n), -(2n ** 53n) - 3n, 2n ** 63n - 1n]),
    json: ['-9223372036854775808', '-9007199254740995', '9223372036854775807'],
  },
  FP16: { array: new Uint16Array([0x3c00, 0xc000, 0x7bff]), json: undefined },
  FP32: { array: new Float32Array([1.5, -0.1, 3.4028234663852886e38]), json: [1.5, -0.10000000149011612, 3.4028234663852886e38] },
  FP64: { array: new Float64Array([Math.PI, -0, 1e-300]), json: [Math.PI, 0, 1e-300] },
} as const;
export const STRINGS = ['hello', '', 'naïve ☃ 雪'];
export type FixedType = keyof typeof VALUES;
export const FIXED_TYPES = Object.keys(VALUES) as FixedType[];

/** Strings in Triton's serialized BYTES layout (4-byte little-endian length, then the bytes). */
export function serializeStrings(strings: readonly string[]): Buffer {
  return Buffer.concat(
    strings.flatMap((s) => {
      const bytes = Buffer.from(s, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.byteLength);
      return [length, bytes];
    }),
  );
}

