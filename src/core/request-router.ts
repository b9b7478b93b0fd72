import { classificationCount, classify } from './classification.js';
import { NereidError } from '../kernel/errors.js';
import type { InferRequest, InferResponse } from '../kernel/infer-request.js';
import type { ModelCaller } from '../kernel/model-caller.js';
import type { ModelSpec } from '../kernel/model-spec.js';
import { responseMemoOf } from '../kernel/response-memo.js';
import { responseParametersOf } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import { validateRequest } from '../kernel/validate-request.js';

/** What the router needs of a loaded model version: its interface and its scheduler's entry. */
export interface RoutableModel {
  readonly spec: ModelSpec;
  infer(request: InferRequest): Promise<readonly Tensor[]>;
  /** Whether `inferNow` would run a request at this moment. Absent: never. */
  readonly canInferNow?: boolean;
  /** `infer` run to the end in this step, or undefined when it cannot be (Scheduler.enqueueNow). */
  inferNow?(request: InferRequest): readonly Tensor[] | undefined;
  /** `infer` with a callback (Scheduler.enqueueWith): false, nothing done, when its scheduler takes none. */
  inferWith?(request: InferRequest, settle: (result: readonly Tensor[] | NereidError) => void): boolean;
  /** A decoupled model's request sent its first response `durationNs` after it was enqueued (the first-response histogram). */
  recordFirstResponse?(durationNs: number): void;
}

/** Where the router finds models. */
export interface ModelSource {
  /**
   * Settles once the model can be looked up: with `--load-on-demand`, a model not loaded is loaded
   * first (rejecting with the load's error). The model is not evicted until the request is enqueued.
   */
  prepare(name: string): Promise<void>;
  /** The model version that serves a request now; throws Triton's unknown/unavailable errors. */
  lookup(name: string, version?: number): RoutableModel;
  /** `prepare` then `lookup` in one step; undefined when the model has to be prepared first (loaded on demand). */
  lookupNow?(name: string, version?: number): RoutableModel | undefined;
}

const NO_CLASSIFICATION: ReadonlyMap<string, number> = new Map();

/**
 * Routes a request to the model version that serves it: validation, the model's scheduler, then the
 * classification extension on the outputs. Used by the front ends (through InferenceServer) and by
 * models calling models.
 */
export class RequestRouter implements ModelCaller {
  readonly #models: ModelSource;

  constructor(models: ModelSource) {
    this.#models = models;
  }

  // NOTE: after `prepare`, the lookup and the enqueue (`model.infer`) run in one synchronous step, so a
  // request never lands on a version that a reload or an unload has started closing.
  async infer(request: InferRequest): Promise<InferResponse> {
    const { trace } = request;
    trace?.timestamp('REQUEST_START');
    try {
      await this.#models.prepare(request.modelName);
      const { model, validated, counts } = this.#prepare(request);
      if (model.spec.isDecoupled) {
        throw new NereidError(
          'UNSUPPORTED',
          `model '${model.spec.name}' is decoupled: it may send any number of responses to a request, so it needs a streaming call (gRPC ModelStreamInfer, POST /v2/models/${model.spec.name}/generate_stream, or inferStream from a model)`,
          { reason: 'DECOUPLED_UNARY' },
        );
      }
      const response = this.#respond(model.spec, request, counts, await this.#enqueue(model, validated));
      trace?.timestamp('INFER_RESPONSE_COMPLETE');
      return response;
    } finally {
      trace?.timestamp('REQUEST_END');
    }
  }

  /**
   * `infer` run to the end in this step, with no promise: for a request that is not traced, to a model
   * whose scheduler can run it at once (an idle instance computing on the main thread). Undefined when
   * it cannot, nothing done; the caller then uses `infer`. Throws what `infer` would reject with.
   */
  inferNow(request: InferRequest): InferResponse | undefined {
    if (request.trace !== undefined) return undefined;
    const model = this.#models.lookupNow?.(request.modelName, request.modelVersion);
    if (model?.canInferNow !== true || model.spec.isDecoupled) return undefined;
    const { validated, counts } = this.#validate(model, request);
    const outputs = model.inferNow!(validated);
    return outputs === undefined ? undefined : this.#respond(model.spec, request, counts, outputs);
  }

