import { once } from 'node:events';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest, InferResponse } from '../../kernel/infer-request.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { Logger } from '../../logging/logger.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import { watchCancel } from '../../scheduling/cancellation.js';
import { SupervisedInstance, type SupervisedWorker, type WorkerEvents } from '../supervised-instance.js';
import { backendShape, checkOutputs } from '../tensor-io.js';
import { epochMs, msToNs, startWorker, workerUrl } from '../worker-thread.js';
import type { FromWorker, JsWorkerInit, ToWorker, WireCallRequest, WireCallResponse, WireRequest, WireTensor } from './js-messages.js';
import { fromWire, toWire } from './js-wire.js';
import { InlineThread, type ModelThread } from './inline-thread.js';

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
  /** Config parameter `run_inline`: the model runs on the main thread (inline-thread.ts), not in a worker. */
  readonly isInline: boolean;
  /** Aborts a start that takes too long (the load timeout): see SupervisedInstance.start. */
  readonly signal?: AbortSignal;
}

type Executed = Extract<FromWorker, { type: 'executed' }>;

interface Execution {
  readonly requests: readonly InferRequest[];
  readonly resolve: (message: Executed) => void;
  readonly fail: (error: NereidError) => void;
}

/** A worker thread as the supervisor sees it: ready once the model's `initialize` has returned. */
interface JsWorker extends SupervisedWorker {
  readonly thread: ModelThread;
}

/**
 * One instance of a JavaScript model: the model's code in its own worker thread (or inline on the
 * main thread, config parameter `run_inline`), supervised by the
 * policy every backend shares (supervised-instance.ts), with `execute_timeout_ms` as its execute timeout.
 */
export class JsInstance implements ModelInstance {
  readonly name: string;
  readonly #options: JsInstanceOptions;
  readonly #supervisor: SupervisedInstance<JsWorker, Execution>;
  #nextId = 0;

