import { NereidError } from '../../core/errors.js';
import type { InferRequest } from '../../core/infer-request.js';
import type { ModelCaller } from '../../core/model-caller.js';
import type { ModelSpec } from '../../core/model-spec.js';
import type { Tensor } from '../../core/tensor.js';
import type { ModelStatistics } from '../../metrics/model-statistics.js';
import { type Clock, systemClock } from '../../scheduling/clock.js';
import { type CloseOptions, type Scheduler, waitForDrain } from '../../scheduling/scheduler.js';
import type { PlanStep } from './ensemble-plan.js';

export interface EnsembleSchedulerOptions {
  readonly spec: ModelSpec;
  readonly steps: readonly PlanStep[];
  readonly caller: ModelCaller;
  readonly statistics: ModelStatistics;
  readonly clock?: Clock;
}

/** A tensor that some step will produce; rejected when that step (or one before it) fails. */
class PendingTensor {
  readonly promise: Promise<Tensor | undefined>;
  resolve!: (tensor: Tensor | undefined) => void;
  reject!: (error: unknown) => void;

  constructor() {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A failure is reported once, by the step that failed; readers that never come are fine.
    this.promise.catch(() => {});
  }
}

/**
 * Runs ensemble requests through their steps (Triton's ensemble scheduler): each step starts as soon
 * as the tensors it reads exist, so independent branches run at the same time, and each step's
 * request goes through the composing model's own scheduler, batching with everyone else's. The first
 * failing step fails the request, named in the error.
 */
export class EnsembleScheduler implements Scheduler {
  readonly #options: EnsembleSchedulerOptions;
  readonly #clock: Clock;
  #inflightCount = 0;
  #isClosing = false;
  #drained: (() => void) | undefined;

  constructor(options: EnsembleSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  get inflightCount(): number {
    return this.#inflightCount;
  }

  /** An ensemble holds no queue of its own: its steps wait in the composing models' queues. */
  get queuedCount(): number {
    return 0;
  }

  async enqueue(request: InferRequest): Promise<readonly Tensor[]> {
    const { spec, statistics } = this.#options;
    if (this.#isClosing) throw new NereidError('UNAVAILABLE', `model '${spec.name}' is unloading and takes no new requests`);
    this.#inflightCount++;
    const startUs = this.#clock.nowUs();
    try {
      const outputs = await this.#run(request);
      const durationNs = (this.#clock.nowUs() - startUs) * 1000;
      const batchSize = spec.maxBatchSize > 0 ? request.inputs[0]!.shape[0]! : 1;
      statistics.recordExecution({ batchSize, inferenceCount: batchSize, queueNs: [0], timing: { inputNs: 0, inferNs: durationNs, outputNs: 0 } });
      statistics.recordRequest('SUCCESS', durationNs);
      return outputs;
    } catch (error) {
      statistics.recordRequest('BACKEND', (this.#clock.nowUs() - startUs) * 1000);
      throw error;
    } finally {
      this.#inflightCount--;
      if (this.#inflightCount === 0) this.#drained?.();
    }
  }

  async #run(request: InferRequest): Promise<Tensor[]> {
    const { spec, steps } = this.#options;
    const tensors = new Map<string, PendingTensor>();
    for (const input of spec.inputs) {
      const pending = new PendingTensor();
      pending.resolve(request.inputs.find((tensor) => tensor.name === input.name));
      tensors.set(input.name, pending);
    }
    for (const step of steps) for (const { tensor } of step.outputs) tensors.set(tensor, new PendingTensor());

    const runStep = async (step: PlanStep): Promise<void> => {
      try {
        const fed = await Promise.all(step.inputs.map(({ modelInput, tensor }) => tensors.get(tensor)!.promise.then((value) => value && { ...value, name: modelInput })));
        const inputs = fed.filter((input): input is Tensor => input !== undefined);
        const response = await this.#options.caller
          .infer({
            modelName: step.modelName,
            ...(step.modelVersion !== undefined ? { modelVersion: step.modelVersion } : {}),
            id: request.id,
            inputs,
            outputs: step.outputs.map(({ modelOutput }) => ({ name: modelOutput })),
            parameters: request.parameters,
          })
          .catch((error: unknown) => {
            const cause = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
            throw new NereidError(cause.status, `ensemble '${spec.name}' step ${step.index} (model '${step.modelName}'): ${cause.message}`);
          });
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

  async close(options?: CloseOptions): Promise<void> {
    this.#isClosing = true;
    await waitForDrain(this.#inflightCount, new Promise<void>((resolve) => (this.#drained = resolve)), options);
  }
}
