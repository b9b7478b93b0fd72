import { type DescField, type DescMessage, type DescService, type Message, type MessageShape, ScalarType, create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { WireType } from '@bufbuild/protobuf/wire';
import type {
  MethodDefinition,
  handleBidiStreamingCall,
  handleClientStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
} from '@grpc/grpc-js';
import { GRPCInferenceService } from './gen/grpc_service_pb.js';
import { Health } from './gen/health_pb.js';

type Shape<M extends GenServiceMethods, K extends keyof M, Side extends 'input' | 'output'> = MessageShape<M[K][Side]>;

/**
 * A service's grpc-js definition, one entry per RPC under its generated (camelCase) name, with the
 * .proto's name as `originalName` (grpc-js then also accepts handlers and gives client methods under
 * `ModelInfer` as well as `modelInfer`).
 */
export type ServiceDefinition<M extends GenServiceMethods> = {
  readonly [K in keyof M]: MethodDefinition<Shape<M, K, 'input'>, Shape<M, K, 'output'>>;
};

/** The handlers a server gives grpc-js for a service, typed by the generated messages. */
export type ServiceHandlers<M extends GenServiceMethods> = {
  [K in keyof M]: M[K]['methodKind'] extends 'unary'
    ? handleUnaryCall<Shape<M, K, 'input'>, Shape<M, K, 'output'>>
    : M[K]['methodKind'] extends 'server_streaming'
      ? handleServerStreamingCall<Shape<M, K, 'input'>, Shape<M, K, 'output'>>
      : M[K]['methodKind'] extends 'client_streaming'
        ? handleClientStreamingCall<Shape<M, K, 'input'>, Shape<M, K, 'output'>>
        : handleBidiStreamingCall<Shape<M, K, 'input'>, Shape<M, K, 'output'>>;
};

const isRawBytesList = (field: DescField): boolean => field.fieldKind === 'list' && field.listKind === 'scalar' && field.scalar === ScalarType.BYTES;

/** The fields written apart from `toBinary` (see `serializeMessage`), per message type. */
const rawFieldsByMessage = new Map<DescMessage, { lists: DescField[]; nested: DescField[] }>();

function rawFieldsOf(message: DescMessage): { lists: DescField[]; nested: DescField[] } {
  let fields = rawFieldsByMessage.get(message);
  if (fields === undefined) {
    fields = {
      lists: message.fields.filter(isRawBytesList),
      nested: message.fields.filter((field) => field.fieldKind === 'message' && field.oneof === undefined && field.message.fields.some(isRawBytesList)),
    };
    rawFieldsByMessage.set(message, fields);
  }
  return fields;
}

function tagAndLength(fieldNumber: number, byteLength: number): Uint8Array {
  const bytes: number[] = [];
  for (let value = ((fieldNumber << 3) | WireType.LengthDelimited) >>> 0; ; value >>>= 7) {
    if (value < 0x80) {
      bytes.push(value);
      break;
    }
    bytes.push((value & 0x7f) | 0x80);
  }
  for (let value = byteLength; ; value = Math.floor(value / 128)) {
    if (value < 0x80) {
      bytes.push(value);
      break;
    }
    bytes.push((value % 128) | 0x80);
  }
  return Uint8Array.from(bytes);
}

/** The encoding of `message` as a list of chunks: its raw-bytes lists (and nested messages with one) referenced, not copied. */
function messageChunks(schema: DescMessage, message: Record<string, unknown>, chunks: Uint8Array[]): void {
  const { lists, nested } = rawFieldsOf(schema);
  if (lists.length === 0 && nested.length === 0) {
    chunks.push(toBinary(schema, message as MessageShape<DescMessage>));
    return;
  }
  const rest: Record<string, unknown> = { ...message };
  for (const field of lists) rest[field.localName] = [];
  for (const field of nested) rest[field.localName] = undefined;
  chunks.push(toBinary(schema, rest as MessageShape<DescMessage>));
  for (const field of lists) {
    for (const bytes of message[field.localName] as Uint8Array[]) chunks.push(tagAndLength(field.number, bytes.byteLength), bytes);
  }
  for (const field of nested) {
    const value = message[field.localName] as Record<string, unknown> | undefined;
    if (value === undefined || field.fieldKind !== 'message') continue;
    const inner: Uint8Array[] = [];
    messageChunks(field.message, value, inner);
    chunks.push(tagAndLength(field.number, inner.reduce((sum, chunk) => sum + chunk.byteLength, 0)), ...inner);
  }
}

/**
 * Encodes a message as `toBinary` does, except that repeated `bytes` fields (raw_input_contents,
 * raw_output_contents, also inside ModelStreamInferResponse.infer_response) are copied once, straight
 * into the Buffer grpc-js sends. Field order on the wire does not matter to a protobuf reader, so they
 * come after the other fields.
 * NOTE: `toBinary` of @bufbuild/protobuf 2.17 writes into a growing zero-filled buffer and slices it at
 * the end: a 600 KB tensor was copied about three times, and encoding a 600 KB ModelInferRequest took
 * up to 1.9 times as long as with protobufjs; this way it is on a par (docs/benchmarks.md, "The gRPC
 * codec").
 */
export function serializeMessage(schema: DescMessage, message: MessageShape<DescMessage>): Buffer {
  const chunks: Uint8Array[] = [];
  messageChunks(schema, message as Record<string, unknown>, chunks);
  return chunks.length === 1 ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength) : Buffer.concat(chunks);
}

