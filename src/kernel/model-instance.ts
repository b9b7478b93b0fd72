import type { NereidError } from './errors.js';
import type { InferRequest } from './infer-request.js';
import type { Tensor } from './tensor.js';

/*
 * The contract between a scheduler and a backend: a scheduler hands batches to ModelInstances
 * (scheduling/), and each backend implements them (backends/). Kept here, below both, so that
 * neither imports the other for it.
 */

/**
 * Where one execution's time went, in Triton's terms (docs/protocol/extension_statistics.md):
 * preparing the inputs, running the model, and extracting the outputs.
 */
export interface ComputeTiming {
  readonly inputNs: number;
  readonly inferNs: number;
  readonly outputNs: number;
}

export interface ExecuteResult {
  /** One entry per request, in request order: its output tensors, or its error. */
  readonly responses: ReadonlyArray<readonly Tensor[] | NereidError>;
  readonly timing: ComputeTiming;
  /**
   * The indices of the requests the model released with Triton's TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
   * they are to run again (their `responses` entry is empty), where the scheduler supports it.
   */
  readonly rescheduled?: ReadonlySet<number>;
  /**
   * The requests the model released before their last response, by index: a decoupled model that
   * goes on responding after its execution returns (Triton's repeat backend releases each request
   * once WAIT has passed). Each promise resolves, never rejects, with what the request's entry would
   * otherwise hold: [] after its last response (the outputs, for a model that is not decoupled), or
   * its error. The execution counts as done, and the instance free, when `execute` settles; the
   * request stays in flight until its promise does. Their `responses` entry is [].
   */
  readonly unfinished?: ReadonlyMap<number, Promise<readonly Tensor[] | NereidError>>;
  /**
   * Time the execution waited for the rate limiter's resources after leaving the scheduler's queue
   * (scheduling/rate-limited-instance.ts); the statistics count it as queue time, as Triton does.
   */
  readonly waitNs?: number;
}

export interface ModelInstance {
  readonly name: string;
  /**
   * False while the instance cannot run requests (its worker thread or process died and is being
   * restarted, see backends/supervised-instance.ts); the model reports not ready meanwhile, and executions
   * given to it fail at once with UNAVAILABLE. Absent: always healthy (no worker of its own).
   */
  readonly isHealthy?: boolean;
  /**
   * Runs one batch of validated requests in one execution. Each request gets the output tensors
   * named in its `outputs` (all when undefined), checked against the configuration and with the
   * config `reshape` undone (backends/tensor-io.ts); one bad request fails only itself.
   * The instance reads the requests' input tensors and keeps no reference after the promise settles.
   * A decoupled model sends each response through its request's `onResponse` and settles the
   * request with an empty list (or its error) once it has sent the last, or lists it in
   * `ExecuteResult.unfinished` when it goes on responding after the execution returns.
   */
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult>;
  /**
   * Whether `executeNow` can run a request at this moment (the instance computes on the calling
   * thread and is idle). Absent: never.
   */
  readonly canExecuteNow?: boolean;
  /**
   * `execute` for one request, run to the end in the caller's step, with no promise and no turn of the
   * event loop: the hot path of a model that computes in microseconds. Undefined when it cannot run
   * the request now after all (its inputs are larger than what may run on the calling thread); the
   * caller then uses `execute`.
   */
  executeNow?(request: InferRequest): ExecuteResult | undefined;
  /** Stops the instance: executions it holds fail with UNAVAILABLE, then the model finalizes. */
  close(): Promise<void>;
}
