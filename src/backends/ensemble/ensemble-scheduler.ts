import { NereidError } from '../../kernel/errors.js';
import type { InferRequest, InferResponse } from '../../kernel/infer-request.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { ModelStatistics } from '../../metrics/model-statistics.js';
import { type Clock, systemClock } from '../../scheduling/clock.js';
import { batchSizeOf } from '../../scheduling/batch.js';
import { cancelledError } from '../../scheduling/cancellation.js';
import { InflightRequests } from '../../scheduling/inflight-requests.js';
import type { CloseOptions, Scheduler } from '../../scheduling/scheduler.js';
import { deferred } from '../../util/deferred.js';
import type { PlanStep } from './ensemble-plan.js';
import { StepSlots } from './step-slots.js';

export interface EnsembleSchedulerOptions {
  readonly spec: ModelSpec;
  readonly steps: readonly PlanStep[];
  readonly caller: ModelCaller;
  readonly statistics: ModelStatistics;
  /** `ensemble_scheduling.max_inflight_requests`: the most requests each step runs at once (0: no limit). */
  readonly maxInflightRequests?: number;
  readonly clock?: Clock;
}

/**
 * Which response of which decoupled step a tensor comes from: "0" for the ensemble's inputs and what
 * ordinary steps make of them; a decoupled step run at key K gives "K.0", "K.1"... one per response,
 * and an ordinary step run at K gives K again. A tensor at K serves every key under K.
 */
type IterationKey = string;
const NO_KEYS: readonly IterationKey[] = [];
const NO_STEPS: readonly PlanStep[] = [];
const isUnder = (key: IterationKey, ancestor: IterationKey): boolean => key === ancestor || key.startsWith(`${ancestor}.`);

/**
 * Runs ensemble requests through their steps (Triton's ensemble scheduler): each step starts as soon
 * as the tensors it reads exist, so independent branches run at the same time, and each step's
 * request goes through the composing model's own scheduler, batching with everyone else's. The first
 * failing step fails the request, named in the error. A cancelled request cancels its steps still
 * queued and starts no more (reported CANCELLED, statistics reason CANCELED).
 *
 * A decoupled step (core src/ensemble_scheduler/ensemble_scheduler.cc) feeds each of its responses
 * on: the steps that read its outputs run once per response, and the ensemble, then decoupled
 * itself, sends a response each time its outputs are all there for one response:
 *
 *     text_input ──► word_stream (decoupled) ──► WORD  @0.0, 0.1, 0.2 ──► word_length ──► LENGTH @0.0, 0.1, 0.2
 *                                                  └───────── ensemble responses: {WORD, LENGTH} @0.0, @0.1, @0.2
 *
 * NOTE: Triton numbers each tensor's values in the order they arrive, so a slow step can pair one
 * response's WORD with another's LENGTH; the keys above pair what comes from the same response.
 * A run keeps its tensors until it ends.
 */
export class EnsembleScheduler implements Scheduler {
  readonly #options: EnsembleSchedulerOptions;
  readonly #clock: Clock;
  readonly #inflight: InflightRequests;
  readonly #slots: readonly StepSlots[];
  /** Ensemble tensor → the steps that read it. */
  readonly #readers = new Map<string, PlanStep[]>();
  /** The ensemble tensors each step reads, by step index. */
  readonly #stepTensors: ReadonlyArray<readonly string[]>;
  /** The outputs of a request that names none, and what each step asks of its model. */
  readonly #outputNames: readonly string[];
  readonly #stepOutputs: ReadonlyArray<ReadonlyArray<{ readonly name: string }>>;
  readonly #isDecoupled: boolean;

