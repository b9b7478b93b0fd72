import { NereidError } from '../../core/errors.js';
import type { InferRequest } from '../../core/infer-request.js';
import type { ModelCaller } from '../../core/model-caller.js';
import type { ModelSpec } from '../../core/model-spec.js';
import type { Tensor } from '../../core/tensor.js';
import type { Logger } from '../../logging/logger.js';
import type { ExecuteResult, ModelInstance } from '../backend.js';
import { runBlsRequest } from './bls-bridge.js';
import { FrameWriter, type FrameReader } from './frame-codec.js';
import { PendingExecution } from './pending-execution.js';
import { Kind, readResponse, toStubRequestFields, writeRequest } from './stub-protocol.js';
import { type StubExit, StubProcess, describeExit } from './stub-process.js';
import type { StubSettings } from './stub-settings.js';

/** Waits between failed restarts: 1 s, doubling up to 30 s. */
const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;

export interface PythonInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly settings: StubSettings;
  /** The model.py the process imports (a user's, or a built-in one such as the TorchScript runner). */
  readonly modelFile: string;
  /** Triton's `initialize(args)` dictionary, as JSON. */
  readonly argsJson: string;
  readonly caller: ModelCaller;
  readonly logger: Logger;
}

/**
 * One model instance: a Python process running the model's TritonPythonModel, supervised. When the
 * process dies (a crash, or killed as hung), the batch it was running fails with an error naming the
 * model and the exit status, the instance reports unhealthy (so the model is not ready), requests
 * given to it meanwhile fail fast with UNAVAILABLE, and a new process is started and initialized;
 * failed restarts are retried with a growing delay.
 */
export class PythonInstance implements ModelInstance {
  readonly name: string;
  readonly #options: PythonInstanceOptions;
  readonly #label: string;
  readonly #executions = new Map<number, PendingExecution>();
  #process!: StubProcess;
  #isHealthy = false;
  #isClosing = false;
  #lastExit: StubExit | undefined;
  #nextExecId = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #exited: Promise<void> = Promise.resolve();

  private constructor(options: PythonInstanceOptions) {
    this.name = options.name;
    this.#options = options;
    this.#label = `instance '${options.name}' of model '${options.spec.name}'`;
  }

  /** Starts the process and resolves once `initialize` has returned; rejects with its error. */
  static async start(options: PythonInstanceOptions): Promise<PythonInstance> {
    const instance = new PythonInstance(options);
    await instance.#launch();
    return instance;
  }

  get isHealthy(): boolean {
    return this.#isHealthy;
  }

