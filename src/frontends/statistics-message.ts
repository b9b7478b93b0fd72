import type { ModelStatistics, ModelStatisticsJson } from '../protocol/statistics.js';

/**
 * One model version's statistics under the statistics extension's wire names, as the HTTP reply's
 * `model_stats` carries them (docs/protocol/extension_statistics.md); gRPC's message: grpc/service.ts.
 */
export function statisticsMessage(stats: ModelStatistics): ModelStatisticsJson {
  const inference = stats.inferenceStats;
  return {
    name: stats.name,
    version: stats.version,
    last_inference: stats.lastInference,
    inference_count: stats.inferenceCount,
    execution_count: stats.executionCount,
    inference_stats: {
      success: inference.success,
      fail: inference.fail,
      queue: inference.queue,
      compute_input: inference.computeInput,
      compute_infer: inference.computeInfer,
      compute_output: inference.computeOutput,
      cache_hit: inference.cacheHit,
      cache_miss: inference.cacheMiss,
    },
    response_stats: Object.fromEntries(
      Object.entries(stats.responseStats).map(([index, response]) => [
        index,
        {
          compute_infer: response.computeInfer,
          compute_output: response.computeOutput,
          success: response.success,
          fail: response.fail,
          empty_response: response.emptyResponse,
          cancel: response.cancel,
        },
      ]),
    ),
    batch_stats: stats.batchStats.map((batch) => ({
      batch_size: batch.batchSize,
      compute_input: batch.computeInput,
      compute_infer: batch.computeInfer,
      compute_output: batch.computeOutput,
    })),
    memory_usage: [],
  };
}
