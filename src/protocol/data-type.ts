/**
 * Tensor data types as the KServe v2 protocol names them ("FP32", "BYTES", ...), with their model
 * configuration names (TYPE_FP32, TYPE_STRING, ...) and element sizes. BYTES has no fixed size: each
 * element travels as a 4-byte little-endian length followed by its bytes.
 */
export type DataType =
  | 'BOOL'
  | 'UINT8'
  | 'UINT16'
  | 'UINT32'
  | 'UINT64'
  | 'INT8'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'FP16'
  | 'FP32'
  | 'FP64'
  | 'BYTES'
  | 'BF16';

interface DataTypeInfo {
  readonly configName: string;
  /** Bytes per element; 0 for BYTES, whose elements vary in size. */
  readonly byteSize: number;
}

const DATA_TYPES: Record<DataType, DataTypeInfo> = {
  BOOL: { configName: 'TYPE_BOOL', byteSize: 1 },
  UINT8: { configName: 'TYPE_UINT8', byteSize: 1 },
  UINT16: { configName: 'TYPE_UINT16', byteSize: 2 },
  UINT32: { configName: 'TYPE_UINT32', byteSize: 4 },
  UINT64: { configName: 'TYPE_UINT64', byteSize: 8 },
  INT8: { configName: 'TYPE_INT8', byteSize: 1 },
  INT16: { configName: 'TYPE_INT16', byteSize: 2 },
  INT32: { configName: 'TYPE_INT32', byteSize: 4 },
  INT64: { configName: 'TYPE_INT64', byteSize: 8 },
  FP16: { configName: 'TYPE_FP16', byteSize: 2 },
  FP32: { configName: 'TYPE_FP32', byteSize: 4 },
  FP64: { configName: 'TYPE_FP64', byteSize: 8 },
  BYTES: { configName: 'TYPE_STRING', byteSize: 0 },
  BF16: { configName: 'TYPE_BF16', byteSize: 2 },
};

const BY_CONFIG_NAME = new Map<string, DataType>(
  Object.entries(DATA_TYPES).map(([wire, info]) => [info.configName, wire as DataType]),
);

export function isDataType(value: unknown): value is DataType {
  return typeof value === 'string' && Object.hasOwn(DATA_TYPES, value);
}

/** Every data type, in the order Triton's documentation lists them (for messages). */
export const DATA_TYPE_NAMES: readonly DataType[] = Object.keys(DATA_TYPES).filter(isDataType);

/** Element size in bytes; 0 for BYTES. */
export function dataTypeByteSize(dataType: DataType): number {
  return DATA_TYPES[dataType].byteSize;
}

/** `TYPE_FP32` → `FP32`; undefined for TYPE_INVALID or an unknown name. */
export function dataTypeFromConfig(configName: string): DataType | undefined {
  return BY_CONFIG_NAME.get(configName);
}

/** `FP32` → `TYPE_FP32`. */
export function dataTypeToConfig(dataType: DataType): string {
  return DATA_TYPES[dataType].configName;
}

/** The values each integer type up to 32 bits holds, inclusive. */
export const INTEGER_RANGES: Partial<Record<DataType, readonly [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

/** The values each 64-bit integer type holds, inclusive. */
export const BIG_INTEGER_RANGES: Partial<Record<DataType, readonly [bigint, bigint]>> = {
  INT64: [-(2n ** 63n), 2n ** 63n - 1n],
  UINT64: [0n, 2n ** 64n - 1n],
};
