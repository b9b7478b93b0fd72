import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { ExecuteResult } from '../../kernel/model-instance.js';
import { withResponseParameters } from '../../kernel/response-parameters.js';
import { checkOutputs } from '../tensor-io.js';
import { epochMs, msToNs } from '../worker-thread.js';
import type { FrameReader } from './frame-codec.js';
import { Outcome, REQUEST_RELEASE_RESCHEDULE, RESPONSE_COMPLETE_FINAL, readResponse, type StubResponse } from './stub-protocol.js';
import { deferred } from '../../util/deferred.js';

export interface PendingExecutionOptions {
  readonly requests: readonly InferRequest[];
  readonly spec: ModelSpec;
  /** Names the instance in errors. */
  readonly label: string;
  /** Given: outputs pass as the model returned them (tensor-io.ts `onConfigMismatch`). */
  readonly onOutputMismatch?: ((output: Tensor, mismatch: NereidError) => void) | undefined;
}

/**
 * One batch sent to a Python process, until every request of it has its answer. A default-mode
 * model answers the whole batch in EXECUTE_DONE. A decoupled model sends RESPONSE messages, each
 * passed to its request's `onResponse`; a request is complete with the final flag, and the batch
 * once every request is complete and `execute` has returned (EXECUTE_DONE). A request the model
 * released with RESCHEDULE is complete for this execution without a result (ExecuteResult.rescheduled).
 */
export class PendingExecution {
  readonly promise: Promise<ExecuteResult>;
  readonly #requests: readonly InferRequest[];
  readonly #spec: ModelSpec;
  readonly #label: string;
  readonly #onOutputMismatch: PendingExecutionOptions['onOutputMismatch'];
  readonly #startMs: number;
  readonly #results: Array<readonly Tensor[] | NereidError | undefined>;
  #settledCount = 0;
  readonly #rescheduled = new Set<number>();
  #pythonTimes: { startNs: bigint; endNs: bigint } | undefined;
  readonly #settled = deferred<ExecuteResult>();

  constructor({ requests, spec, label, onOutputMismatch }: PendingExecutionOptions) {
    this.#requests = requests;
    this.#spec = spec;
    this.#label = label;
    this.#onOutputMismatch = onOutputMismatch;
    this.#startMs = epochMs();
    this.#results = new Array(requests.length).fill(undefined);
    this.promise = this.#settled.promise;
  }

  /** The request at `index` of the batch (a BLS call names the one it serves by its index). */
  requestAt(index: number): InferRequest | undefined {
    return this.#requests[index];
  }

  /** EXECUTE_DONE: the model's `execute` returned (or raised). */
  onExecuteDone(reader: FrameReader): void {
    const startNs = reader.i64Exact();
    const endNs = reader.i64Exact();
    this.#pythonTimes = { startNs, endNs };
    const outcome = reader.u8();
    if (outcome === Outcome.Responses) {
      const count = reader.u32();
      for (let index = 0; index < count; index++) {
        if ((reader.u32() & REQUEST_RELEASE_RESCHEDULE) !== 0) this.#reschedule(index);
        else this.#settle(index, this.#outputsOf(index, readResponse(reader)));
      }
      if (count < this.#requests.length) {
        const missing = new NereidError('INTERNAL', `${this.#label}: execute returned ${count} response(s) for ${this.#requests.length} request(s)`);
        this.#requests.forEach((_, index) => this.#settle(index, missing));
      }
    } else if (outcome === Outcome.Failed) {
      const error = new NereidError('INTERNAL', reader.str());
      this.#requests.forEach((_, index) => this.#settle(index, error));
    } else {
      const count = reader.u32();
      for (let index = 0; index < count; index++) {
        if ((reader.u32() & REQUEST_RELEASE_RESCHEDULE) !== 0 && this.#results[index] === undefined) this.#reschedule(index);
      }
    }
    this.#finishIfDone();
  }

  /** The model released request `index` with RESCHEDULE: it is done for this execution, without a result. */
  #reschedule(index: number): void {
    this.#rescheduled.add(index);
    this.#settle(index, []);
  }

  /** RESPONSE: one response of a decoupled model, possibly with the final flag. */
  onResponse(index: number, flags: number, response: StubResponse | undefined): void {
    const request = this.#requests[index];
    if (request === undefined || this.#results[index] !== undefined) return;
    const isFinal = (flags & RESPONSE_COMPLETE_FINAL) !== 0;
    if (response !== undefined) {
      const outputs = this.#outputsOf(index, response);
      // An error response (InferenceResponse(error=...)) fails itself alone, as in Triton, unless it ends the request.
      if (outputs instanceof NereidError && (isFinal || !('error' in response))) {
        this.#settle(index, outputs);
        this.#finishIfDone();
        return;
      }
      request.onResponse?.(outputs);
    }
    if (isFinal) {
      this.#settle(index, []);
      this.#finishIfDone();
    }
  }

  /** The process is gone: every request still open fails with `error`. */
  fail(error: NereidError): void {
    this.#requests.forEach((_, index) => this.#settle(index, error));
    this.#pythonTimes ??= { startNs: 0n, endNs: 0n };
    this.#finishIfDone();
  }

  #settle(index: number, result: readonly Tensor[] | NereidError): void {
    if (index >= this.#results.length || this.#results[index] !== undefined) return;
    this.#results[index] = result;
    this.#settledCount++;
  }

  #finishIfDone(): void {
    if (this.#pythonTimes === undefined || this.#settledCount < this.#results.length) return;
    const endMs = epochMs();
    const { startNs, endNs } = this.#pythonTimes;
    const hasTimes = endNs > 0n;
    const pythonStartMs = hasTimes ? Number(startNs) / 1e6 : endMs;
    const pythonEndMs = hasTimes ? Number(endNs) / 1e6 : endMs;
    this.#settled.resolve({
      responses: this.#results as Array<readonly Tensor[] | NereidError>,
      ...(this.#rescheduled.size > 0 ? { rescheduled: this.#rescheduled } : {}),
      timing: {
        inputNs: msToNs(pythonStartMs - this.#startMs),
        inferNs: msToNs(pythonEndMs - pythonStartMs),
        outputNs: msToNs(endMs - pythonEndMs),
      },
    });
  }

  /** The outputs of a response that the request asked for, in its order, checked as every backend's are (tensor-io.ts). */
  #outputsOf(index: number, response: StubResponse): readonly Tensor[] | NereidError {
    if ('error' in response) return response.error;
    const requested = this.#requests[index]!.outputs?.map((output) => output.name) ?? this.#spec.outputs.map((output) => output.name);
    try {
      const outputs = checkOutputs(this.#spec, response.outputs, {
        requested,
        dataTypeHint: DATA_TYPE_HINT,
        ...(this.#onOutputMismatch === undefined ? {} : { onConfigMismatch: this.#onOutputMismatch }),
      });
      return withResponseParameters(outputs, response.parameters);
    } catch (error) {
      if (error instanceof NereidError) return error;
      throw error;
    }
  }
}

const DATA_TYPE_HINT = "convert it (for example with numpy's astype) before making the pb_utils.Tensor";
