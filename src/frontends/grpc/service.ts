import { type ServerUnaryCall, type ServerWritableStream, type ServerDuplexStream, type sendUnaryData, status as GrpcStatus } from '@grpc/grpc-js';
import { type InferenceServer, NereidError, modelConfigToProtoJson } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import { statisticsMessage } from '../statistics-message.js';
import { grpcError } from './errors.js';
import { type ModelInferRequestMessage, type ModelInferResponseMessage, decodeModelInferRequest, encodeModelInferResponse } from './infer-codec.js';

/** ModelRepositoryParameter as proto-loader hands it over (oneofs named, longs as strings, bytes as Buffers). */
interface RepositoryParameterMessage {
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'bytes_param';
  bool_param?: boolean;
  int64_param?: string;
  string_param?: string;
  bytes_param?: Buffer;
}

/** LogSettingsRequest.SettingValue as proto-loader hands it over. */
interface LogSettingValueMessage {
  parameter_choice?: 'bool_param' | 'uint32_param' | 'string_param';
  bool_param?: boolean;
  uint32_param?: number;
  string_param?: string;
}

type Unary<Request, Response> = (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => void;

interface NameVersion {
  name: string;
  version: string;
}

function parseVersion(version: string): number | undefined {
  if (version === '') return undefined;
  if (!/^[0-9]+$/.test(version)) throw new NereidError('INVALID_ARG', `version must be a number or empty, got '${version}'`);
  return Number(version);
}

/**
 * The handlers of inference.GRPCInferenceService: each translates its message to a call of the core
 * and back, as the HTTP handlers do, so a request behaves the same whichever front end it came through.
 */
export function createInferenceService(server: InferenceServer, logger: Logger): Record<string, unknown> {
  /** Runs `handle` and answers with its result, or with the error mapped to a gRPC status. */
  const unary =
    <Request, Response>(handle: (request: Request) => Response | Promise<Response>): Unary<Request, Response> =>
    (call, callback) => {
      Promise.resolve()
        .then(() => handle(call.request))
        .then(
          (response) => callback(null, response),
          (error: unknown) => callback(grpcError(error, logger)),
        );
    };
  const notImplemented = (what: string): Unary<unknown, unknown> => (_call, callback) =>
    callback({ code: GrpcStatus.UNIMPLEMENTED, details: `${what} is not implemented by this server yet` });

  return {
    ServerLive: unary(() => ({ live: server.isLive() })),
    ServerReady: unary(() => ({ ready: server.isReady() })),
    ModelReady: unary((request: NameVersion) => ({ ready: server.isModelReady(request.name, parseVersion(request.version)) })),
    ServerMetadata: unary(() => server.serverMetadata()),
    ModelMetadata: unary((request: NameVersion) => server.modelMetadata(request.name, parseVersion(request.version))),
    ModelConfig: unary((request: NameVersion) => ({ config: modelConfigToProtoJson(server.modelConfig(request.name, parseVersion(request.version))) })),
    ModelStatistics: unary((request: NameVersion) => ({
      model_stats: server.modelStatistics(request.name === '' ? undefined : request.name, parseVersion(request.version)).map(statisticsMessage),
    })),
    ModelInfer: unary(async (request: ModelInferRequestMessage) => encodeModelInferResponse(await server.infer(decodeModelInferRequest(request)))),
    ModelStreamInfer: (call: ServerDuplexStream<ModelInferRequestMessage, unknown>) => streamInfer(server, logger, call),
    RepositoryIndex: unary((request: { ready: boolean }) => ({ models: server.repositoryIndex(request.ready) })),
    RepositoryModelLoad: unary(async (request: { model_name: string; parameters: Record<string, RepositoryParameterMessage> }) => {
      const parameters = Object.fromEntries(
        Object.entries(request.parameters ?? {}).flatMap(([key, parameter]) => {
          const choice = parameter.parameter_choice;
          const value = choice === undefined ? undefined : parameter[choice];
          return value === undefined ? [] : [[key, typeof value === 'string' && choice === 'int64_param' ? BigInt(value) : value]];
        }),
      );
      await server.loadModel(request.model_name, parameters);
      return {};
    }),
    RepositoryModelUnload: unary(async (request: { model_name: string }) => {
      await server.unloadModel(request.model_name);
      return {};
    }),
    SystemSharedMemoryStatus: notImplemented('SystemSharedMemoryStatus (the system shared memory extension)'),
    SystemSharedMemoryRegister: notImplemented('SystemSharedMemoryRegister (the system shared memory extension)'),
    SystemSharedMemoryUnregister: notImplemented('SystemSharedMemoryUnregister (the system shared memory extension)'),
    CudaSharedMemoryStatus: cudaUnsupported,
    CudaSharedMemoryRegister: cudaUnsupported,
    CudaSharedMemoryUnregister: cudaUnsupported,
    TraceSetting: notImplemented('TraceSetting (the trace extension)'),
    LogSettings: unary((request: { settings: Record<string, LogSettingValueMessage> }) => {
      const changes = Object.fromEntries(
        Object.entries(request.settings ?? {}).flatMap(([key, setting]) =>
          setting.parameter_choice === undefined ? [] : [[key, setting[setting.parameter_choice]]],
        ),
      );
      const settings = server.logSettings(changes);
      return {
        settings: Object.fromEntries(
          Object.entries(settings).map(([key, value]) => [
            key,
            typeof value === 'boolean' ? { bool_param: value } : typeof value === 'number' ? { uint32_param: value } : { string_param: value },
          ]),
        ),
      };
    }),
  };
}

const cudaUnsupported: Unary<unknown, unknown> = (_call, callback) =>
  callback({ code: GrpcStatus.UNIMPLEMENTED, details: 'CUDA shared memory is not supported: this server has no GPU support' });

/**
 * ModelStreamInfer: requests run as they arrive, several at a time; each response is written as soon
 * as it exists, carrying its request's id and `triton_final_response` (true on a request's last one).
 * A decoupled model's responses are written one by one; as those are only known to be the last once
 * the model says so, the request's end is an extra empty response marked final, when the request asked
 * for it with `triton_enable_empty_final_response` (Triton's rule). A failed request is answered in
 * the stream with error_message and the stream carries on. The stream ends once the client has
 * finished sending and every answer is out.
 */
function streamInfer(server: InferenceServer, logger: Logger, call: ServerDuplexStream<ModelInferRequestMessage, unknown>): void {
  let pending = 0;
  let isInputDone = false;
  const finishIfDone = (): void => {
    if (isInputDone && pending === 0) call.end();
  };
  const write = (reply: unknown): void => {
    if (!call.cancelled && !call.destroyed) call.write(reply);
  };
  call.on('data', (message: ModelInferRequestMessage) => {
    pending++;
    const header = { model_name: message.model_name, model_version: message.model_version, id: message.id };
    const isEmptyFinalWanted = message.parameters?.triton_enable_empty_final_response?.bool_param === true;
    let isDecoupled = false;
    Promise.resolve()
      .then(() => {
        const request = decodeModelInferRequest(message);
        isDecoupled = server.modelConfig(request.modelName, request.modelVersion).modelTransactionPolicy?.decoupled === true;
        return server.inferStream(request, (response) =>
          write({ error_message: '', infer_response: encodeModelInferResponse({ ...response, parameters: { ...response.parameters, triton_final_response: !isDecoupled } }) }),
        );
      })
      .then(
        () => {
          if (isDecoupled && isEmptyFinalWanted) {
            write({ error_message: '', infer_response: { ...header, parameters: { triton_final_response: { bool_param: true } } } });
          }
        },
        (error: unknown) => write({ error_message: grpcError(error, logger).details, infer_response: header as Partial<ModelInferResponseMessage> }),
      )
      .then(() => {
        pending--;
        finishIfDone();
      });
  });
  call.on('end', () => {
    isInputDone = true;
    finishIfDone();
  });
  call.on('error', (error) => logger.verbose(1, 'grpc', `stream error: ${error.message}`));
}

/** grpc.health.v1.Health: SERVING while the server is ready, for the whole server or the inference service. */
export function createHealthService(server: InferenceServer): Record<string, unknown> {
  return {
    Check: (call: ServerUnaryCall<{ service: string }, unknown>, callback: sendUnaryData<unknown>) => {
      const { service } = call.request;
      if (service !== '' && service !== 'inference.GRPCInferenceService') {
        callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service '${service}'; this server has '' and 'inference.GRPCInferenceService'` });
        return;
      }
      callback(null, { status: server.isReady() ? 'SERVING' : 'NOT_SERVING' });
    },
    Watch: (call: ServerWritableStream<{ service: string }, unknown>) => {
      call.emit('error', { code: GrpcStatus.UNIMPLEMENTED, details: 'Watch is not implemented; poll Check instead' });
    },
  };
}