  /**
   * `infer` with a callback in place of its promise chain, for a request that is not traced, to a
   * model that needs no load first and whose scheduler takes callbacks (the dynamic batcher): `done`
   * gets the response, or the error `infer` would reject with, exactly once, and must not throw.
   * False when it cannot, nothing done; the caller then uses `infer`. Throws what `infer` would reject
   * with before the request is enqueued (an unknown model, a request its model refuses).
   * NOTE: a batched request paid about ten promise turns between its body and its reply, each
   * resolved in the fan-out of its batch's completion (docs/benchmarks.md, "The hot path").
   */
  inferWith(request: InferRequest, done: (result: InferResponse | Error) => void): boolean {
    if (request.trace !== undefined) return false;
    const model = this.#models.lookupNow?.(request.modelName, request.modelVersion);
    if (model?.inferWith === undefined || model.spec.isDecoupled) return false;
    const { validated, counts } = this.#validate(model, request);
    return model.inferWith(validated, (result) => {
      if (result instanceof NereidError) {
        done(result);
        return;
      }
      let response: InferResponse;
      try {
        response = this.#respond(model.spec, request, counts, result);
      } catch (error) {
        done(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      done(response);
    });
  }

  /** Every response of the request as it comes; `onAccepted` once it is validated and goes to its model (InferenceServer.inferStream). */
  async inferStream(request: InferRequest, onResponse: (response: InferResponse | NereidError) => void, onAccepted?: () => void): Promise<void> {
    const { trace } = request;
    trace?.timestamp('REQUEST_START');
    try {
      await this.#inferStream(
        request,
        (response) => {
          trace?.timestamp('INFER_RESPONSE_COMPLETE');
          onResponse(response);
        },
        onAccepted,
      );
    } finally {
      trace?.timestamp('REQUEST_END');
    }
  }

  /** Enqueues a validated request on its model; a traced one records the queue's start and its inputs (Triton's QUEUE_START, TENSOR_QUEUE_INPUT). */
  #enqueue(model: RoutableModel, request: InferRequest): Promise<readonly Tensor[]> {
    const { trace } = request;
    if (trace !== undefined) {
      trace.setModel(model.spec.name, model.spec.version, request.id);
      trace.timestamp('QUEUE_START');
      trace.tensors('TENSOR_QUEUE_INPUT', request.inputs);
    }
    return model.infer(request);
  }

  async #inferStream(request: InferRequest, onResponse: (response: InferResponse | NereidError) => void, onAccepted: (() => void) | undefined): Promise<void> {
    await this.#models.prepare(request.modelName);
    const { model, validated, counts } = this.#prepare(request);
    onAccepted?.();
    if (!model.spec.isDecoupled) {
      onResponse(this.#respond(model.spec, request, counts, await this.#enqueue(model, validated)));
      return;
    }
    // A response the router cannot shape (classification of a bad output) fails the request once it ends.
    let failure: unknown;
    // Triton's first-response time runs from the request's enqueue to its first response, an error response included.
    let enqueuedNs: bigint | undefined = process.hrtime.bigint();
    const noteFirstResponse = (): void => {
      if (enqueuedNs === undefined) return;
      model.recordFirstResponse?.(Number(process.hrtime.bigint() - enqueuedNs));
      enqueuedNs = undefined;
    };
    const deliver = (response: readonly Tensor[] | NereidError): void => {
      noteFirstResponse();
      if (failure !== undefined) return;
      try {
        onResponse(response instanceof NereidError ? response : this.#respond(model.spec, request, counts, response));
      } catch (error) {
        failure = error;
      }
    };
    let rest: readonly Tensor[];
    try {
      rest = await this.#enqueue(model, { ...validated, onResponse: deliver });
    } catch (error) {
      // A request that ends with an error before any response: the error is its first response (Triton counts every response it sends).
      noteFirstResponse();
      throw error;
    }
    if (rest.length > 0) deliver(rest);
    if (failure !== undefined) throw failure;
  }

  #prepare(request: InferRequest): { model: RoutableModel; validated: InferRequest; counts: ReadonlyMap<string, number> } {
    const model = this.#models.lookup(request.modelName, request.modelVersion);
    return { model, ...this.#validate(model, request) };
  }

  #validate(model: RoutableModel, request: InferRequest): { validated: InferRequest; counts: ReadonlyMap<string, number> } {
    const validated = validateRequest(model.spec, request);
    let counts: Map<string, number> | undefined;
    for (const output of validated.outputs!) {
      const count = classificationCount(output.parameters, output.name);
      if (count !== undefined) (counts ??= new Map()).set(output.name, count);
    }
    return { validated, counts: counts ?? NO_CLASSIFICATION };
  }

  #respond(spec: ModelSpec, request: InferRequest, counts: ReadonlyMap<string, number>, computed: readonly Tensor[]): InferResponse {
    const outputs = computed.map((output) => {
      const count = counts.get(output.name);
      if (count === undefined) return output;
      return classify(output, count, spec.outputByName.get(output.name)!, spec.maxBatchSize > 0);
    });
    const memo = responseMemoOf(computed);
    return { modelName: spec.name, modelVersion: String(spec.version), id: request.id, parameters: responseParametersOf(computed), outputs, ...(memo !== undefined ? { memo } : {}) };
  }
}
