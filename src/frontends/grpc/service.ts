import { type MessageInitShape, create } from '@bufbuild/protobuf';
import { type Metadata, type ServerUnaryCall, type sendUnaryData, status as GrpcStatus } from '@grpc/grpc-js';
import { type InferenceServer, NereidError, type TraceContextCarrier, parseTraceSettingsUpdate } from '../../core/index.js';
import type { TensorMetadata } from '../../protocol/metadata.js';
import type { Duration, ModelStatistics as ReportedStatistics } from '../../protocol/statistics.js';
import type { Logger } from '../../logging/logger.js';
import {
  type LogSettingsResponse_SettingValue,
  type ModelInferRequest,
  type ModelStatistics,
  type ModelStreamInferResponse,
  type StatisticDuration,
  ModelMetadataResponse_TensorMetadataSchema,
  LogSettingsResponseSchema,
  ModelConfigResponseSchema,
  ModelMetadataResponseSchema,
  ModelReadyResponseSchema,
  ModelStatisticsResponseSchema,
  ModelStatisticsSchema,
  ModelStreamInferResponseSchema,
  RepositoryIndexResponseSchema,
  RepositoryModelLoadResponseSchema,
  RepositoryModelUnloadResponseSchema,
  ServerLiveResponseSchema,
  ServerMetadataResponseSchema,
  ServerReadyResponseSchema,
  StatisticDurationSchema,
  TraceSettingResponseSchema,
} from '../../protocol/gen/grpc_service_pb.js';
import { HealthCheckResponseSchema, HealthCheckResponse_ServingStatus } from '../../protocol/gen/health_pb.js';
import { type HealthHandlers, type InferenceHandlers, undecodableReason } from '../../protocol/grpc-service.js';
import { parseModelVersion } from '../model-version.js';
import { grpcError } from './errors.js';
import { encodeResponseMessage } from './cached-encoding.js';
import { decodeModelInferRequest, encodeModelInferResponse } from './infer-codec.js';
import { createSharedMemoryHandlers } from './shared-memory-service.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { RequestRegions } from '../shared-memory/tensor-regions.js';
import { forwardedHeaders, withForwarded } from '../header-forwarding.js';
import type { Parameters as RequestParameters } from '../../protocol/parameters.js';

