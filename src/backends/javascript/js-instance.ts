import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { NereidError } from '../../core/errors.js';
import type { InferRequest, InferResponse } from '../../core/infer-request.js';
import type { ModelCaller } from '../../core/model-caller.js';
import type { ModelSpec } from '../../core/model-spec.js';
import type { Tensor } from '../../core/tensor.js';
import type { Logger } from '../../logging/logger.js';
import type { ExecuteResult, ModelInstance } from '../backend.js';
import { epochMs, msToNs, startWorker, workerUrl } from '../worker-thread.js';
import type { FromWorker, JsWorkerInit, ToWorker, WireCallRequest, WireCallResponse, WireRequest } from './js-messages.js';
import { checkOutputs, fromWire, toWire } from './js-wire.js';

const WORKER_URL = workerUrl('./js-worker', import.meta.url);
/** How long a closing worker may spend in `finalize()` before it is stopped. */
const FINALIZE_TIMEOUT_MS = 5_000;

export interface JsInstanceOptions {
  readonly init: JsWorkerInit;
  readonly spec: ModelSpec;
  readonly caller: ModelCaller;
  readonly logger: Logger;
  /** An execution still running after this long fails and the instance restarts; 0: no limit. */
  readonly executeTimeoutMs: number;
}

type Executed = Extract<FromWorker, { type: 'executed' }>;

interface Execution {
  readonly requests: readonly InferRequest[];
  readonly resolve: (message: Executed) => void;
  readonly reject: (error: NereidError) => void;
}

/**
 * One instance of a JavaScript model: the model's code in its own worker thread. A worker that
 * crashes or runs past the execute timeout fails the requests it was running, and a new worker is
 * started in its place; meanwhile the instance reports itself unhealthy.
 */
export class JsInstance implements ModelInstance {
  readonly name: string;
  readonly #options: JsInstanceOptions;
  readonly #executions = new Map<number, Execution>();
  #worker!: Worker;
  #started!: Promise<void>;
  #nextId = 0;
  #isHealthy = false;
  #isClosing = false;
  /** The last uncaught error of the current worker, to say why it stopped. */
  #crash: string | undefined;

  private constructor(options: JsInstanceOptions) {
    this.name = options.init.instanceName;
    this.#options = options;
  }

  static async start(options: JsInstanceOptions): Promise<JsInstance> {
    const instance = new JsInstance(options);
    instance.#spawn();
    await instance.#started;
    return instance;
  }

  get isHealthy(): boolean {
    return this.#isHealthy;
  }