/** Decodes a message. `bytes` fields are views of the received Buffer, not copies (as proto-loader's were). */
export function deserializeMessage<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  return fromBinary(schema, bytes);
}

const undecodable = new WeakMap<object, string>();

/**
 * Decodes a message of a request stream, never throwing: bytes that are no message of the type become
 * an empty message, for which `undecodableReason` tells why.
 * NOTE: grpc-js ends a stream whose message fails to decode with INTERNAL at once, while the handler may
 * still write the responses of earlier requests; a response written after that status made grpc-js drop
 * the status, and the client waited forever (found by test/fuzz). A stream handler answers such a
 * message itself, as any failed request.
 */
function deserializeStreamedMessage(schema: DescMessage, bytes: Uint8Array): Message {
  try {
    return deserializeMessage(schema, bytes);
  } catch (error) {
    const standIn = create(schema);
    undecodable.set(standIn, error instanceof Error ? error.message : String(error));
    return standIn;
  }
}

/** Why a message of a request stream could not be decoded; undefined for every message that was. */
export function undecodableReason(message: object): string | undefined {
  return undecodable.get(message);
}

/** The grpc-js definition of a generated service: its paths, and the generated types' binary codec. */
export function serviceDefinition<M extends GenServiceMethods>(service: GenService<M>): ServiceDefinition<M>;
export function serviceDefinition(service: DescService): Record<string, MethodDefinition<Message, Message>> {
  const definition: Record<string, MethodDefinition<Message, Message>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      originalName: method.name,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: (message) => serializeMessage(method.input, message),
      requestDeserialize: (bytes) => (method.methodKind === 'bidi_streaming' ? deserializeStreamedMessage(method.input, bytes) : deserializeMessage(method.input, bytes)),
      responseSerialize: (message) => serializeMessage(method.output, message),
      responseDeserialize: (bytes) => deserializeMessage(method.output, bytes),
    };
  }
  return definition;
}

/** inference.GRPCInferenceService (KServe v2 with Triton's extensions), for the server and the client. */
export const inferenceService = serviceDefinition(GRPCInferenceService);

/** grpc.health.v1.Health. */
export const healthService = serviceDefinition(Health);

type MethodsOf<S> = S extends GenService<infer M> ? M : never;

/** A server's handlers of inference.GRPCInferenceService. */
export type InferenceHandlers = ServiceHandlers<MethodsOf<typeof GRPCInferenceService>>;

/** A server's handlers of grpc.health.v1.Health. */
export type HealthHandlers = ServiceHandlers<MethodsOf<typeof Health>>;
