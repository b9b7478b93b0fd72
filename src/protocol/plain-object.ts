import { type DescEnum, type DescField, type DescMessage, type Message, ScalarType, create } from '@bufbuild/protobuf';

/*
 * Messages as plain objects in the .proto's own names, the form @grpc/proto-loader's usual options
 * (keepCase, longs and enums as strings, defaults, oneofs) give them: what GrpcClient.modelConfig
 * returns, and what tests and tools that speak the wire directly write and read (test/helpers/plain-grpc-clients.ts).
 */

/** A message as a plain object. */
export type PlainObject = Record<string, unknown>;
type Plain = PlainObject;

const LONG_SCALARS = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

function plainScalar(type: ScalarType, value: unknown): unknown {
  if (type === ScalarType.BYTES) {
    const bytes = value as Uint8Array;
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return LONG_SCALARS.has(type) ? String(value) : value;
}

function plainEnum(descriptor: DescEnum, value: number): string | number {
  return descriptor.values.find((entry) => entry.number === value)?.name ?? value;
}

type Kind = { kind: 'scalar'; scalar: ScalarType } | { kind: 'enum'; enum: DescEnum } | { kind: 'message'; message: DescMessage };

function kindOf(field: DescField): Kind {
  switch (field.fieldKind) {
    case 'scalar':
      return { kind: 'scalar', scalar: field.scalar };
    case 'enum':
      return { kind: 'enum', enum: field.enum };
    case 'message':
      return { kind: 'message', message: field.message };
    case 'list':
    case 'map':
      if (field.scalar !== undefined) return { kind: 'scalar', scalar: field.scalar };
      if (field.enum !== undefined) return { kind: 'enum', enum: field.enum };
      return { kind: 'message', message: field.message! };
  }
}

function plainValue(kind: Kind, value: unknown): unknown {
  if (kind.kind === 'scalar') return plainScalar(kind.scalar, value);
  if (kind.kind === 'enum') return plainEnum(kind.enum, value as number);
  return toPlainObject(kind.message, value as Message);
}

/** A decoded message as a plain object: every field (unset messages as null), the set oneof member and the oneof's name for it. */
export function toPlainObject(schema: DescMessage, message: Message): Plain {
  const source = message as Plain;
  const out: Plain = {};
  for (const field of schema.fields) {
    const kind = kindOf(field);
    if (field.oneof !== undefined) {
      const choice = source[field.oneof.localName] as { case?: string; value?: unknown };
      if (choice.case === field.localName) {
        out[field.name] = plainValue(kind, choice.value);
        out[field.oneof.name] = field.name;
      }
      continue;
    }
    const value = source[field.localName];
    if (field.fieldKind === 'list') out[field.name] = (value as unknown[]).map((element) => plainValue(kind, element));
    else if (field.fieldKind === 'map') out[field.name] = Object.fromEntries(Object.entries(value as Plain).map(([key, entry]) => [key, plainValue(kind, entry)]));
    else out[field.name] = value === undefined ? null : plainValue(kind, value);
  }
  return out;
}

function initValue(kind: Kind, value: unknown): unknown {
  if (kind.kind === 'message') return initOf(kind.message, value as Plain);
  if (kind.kind === 'enum') return typeof value === 'string' ? (kind.enum.values.find((entry) => entry.name === value)?.number ?? 0) : value;
  if (LONG_SCALARS.has(kind.scalar)) return BigInt(value as string | number);
  if (kind.scalar === ScalarType.BYTES) return typeof value === 'string' ? Buffer.from(value, 'base64') : value;
  return value;
}

function initOf(schema: DescMessage, plain: Plain): Plain {
  const init: Plain = {};
  for (const field of schema.fields) {
    const value = plain[field.name];
    if (value === undefined || value === null) continue;
    const kind = kindOf(field);
    if (field.oneof !== undefined) init[field.oneof.localName] = { case: field.localName, value: initValue(kind, value) };
    else if (field.fieldKind === 'list') init[field.localName] = (value as unknown[]).map((element) => initValue(kind, element));
    else if (field.fieldKind === 'map') init[field.localName] = Object.fromEntries(Object.entries(value as Plain).map(([key, entry]) => [key, initValue(kind, entry)]));
    else init[field.localName] = initValue(kind, value);
  }
  return init;
}

/** A plain object in the .proto's names as a message (64-bit integers from numbers or strings, enums from names, bytes from Buffers or base64). */
export function fromPlainObject(schema: DescMessage, plain: Plain): Message {
  return create(schema, initOf(schema, plain));
}
