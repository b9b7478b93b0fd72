import type { ModelStatisticsSnapshot } from '../core/index.js';

/**
 * One model version's statistics under the statistics extension's wire names, which the HTTP JSON and
 * the gRPC ModelStatistics message share (docs/protocol/extension_statistics.md).
 */
export function statisticsMessage(stats: ModelStatisticsSnapshot): object {
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