  constructor(options: EnsembleSchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#inflight = new InflightRequests(options.spec.name, this.#clock);
    this.#slots = options.steps.map(() => new StepSlots(options.maxInflightRequests ?? 0));
    for (const step of options.steps) for (const { tensor } of step.inputs) this.#readers.set(tensor, [...(this.#readers.get(tensor) ?? []), step]);
    this.#stepTensors = options.steps.map((step) => step.inputs.map((input) => input.tensor));
    this.#outputNames = options.spec.outputs.map(({ name }) => name);
    this.#stepOutputs = options.steps.map((step) => step.outputs.map(({ modelOutput }) => ({ name: modelOutput })));
    this.#isDecoupled = options.steps.some((step) => step.isDecoupled);
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

  /**
   * Runs one ensemble request. An ordinary ensemble resolves with its outputs; a decoupled one hands
   * each response to `request.onResponse` and resolves with none once every step is done.
   */
  #run(request: InferRequest): Promise<Tensor[]> {
    const { spec, steps } = this.#options;
    const wanted = request.outputs === undefined ? this.#outputNames : request.outputs.map(({ name }) => name);
    /** Tensor → its values by iteration key; undefined where a step gave no such output (or an optional input is absent). */
    const values = new Map<string, Map<IterationKey, Tensor | undefined>>();
    const launched = new Set<string>();
    const emitted = new Set<IterationKey>();
    const done = deferred<Tensor[]>();
    let final: Tensor[] | undefined;
    let running = 0;
    let failure: unknown;

    const fail = (error: unknown): void => {
      if (failure !== undefined) return;
      failure = error;
      done.reject(error);
    };
    const valueAt = (tensor: string, key: IterationKey): { value: Tensor | undefined } | undefined => {
      const byKey = values.get(tensor);
      if (byKey === undefined) return undefined;
      for (let at = key; ; at = at.slice(0, at.lastIndexOf('.'))) {
        if (byKey.has(at)) return { value: byKey.get(at) };
        if (!at.includes('.')) return undefined;
      }
    };
    /** The keys at which all of `tensors` are there, now that `tensor` has a value at `key`. */
    const readyKeys = (tensors: readonly string[], tensor: string, key: IterationKey): readonly IterationKey[] => {
      // Without a decoupled step every tensor has one value, at the first key.
      if (!this.#isDecoupled) return tensors.every((name) => values.get(name)?.has(key) === true) ? [key] : NO_KEYS;
      const candidates = new Set([key]);
      for (const other of tensors) {
        if (other === tensor) continue;
        for (const at of values.get(other)?.keys() ?? []) if (at !== key && isUnder(at, key)) candidates.add(at);
      }
      return [...candidates].filter((at) => tensors.every((name) => valueAt(name, at) !== undefined));
    };
    const respond = (key: IterationKey): void => {
      if (emitted.has(key)) return;
      emitted.add(key);
      const outputs = wanted.map((name) => {
        const output = valueAt(name, key)!.value;
        if (output === undefined) throw new NereidError('INTERNAL', `ensemble '${spec.name}': no step produced output '${name}'`);
        return output;
      });
      if (this.#isDecoupled) request.onResponse?.(outputs);
      else final = outputs;
    };
    const put = (tensor: string, key: IterationKey, value: Tensor | undefined): void => {
      const byKey = values.get(tensor) ?? new Map<IterationKey, Tensor | undefined>();
      values.set(tensor, byKey);
      byKey.set(key, value);
      for (const step of this.#readers.get(tensor) ?? NO_STEPS) {
        for (const at of readyKeys(this.#stepTensors[step.index]!, tensor, key)) launch(step, at);
      }
      if (wanted.includes(tensor)) for (const at of readyKeys(wanted, tensor, key)) respond(at);
    };
    const launch = (step: PlanStep, key: IterationKey): void => {
      const id = `${step.index}@${key}`;
      if (launched.has(id) || failure !== undefined) return;
      launched.add(id);
      running++;
      const inputs = step.inputs.flatMap(({ modelInput, tensor }) => {
        const value = valueAt(tensor, key)!.value;
        return value === undefined ? [] : [{ ...value, name: modelInput }];
      });
      void this.#runStep(request, step, inputs, (response, index) => {
        if (failure !== undefined) return;
        const at = step.isDecoupled ? `${key}.${index}` : key;
        try {
          for (const { modelOutput, tensor } of step.outputs) {
            const output = response.outputs.find((candidate) => candidate.name === modelOutput);
            put(tensor, at, output && { ...output, name: tensor });
          }
        } catch (error) {
          fail(error);
        }
      })
        .catch(fail)
        .finally(() => {
          running--;
          if (running > 0 || failure !== undefined) return;
          if (this.#isDecoupled) done.resolve([]);
          else if (final !== undefined) done.resolve(final);
          else fail(new NereidError('INTERNAL', `ensemble '${spec.name}': no step produced output '${wanted.find((name) => values.get(name) === undefined) ?? wanted[0]}'`));
        });
    };

    try {
      for (const step of steps) if (step.inputs.length === 0) launch(step, '0');
      for (const input of spec.inputs) put(input.name, '0', request.inputs.find((tensor) => tensor.name === input.name));
    } catch (error) {
      fail(error);
    }
    if (running === 0 && failure === undefined) {
      if (this.#isDecoupled) done.resolve([]);
      else if (final !== undefined) done.resolve(final);
    }
    return done.promise;
  }

  /** One request of one step on its composing model, each response handed to `deliver` with its index; rejects with the ensemble and the step named. */
  async #runStep(request: InferRequest, step: PlanStep, inputs: Tensor[], deliver: (response: InferResponse, index: number) => void): Promise<void> {
    const { spec, caller } = this.#options;
    const slots = this.#slots[step.index]!;
    const slot = slots.acquire();
    if (slot !== undefined) await slot;
    // A traced ensemble request traces each step as a child trace, as Triton does.
    const trace = request.trace?.child();
    const stepRequest: InferRequest = {
      modelName: step.modelKey,
      ...(step.modelVersion !== undefined ? { modelVersion: step.modelVersion } : {}),
      id: request.id,
      inputs,
      outputs: this.#stepOutputs[step.index]!,
      parameters: request.parameters,
      ...(trace !== undefined ? { trace } : {}),
      // The steps are cancelled with the ensemble's request: a queued one leaves its queue.
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
    };
    try {
      // Checked between steps, as Triton does: a cancelled request starts no further step.
      if (request.signal?.aborted === true) throw cancelledError(request, 'executing');
      if (step.isDecoupled) {
        let index = 0;
        // An error response of the step fails the ensemble's request, once the step is done (the router defers it).
        await caller.inferStream(stepRequest, (response) => {
          if (response instanceof NereidError) throw response;
          deliver(response, index++);
        });
      } else {
        deliver(await caller.infer(stepRequest), 0);
      }
    } catch (error) {
      const cause = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
      // Triton's sentence (core src/ensemble_scheduler/ensemble_scheduler.cc), then which step failed.
      throw new NereidError(cause.status, `in ensemble '${spec.name}', ${cause.message} (step ${step.index}, model '${step.modelName}')`);
    } finally {
      trace?.end();
      slots.release();
    }
  }

  /** Waits for the ensemble's requests only; their steps are the composing models' to finish or fail. */
  async close(options?: CloseOptions): Promise<void> {
    await this.#inflight.close(options);
  }
}
