import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { Logger } from '../../logging/logger.js';
import { batchSizeOf, concatBatch, splitBatch } from '../../scheduling/batch.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import { SupervisedInstance, type SupervisedWorker, type WorkerEvents } from '../supervised-instance.js';
import { backendShape, checkOutput, clientShape } from '../tensor-io.js';
import { epochMs, msToNs, startWorker, workerUrl } from '../worker-thread.js';
import type { CloseMessage, RunMessage, WorkerInit, WorkerReply, WorkerTensor } from './ort-messages.js';
import { dataTypeOfOrt, fromWorkerTensor, ortTypeOf, stringCheckedTensor, toWorkerTensor } from './ort-tensors.js';

const WORKER_URL = workerUrl('./ort-worker', import.meta.url);

type RunResult = Extract<WorkerReply, { type: 'result' }>;

interface Pending {
  readonly resolve: (result: RunResult) => void;
  readonly fail: (error: NereidError) => void;
}

/** A worker thread as the supervisor sees it: ready once its session is loaded. */
interface OrtWorker extends SupervisedWorker {
  readonly thread: Worker;
}

export interface OrtInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly modelPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
  readonly logger: Logger;  /** Aborts a start that takes too long (the load timeout): see SupervisedInstance.start. */
  readonly signal?: AbortSignal;
}

/**
 * One model instance: an ONNX Runtime session in a worker thread, supervised by the policy every
 * backend shares (supervised-instance.ts). Requests of a batch run one after the other in the worker.
 */
export class OrtInstance implements ModelInstance {
  readonly name: string;
  readonly #options: OrtInstanceOptions;
  readonly #supervisor: SupervisedInstance<OrtWorker, Pending>;
  #nextId = 0;

