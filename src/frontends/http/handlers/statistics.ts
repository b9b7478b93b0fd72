import type { InferenceServer, ModelStatisticsSnapshot } from '../../../core/index.js';
import { type Reply, jsonReply } from '../reply.js';

/** One model version's statistics in Triton's JSON (docs/protocol/extension_statistics.md). */
function statisticsJson(stats: ModelStatisticsSnapshot): object {
  return {
    name: stats.name,
    version: stats.version,
    last_inference: stats.lastInference,
    inference_count: stats.inferenceCount,
    execution_count: stats.executionCount,
    inference_stats: {
      success: stats.success,
      fail: stats.fail,
      queue: stats.queue,
      compute_input: stats.computeInput,
      compute_infer: stats.computeInfer,
      compute_output: stats.computeOutput,
      cache_hit: stats.cacheHit,
      cache_miss: stats.cacheMiss,
    },
    response_stats: {},
    batch_stats: stats.batchStats.map((batch) => ({
      batch_size: batch.batchSize,
      compute_input: batch.computeInput,
      compute_infer: batch.computeInfer,
      compute_output: batch.computeOutput,
    })),
    memory_usage: [],
  };
}

/** `GET /v2/models[/{m}[/versions/{v}]]/stats`: every model, every version of one, or one version. */
export function handleStatistics(
  server: InferenceServer,
  target: { readonly modelName: string | undefined; readonly modelVersion: number | undefined },
): Reply {
  return jsonReply({ model_stats: server.modelStatistics(target.modelName, target.modelVersion).map(statisticsJson) });
}
