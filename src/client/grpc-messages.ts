import { isDataType } from '../protocol/data-type.js';
import type {
  ModelMetadataResponse,
  ModelMetadataResponse_TensorMetadata,
  ModelStatisticsResponse,
  RepositoryIndexResponse_ModelIndex,
  ServerMetadataResponse,
  StatisticDuration,
} from '../protocol/gen/grpc_service_pb.js';
import { modelStateOf } from '../protocol/repository-index.js';
import { ClientError } from './errors.js';
import type { Duration, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata, TensorMetadata } from './types.js';

/* The gRPC protocol's replies brought to the client's types (64-bit counts and shapes as numbers). */

const durationOf = (duration: StatisticDuration | undefined): Duration => ({ count: Number(duration?.count ?? 0n), ns: Number(duration?.ns ?? 0n) });

export function statisticsFromGrpc(response: ModelStatisticsResponse): ModelStatistics[] {
  return response.modelStats.map((stats) => {
    const inference = stats.inferenceStats;
    return {
      name: stats.name,
      version: stats.version,
      lastInference: Number(stats.lastInference),
      inferenceCount: Number(stats.inferenceCount),
      executionCount: Number(stats.executionCount),
      inferenceStats: {
        success: durationOf(inference?.success),
        fail: durationOf(inference?.fail),
        queue: durationOf(inference?.queue),
        computeInput: durationOf(inference?.computeInput),
        computeInfer: durationOf(inference?.computeInfer),
        computeOutput: durationOf(inference?.computeOutput),
        cacheHit: durationOf(inference?.cacheHit),
        cacheMiss: durationOf(inference?.cacheMiss),
      },
      batchStats: stats.batchStats.map((batch) => ({
        batchSize: Number(batch.batchSize),
        computeInput: durationOf(batch.computeInput),
        computeInfer: durationOf(batch.computeInfer),
        computeOutput: durationOf(batch.computeOutput),
      })),
      responseStats: Object.fromEntries(
        Object.entries(stats.responseStats).map(([index, response]) => [
          index,
          {
            computeInfer: durationOf(response.computeInfer),
            computeOutput: durationOf(response.computeOutput),
            success: durationOf(response.success),
            fail: durationOf(response.fail),
            emptyResponse: durationOf(response.emptyResponse),
            cancel: durationOf(response.cancel),
          },
        ]),
      ),
    };
  });
}

function tensorMetadataOf(tensor: ModelMetadataResponse_TensorMetadata): TensorMetadata {
  const { name, datatype } = tensor;
  if (!isDataType(datatype)) throw new ClientError(`model metadata names an unknown datatype ${JSON.stringify(datatype)} for tensor '${name}'`);
  return { name, datatype, shape: tensor.shape.map(Number) };
}

export function modelMetadataFromGrpc(response: ModelMetadataResponse): ModelMetadata {
  return {
    name: response.name,
    versions: response.versions,
    platform: response.platform,
    inputs: response.inputs.map(tensorMetadataOf),
    outputs: response.outputs.map(tensorMetadataOf),
  };
}

export function serverMetadataFromGrpc(response: ServerMetadataResponse): ServerMetadata {
  return { name: response.name, version: response.version, extensions: response.extensions };
}

export function indexEntryFromGrpc(entry: RepositoryIndexResponse_ModelIndex): RepositoryIndexEntry {
  return { name: entry.name, version: entry.version, state: modelStateOf(entry.state), reason: entry.reason };
}