  private constructor(options: OrtInstanceOptions) {
    this.name = options.name;
    this.#options = options;
    this.#supervisor = new SupervisedInstance({
      instanceName: options.name,
      modelName: options.spec.name,
      workerKind: 'worker thread',
      spawn: (events) => this.#spawn(events),
      logger: options.logger,
      logComponent: 'onnxruntime',
    });
  }

  /** Starts the worker and resolves once its session is loaded. */
  static async start(options: OrtInstanceOptions): Promise<OrtInstance> {
    const instance = new OrtInstance(options);
    await instance.#supervisor.start(options.signal);
    return instance;
  }

  get isHealthy(): boolean {
    return this.#supervisor.isHealthy;
  }

  /**
   * NOTE: a worker is never terminated while a session runs: stopping its thread then aborts the
   * whole process (onnxruntime-node throws into the dying environment). `finalize` asks it to stop
   * instead, and it exits as soon as the run in progress, if any, returns; `kill` (the execute
   * timeout, which this backend does not set, and killWorkersForTesting) is for an idle worker only.
   */
  #spawn(events: WorkerEvents): OrtWorker {
    const thread = startWorker(WORKER_URL, { modelPath: this.#options.modelPath, sessionOptions: this.#options.sessionOptions } satisfies WorkerInit);
    let crash: string | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      thread.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') resolve();
        else if (reply.type === 'load-error') reject(new Error(`ONNX Runtime cannot load the model: ${reply.message}`));
        else this.#settle(reply);
      });
      thread.on('error', (error) => {
        crash = error.message;
        reject(new Error(`the worker thread failed: ${error.message}`));
        this.#options.logger.error('onnxruntime', `instance '${this.name}' worker error: ${error.stack ?? error.message}`);
      });
      thread.on('exit', (code) => {
        reject(new Error(`the worker thread exited with code ${code} before the model was loaded`));
        events.exited({ description: `exited with code ${code}${crash !== undefined ? ` (uncaught error: ${crash})` : ''}` });
      });
    });
    // A failed start is reported to whoever awaits `ready`; keep it from counting as unhandled meanwhile.
    ready.catch(() => {});
    return {
      thread,
      ready,
      kill: () => void thread.terminate(),
      finalize: async () => {
        const exited = once(thread, 'exit');
        thread.postMessage({ type: 'close' } satisfies CloseMessage);
        await exited;
      },
    };
  }

  #settle(reply: Extract<WorkerReply, { id: number }>): void {
    const pending = this.#supervisor.release(reply.id);
    if (pending === undefined) return;
    if (reply.type === 'result') pending.resolve(reply);
    else pending.fail(new NereidError('INTERNAL', `onnxruntime execute failure: ${reply.message}`));
  }

  /**
   * Runs the batch as one session run: each input is gathered from the requests into one buffer
   * that is transferred to the worker, and each output comes back as one buffer split into views.
   * A request whose inputs ONNX Runtime cannot take fails alone; a failed run fails the whole batch.
   */
  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    const unavailable = this.#supervisor.unavailable();
    if (unavailable !== undefined) return { responses: requests.map(() => unavailable), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } };
    const spec = this.#options.spec;
    const responses: Array<readonly Tensor[] | NereidError> = new Array(requests.length);
    const included: number[] = [];
    const feedsByRequest: Array<readonly Tensor[]> = [];
    for (const [index, request] of requests.entries()) {
      try {
        const checked: Tensor[] = [];
        for (const input of request.inputs) checked.push(await stringCheckedTensor(input));
        feedsByRequest.push(checked);
        included.push(index);
      } catch (error) {
        if (!(error instanceof NereidError)) throw error;
        responses[index] = error;
      }
    }
    if (included.length === 0) return { responses, timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };

    const isBatching = spec.maxBatchSize > 0;
    const batchSizes = included.map((index) => batchSizeOf(requests[index]!, isBatching));
    const feeds: WorkerTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const input of feedsByRequest[0]!) {
      // The batcher batches only requests with the same inputs, possibly listed in another order.
      const batch = concatBatch(feedsByRequest.map((tensors) => tensors.find((t) => t.name === input.name)!));
      const inputSpec = spec.inputByName.get(input.name)!;
      const feed = await toWorkerTensor(input.name, batch.data, ortTypeOf(input.dataType)!, backendShape(batch.shape, inputSpec, isBatching));
      feeds.push(feed);
      transfer.push(feed.data.buffer as ArrayBuffer);
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
    const timing = { inputNs: msToNs(result.runStartMs - startMs), inferNs: msToNs(result.runEndMs - result.runStartMs), outputNs: 0 };
    const pieces = new Map<string, Tensor[]>();
    try {
      for (const [position, name] of outputNames.entries()) {
        const outputSpec = spec.outputByName.get(name)!;
        const output = result.outputs[position]!;
        const tensor = await fromWorkerTensor(output, dataTypeOfOrt(output.type) ?? outputSpec.dataType, output.dims);
        checkOutput(spec, tensor, isBatching);
        const shown = outputSpec.reshape === undefined ? tensor : { ...tensor, shape: clientShape(tensor.shape, outputSpec, isBatching) };
        pieces.set(name, isBatching ? splitBatch(shown, batchSizes) : [shown]);
      }
    } catch (error) {
      // An output that breaks the configuration fails every request of the run that made it.
      if (!(error instanceof NereidError)) throw error;
      for (const index of included) responses[index] = error;
      return { responses, timing: { ...timing, outputNs: msToNs(epochMs() - result.runEndMs) } };
    }
    for (const [position, index] of included.entries()) {
      const wanted = requests[index]!.outputs?.map((o) => o.name) ?? spec.outputs.map((o) => o.name);
      responses[index] = wanted.map((name) => pieces.get(name)![position]!);
    }
    timing.outputNs = msToNs(epochMs() - result.runEndMs);
    return { responses, timing };
  }

  #post(feeds: readonly WorkerTensor[], fetches: readonly string[], transfer: ArrayBuffer[]): Promise<RunResult> {
    const id = this.#nextId++;
    const message: RunMessage = { type: 'run', id, feeds, fetches };
    return new Promise<RunResult>((resolve, reject) => {
      this.#supervisor.hold(id, { resolve, fail: reject });
      this.#supervisor.worker.thread.postMessage(message, transfer);
    });
  }

  /** Stops the worker (see the NOTE on #spawn) and resolves once it has exited. Requests still pending fail now. */
  close(): Promise<void> {
    return this.#supervisor.close();
  }
}
