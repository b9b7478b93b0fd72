import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';
import { NereidError } from '../../core/errors.js';
import type { InferRequest } from '../../core/infer-request.js';
import type { ModelSpec, TensorSpec } from '../../core/model-spec.js';
import type { Tensor } from '../../core/tensor.js';
import type { Logger } from '../../logging/logger.js';
import { concatBatch, splitBatch } from '../../scheduling/batch.js';
import type { ExecuteResult, ModelInstance } from '../backend.js';
import { epochMs, msToNs, startWorker, workerUrl } from '../worker-thread.js';
import type { CloseMessage, RunMessage, WorkerInit, WorkerReply, WorkerTensor } from './ort-messages.js';
import { fromWorkerTensor, ortTypeOf, stringCheckedTensor, toWorkerTensor } from './ort-tensors.js';

const WORKER_URL = workerUrl('./ort-worker', import.meta.url);

type RunResult = Extract<WorkerReply, { type: 'result' }>;

interface Pending {
  readonly resolve: (result: RunResult) => void;
  readonly reject: (error: NereidError) => void;
}

export interface OrtInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly modelPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
  readonly logger: Logger;
}

/**
 * One model instance: an ONNX Runtime session in a worker thread. Requests of a batch run one after
 * the other in the worker. If the worker dies, its in-flight requests fail with the exit code and a
 * new worker takes over for the next request.
 */
export class OrtInstance implements ModelInstance {
  readonly name: string;
  readonly #options: OrtInstanceOptions;
  readonly #pending = new Map<number, Pending>();
  #worker!: Worker;
  #started!: Promise<void>;
  #nextId = 0;
  #isClosing = false;
  /** The current worker loaded its session; only such a worker is replaced when it dies. */
  #isRunning = false;

