/*
 * The statistics extension's shapes (docs/protocol/extension_statistics.md in Triton's server
 * repository): camelCase as the server reports them and the client returns them, and the HTTP JSON
 * under the wire names. The gRPC ModelStatistics message is the generated one (gen/grpc_service_pb.ts).
 */

/** A count and the nanoseconds it took in all: Triton's StatisticDuration. */
export interface Duration {
  readonly count: number;
  readonly ns: number;
}

/** One model version's requests: their outcome, time in the queue and share of each execution's time. */
export interface InferenceStatistics {
  readonly success: Duration;
  readonly fail: Duration;
  readonly queue: Duration;
  readonly computeInput: Duration;
  readonly computeInfer: Duration;
  readonly computeOutput: Duration;
  readonly cacheHit: Duration;
  readonly cacheMiss: Duration;
}

/** The executions of one batch size: one count per execution. */
export interface BatchStatistics {
  readonly batchSize: number;
  readonly computeInput: Duration;
  readonly computeInfer: Duration;
  readonly computeOutput: Duration;
}

/** A decoupled model's responses at one index of their request: Triton's InferResponseStatistics. */
export interface ResponseStatistics {
  readonly computeInfer: Duration;
  readonly computeOutput: Duration;
  readonly success: Duration;
  readonly fail: Duration;
  readonly emptyResponse: Duration;
  readonly cancel: Duration;
}

/** One model version's statistics, the same whichever protocol carried them. */
export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  /** In the server only: the model's namespace with `--model-namespacing`; Triton's statistics carry none, so no front end sends it. */
  readonly namespace?: string;
  /** Milliseconds since the epoch of the last inference; 0 if none. */
  readonly lastInference: number;
  /** Inferences: a request of batch size n counts n. */
  readonly inferenceCount: number;
  /** Model executions (batches). */
  readonly executionCount: number;
  readonly inferenceStats: InferenceStatistics;
  /** By batch size, ascending. */
  readonly batchStats: readonly BatchStatistics[];
  /** By response index ("0" for each request's first response...): what backends that time their responses report (the square test backend). */
  readonly responseStats: Readonly<Record<string, ResponseStatistics>>;
}

/** A decoupled model's responses at one index: Triton's InferResponseStatistics. */
export interface ResponseStatisticsJson {
  readonly compute_infer: Duration;
  readonly compute_output: Duration;
  readonly success: Duration;
  readonly fail: Duration;
  readonly empty_response: Duration;
  readonly cancel: Duration;
}

/** Memory a model version holds on one device: Triton's MemoryUsage. */
export interface MemoryUsageJson {
  readonly type: string;
  readonly id: number;
  readonly byte_size: number;
}

/** One entry of the HTTP reply's `model_stats`, under the extension's wire names. */
export interface ModelStatisticsJson {
  readonly name: string;
  readonly version: string;
  readonly last_inference: number;
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: {
    readonly success: Duration;
    readonly fail: Duration;
    readonly queue: Duration;
    readonly compute_input: Duration;
    readonly compute_infer: Duration;
    readonly compute_output: Duration;
    readonly cache_hit: Duration;
    readonly cache_miss: Duration;
  };
  /** By response index, for decoupled models. */
  readonly response_stats: Readonly<Record<string, ResponseStatisticsJson>>;
  readonly batch_stats: ReadonlyArray<{
    readonly batch_size: number;
    readonly compute_input: Duration;
    readonly compute_infer: Duration;
    readonly compute_output: Duration;
  }>;
  readonly memory_usage: readonly MemoryUsageJson[];
}
