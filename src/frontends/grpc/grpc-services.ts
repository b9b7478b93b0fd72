import { fileURLToPath } from 'node:url';
import { type GrpcObject, type ServiceClientConstructor, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

// Both src/frontends/grpc and dist/frontends/grpc sit three folders below the package root.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PROTO_DIRS = [`${ROOT}src/protocol/proto`];

/**
 * The services from the .proto files, with the decoding options the handlers expect (wire names, int64
 * as strings, oneofs named). Each constructor is also a client class: the client library (src/client),
 * tests and benchmarks use them.
 *
 * NOTE: this module imports nothing of the server, so that the client library can load the protocol
 * without the core; grpc-server.ts re-exports it for the server's side.
 */
export function loadGrpcServices(): { inference: ServiceClientConstructor; health: ServiceClientConstructor } {
  const definition = loadSync(['grpc_service.proto', 'health.proto'], {
    includeDirs: PROTO_DIRS,
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = loadPackageDefinition(definition);
  const inference = loaded.inference as GrpcObject;
  const health = ((loaded.grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject;
  return { inference: inference.GRPCInferenceService as ServiceClientConstructor, health: health.Health as ServiceClientConstructor };
}
