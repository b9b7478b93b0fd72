import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import type { Tensor } from '../../kernel/tensor.js';
import type { Logger } from '../../logging/logger.js';
import type { BytesElements, FixedSizeArray } from '../../protocol/tensor-data.js';
import { asBytes } from '../../protocol/tensor-data.js';
import { batchSizeOf, splitBatch } from '../../scheduling/batch.js';
import { untilCheckPhase } from '../../scheduling/check-phase.js';
import type { ExecuteResult, ModelInstance } from '../../kernel/model-instance.js';
import { SupervisedInstance, type SupervisedWorker, type WorkerEvents } from '../supervised-instance.js';
import { backendShape, checkOutput, clientShape } from '../tensor-io.js';
import { epochMs, msToNs } from '../worker-thread.js';
import { executionThreads, type HostedSession } from './execution-threads.js';
import {
  arenaBytesFor,
  type ChannelTensor,
  CONTROL_BYTES,
  CONTROL_FETCH_COUNT,
  CONTROL_FETCHES,
  CONTROL_GROWN,
  CONTROL_RUN_END,
  CONTROL_RUN_START,
  CONTROL_STATE,
  INITIAL_ARENA_BYTES,
  MAX_TENSORS,
  readError,
  readTensors,
  type ReadTensor,
  STATE_DONE,
  STATE_FAILED,
  STATE_IDLE,
  STATE_REQUEST,
  typedArrayOf,
  waitAsync,
  writeTensors,
} from './ort-channel.js';
import { InlineGuard, type InlinePolicy } from './inline-guard.js';
import { holdMappedFeeds } from './mapped-feeds.js';
import { dataTypeOfOrt, ortTypeOf, stringCheckedTensor } from './ort-tensors.js';
import type { SyncSession } from './sync-session.js';

const utf8 = new TextDecoder('utf-8');

function hasBytesInput(request: InferRequest): boolean {
  for (const input of request.inputs) if (Array.isArray(input.data)) return true;
  return false;
}