  /**
   * Sends the batch to the process as one `execute(requests)` call. Inputs travel with the config
   * `reshape` applied; outputs come back checked against the configuration (pending-execution.ts).
   */
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    if (!this.#isHealthy) {
      const cause = this.#lastExit === undefined ? 'is stopping' : `is restarting: its Python process ${describeExit(this.#lastExit)}`;
      const error = new NereidError('UNAVAILABLE', `${this.#label} ${cause}; the model reports not ready until it is back`);
      return Promise.resolve({ responses: requests.map(() => error), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } });
    }
    const execId = this.#nextExecId++;
    const pending = new PendingExecution(requests, this.#options.spec, this.#label);
    const writer = new FrameWriter().u32(execId).u32(requests.length);
    for (const request of requests) {
      writeRequest(
        writer,
        {
          id: request.id,
          ...toStubRequestFields(request.parameters),
          requestedOutputs: request.outputs?.map((output) => output.name) ?? this.#options.spec.outputs.map((output) => output.name),
          inputs: request.inputs,
        },
        (input) => this.#backendShape(input),
      );
    }
    this.#executions.set(execId, pending);
    this.#process.send(Kind.Execute, writer);
    return pending.promise.finally(() => this.#executions.delete(execId));
  }

  /** Calls the model's `finalize()` and waits for the process to exit; kills it if that takes longer than the health timeout. */
  async close(): Promise<void> {
    this.#isClosing = true;
    this.#isHealthy = false;
    clearTimeout(this.#restartTimer);
    this.#failExecutions(new NereidError('UNAVAILABLE', `${this.#label} was stopped before the request finished`));
    const killTimer = setTimeout(() => this.#process.kill(), this.#options.settings.healthTimeoutMs);
    this.#process.send(Kind.Finalize);
    await this.#exited;
    clearTimeout(killTimer);
  }

  /** The shape the model sees: the config `reshape` in place of the dims, batch dimension kept. */
  #backendShape(input: Tensor): readonly number[] {
    const reshape = this.#options.spec.inputByName.get(input.name)?.reshape;
    if (reshape === undefined) return input.shape;
    return this.#options.spec.maxBatchSize > 0 ? [input.shape[0]!, ...reshape] : reshape;
  }

  /** Starts a process and initializes the model in it; the instance is healthy once it is ready. */
  #launch(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let isReady = false;
      let resolveExited!: () => void;
      this.#exited = new Promise((done) => (resolveExited = done));
      const stub: StubProcess = new StubProcess({
        settings: this.#options.settings,
        mode: 'serve',
        modelFile: this.#options.modelFile,
        label: this.#label,
        logger: this.#options.logger,
        onMessage: (kind, reader) => {
          if (kind === Kind.Ready) {
            isReady = true;
            // A restart that finishes after close() is asked to finalize at once (FINALIZE is queued).
            this.#isHealthy = !this.#isClosing;
            stub.startHealthChecks();
            resolve();
          } else if (kind === Kind.Failed) {
            reject(new NereidError('INVALID_ARG', `${this.#label}: ${reader.str()}`));
            stub.kill();
          } else {
            this.#receive(stub, kind, reader);
          }
        },
        onExit: (exit) => {
          resolveExited();
          if (isReady) this.#onExit(exit);
          else reject(new NereidError('INVALID_ARG', `${this.#label}: the Python process ${describeExit(exit)} before the model was initialized${tail(stub.stderrTail)}`));
        },
      });
      this.#process = stub;
      stub.send(Kind.Init, new FrameWriter().str(this.#options.argsJson));
    });
  }

  #receive(stub: StubProcess, kind: number, reader: FrameReader): void {
    switch (kind) {
      case Kind.ExecuteDone:
        this.#executions.get(reader.u32())?.onExecuteDone(reader);
        break;
      case Kind.Response: {
        const execution = this.#executions.get(reader.u32());
        const index = reader.u32();
        const flags = reader.u32();
        const response = reader.u8() !== 0 ? readResponse(reader) : undefined;
        execution?.onResponse(index, flags, response);
        break;
      }
      case Kind.BlsRequest:
        runBlsRequest(reader, this.#options.caller, (replyKind, writer) => {
          if (this.#process === stub) stub.send(replyKind, writer);
        });
        break;
      default:
        this.#options.logger.error('python', `${this.#label}: unexpected message kind ${kind} from the Python process`);
    }
  }

  #onExit(exit: StubExit): void {
    this.#isHealthy = false;
    this.#lastExit = exit;
    this.#failExecutions(new NereidError('INTERNAL', `${this.#label}: the Python process ${describeExit(exit)} while running the request`));
    if (this.#isClosing) return;
    this.#options.logger.error('python', `${this.#label}: the Python process ${describeExit(exit)}; starting a new one`);
    this.#restart(0);
  }

  #restart(attempt: number): void {
    this.#launch().then(
      () => this.#options.logger.info('python', `${this.#label} is serving again after a restart`),
      (error: NereidError) => {
        if (this.#isClosing) return;
        const delayMs = Math.min(RESTART_DELAY_MS * 2 ** attempt, MAX_RESTART_DELAY_MS);
        this.#options.logger.error('python', `restart failed: ${error.message}; trying again in ${delayMs / 1000} s`);
        this.#restartTimer = setTimeout(() => this.#restart(attempt + 1), delayMs);
      },
    );
  }

  #failExecutions(error: NereidError): void {
    for (const execution of this.#executions.values()) execution.fail(error);
    this.#executions.clear();
  }
}

const tail = (stderr: string): string => (stderr === '' ? '' : `; its stderr ends with:\n${stderr}`);
