import { setImmediate as nextTurn } from 'node:timers/promises';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import { sleepMs } from '../sleep-ms.js';
import { instanceStopped } from '../triton-backend-common.js';
import { epochMs, msToNs } from '../worker-thread.js';
import type { SquareSettings } from './square-config.js';

export interface SquareInstanceOptions {
  /** `<group name>_<index>`. */
  readonly name: string;
  readonly spec: ModelSpec;
  readonly settings: SquareSettings;
}

const nowNs = (): number => Number(process.hrtime.bigint());

/** 2^64: a negative IN is read as size_t, which wraps it to 2^64 + IN. */
const SIZE_T_WRAP = 2 ** 64;

/**
 * One instance of a square model, on the main thread. For each request (those of one execution at
 * the same time, as Triton's backend gives each its own thread), IN's value n gives n responses, each
 * with OUT = n, shaped [1] (or [1, 1] when the request has a batch dimension); then the request ends
 * with no response of its own, as Triton's TRITONBACKEND_ResponseFactorySendFlags(FINAL) ends it. n = 0
 * sends none. A negative n counts as 2^64 + n, as Triton's size_t does: the responses, each with
 * OUT = n, go on until the request is cancelled or the instance closes. Each response waits the infer
 * delay, then the output delay (timers); the last CUSTOM_EMPTY_COUNT are not sent, their infer delay
 * still waited, and the CUSTOM_FAIL_COUNT before them are sent as the error "simulated failure"
 * (UNKNOWN), the request going on. Each response, sent or not, is reported with its times
 * (`reportResponse`: the statistics' response_stats), as Triton's backend reports it. Without delays
 * the instance yields to the event loop between responses.
 *
 * Where Nereid differs: Triton's backend releases the request at once and its instance takes the next
 * execution while the responses go on; here the execution lasts until its requests end. A cancelled
 * request stops at its next response (Triton's backend goes on; its responses then go nowhere), so
 * that the instance is free again. Closing the instance fails its executions with UNAVAILABLE.
 */
export class SquareInstance implements ModelInstance {
  readonly name: string;
  readonly #options: SquareInstanceOptions;
  readonly #closing = new AbortController();

  constructor(options: SquareInstanceOptions) {
    this.name = options.name;
    this.#options = options;
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    const responses = await Promise.all(requests.map((request) => this.#stream(request)));
    return { responses, timing: { inputNs: 0, inferNs: msToNs(epochMs() - startMs), outputNs: 0 } };
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** Sends a request's responses; resolves with [] once it is done, or with its error (ModelInstanceState::ProcessRequest). */
  async #stream(request: InferRequest): Promise<readonly Tensor[] | NereidError> {
    const input = request.inputs.find((tensor) => tensor.name === 'IN')!;
    if (input.shape.length === 2 && input.shape[0] !== 1) return new NereidError('INVALID_ARG', 'unexpected shape for IN input');
    const value = (input.data as Int32Array)[0]!;
    const count = value >= 0 ? value : SIZE_T_WRAP + value;
    const { inferDelayNs, outputDelayNs, failCount, emptyCount } = this.#options.settings;
    const shape = input.shape.map(() => 1);
    const isCancelled = (): boolean => request.signal?.aborted === true;
    for (let index = 0; index < count; index++) {
      if (isCancelled()) break;
      const startNs = nowNs();
      await this.#wait(inferDelayNs);
      // ModelParameters::InferResult: successes, then the failures, then the empty ones.
      const isEmpty = index + emptyCount >= count;
      const isFailure = !isEmpty && index + emptyCount + failCount >= count;
      let outputStartNs: number | undefined;
      if (!isEmpty) {
        outputStartNs = nowNs();
        const outputs: Tensor[] = [{ name: 'OUT', dataType: 'INT32', shape, data: new Int32Array([value]) }];
        await this.#wait(outputDelayNs);
        if (isCancelled()) break;
        request.onResponse?.(isFailure ? new NereidError('UNKNOWN', 'simulated failure') : outputs);
      }
      request.reportResponse?.({ startNs, ...(outputStartNs !== undefined ? { outputStartNs } : {}), endNs: nowNs(), isError: isFailure });
      if (inferDelayNs === 0 && outputDelayNs === 0) await this.#wait(0);
    }
    return [];
  }

  /** Waits `delayNs` (a timer; 0: the next turn of the event loop); throws UNAVAILABLE once the instance closes. */
  async #wait(delayNs: number): Promise<void> {
    const signal = this.#closing.signal;
    const hasWaited = delayNs > 0 ? await sleepMs(delayNs / 1e6, signal) : await nextTurn(true, { signal }).catch(() => false);
    if (!hasWaited) throw instanceStopped(this.name, this.#options.spec.name, 'before the request finished');
  }
}
