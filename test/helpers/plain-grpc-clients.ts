import type { DescService } from '@bufbuild/protobuf';
import { type MethodDefinition, type ServiceClientConstructor, makeClientConstructor } from '@grpc/grpc-js';
import { GRPCInferenceService } from '../../src/protocol/gen/grpc_service_pb.js';
import { Health } from '../../src/protocol/gen/health_pb.js';
import { deserializeMessage, serializeMessage } from '../../src/protocol/grpc-service.js';
import { type PlainObject as Plain, fromPlainObject, toPlainObject } from '../../src/protocol/plain-object.js';

function plainObjectClient(service: DescService): ServiceClientConstructor {
  const methods = service.methods.map((method): [string, MethodDefinition<Plain, Plain>] => [
    method.name,
    {
      path: `/${service.typeName}/${method.name}`,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: (plain) => serializeMessage(method.input, fromPlainObject(method.input, plain)),
      requestDeserialize: (bytes) => toPlainObject(method.input, deserializeMessage(method.input, bytes)),
      responseSerialize: (plain) => serializeMessage(method.output, fromPlainObject(method.output, plain)),
      responseDeserialize: (bytes) => toPlainObject(method.output, deserializeMessage(method.output, bytes)),
    },
  ]);
  return makeClientConstructor(Object.fromEntries(methods), service.typeName);
}

/**
 * Client classes of inference.GRPCInferenceService and grpc.health.v1.Health whose calls take and give
 * plain objects in the .proto's names (plain-object.ts), method names as the .proto spells them.
 */
export function loadGrpcServices(): { inference: ServiceClientConstructor; health: ServiceClientConstructor } {
  return { inference: plainObjectClient(GRPCInferenceService), health: plainObjectClient(Health) };
}