  get #label(): string {
    return `instance '${this.name}' of model '${this.#options.spec.name}'`;
  }

  #spawn(): void {
    const worker = startWorker(WORKER_URL, this.#options.init);
    this.#worker = worker;
    this.#crash = undefined;
    this.#started = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          this.#isHealthy = true;
          resolve();
        } else if (message.type === 'init-error') {
          reject(new NereidError('INVALID_ARG', `model '${this.#options.spec.name}' failed to initialize: ${message.message}`));
        } else {
          this.#onMessage(worker, message);
        }
      });
      worker.on('error', (error) => {
        this.#crash = error.message;
        reject(new NereidError('INVALID_ARG', `model '${this.#options.spec.name}' failed to initialize: ${error.message}`));
      });
      worker.on('exit', (code) => this.#onExit(worker, code));
    });
    this.#started.catch(() => {});
  }

  #onExit(worker: Worker, code: number): void {
    if (worker !== this.#worker) return;
    const wasHealthy = this.#isHealthy;
    this.#isHealthy = false;
    const why = this.#crash !== undefined ? `: ${this.#crash}` : '';
    this.#failAll(new NereidError('INTERNAL', `${this.#label} stopped unexpectedly (exit code ${code})${why}; the instance is restarted`));
    if (this.#isClosing || !wasHealthy) return;
    this.#options.logger.warning('javascript', `${this.#label} stopped (exit code ${code})${why}; starting a new worker`);
    this.#restart();
  }

  /** Starts a new worker in place of the current one; requests wait for it. */
  #restart(): void {
    this.#isHealthy = false;
    this.#spawn();
    this.#started.catch((error: Error) => this.#options.logger.error('javascript', `${this.#label} could not be restarted: ${error.message}`));
  }

  #failAll(error: NereidError): void {
    for (const execution of this.#executions.values()) execution.reject(error);
    this.#executions.clear();
  }

  #onMessage(worker: Worker, message: FromWorker): void {
    switch (message.type) {
      case 'executed': {
        const execution = this.#executions.get(message.id);
        this.#executions.delete(message.id);
        execution?.resolve(message);
        break;
      }
      case 'response': {
        const request = this.#executions.get(message.id)?.requests[message.index];
        if (request === undefined) break;
        try {
          request.onResponse?.(checkOutputs(this.#options.spec, message.outputs, undefined));
        } catch (error) {
          this.#options.logger.error('javascript', `${this.#label}: a streamed response was dropped: ${(error as Error).message}`);
        }
        break;
      }
      case 'call':
        this.#call(worker, message.callId, message.request, message.isStream);
        break;
      case 'log':
        this.#options.logger[message.level === 'verbose' ? 'info' : message.level]('javascript', `${this.#label}: ${message.message}`);
        break;
    }
  }

  /** A model-to-model call from the worker, answered with its response(s) and an end message. */
  #call(worker: Worker, callId: number, wire: WireCallRequest, isStream: boolean): void {
    const send = (message: ToWorker, transfer: ArrayBuffer[] = []): void => {
      // A worker replaced meanwhile no longer waits for the answer.
      if (worker === this.#worker) worker.postMessage(message, transfer);
    };
    const respond = (response: InferResponse): void => {
      const transfer: ArrayBuffer[] = [];
      const answer: WireCallResponse = {
        modelName: response.modelName,
        modelVersion: response.modelVersion,
        outputs: response.outputs.map((output) => toWire(output, transfer)),
      };
      send({ type: 'call-response', callId, response: answer }, transfer);
    };
    Promise.resolve()
      .then(() => {
        const request: InferRequest = {
          modelName: wire.modelName,
          ...(wire.modelVersion !== undefined ? { modelVersion: wire.modelVersion } : {}),
          id: wire.id,
          inputs: wire.inputs.map((input) => fromWire(input, `input '${input.name}' of the call to model '${wire.modelName}'`)),
          ...(wire.requestedOutputs !== undefined ? { outputs: wire.requestedOutputs.map((name) => ({ name })) } : {}),
          parameters: wire.parameters,
        };
        return isStream ? this.#options.caller.inferStream(request, respond) : this.#options.caller.infer(request).then(respond);
      })
      .then(
        () => send({ type: 'call-end', callId }),
        (error: unknown) => {
          const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
          send({ type: 'call-end', callId, error: { status: failure.status, message: failure.message } });
        },
      );
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    if (!this.#isHealthy && !this.#isClosing) {
      // A restart that failed is tried again by the next execution.
      await this.#started.catch(() => {
        this.#spawn();
        return this.#started;
      });
    }
    const id = this.#nextId++;
    const transfer: ArrayBuffer[] = [];
    const wires: WireRequest[] = requests.map((request) => ({
      id: request.id,
      inputs: request.inputs.map((input) => toWire(input, transfer)),
      requestedOutputs: (request.outputs ?? this.#options.spec.outputs).map((output) => output.name),
      parameters: request.parameters,
    }));
    let executed: Executed;
    try {
      executed = await this.#run(id, requests, wires, transfer);
    } catch (error) {
      const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', `${this.#label} failed: ${(error as Error).message}`);
      return { responses: requests.map(() => failure), timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    }
    const responses = executed.responses.map((response, index): readonly Tensor[] | NereidError => {
      if (!Array.isArray(response)) {
        const error = response as { status: NereidError['status']; message: string };
        return new NereidError(error.status, error.message);
      }
      try {
        // A decoupled model's requests end with an empty list; anything else it returns is one more response.
        const requested = this.#options.spec.isDecoupled ? undefined : wires[index]!.requestedOutputs;
        return checkOutputs(this.#options.spec, response, requested);
      } catch (error) {
        return error instanceof NereidError ? error : new NereidError('INTERNAL', `model '${this.#options.spec.name}' returned outputs Nereid cannot read: ${(error as Error).message}`);
      }
    });
    return {
      responses,
      timing: { inputNs: msToNs(executed.startMs - startMs), inferNs: msToNs(executed.endMs - executed.startMs), outputNs: msToNs(epochMs() - executed.endMs) },
    };
  }

  #run(id: number, requests: readonly InferRequest[], wires: readonly WireRequest[], transfer: ArrayBuffer[]): Promise<Executed> {
    const { executeTimeoutMs } = this.#options;
    return new Promise<Executed>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => clearTimeout(timer);
      this.#executions.set(id, {
        requests,
        resolve: (message) => {
          settle();
          resolve(message);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (executeTimeoutMs > 0) {
        timer = setTimeout(() => this.#timeOut(id, executeTimeoutMs), executeTimeoutMs);
      }
      try {
        this.#worker.postMessage({ type: 'execute', id, requests: wires } satisfies ToWorker, transfer);
      } catch (error) {
        this.#executions.delete(id);
        settle();
        reject(new NereidError('INTERNAL', `${this.#label} could not be sent the requests: ${(error as Error).message}`));
      }
    });
  }

  /** An execution ran too long: its requests fail and the worker is replaced (stopping it is the only way to stop its code). */
  #timeOut(id: number, timeoutMs: number): void {
    const execution = this.#executions.get(id);
    if (execution === undefined) return;
    const worker = this.#worker;
    this.#options.logger.error('javascript', `${this.#label} did not finish executing within ${timeoutMs} ms; starting a new worker`);
    this.#failAll(new NereidError('UNAVAILABLE', `${this.#label} did not finish executing within ${timeoutMs} ms (config parameter execute_timeout_ms); the instance is restarted`));
    this.#restart();
    void worker.terminate();
  }

  /** Lets the model finalize, then stops its worker; requests still running fail. */
  async close(): Promise<void> {
    this.#isClosing = true;
    this.#failAll(new NereidError('UNAVAILABLE', `${this.#label} was stopped before the request finished`));
    const worker = this.#worker;
    this.#isHealthy = false;
    if (worker.threadId === -1) return;
    const exited = once(worker, 'exit');
    worker.postMessage({ type: 'close' } satisfies ToWorker);
    const timer = setTimeout(() => void worker.terminate(), FINALIZE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}