type Unary<Request, Response> = (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => void;

/** A count or nanoseconds as an int64 field. */
const int64 = (value: number): bigint => BigInt(Math.trunc(value));

const durationMessage = (duration: Duration): StatisticDuration => create(StatisticDurationSchema, { count: int64(duration.count), ns: int64(duration.ns) });

/** One model version's statistics as the statistics extension's message (docs/protocol/extension_statistics.md). */
function statisticsMessage(stats: ReportedStatistics): ModelStatistics {
  const inference = stats.inferenceStats;
  return create(ModelStatisticsSchema, {
    name: stats.name,
    version: stats.version,
    lastInference: int64(stats.lastInference),
    inferenceCount: int64(stats.inferenceCount),
    executionCount: int64(stats.executionCount),
    inferenceStats: {
      success: durationMessage(inference.success),
      fail: durationMessage(inference.fail),
      queue: durationMessage(inference.queue),
      computeInput: durationMessage(inference.computeInput),
      computeInfer: durationMessage(inference.computeInfer),
      computeOutput: durationMessage(inference.computeOutput),
      cacheHit: durationMessage(inference.cacheHit),
      cacheMiss: durationMessage(inference.cacheMiss),
    },
    batchStats: stats.batchStats.map((batch) => ({
      batchSize: int64(batch.batchSize),
      computeInput: durationMessage(batch.computeInput),
      computeInfer: durationMessage(batch.computeInfer),
      computeOutput: durationMessage(batch.computeOutput),
    })),
    responseStats: Object.fromEntries(
      Object.entries(stats.responseStats).map(([index, response]) => [
        index,
        {
          computeInfer: durationMessage(response.computeInfer),
          computeOutput: durationMessage(response.computeOutput),
          success: durationMessage(response.success),
          fail: durationMessage(response.fail),
          emptyResponse: durationMessage(response.emptyResponse),
          cancel: durationMessage(response.cancel),
        },
      ]),
    ),
  });
}

const tensorMetadata = (tensor: TensorMetadata): MessageInitShape<typeof ModelMetadataResponse_TensorMetadataSchema> => ({
  name: tensor.name,
  datatype: tensor.datatype,
  shape: tensor.shape.map((dim) => BigInt(dim)),
});

/** The W3C trace context a call's metadata carries (`traceparent`, `tracestate`), for OpenTelemetry mode's propagation. */
function traceContextOf(metadata: Metadata): TraceContextCarrier | undefined {
  const [traceparent] = metadata.get('traceparent');
  if (typeof traceparent !== 'string') return undefined;
  const [tracestate] = metadata.get('tracestate');
  return { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
}

function logSettingValue(value: string | number | boolean): LogSettingsResponse_SettingValue['parameterChoice'] {
  if (typeof value === 'boolean') return { case: 'boolParam', value };
  return typeof value === 'number' ? { case: 'uint32Param', value } : { case: 'stringParam', value };
}

/**
 * The handlers of inference.GRPCInferenceService: each translates its message to a call of the core
 * and back, as the HTTP handlers do, so a request behaves the same whichever front end it came through.
 */
export function createInferenceService(server: InferenceServer, logger: Logger, sharedMemory?: SharedMemoryRegistry, headerForwardPattern?: RegExp): InferenceHandlers {
  /** The request parameters a call's metadata forwards (`--grpc-header-forward-pattern`), or undefined. */
  const forwardedOf = (metadata: Metadata): RequestParameters | undefined =>
    headerForwardPattern === undefined ? undefined : forwardedHeaders(headerForwardPattern, Object.entries(metadata.getMap()));
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
  const sharedMemoryHandlers = createSharedMemoryHandlers(sharedMemory);

  return {
    serverLive: unary(() => create(ServerLiveResponseSchema, { live: server.isLive() })),
    serverReady: unary(() => create(ServerReadyResponseSchema, { ready: server.isReady() })),
    modelReady: unary((request) => create(ModelReadyResponseSchema, { ready: server.isModelReady(request.name, parseModelVersion(request.version)) })),
    serverMetadata: unary(() => {
      const metadata = server.serverMetadata();
      return create(ServerMetadataResponseSchema, { ...metadata, extensions: [...metadata.extensions] });
    }),
    modelMetadata: unary(async (request) => {
      const metadata = await server.modelMetadata(request.name, parseModelVersion(request.version));
      return create(ModelMetadataResponseSchema, {
        ...metadata,
        versions: [...metadata.versions],
        inputs: metadata.inputs.map(tensorMetadata),
        outputs: metadata.outputs.map(tensorMetadata),
      });
    }),
    modelConfig: unary(async (request) => create(ModelConfigResponseSchema, { config: await server.modelConfig(request.name, parseModelVersion(request.version)) })),
    modelStatistics: unary((request) =>
      create(ModelStatisticsResponseSchema, {
        modelStats: server.modelStatistics(request.name === '' ? undefined : request.name, parseModelVersion(request.version)).map(statisticsMessage),
      }),
    ),
    modelInfer: (call, callback) => {
      const trace = server.startTrace(call.request.modelName, traceContextOf(call.metadata));
      const regions = RequestRegions.of(sharedMemory);
      const signal = cancelSignalOf(call);
      const forwarded = forwardedOf(call.metadata);
      if (trace === undefined) {
        unary(async (request: ModelInferRequest) => {
          try {
            const decoded = await decodeModelInferRequest(request, regions);
            const admitted = { ...withForwarded(decoded, forwarded), signal };
            // A model that can run the request at once answers in this step (InferenceServer.inferNow).
            return await encodeResponseMessage(server.inferNow(admitted) ?? (await server.infer(admitted)), decoded, regions);
          } finally {
            regions.releaseAll();
          }
        })(call, callback);
        return;
      }
      // A traced call: Triton's GRPC_WAITREAD_* around the decoding, GRPC_SEND_* around the answer.
      trace.timestamp('GRPC_WAITREAD_START');
      unary(async (request: ModelInferRequest) => {
        try {
          const decoded = await decodeModelInferRequest(request, regions);
          trace.timestamp('GRPC_WAITREAD_END');
          return await encodeResponseMessage(await server.infer({ ...withForwarded(decoded, forwarded), trace, signal }), decoded, regions);
        } finally {
          regions.releaseAll();
        }
      })(call, (error, response) => {
        trace.timestamp('GRPC_SEND_START');
        callback(error, response);
        trace.timestamp('GRPC_SEND_END');
        trace.end();
      });
    },
    modelStreamInfer: (call) => streamInfer(server, logger, call, sharedMemory, forwardedOf(call.metadata)),
    repositoryIndex: unary((request) => create(RepositoryIndexResponseSchema, { models: server.repositoryIndex(request.ready) })),
    repositoryModelLoad: unary(async (request) => {
      // Triton's checks and words (grpc_server.cc, RepositoryModelLoad): `config` a string, each
      // `file:` bytes, nothing else.
      for (const [key, { parameterChoice: choice }] of Object.entries(request.parameters)) {
        const expected = key === 'config' ? 'stringParam' : key.startsWith('file:') ? 'bytesParam' : undefined;
        if (expected === undefined) throw new NereidError('INVALID_ARG', `unrecognized load parameter '${key}'.`);
        if (choice.case !== expected) {
          throw new NereidError('INVALID_ARG', `invalid value type for load parameter '${key}', expected ${expected === 'stringParam' ? 'string_param' : 'bytes_param'}.`);
        }
      }
      const parameters = Object.fromEntries(
        Object.entries(request.parameters).flatMap(([key, { parameterChoice: choice }]) => (choice.case === undefined ? [] : [[key, choice.value]])),
      );
      await server.loadModel(request.modelName, parameters);
      return create(RepositoryModelLoadResponseSchema);
    }),
    repositoryModelUnload: unary(async (request) => {
      const choice = request.parameters.unload_dependents?.parameterChoice;
      if (choice !== undefined && choice.case !== 'boolParam') {
        // Triton's words (grpc_server.cc, RepositoryModelUnload).
        throw new NereidError('INVALID_ARG', "invalid value type for 'unload_dependents' parameter, expected bool_param.");
      }
      await server.unloadModel(request.modelName, { unloadDependents: choice?.value === true });
      return create(RepositoryModelUnloadResponseSchema);
    }),
    systemSharedMemoryStatus: unary(sharedMemoryHandlers.systemSharedMemoryStatus),
    systemSharedMemoryRegister: unary(sharedMemoryHandlers.systemSharedMemoryRegister),
    systemSharedMemoryUnregister: unary(sharedMemoryHandlers.systemSharedMemoryUnregister),
    cudaSharedMemoryStatus: unary(sharedMemoryHandlers.cudaSharedMemoryStatus),
    cudaSharedMemoryRegister: unary(sharedMemoryHandlers.cudaSharedMemoryRegister),
    cudaSharedMemoryUnregister: unary(sharedMemoryHandlers.cudaSharedMemoryUnregister),
    traceSetting: unary((request) => {
      // An empty list of values clears a setting, as `null` does over HTTP.
      const entries = Object.entries(request.settings).map(([key, { value }]) => [key, value.length === 0 ? null : value] as const);
      const settings = server.traceSettings(request.modelName === '' ? undefined : request.modelName, entries.length === 0 ? undefined : parseTraceSettingsUpdate(Object.fromEntries(entries)));
      return create(TraceSettingResponseSchema, {
        settings: Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, { value: Array.isArray(value) ? value : [value] }])),
      });
    }),
    logSettings: unary((request) => {
      const changes = Object.fromEntries(
        Object.entries(request.settings).flatMap(([key, { parameterChoice: choice }]) => (choice.case === undefined ? [] : [[key, choice.value]])),
      );
      const settings = server.logSettings(changes);
      return create(LogSettingsResponseSchema, {
        settings: Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, { parameterChoice: logSettingValue(value) }])),
      });
    }),
  };
}

