import { ClientError, GrpcClient, HttpClient, ServerError } from '../client/index.js';
import { buildRequestInputs } from './input-data.js';
import { type ServerCounters, serverCountersOf } from './measurement.js';
import type { PerfOptions } from './perf-options.js';
import { type ProfileHooks, profile } from './profiler.js';
import { createRandom } from './random.js';
import type { PerfReport } from './report.js';
import { createRequestSender } from './request-sender.js';
import { SequenceSource } from './sequence-source.js';

/** A failure before measuring: the server cannot be reached, the model is unknown, the input data is wrong. */
export class PerfSetupError extends Error {
  override readonly name = 'PerfSetupError';
}

/**
 * Runs `nereid perf` with parsed options: reads the model's metadata and config, builds the input data,
 * sweeps the range and returns the report. Progress goes to `hooks`. Requests that fail end the sweep
 * (the report's `failure`), as in perf_analyzer.
 */
export async function runPerf(options: PerfOptions, hooks: ProfileHooks = {}): Promise<PerfReport> {
  const startedAt = new Date().toISOString();
  const client =
    options.protocol === 'http'
      ? new HttpClient(options.url, { headers: options.headers })
      : new GrpcClient(options.url);
  try {
    const version = options.modelVersion !== undefined ? { version: options.modelVersion } : {};
    let metadata;
    let maxBatchSize;
    let isSequenceModel;
    try {
      metadata = await client.modelMetadata(options.modelName, version);
      const config = await client.modelConfig(options.modelName, version);
      maxBatchSize = Number(config.max_batch_size ?? 0);
      isSequenceModel = config.sequence_batching !== undefined;
    } catch (error) {
      if (error instanceof ClientError) throw new PerfSetupError(`cannot read model '${options.modelName}' from ${options.url} (${options.protocol}): ${error.message}`);
      throw error;
    }
    const random = createRandom(options.seed);
    const inputSets = await buildRequestInputs(metadata, {
      maxBatchSize,
      batchSize: options.batchSize,
      shapes: options.shapes,
      source: options.inputData,
      stringLength: options.stringLength,
      random,
    });
    const readServerCounters = async (): Promise<ServerCounters> => serverCountersOf(await client.modelStatistics(options.modelName, version));
    // A KServe v2 server without Triton's statistics extension can still be measured, without the server's split.
    let hasServerStatistics = true;
    try {
      await readServerCounters();
    } catch (error) {
      if (!(error instanceof ServerError)) throw new PerfSetupError(`cannot read the statistics of model '${options.modelName}': ${(error as Error).message}`);
      hasServerStatistics = false;
    }
    // As perf_analyzer, a model with sequence_batching gets its requests in sequences.
    const sequences = isSequenceModel ? new SequenceSource(options.sequence, random, options.range.mode === 'request-rate' ? options.sequence.numOfSequences : undefined) : undefined;
    const sender = await createRequestSender({ client, options, metadata, inputSets, ...(sequences !== undefined ? { sequences } : {}) });
    let outcome;
    try {
      outcome = await profile(
        {
          range: options.range,
          batchSize: options.batchSize,
          measurementIntervalMs: options.measurementIntervalMs,
          stabilityPercentage: options.stabilityPercentage,
          maxTrials: options.maxTrials,
          percentile: options.percentile,
          latencyThresholdMs: options.latencyThresholdMs,
        },
        {
          send: sender.send,
          readServerCounters: hasServerStatistics ? readServerCounters : async () => serverCountersOf([]),
          random,
          hooks,
        },
      );
    } finally {
      await sender.close();
    }
    return {
      tool: 'nereid perf',
      startedAt,
      settings: {
        modelName: options.modelName,
        modelVersion: options.modelVersion,
        protocol: options.protocol,
        url: options.url,
        mode: options.range.mode,
        requestDistribution: options.range.mode === 'request-rate' ? options.range.distribution : undefined,
        batchSize: options.batchSize,
        measurementIntervalMs: options.measurementIntervalMs,
        stabilityPercentage: options.stabilityPercentage,
        maxTrials: options.maxTrials,
        percentile: options.percentile,
        isStreaming: options.isStreaming,
        inputData: options.inputData.kind === 'file' ? options.inputData.path : options.inputData.kind,
        hasServerStatistics,
      },
      steps: outcome.steps,
      stopReason: outcome.stopReason,
      failure: outcome.failure,
    };
  } finally {
    await client.close();
  }
}
