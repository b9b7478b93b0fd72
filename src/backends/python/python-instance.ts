import type { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { ModelCaller } from '../../kernel/model-caller.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Logger } from '../../logging/logger.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import { SupervisedInstance, type SupervisedWorker, type WorkerEvents } from '../supervised-instance.js';
import { backendShape } from '../tensor-io.js';
import type { ModelControl } from '../../kernel/model-control.js';
import type { CustomMetrics } from '../../metrics/custom-metrics.js';
import { runBlsRequest } from './bls-bridge.js';
import { type StubApiTarget, runStubApiCall } from './stub-api.js';
import { FrameWriter, type FrameReader } from './frame-codec.js';
import { PendingExecution } from './pending-execution.js';
import { Kind, readResponse, toStubRequestFields, writeRequest } from './stub-protocol.js';
import { StubProcess, describeExit } from './stub-process.js';
import type { StubSettings } from './stub-settings.js';
import { deferred } from '../../util/deferred.js';
import { everyAborted } from '../../util/every-aborted.js';
import { watchCancel } from '../../scheduling/cancellation.js';

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
  /** Aborts a start that takes too long (the load timeout): see SupervisedInstance.start. */
  readonly signal?: AbortSignal;
  /** Where the model's pb_utils.MetricFamily live; absent: the server serves no metrics. */
  readonly customMetrics?: CustomMetrics | undefined;
  /** The model loading API's target (pb_utils.load_model). */
  readonly modelControl?: ModelControl | undefined;
  /** Given: outputs pass with the data type and shape the model returned (tensor-io.ts `onConfigMismatch`). */
  readonly onOutputMismatch?: (output: Tensor, mismatch: NereidError) => void;
}

/** A Python process as the supervisor sees it: ready once `initialize` has returned. */
interface StubWorker extends SupervisedWorker {
  readonly process: StubProcess;
}

/**
 * One model instance: a Python process running the model's TritonPythonModel, supervised by the
 * policy every backend shares (supervised-instance.ts), whose health check has the timeout of config
 * parameter `STUB_TIMEOUT_SECONDS`: a process that answers none for that long is killed as hung.
 */
export class PythonInstance implements ModelInstance {
  readonly name: string;
  readonly #options: PythonInstanceOptions;
  readonly #supervisor: SupervisedInstance<StubWorker, PendingExecution>;
  #nextExecId = 0;
  /** The requests of the executions in flight: a BLS call is cancelled once all of them are. */
  readonly #running = new Set<InferRequest>();