  private constructor(options: OrtInstanceOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Starts the worker and resolves once its session is loaded. */
  static async start(options: OrtInstanceOptions): Promise<OrtInstance> {
    const instance = new OrtInstance(options);
    instance.#spawn();
    await instance.#started;
    return instance;
  }

  #spawn(): void {
    const worker = startWorker(WORKER_URL, { modelPath: this.#options.modelPath, sessionOptions: this.#options.sessionOptions } satisfies WorkerInit);
    this.#worker = worker;
    this.#isRunning = false;
    this.#started = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          this.#isRunning = true;
          resolve();
        } else if (reply.type === 'load-error') {
          reject(new NereidError('INVALID_ARG', `ONNX Runtime cannot load the model: ${reply.message}`));
        } else {
          this.#settle(reply);
        }
      });
      worker.on('error', (error) => {
        reject(new NereidError('INTERNAL', `instance '${this.name}' failed: ${error.message}`));
        this.#options.logger.error('onnxruntime', `instance '${this.name}' worker error: ${error.stack ?? error.message}`);
      });
      worker.on('exit', (code) => this.#onExit(worker, code));
    });
    // A failed start is reported to whoever awaits #started; keep it from counting as unhandled meanwhile.
    this.#started.catch(() => {});
  }

  #onExit(worker: Worker, code: number): void {
    if (worker !== this.#worker) return;
    const error = new NereidError(
      'INTERNAL',
      `instance '${this.name}' of model '${this.#options.spec.name}' stopped unexpectedly (exit code ${code}) while running the request`,
    );
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    if (!this.#isClosing && this.#isRunning) {
      this.#options.logger.warning('onnxruntime', `instance '${this.name}' exited with code ${code}; starting a new one`);
      this.#spawn();
    }
  }

  #settle(reply: Extract<WorkerReply, { id: number }>): void {
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (reply.type === 'result') pending.resolve(reply);
    else pending.reject(new NereidError('INTERNAL', `onnxruntime execute failure: ${reply.message}`));
  }

  /**
   * Runs the batch as one session run: each input is gathered from the requests into one buffer
   * that is transferred to the worker, and each output comes back as one buffer split into views.
   * A request whose inputs ONNX Runtime cannot take fails alone; a failed run fails the whole batch.
   */
  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    await this.#started;
    const spec = this.#options.spec;
    const responses: Array<readonly Tensor[] | NereidError> = new Array(requests.length);
    const included: number[] = [];
    const feedsByRequest: Array<readonly Tensor[]> = [];
    for (const [index, request] of requests.entries()) {
      try {
        feedsByRequest.push(request.inputs.map(stringCheckedTensor));
        included.push(index);
      } catch (error) {
        if (!(error instanceof NereidError)) throw error;
        responses[index] = error;
      }
    }
    if (included.length === 0) return { responses, timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };

    const isBatching = spec.maxBatchSize > 0;
    const batchSizes = included.map((index) => (isBatching ? requests[index]!.inputs[0]!.shape[0]! : 1));
    const feeds: WorkerTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const input of feedsByRequest[0]!) {
      // The batcher batches only requests with the same inputs, possibly listed in another order.
      const batch = concatBatch(feedsByRequest.map((tensors) => tensors.find((t) => t.name === input.name)!));
      const inputSpec = spec.inputByName.get(input.name)!;
      const feed = toWorkerTensor(input.name, batch.data, ortTypeOf(input.dataType)!, backendShape(batch.shape, inputSpec, isBatching));
      feeds.push(feed);
      if (!Array.isArray(feed.data)) transfer.push(feed.data.buffer as ArrayBuffer);
    }
    const outputNames = [...new Set(included.flatMap((index) => requests[index]!.outputs?.map((o) => o.name) ?? spec.outputs.map((o) => o.name)))];
    let result: RunResult;
    try {
      result = await this.#post(feeds, outputNames, transfer);
    } catch (error) {
      if (!(error instanceof NereidError)) throw error;
      for (const index of included) responses[index] = error;
      return { responses, timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    }
    const pieces = new Map<string, Tensor[]>();
    for (const [position, name] of outputNames.entries()) {
      const outputSpec = spec.outputByName.get(name)!;
      const output = result.outputs[position]!;
      const tensor = fromWorkerTensor(output, outputSpec.dataType, responseShape(output.dims, outputSpec, isBatching));
      pieces.set(name, isBatching ? splitBatch(tensor, batchSizes) : [tensor]);
    }
    for (const [position, index] of included.entries()) {
      const wanted = requests[index]!.outputs?.map((o) => o.name) ?? spec.outputs.map((o) => o.name);
      responses[index] = wanted.map((name) => pieces.get(name)![position]!);
    }
    const endMs = epochMs();
    return {
      responses,
      timing: {
        inputNs: msToNs(result.runStartMs - startMs),
        inferNs: msToNs(result.runEndMs - result.runStartMs),
        outputNs: msToNs(endMs - result.runEndMs),
      },
    };
  }

  #post(feeds: readonly WorkerTensor[], fetches: readonly string[], transfer: ArrayBuffer[]): Promise<RunResult> {
    const id = this.#nextId++;
    const message: RunMessage = { type: 'run', id, feeds, fetches };
    return new Promise<RunResult>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage(message, transfer);
    });
  }

  /**
   * Stops the worker and resolves once it has exited. Requests still pending fail now.
   * NOTE: a worker is never terminated from outside: stopping its thread while a session runs aborts
   * the whole process (onnxruntime-node throws into the dying environment). It is asked to stop
   * instead, and exits as soon as the run in progress, if any, returns.
   */
  async close(): Promise<void> {
    this.#isClosing = true;
    const error = new NereidError('UNAVAILABLE', `instance '${this.name}' of model '${this.#options.spec.name}' was stopped before the request finished`);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    const exited = once(this.#worker, 'exit');
    this.#worker.postMessage({ type: 'close' } satisfies CloseMessage);
    await exited;
  }
}

/** The shape the session sees: the config `reshape` in place of the dims, batch dimension kept. */
function backendShape(shape: readonly number[], spec: TensorSpec, isBatching: boolean): readonly number[] {
  if (spec.reshape === undefined) return shape;
  return isBatching ? [shape[0]!, ...spec.reshape] : spec.reshape;
}

/** The shape the client sees: the config dims in place of the `reshape`, batch dimension kept. */
function responseShape(shape: readonly number[], spec: TensorSpec, isBatching: boolean): readonly number[] {
  if (spec.reshape === undefined) return shape;
  return isBatching ? [shape[0]!, ...spec.dims] : spec.dims;
}