/**
 * Aborts when the client cancels the call (or its deadline passes): Triton cancels the call's
 * requests then (docs/user_guide/request_cancellation.md), and nothing is written back.
 */
function cancelSignalOf(call: { on(event: 'cancelled', listener: () => void): unknown }): AbortSignal {
  const cancel = new AbortController();
  call.on('cancelled', () => cancel.abort());
  return cancel.signal;
}

/**
 * ModelStreamInfer: requests run as they arrive, several at a time; each response is written as soon
 * as it exists, carrying its request's id and `triton_final_response` (true on a request's last one).
 * A decoupled model's responses are written one by one; as those are only known to be the last once
 * the model says so, the request's end is an extra empty response marked final, when the request asked
 * for it with `triton_enable_empty_final_response` (Triton's rule). A failed request is answered in
 * the stream with error_message and the stream carries on. The stream ends once the client has
 * finished sending and every answer is out; a cancelled stream cancels every request of it still
 * running or queued. With Triton's `triton_grpc_error: true` header, the
 * first failed request ends the stream instead, with its error as the gRPC status
 * (docs/customization_guide/inference_protocols.md, "GRPC Status Codes"); nothing is written after it.
 */
const streamInfer = (
  server: InferenceServer,
  logger: Logger,
  call: Parameters<InferenceHandlers['modelStreamInfer']>[0],
  sharedMemory: SharedMemoryRegistry | undefined,
  /** The parameters the stream's metadata forwards to each of its requests (`--grpc-header-forward-pattern`). */
  forwarded: RequestParameters | undefined,
): void => {
  let pending = 0;
  let isInputDone = false;
  const isErrorStatusWanted = call.metadata.get('triton_grpc_error').some((value) => String(value).toLowerCase() === 'true');
  let hasFailed = false;
  // Requests reach the core in the order they were sent, as a sequence's must (the sequence batcher
  // refuses a request whose START has not arrived): decoding, which yields on large tensors, is
  // done one message at a time. Executions still overlap.
  let decodedInOrder = Promise.resolve();
  const signal = cancelSignalOf(call);
  const finishIfDone = (): void => {
    if (isInputDone && pending === 0 && !hasFailed) call.end();
  };
  const write = (reply: ModelStreamInferResponse): void => {
    if (!hasFailed && !call.cancelled && !call.destroyed) call.write(reply);
  };
  /** Ends the stream with the error as its status (`triton_grpc_error`); later answers go nowhere. */
  const endWithStatus = (error: unknown): void => {
    if (hasFailed) return;
    hasFailed = true;
    const status = grpcError(error, logger);
    if (!call.cancelled && !call.destroyed) call.emit('error', status);
  };
  const carrier = traceContextOf(call.metadata);
  call.on('data', (message: ModelInferRequest) => {
    pending++;
    // Each request of the stream is traced on its own (Triton's GRPC_WAITREAD_* around its decoding, GRPC_SEND_* around each answer).
    const trace = server.startTrace(message.modelName, carrier);
    trace?.timestamp('GRPC_WAITREAD_START');
    const traced = (write: () => void): void => {
      trace?.timestamp('GRPC_SEND_START');
      write();
      trace?.timestamp('GRPC_SEND_END');
    };
    const header = { modelName: message.modelName, modelVersion: message.modelVersion, id: message.id };
    const emptyFinal = message.parameters.triton_enable_empty_final_response?.parameterChoice;
    const isEmptyFinalWanted = emptyFinal?.case === 'boolParam' && emptyFinal.value;
    let isDecoupled = false;
    const regions = RequestRegions.of(sharedMemory);
    // Encoding yields to the event loop, so each response waits for the one before it: they leave in order.
    let written = Promise.resolve();
    const admitted = decodedInOrder.then(async () => {
      const undecodable = undecodableReason(message);
      if (undecodable !== undefined) throw new NereidError('INVALID_ARG', `failed to parse a ModelInferRequest of the stream: ${undecodable}`);
      const request = withForwarded(await decodeModelInferRequest(message, regions), forwarded);
      isDecoupled = (await server.modelSpec(request.modelName, request.modelVersion)).isDecoupled;
      trace?.timestamp('GRPC_WAITREAD_END');
      return trace === undefined ? { ...request, signal } : { ...request, signal, trace };
    });
    decodedInOrder = admitted.then(
      () => undefined,
      () => undefined,
    );
    admitted
      .then(async (request) => {
        await server.inferStream(request, (response) => {
          if (response instanceof NereidError) {
            // A response the model sent with an error: its message, not final, and the request goes on (Triton's
            // StreamInferResponseComplete); with `triton_grpc_error` it ends the stream.
            const inferResponse = { ...header, parameters: { triton_final_response: { parameterChoice: { case: 'boolParam' as const, value: false } } } };
            written = written.then(() => {
              if (isErrorStatusWanted) endWithStatus(response);
              else traced(() => write(create(ModelStreamInferResponseSchema, { errorMessage: grpcError(response, logger).details, inferResponse })));
            });
            return;
          }
          const final = { ...response, parameters: { ...response.parameters, triton_final_response: !isDecoupled } };
          written = written.then(async () => {
            const reply = create(ModelStreamInferResponseSchema, { inferResponse: await encodeModelInferResponse(final, regions) });
            traced(() => write(reply));
          });
        });
        await written;
      })
      .then(
        () => {
          if (isDecoupled && isEmptyFinalWanted) {
            write(
              create(ModelStreamInferResponseSchema, {
                inferResponse: { ...header, parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } } },
              }),
            );
          }
        },
        (error: unknown) => {
          if (isErrorStatusWanted) endWithStatus(error);
          else write(create(ModelStreamInferResponseSchema, { errorMessage: grpcError(error, logger).details, inferResponse: header }));
        },
      )
      .then(() => {
        trace?.end();
        regions.releaseAll();
        pending--;
        finishIfDone();
      });
  });
  call.on('end', () => {
    isInputDone = true;
    finishIfDone();
  });
  call.on('error', (error) => logger.verbose(1, 'grpc', `stream error: ${error.message}`));
};

/** grpc.health.v1.Health: SERVING while the server is ready, for the whole server or the inference service. */
export function createHealthService(server: InferenceServer): HealthHandlers {
  return {
    check: (call, callback) => {
      const { service } = call.request;
      if (service !== '' && service !== 'inference.GRPCInferenceService') {
        callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service '${service}'; this server has '' and 'inference.GRPCInferenceService'` });
        return;
      }
      const status = server.isReady() ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
      callback(null, create(HealthCheckResponseSchema, { status }));
    },
    watch: (call) => {
      call.emit('error', { code: GrpcStatus.UNIMPLEMENTED, details: 'Watch is not implemented; poll Check instead' });
    },
  };
}
