import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { ModelStatistics } from '../../metrics/model-statistics.js';
import { type Clock, systemClock } from '../../scheduling/clock.js';
import { batchSizeOf } from '../../scheduling/batch.js';
import { cancelledError } from '../../scheduling/cancellation.js';
import { InflightRequests } from '../../scheduling/inflight-requests.js';
import type { CloseOptions, Scheduler } from '../../scheduling/scheduler.js';
import { type Deferred, deferred } from '../../util/deferred.js';
import type { PlanStep } from './ensemble-plan.js';

export interface EnsembleSchedulerOptions {
  readonly spec: ModelSpec;
  readonly steps: readonly PlanStep[];
  readonly caller: ModelCaller;
  readonly statistics: ModelStatistics;
  readonly clock?: Clock;
}

/** A tensor that some step will produce (undefined when it did not); rejected when that step, or one before it, fails. */
function pendingTensor(): Deferred<Tensor | undefined> {
  const pending = deferred<Tensor | undefined>();
  // A failure is reported once, by the step that failed; readers that never come are fine.
  pending.promise.catch(() => {});
  return pending;
}

/**
 * Runs ensemble requests through their steps (Triton's ensemble scheduler): each step starts as soon
 * as the tensors it reads exist, so independent branches run at the same time, and each step's
 * request goes through the composing model's own scheduler, batching with everyone else's. The first
 * failing step fails the request, named in the error. A cancelled request cancels its steps still
 * queued and starts no more (reported CANCELLED, statistics reason CANCELED).
 */
export class EnsembleScheduler implements Scheduler {
  readonly #options: EnsembleSchedulerOptions;
  readonly #clock: Clock;
  readonly #inflight: InflightRequests;

  constructor(options: EnsembleSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.spec.name, this.#clock);
  }

  get inflightCount(): number {
    return this.#inflight.count;
  }

  /** An ensemble holds no queue of its own: its steps wait in the composing models' queues. */
  get queuedCount(): number {
    return 0;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    const { spec, statistics } = this.#options;
    this.#inflight.accept();
    const startUs = this.#clock.nowUs();
    try {
      const outputs = await this.#run(request);
      const durationNs = (this.#clock.nowUs() - startUs) * 1000;
      const batchSize = batchSizeOf(request, spec.maxBatchSize > 0);
      statistics.recordExecution({ batchSize, inferenceCount: batchSize, queueNs: [0], timing: { inputNs: 0, inferNs: durationNs, outputNs: 0 } });
      statistics.recordRequest('SUCCESS', durationNs);
      return outputs;
    } catch (error) {
      const isCancelled = request.signal?.aborted === true;
      statistics.recordRequest(isCancelled ? 'CANCELED' : 'BACKEND', (this.#clock.nowUs() - startUs) * 1000);
      throw isCancelled ? cancelledError(request, 'executing') : error;
    } finally {
      this.#inflight.settle();
    }
  }

  async #run(request: InferRequest): Promise<Tensor[]> {
    const { spec, steps } = this.#options;
    const tensors = new Map<string, Deferred<Tensor | undefined>>();
    for (const input of spec.inputs) {
      const pending = pendingTensor();
      pending.resolve(request.inputs.find((tensor) => tensor.name === input.name));
      tensors.set(input.name, pending);
    }
    for (const step of steps) for (const { tensor } of step.outputs) tensors.set(tensor, pendingTensor());

    const runStep = async (step: PlanStep): Promise<void> => {
      try {
        const fed = await Promise.all(step.inputs.map(({ modelInput, tensor }) => tensors.get(tensor)!.promise.then((value) => value && { ...value, name: modelInput })));
        const inputs = fed.filter((input): input is Tensor => input !== undefined);
        // Checked between steps, as Triton does: a cancelled request starts no further step.
        if (request.signal?.aborted === true) throw cancelledError(request, 'executing');
        // A traced ensemble request traces each step as a child trace, as Triton does.
        const trace = request.trace?.child();
        const response = await this.#options.caller
          .infer({
            modelName: step.modelName,
            ...(step.modelVersion !== undefined ? { modelVersion: step.modelVersion } : {}),
            id: request.id,
            inputs,
            outputs: step.outputs.map(({ modelOutput }) => ({ name: modelOutput })),
            parameters: request.parameters,
            ...(trace !== undefined ? { trace } : {}),
            // The steps are cancelled with the ensemble's request: a queued one leaves its queue.
            ...(request.signal !== undefined ? { signal: request.signal } : {}),
          })
          .catch((error: unknown) => {
            const cause = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
            throw new NereidError(cause.status, `ensemble '${spec.name}' step ${step.index} (model '${step.modelName}'): ${cause.message}`);
          })
          .finally(() => trace?.end());
        for (const { modelOutput, tensor } of step.outputs) {
          const output = response.outputs.find((candidate) => candidate.name === modelOutput);
          tensors.get(tensor)!.resolve(output && { ...output, name: tensor });
        }
      } catch (error) {
        // Steps downstream fail with this step's error, unchanged.
        for (const { tensor } of step.outputs) tensors.get(tensor)!.reject(error);
        throw error;
      }
    };
    const finished = Promise.all(steps.map(runStep));
    finished.catch(() => {});
    const wanted = request.outputs ?? spec.outputs;
    const outputs = await Promise.all(wanted.map(({ name }) => tensors.get(name)!.promise));
    await finished;
    return outputs.map((output, index) => {
      if (output === undefined) throw new NereidError('INTERNAL', `ensemble '${spec.name}': no step produced output '${wanted[index]!.name}'`);
      return output;
    });
  }

  /** Waits for the ensemble's requests only; their steps are the composing models' to finish or fail. */
  async close(options?: CloseOptions): Promise<void> {
    await this.#inflight.close(options);
  }
}