  private constructor(options: PythonInstanceOptions) {
    this.name = options.name;
    this.#options = options;
    this.#supervisor = new SupervisedInstance({
      instanceName: options.name,
      modelName: options.spec.name,
      workerKind: 'Python process',
      spawn: (events) => this.#spawn(events),
      logger: options.logger,
      logComponent: 'python',
      isKillableWhileStarting: true,
      healthCheck: { timeoutMs: options.settings.healthTimeoutMs },
    });
  }

  /** Starts the process and resolves once `initialize` has returned; rejects with its error. */
  static async start(options: PythonInstanceOptions): Promise<PythonInstance> {
    const instance = new PythonInstance(options);
    await instance.#supervisor.start(options.signal);
    return instance;
  }

  get isHealthy(): boolean {
    return this.#supervisor.isHealthy;
  }

  /**
   * Sends the batch to the process as one `execute(requests)` call. Inputs travel with the config
   * `reshape` applied; outputs come back checked against the configuration (pending-execution.ts).
   */
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const unavailable = this.#supervisor.unavailable();
    if (unavailable !== undefined) {
      return Promise.resolve({ responses: requests.map(() => unavailable), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } });
    }
    const execId = this.#nextExecId++;
    const pending = new PendingExecution({ requests, spec: this.#options.spec, label: this.#supervisor.label, onOutputMismatch: this.#options.onOutputMismatch });
    const writer = new FrameWriter().u32(execId).u32(requests.length);
    const { spec } = this.#options;
    const isBatching = spec.maxBatchSize > 0;
    for (const request of requests) {
      writeRequest(
        writer,
        {
          id: request.id,
          ...toStubRequestFields(request.parameters),
          requestedOutputs: request.outputs?.map((output) => output.name) ?? spec.outputs.map((output) => output.name),
          inputs: request.inputs,
        },
        (input) => backendShape(input.shape, spec.inputByName.get(input.name)!, isBatching),
      );
    }
    this.#supervisor.hold(execId, pending);
    const stub = this.#supervisor.worker.process;
    stub.send(Kind.Execute, writer);
    // A request cancelled while it runs is told so: its `is_cancelled()` turns true.
    const unwatch = requests.map((request, index) =>
      watchCancel(request, () => {
        if (stub === this.#supervisor.worker.process) stub.send(Kind.Cancel, new FrameWriter().u32(execId).u32(index));
      }),
    );
    for (const request of requests) this.#running.add(request);
    return pending.promise.finally(() => {
      for (const stop of unwatch) stop();
      for (const request of requests) this.#running.delete(request);
      this.#supervisor.release(execId);
    });
  }

  /** Calls the model's `finalize()` and waits for the process to exit; kills it if that takes longer than the health timeout. */
  close(): Promise<void> {
    return this.#supervisor.close();
  }

  /** Starts a process and initializes the model in it; ready once `initialize` has returned. */
  #spawn(events: WorkerEvents): StubWorker {
    const ready = deferred();
    // A failed start is reported to whoever awaits `ready`; keep it from counting as unhandled meanwhile.
    ready.promise.catch(() => {});
    let isReady = false;
    const exited = deferred();
    const { settings } = this.#options;
    // The process's custom metrics leave /metrics with it (an unload, or a crash before its restart).
    const api: StubApiTarget = { metrics: this.#options.customMetrics?.scope(), control: this.#options.modelControl };
    const stub: StubProcess = new StubProcess({
      settings,
      mode: 'serve',
      modelFile: this.#options.modelFile,
      label: this.#supervisor.label,
      logger: this.#options.logger,
      onMessage: (kind, reader) => {
        if (kind === Kind.Ready) {
          isReady = true;
          ready.resolve();
        } else if (kind === Kind.Failed) {
          ready.reject(new Error(reader.str()));
          stub.kill();
        } else {
          this.#receive(stub, api, kind, reader);
        }
      },
      onPong: () => events.answered(),
      onExit: (exit) => {
        api.metrics?.close();
        exited.resolve();
        if (!isReady) ready.reject(new Error(`the Python process ${describeExit(exit)} before the model was initialized${tail(stub.stderrTail)}`));
        events.exited({ description: describeExit(exit) });
      },
    });
    stub.send(Kind.Init, new FrameWriter().str(this.#options.argsJson));
    return {
      process: stub,
      ready: ready.promise,
      kill: () => stub.kill(),
      ping: () => stub.ping(),
      finalize: async () => {
        const killTimer = setTimeout(() => stub.kill(), settings.healthTimeoutMs);
        stub.send(Kind.Finalize);
        await exited.promise;
        clearTimeout(killTimer);
      },
    };
  }

  #receive(stub: StubProcess, api: StubApiTarget, kind: number, reader: FrameReader): void {
    switch (kind) {
      case Kind.ExecuteDone:
        this.#supervisor.peek(reader.u32())?.onExecuteDone(reader);
        break;
      case Kind.Response: {
        const execution = this.#supervisor.peek(reader.u32());
        const index = reader.u32();
        const flags = reader.u32();
        const response = reader.u8() !== 0 ? readResponse(reader) : undefined;
        execution?.onResponse(index, flags, response);
        break;
      }
      case Kind.BlsRequest:
        // A BLS request is cancelled once every request the process is running has been (for a model
        // that runs one execution at a time, those of its batch), whether or not it names the one it serves.
        runBlsRequest(reader, {
          caller: this.#options.caller,
          send: (replyKind, writer) => {
            if (this.#supervisor.worker.process === stub) stub.send(replyKind, writer);
          },
          cancel: everyAborted([...this.#running].map((request) => request.signal)),
          requestOf: (execId, index) => this.#supervisor.peek(execId)?.requestAt(index),
        });
        break;
      case Kind.ApiRequest:
        runStubApiCall(reader, api, (replyKind, writer) => {
          if (this.#supervisor.worker.process === stub) stub.send(replyKind, writer);
        });
        break;
      default:
        this.#options.logger.error('python', `${this.#supervisor.label}: unexpected message kind ${kind} from the Python process`);
    }
  }
}

const tail = (stderr: string): string => (stderr === '' ? '' : `; its stderr ends with:\n${stderr}`);
