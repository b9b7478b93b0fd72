import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import { checkOutputs } from '../tensor-io.js';
import { epochMs, msToNs } from '../worker-thread.js';
import { instanceStopped, shapeText } from '../triton-backend-common.js';
import { sleepMs } from '../sleep-ms.js';

export interface RepeatInstanceOptions {
  /** `<group name>_<index>`. */
  readonly name: string;
  readonly spec: ModelSpec;
}

/** What a request asks for: IN's values, the delay before each response, and the wait before its release. */
interface Plan {
  readonly values: Int32Array;
  readonly delaysMs: readonly number[];
  readonly waitMs: number;
}

type Outcome = readonly Tensor[] | NereidError;

/**
 * One instance of a repeat model (Triton's repeat_backend src/repeat.cc), on the main thread and its
 * timers. For a request, response i (from 0) carries OUT = IN[i] and IDX = i, sent DELAY[i] ms after
 * the one before it (the first DELAY[0] ms after the execution starts); after the last, the request
 * is complete (Triton's TRITONSERVER_RESPONSE_COMPLETE_FINAL, sent alone): at once when IN is empty.
 * Each response has both outputs whatever the request asked for, as Triton's backend adds both and
 * its core keeps every output a backend adds.
 *
 * The execution holds the instance WAIT ms, then releases the request: when responses are still to
 * come they follow from their timers (ExecuteResult.unfinished) while the instance runs other
 * requests, so one instance serves many requests at once and their responses interleave. When the
 * request completes first, the execution returns at once, and the next one starts only once WAIT has
 * passed: the instance stays held, as Triton's sleeping ModelInstanceExecute holds it.
 *
 * A model that is not decoupled sends its one response as the request's result: IN must then have
 * exactly one element. Cancellation is not checked, as Triton's backend does not: a cancelled
 * request's responses still come, and the scheduler drops them. Closing the instance stops every
 * timer and fails the execution, and each request still responding, with UNAVAILABLE.
 */
export class RepeatInstance implements ModelInstance {
  readonly name: string;
  readonly #spec: ModelSpec;
  readonly #closing = new AbortController();
  /** The end of the last execution's WAIT: the instance is held until then. */
  #held: Promise<boolean> = Promise.resolve(true);

  constructor(options: RepeatInstanceOptions) {
    this.name = options.name;
    this.#spec = options.spec;
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    // Triton's message, returned from its ModelInstanceExecute: a model of max_batch_size 0 never gets more.
    if (requests.length > 1) throw new NereidError('INVALID_ARG', 'repeat backend does not support batched request execution');
    if (!(await this.#held) || this.#closing.signal.aborted) throw this.#stopped('before the request started');
    const startMs = epochMs();
    const timing = (): ExecuteResult['timing'] => ({ inputNs: 0, inferNs: msToNs(epochMs() - startMs), outputNs: 0 });
    const request = requests[0];
    if (request === undefined) return { responses: [], timing: timing() };
    const plan = this.#plan(request);
    if (plan instanceof NereidError) {
      // Triton answers the bad request at once, then still waits the WAIT it read before the check.
      this.#held = sleepMs(waitOf(request), this.#closing.signal);
      return { responses: [plan], timing: timing() };
    }
    const completed = this.#respond(request, plan);
    const released = sleepMs(plan.waitMs, this.#closing.signal);
    const first = await Promise.race([completed.then(() => 'completed' as const), released.then((isElapsed) => (isElapsed ? ('released' as const) : ('stopped' as const)))]);
    if (first === 'stopped') throw this.#stopped('while it executed');
    if (first === 'completed') {
      this.#held = released;
      return { responses: [await completed], timing: timing() };
    }
    return { responses: [[]], unfinished: new Map([[0, completed]]), timing: timing() };
  }

  /** The request's plan, or the error Triton's ProcessRequest answers it with. */
  #plan(request: InferRequest): Plan | NereidError {
    const input = tensorOf(request, 'IN');
    const delay = tensorOf(request, 'DELAY');
    if (shapeText(input.shape) !== shapeText(delay.shape)) {
      return new NereidError('INVALID_ARG', `expected IN and DELAY shape to match, got ${shapeText(input.shape)} and ${shapeText(delay.shape)}`);
    }
    // Copies: the responses outlive the execution, and the request's tensors may be views of its body.
    const values = (input.data as Int32Array).slice();
    if (!this.#spec.isDecoupled && values.length !== 1) {
      return new NereidError(
        'INVALID_ARG',
        `model '${this.#spec.name}' is not decoupled, so it sends one response per request, but IN has ${values.length} elements; ` +
          'send one element, or set model_transaction_policy { decoupled: true } to get one response per element',
      );
    }
    // NOTE: Triton's backend reads DELAY into an int32_t buffer: a value of 2^31 or more is negative and not waited.
    const delaysMs = Array.from(delay.data as Uint32Array, (ms) => Math.max(ms | 0, 0));
    return { values, delaysMs, waitMs: waitOf(request) };
  }

  /** Sends the request's responses on their timers; resolves with its result once the last is sent. */
  async #respond(request: InferRequest, { values, delaysMs }: Plan): Promise<Outcome> {
    let last: readonly Tensor[] = [];
    for (let index = 0; index < values.length; index++) {
      if (!(await sleepMs(delaysMs[index]!, this.#closing.signal))) return this.#stopped('before its last response');
      const outputs = checkOutputs(
        this.#spec,
        [
          { name: 'OUT', dataType: 'INT32', shape: [1], data: Int32Array.of(values[index]!) },
          { name: 'IDX', dataType: 'UINT32', shape: [1], data: Uint32Array.of(index) },
        ],
        { requested: undefined },
      );
      if (this.#spec.isDecoupled) request.onResponse?.(outputs);
      else last = outputs;
    }
    return last;
  }

  #stopped(when: string): NereidError {
    return instanceStopped(this.name, this.#spec.name, when);
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }
}

/** A validated request's input: every input of a repeat model is required. */
function tensorOf(request: InferRequest, name: string): Tensor {
  return request.inputs.find((input) => input.name === name)!;
}

/** WAIT, whose shape [1] the request's validation has checked. */
function waitOf(request: InferRequest): number {
  return (tensorOf(request, 'WAIT').data as Uint32Array)[0]!;
}