/** The parts one after the other in a new buffer (offset 0: aligned for any element type). */
function gathered(parts: readonly Uint8Array[]): Uint8Array {
  let byteLength = 0;
  for (const part of parts) byteLength += part.byteLength;
  const out = new Uint8Array(byteLength);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

interface InlineSession {
  readonly session: SyncSession;
  readonly Tensor: typeof OrtTensor;
}

interface RunResult {
  readonly outputs: readonly ReadTensor[];
  /** When session.run started and returned, in epoch milliseconds (for compute statistics). */
  readonly runStartMs: number;
  readonly runEndMs: number;
}

/** One run's feeds and fetches, and what splitting its outputs needs. */
interface RunPlan {
  readonly feeds: readonly ChannelTensor[];
  readonly outputNames: readonly string[];
  readonly inputBytes: number;
  readonly batchSizes: readonly number[];
  /** The outputs each included request asked for, in `included` order. */
  readonly wanted: ReadonlyArray<readonly string[]>;
}

interface Pending {
  readonly resolve: (result: RunResult) => void;
  readonly fail: (error: NereidError) => void;
}

export interface OrtInstanceOptions {
  readonly name: string;
  readonly spec: ModelSpec;
  readonly modelPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
  readonly logger: Logger;
  /** Aborts a start that takes too long (the load timeout): see SupervisedInstance.start. */
  readonly signal?: AbortSignal;
  /** When the model may run on the main thread; default InlineGuard (tests pass their own). */
  readonly inlinePolicy?: InlinePolicy;
  /**
   * Fed by a dynamic batcher: an inline execution starts in the event loop's check phase, not at once,
   * so that the requests arriving in this turn queue behind the busy instance and leave as the next
   * batch, as they would while its execution thread runs (run at once, each request would be an
   * execution of its own).
   */
  readonly isFedByBatcher?: boolean;
}

/**
 * One model instance: an ONNX Runtime session on one of the shared execution threads
 * (execution-threads.ts), supervised by the policy every backend shares (supervised-instance.ts): a
 * thread that dies fails the executions it held and its instances restart. A batch is one session run;
 * requests and replies travel through the instance's control block and arena (ort-channel.ts).
 */
export class OrtInstance implements ModelInstance {
  readonly name: string;
  readonly #options: OrtInstanceOptions;
  readonly #supervisor: SupervisedInstance<SupervisedWorker, Pending>;
  readonly #controlBuffer = new SharedArrayBuffer(CONTROL_BYTES);
  readonly #control = new Int32Array(this.#controlBuffer, 0, CONTROL_RUN_START * 2);
  readonly #times = new Float64Array(this.#controlBuffer);
  #arena = new SharedArrayBuffer(INITIAL_ARENA_BYTES);
  #hosted!: HostedSession;
  #inputIndex = new Map<string, number>();
  #inputNames: readonly string[] = [];
  #outputIndex = new Map<string, number>();
  /** The execution in progress: one at a time, since the arena holds one. */
  #busy: Promise<unknown> | undefined;
  #nextId = 0;
  readonly #guard: InlinePolicy;
  /** The configured outputs, in config order: what a request that names none gets. */
  readonly #configOutputNames: readonly string[];
  /** A second session, on the main thread, for a model whose runs take microseconds (inline-guard.ts). */
  #inline: InlineSession | undefined;
  #isInlineStarted = false;
  #isClosed = false;

  private constructor(options: OrtInstanceOptions) {
    this.name = options.name;
    this.#options = options;
    this.#guard = options.inlinePolicy ?? new InlineGuard();
    this.#configOutputNames = options.spec.outputs.map((output) => output.name);
    this.#supervisor = new SupervisedInstance({
      instanceName: options.name,
      modelName: options.spec.name,
      workerKind: 'worker thread',
      spawn: (events) => this.#spawn(events),
      logger: options.logger,
      logComponent: 'onnxruntime',
    });
  }

  /** Loads the session on an execution thread and resolves once it is ready. */
  static async start(options: OrtInstanceOptions): Promise<OrtInstance> {
    const instance = new OrtInstance(options);
    await instance.#supervisor.start(options.signal);
    return instance;
  }

  get isHealthy(): boolean {
    return this.#supervisor.isHealthy;
  }

  /**
   * NOTE: an execution thread is never terminated while a session runs: stopping it then aborts the
   * whole process (onnxruntime-node throws into the dying environment). `finalize` unloads the session
   * between runs; `kill` (killWorkersForTesting only: this backend sets no execute timeout or health
   * check) ends the whole thread with exit code 1, as a crash would, once the run in progress returns.
   */
  #spawn(events: WorkerEvents): SupervisedWorker {
    Atomics.store(this.#control, CONTROL_STATE, STATE_IDLE);
    this.#control[CONTROL_GROWN] = 0;
    const hosted = executionThreads.load(
      { modelName: this.#options.spec.name, modelPath: this.#options.modelPath, sessionOptions: this.#options.sessionOptions, control: this.#controlBuffer, arena: this.#arena },
      { exited: (description) => events.exited({ description }) },
    );
    this.#hosted = hosted;
    const ready = hosted.ready.then(({ inputNames, outputNames }) => {
      this.#inputNames = inputNames;
      this.#inputIndex = new Map(inputNames.map((name, index) => [name, index]));
      this.#outputIndex = new Map(outputNames.map((name, index) => [name, index]));
    });
    // A failed start is reported to whoever awaits `ready`; keep it from counting as unhandled meanwhile.
    ready.catch(() => {});
    return { ready, kill: () => hosted.kill(), finalize: () => hosted.unload() };
  }

  /**
   * Runs the batch as one session run: each input is gathered from the requests straight into the
   * arena, and each output is copied out of it once, into one buffer split into views per request.
   * A request whose inputs ONNX Runtime cannot take fails alone; a failed run fails the whole batch.
   */
  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    // Schedulers give an instance one batch at a time; anything else waits its turn for the arena.
    while (this.#busy !== undefined) await this.#busy.catch(() => {});
    const executed = this.#execute(requests);
    this.#busy = executed;
    try {
      return await executed;
    } finally {
      if (this.#busy === executed) this.#busy = undefined;
    }
  }

  get canExecuteNow(): boolean {
    return this.#inline !== undefined && this.#busy === undefined && this.#supervisor.unavailable() === undefined;
  }

  /**
   * One request run inline in the caller's step (ModelInstance.executeNow); undefined when it has BYTES
   * inputs (checked in slices that yield) or is larger than what the guard lets run on the main thread.
   */
  executeNow(request: InferRequest): ExecuteResult | undefined {
    const inline = this.#inline;
    if (inline === undefined || !this.canExecuteNow || hasBytesInput(request)) return undefined;
    const startMs = epochMs();
    const plan = this.#plan([request], [0], [request.inputs]);
    if (!this.#guard.allows(plan.inputBytes)) return undefined;
    let result: RunResult;
    try {
      result = this.#runInline(inline, plan.feeds, plan.outputNames);
    } catch (error) {
      if (!(error instanceof NereidError)) throw error;
      return { responses: [error], timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    }
    return this.#finish([0], plan, result, new Array(1), startMs);
  }

  async #execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startMs = epochMs();
    const unavailable = this.#supervisor.unavailable();
    if (unavailable !== undefined) return { responses: requests.map(() => unavailable), timing: { inputNs: 0, inferNs: 0, outputNs: 0 } };
    const responses: Array<readonly Tensor[] | NereidError> = new Array(requests.length);
    const included: number[] = [];
    const feedsByRequest: Array<readonly Tensor[]> = [];
    for (let index = 0; index < requests.length; index++) {
      const request = requests[index]!;
      try {
        // Only BYTES inputs are checked (in slices that yield, see ort-tensors.ts); the rest pass as they are.
        if (hasBytesInput(request)) {
          const checked: Tensor[] = [];
          for (const input of request.inputs) checked.push(await stringCheckedTensor(input));
          feedsByRequest.push(checked);
        } else {
          feedsByRequest.push(request.inputs);
        }
        included.push(index);
      } catch (error) {
        if (!(error instanceof NereidError)) throw error;
        responses[index] = error;
      }
    }
    if (included.length === 0) return { responses, timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    const plan = this.#plan(requests, included, feedsByRequest);
    if (this.#options.isFedByBatcher === true && this.#inline !== undefined && this.#guard.allows(plan.inputBytes)) await untilCheckPhase();
    let result: RunResult;
    try {
      // Checked again after the wait: the guard may have sent the instance back to its thread meanwhile.
      if (this.#inline !== undefined && this.#guard.allows(plan.inputBytes)) {
        result = this.#runInline(this.#inline, plan.feeds, plan.outputNames);
      } else {
        const sentMs = epochMs();
        result = await this.#run(plan.feeds, plan.outputNames);
        const runUs = (result.runEndMs - result.runStartMs) * 1000;
        if (this.#guard.recordThreadRun(runUs, plan.inputBytes, (epochMs() - sentMs) * 1000)) this.#startInline();
      }
    } catch (error) {
      if (!(error instanceof NereidError)) throw error;
      for (const index of included) responses[index] = error;
      return { responses, timing: { inputNs: msToNs(epochMs() - startMs), inferNs: 0, outputNs: 0 } };
    }
    return this.#finish(included, plan, result, responses, startMs);
  }

  /** The run's feeds (the included requests' inputs stacked along the batch dimension) and fetches. */
  #plan(requests: readonly InferRequest[], included: readonly number[], feedsByRequest: ReadonlyArray<readonly Tensor[]>): RunPlan {
    const spec = this.#options.spec;
    const isBatching = spec.maxBatchSize > 0;
    const batchSizes = included.map((index) => batchSizeOf(requests[index]!, isBatching));
    const feeds: ChannelTensor[] = [];
    for (const input of feedsByRequest[0]!) {
      // The batcher batches only requests with the same inputs, possibly listed in another order;
      // stacking along the first dimension is writing each request's data after the previous one's.
      const tensors = feedsByRequest.length === 1 ? [input] : feedsByRequest.map((inputs) => inputs.find((t) => t.name === input.name)!);
      const shape = [...input.shape];
      if (tensors.length > 1) shape[0] = tensors.reduce((sum, tensor) => sum + tensor.shape[0]!, 0);
      const isString = input.dataType === 'BYTES';
      feeds.push({
        nameIndex: this.#inputIndex.get(input.name)!,
        type: ortTypeOf(input.dataType)!,
        dims: backendShape(shape, spec.inputByName.get(input.name)!, isBatching),
        parts: isString ? (tensors.length === 1 ? (input.data as BytesElements) : tensors.flatMap((tensor) => tensor.data as BytesElements)) : tensors.map((tensor) => asBytes(tensor.data as FixedSizeArray)),
        isString,
      });
    }
    const wanted = included.map((index) => requests[index]!.outputs?.map((o) => o.name) ?? this.#configOutputNames);
    const outputNames = wanted.length === 1 ? wanted[0]! : [...new Set(wanted.flat())];
    let inputBytes = 0;
    for (const feed of feeds) for (const part of feed.parts) inputBytes += part.byteLength;
    return { feeds, outputNames, inputBytes, batchSizes, wanted };
  }

  /** Each included request's outputs from the run's, checked against the configuration; the timing of the execution. */
  #finish(
    included: readonly number[],
    plan: RunPlan,
    result: RunResult,
    responses: Array<readonly Tensor[] | NereidError>,
    startMs: number,
  ): ExecuteResult {
    const spec = this.#options.spec;
    const isBatching = spec.maxBatchSize > 0;
    const timing = { inputNs: msToNs(result.runStartMs - startMs), inferNs: msToNs(result.runEndMs - result.runStartMs), outputNs: 0 };
    const pieces = new Map<string, Tensor[]>();
    try {
      for (const [position, name] of plan.outputNames.entries()) {
        const outputSpec = spec.outputByName.get(name)!;
        const output = result.outputs[position]!;
        const tensor: Tensor = { name, dataType: dataTypeOfOrt(output.type) ?? outputSpec.dataType, shape: output.dims, data: output.data as Tensor['data'] };
        checkOutput(spec, tensor, isBatching);
        const shown = outputSpec.reshape === undefined ? tensor : { ...tensor, shape: clientShape(tensor.shape, outputSpec, isBatching) };
        // One request whose output has its batch size takes the output as it is.
        const isWhole = !isBatching || (included.length === 1 && shown.shape[0] === plan.batchSizes[0]);
        pieces.set(name, isWhole ? [shown] : splitBatch(shown, plan.batchSizes));
      }
    } catch (error) {
      // An output that breaks the configuration fails every request of the run that made it.
      if (!(error instanceof NereidError)) throw error;
      for (const index of included) responses[index] = error;
      return { responses, timing: { ...timing, outputNs: msToNs(epochMs() - result.runEndMs) } };
    }
    for (const [position, index] of included.entries()) {
      responses[index] = plan.wanted[position]!.map((name) => pieces.get(name)![position]!);
    }
    timing.outputNs = msToNs(epochMs() - result.runEndMs);
    return { responses, timing };
  }

  /**
   * Runs on the main thread: the request's own typed arrays are the feeds (gathered into one buffer
   * for a batch of several), and ONNX Runtime's outputs are used as they come, with no copy.
   */
  #runInline(inline: InlineSession, feeds: readonly ChannelTensor[], fetches: readonly string[]): RunResult {
    const ortFeeds: Record<string, OrtTensor> = {};
    for (const feed of feeds) {
      let data: unknown;
      if (feed.isString) data = feed.parts.map((element) => utf8.decode(element));
      else if (feed.parts.length === 1) data = typedArrayOf(feed.type, feed.parts[0]!);
      else data = typedArrayOf(feed.type, gathered(feed.parts));
      ortFeeds[this.#inputNames[feed.nameIndex]!] = new inline.Tensor(feed.type, data as never, feed.dims);
    }
    // The run is synchronous (sync-session.ts): its duration is how long the event loop was blocked.
    const runStartMs = epochMs();
    let results: Record<string, OrtTensor>;
    try {
      results = inline.session.run(ortFeeds, fetches);
    } catch (error) {
      throw new NereidError('INTERNAL', `onnxruntime execute failure: ${error instanceof Error ? error.message : String(error)}`);
    }
    const runEndMs = epochMs();
    if (!this.#guard.recordInlineRun((runEndMs - runStartMs) * 1000)) {
      this.#options.logger.info(
        'onnxruntime',
        `${this.#supervisor.label} runs on its execution thread again: its runs grew past what the main thread may spend on them (it comes back once they measure fast there)`,
      );
    }
    const outputs = fetches.map((name): ReadTensor => {
      const value = results[name]!;
      const data = value.type === 'string' ? (value.data as string[]).map((element) => Buffer.from(element, 'utf8') as Uint8Array) : (value.data as ArrayBufferView);
      return { nameIndex: this.#outputIndex.get(name)!, type: value.type, dims: [...value.dims], data };
    });
    return { outputs, runStartMs, runEndMs };
  }

  /**
   * Loads the main thread's session the first time the guard lets the instance run inline. It is kept
   * while the instance is back on its thread (the guard's `allows` decides where each run goes), so a
   * return to the main thread costs no load: it holds a model whose runs take microseconds.
   */
  #startInline(): void {
    if (this.#isInlineStarted) {
      if (this.#inline !== undefined) this.#options.logger.verbose(1, 'onnxruntime', `${this.#supervisor.label} runs on the main thread again: its runs take microseconds`);
      return;
    }
    this.#isInlineStarted = true;
    const options = this.#options;
    Promise.all([import('onnxruntime-node'), import('./sync-session.js')])
      .then(([{ Tensor }, { loadSyncSession }]) => {
        if (this.#isClosed) return;
        // One thread: a pool would add threads to the main thread's process for runs of microseconds.
        const session = loadSyncSession(options.modelPath, { ...options.sessionOptions, intraOpNumThreads: 1, interOpNumThreads: 1 });
        this.#inline = { session, Tensor };
        options.logger.verbose(1, 'onnxruntime', `${this.#supervisor.label} runs on the main thread: its runs take microseconds`);
      })
      .catch((error: unknown) => {
        options.logger.warning('onnxruntime', `${this.#supervisor.label}: cannot load a session on the main thread, so every run stays on its execution thread: ${(error as Error).message}`);
      });
  }

  #stopInline(): void {
    const inline = this.#inline;
    this.#inline = undefined;
    inline?.session.release();
  }

  /**
   * Hands the run to the execution thread and waits, off the event loop, for its reply in shared memory.
   * Inputs in mapped shared memory regions go as addresses: the thread copies them from the regions.
   */
  #run(feeds: readonly ChannelTensor[], fetches: readonly string[]): Promise<RunResult> {
    if (feeds.length > MAX_TENSORS || fetches.length > MAX_TENSORS) {
      throw new NereidError('INVALID_ARG', `model '${this.#options.spec.name}': a run carries at most ${MAX_TENSORS} inputs and ${MAX_TENSORS} outputs`);
    }
    const mapped = holdMappedFeeds(feeds);
    try {
      const needed = arenaBytesFor(mapped.feeds);
      if (needed > this.#arena.byteLength) {
        this.#arena = new SharedArrayBuffer(Math.max(needed, this.#arena.byteLength * 2));
        this.#hosted.replaceArena(this.#arena);
      }
      writeTensors(this.#arena, mapped.feeds);
    } catch (error) {
      mapped.release();
      throw error;
    }
    const control = this.#control;
    control[CONTROL_FETCH_COUNT] = fetches.length;
    for (const [position, name] of fetches.entries()) control[CONTROL_FETCHES + position] = this.#outputIndex.get(name)!;
    const id = this.#nextId++;
    const hosted = this.#hosted;
    return new Promise<RunResult>((resolve, reject) => {
      this.#supervisor.hold(id, { resolve, fail: reject });
      Atomics.store(control, CONTROL_STATE, STATE_REQUEST);
      hosted.ring();
      const settle = (): void => {
        // The thread is done with the run's inputs (or gone): the regions they lie in may be unmapped.
        mapped.release();
        const state = Atomics.load(control, CONTROL_STATE);
        if (control[CONTROL_GROWN] === 1) {
          control[CONTROL_GROWN] = 0;
          this.#arena = hosted.takeGrownArena();
        }
        // Failed meanwhile (the thread died, the instance closed): the supervisor has answered it.
        const pending = this.#supervisor.release(id);
        if (pending === undefined) return;
        if (state === STATE_DONE) {
          const outputs = readTensors(this.#arena);
          const runStartMs = this.#times[CONTROL_RUN_START]!;
          const runEndMs = this.#times[CONTROL_RUN_END]!;
          Atomics.store(control, CONTROL_STATE, STATE_IDLE);
          pending.resolve({ outputs, runStartMs, runEndMs });
        } else if (state === STATE_FAILED) {
          const message = readError(this.#arena);
          Atomics.store(control, CONTROL_STATE, STATE_IDLE);
          pending.fail(new NereidError('INTERNAL', `onnxruntime execute failure: ${message}`));
        }
      };
      const waited = waitAsync(control, CONTROL_STATE, STATE_REQUEST);
      if (waited.async) void waited.value.then(settle);
      else settle();
    });
  }

  /** Unloads the session from its thread (see the NOTE on #spawn). Requests still pending fail now. */
  close(): Promise<void> {
    this.#isClosed = true;
    this.#stopInline();
    return this.#supervisor.close();
  }
}