  private constructor(options: JsInstanceOptions) {
    this.name = options.init.instanceName;
    this.#options = options;
    this.#supervisor = new SupervisedInstance({
      instanceName: options.init.instanceName,
      modelName: options.spec.name,
      workerKind: options.isInline ? 'inline model host' : 'worker thread',
      spawn: (events) => this.#spawn(events),
      logger: options.logger,
      logComponent: 'javascript',
      isKillableWhileStarting: true,
      executeTimeout: { ms: options.executeTimeoutMs, parameter: 'execute_timeout_ms' },
    });
  }

  static async start(options: JsInstanceOptions): Promise<JsInstance> {
    const instance = new JsInstance(options);
    await instance.#supervisor.start(options.signal);
    return instance;
  }

  get isHealthy(): boolean {
    return this.#supervisor.isHealthy;
  }

  #spawn(events: WorkerEvents): JsWorker {
    const thread: ModelThread = this.#options.isInline ? new InlineThread(this.#options.init) : startWorker(WORKER_URL, this.#options.init);
    /** The last uncaught error of the worker, to say why it stopped. */
    let crash: string | undefined;
    const handle: JsWorker = {
      thread,
      ready: new Promise<void>((resolve, reject) => {
        thread.on('message', (message: FromWorker) => {
          if (message.type === 'ready') resolve();
          else if (message.type === 'init-error') reject(new Error(`failed to initialize: ${message.message}`));
          else this.#onMessage(handle, message);
        });
        thread.on('error', (error: Error) => {
          crash = error.message;
          reject(new Error(`failed to initialize: ${error.message}`));
        });
        thread.on('exit', (code: number) => {
          reject(new Error(`the ${this.#options.isInline ? 'inline model host' : 'worker thread'} exited with code ${code} before the model was initialized`));
          events.exited({ description: `exited with code ${code}${crash !== undefined ? ` (uncaught error: ${crash})` : ''}` });
        });
      }),
      kill: () => void thread.terminate(),
      finalize: async () => {
        const exited = once(thread, 'exit');
        thread.postMessage({ type: 'close' } satisfies ToWorker);
        const timer = setTimeout(() => void thread.terminate(), FINALIZE_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      },
    };
    // A failed start is reported to whoever awaits `ready`; keep it from counting as unhandled meanwhile.
    handle.ready.catch(() => {});
    return handle;
  }

  #onMessage(worker: JsWorker, message: FromWorker): void {
    switch (message.type) {
      case 'executed':
        this.#supervisor.release(message.id)?.resolve(message);
        break;
      case 'response': {
        const request = this.#supervisor.peek(message.id)?.requests[message.index];
        if (request === undefined) break;
        try {
          const { outputs } = message;
          request.onResponse?.('status' in outputs ? new NereidError(outputs.status, outputs.message) : checkOutputs(this.#options.spec, this.#fromWorker(outputs), { requested: undefined }));
        } catch (error) {
          this.#options.logger.error('javascript', `${this.#supervisor.label}: a streamed response was dropped: ${(error as Error).message}`);
        }
        break;
      }
      case 'call':
        this.#call(worker, message.callId, message.request, message.isStream);
        break;
      case 'log':
        this.#options.logger[message.level === 'verbose' ? 'info' : message.level]('javascript', `${this.#supervisor.label}: ${message.message}`);
        break;
    }
  }

  #fromWorker(outputs: readonly WireTensor[]): Tensor[] {
    return outputs.map((wire) => fromWire(wire, `model '${this.#options.spec.name}' output '${wire.name}'`));
  }

  /**
   * A model-to-model call from the worker, answered with one end message that carries its response
   * (a stream: each response, then an end message); cancelled with the request it names as parent.
   */
  #call(worker: JsWorker, callId: number, wire: WireCallRequest, isStream: boolean): void {
    const send = (message: ToWorker, transfer: ArrayBuffer[] = []): void => {
      // A worker replaced meanwhile no longer waits for the answer.
      if (worker === this.#supervisor.worker) worker.thread.postMessage(message, transfer);
    };
    const answerOf = (response: InferResponse, transfer: ArrayBuffer[]): WireCallResponse => ({
      modelName: response.modelName,
      modelVersion: response.modelVersion,
      outputs: response.outputs.map((output) => toWire(output, transfer)),
    });
    // An error response of a decoupled callee ends the call with that error once the callee is done (the router defers it).
    const respond = (response: InferResponse | NereidError): void => {
      if (response instanceof NereidError) throw response;
      const transfer: ArrayBuffer[] = [];
      send({ type: 'call-response', callId, response: answerOf(response, transfer) }, transfer);
    };
    /** A call that is not a stream: its one response ends it. */
    const end = (response: InferResponse): void => {
      const transfer: ArrayBuffer[] = [];
      send({ type: 'call-end', callId, response: answerOf(response, transfer) }, transfer);
    };
    // A call serving a traced request is traced as its child (Triton's `trace=request.trace()`).
    const parent = wire.parent === undefined ? undefined : this.#supervisor.peek(wire.parent.execution)?.requests[wire.parent.index];
    const trace = parent?.trace?.child();
    const signal = parent?.signal;
    Promise.resolve()
      .then(() => {
        const request: InferRequest = {
          modelName: wire.modelName,
          ...(wire.modelVersion !== undefined ? { modelVersion: wire.modelVersion } : {}),
          id: wire.id,
          inputs: wire.inputs.map((input) => fromWire(input, `input '${input.name}' of the call to model '${wire.modelName}'`)),
          ...(wire.requestedOutputs !== undefined ? { outputs: wire.requestedOutputs.map((name) => ({ name })) } : {}),
          parameters: wire.parameters,
          ...(trace !== undefined ? { trace } : {}),
          ...(signal !== undefined ? { signal } : {}),
        };
        if (!isStream) return this.#options.caller.infer(request).then(end);
        return this.#options.caller.inferStream(request, respond).then(() => send({ type: 'call-end', callId }));
      })
      .catch((error: unknown) => {
        const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
        send({ type: 'call-end', callId, error: { status: failure.status, message: failure.message } });
      })
      .finally(() => trace?.end());
  }

  /**
   * Sends the batch to the worker as one `execute(requests)` call. Inputs travel with the config
   * `reshape` applied; outputs come back checked against the configuration (tensor-io.ts).
   */
  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    const unavailable = this.#supervisor.unavailable();
    if (unavailable !== undefined) return { responses: requests.map(() => unavailable), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } };
    const { spec } = this.#options;
    const isBatching = spec.maxBatchSize > 0;
    const id = this.#nextId++;
    const transfer: ArrayBuffer[] = [];
    const wires: WireRequest[] = requests.map((request) => ({
      id: request.id,
      inputs: request.inputs.map((input) => toWire(input, transfer, backendShape(input.shape, spec.inputByName.get(input.name)!, isBatching))),
      requestedOutputs: (request.outputs ?? spec.outputs).map((output) => output.name),
      parameters: request.parameters,
    }));
    let executed: Executed;
    try {
      executed = await this.#run(id, requests, wires, transfer);
    } catch (error) {
      const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', `${this.#supervisor.label} failed: ${(error as Error).message}`);
      return { responses: requests.map(() => failure), timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    }
    const responses = executed.responses.map((response, index): readonly Tensor[] | NereidError => {
      if (!Array.isArray(response)) {
        const error = response as { status: NereidError['status']; message: string };
        return new NereidError(error.status, error.message);
      }
      try {
        // A decoupled model's requests end with an empty list; anything else it returns is one more response.
        const requested = spec.isDecoupled ? undefined : wires[index]!.requestedOutputs;
        return checkOutputs(spec, this.#fromWorker(response), { requested });
      } catch (error) {
        return error instanceof NereidError ? error : new NereidError('INTERNAL', `model '${spec.name}' returned outputs Nereid cannot read: ${(error as Error).message}`);
      }
    });
    return {
      responses,
      timing: { inputNs: msToNs(executed.startMs - startMs), inferNs: msToNs(executed.endMs - executed.startMs), outputNs: msToNs(epochMs() - executed.endMs) },
    };
  }

  #run(id: number, requests: readonly InferRequest[], wires: readonly WireRequest[], transfer: ArrayBuffer[]): Promise<Executed> {
    const running = new Promise<Executed>((resolve, reject) => {
      this.#supervisor.hold(id, { requests, resolve, fail: reject });
      try {
        this.#supervisor.worker.thread.postMessage({ type: 'execute', id, requests: wires } satisfies ToWorker, transfer);
      } catch (error) {
        this.#supervisor.release(id);
        reject(new NereidError('INTERNAL', `${this.#supervisor.label} could not be sent the requests: ${(error as Error).message}`));
      }
    });
    // A request cancelled while it runs is told so: its `signal` aborts in the worker.
    const { thread } = this.#supervisor.worker;
    const unwatch = requests.map((request, index) =>
      watchCancel(request, () => {
        if (thread === this.#supervisor.worker.thread) thread.postMessage({ type: 'cancel', id, index } satisfies ToWorker);
      }),
    );
    return running.finally(() => {
      for (const stop of unwatch) stop();
    });
  }

  /** Lets the model finalize (stopping its worker after 5 s), then resolves; requests still running fail. */
  close(): Promise<void> {
    return this.#supervisor.close();
  }
}
