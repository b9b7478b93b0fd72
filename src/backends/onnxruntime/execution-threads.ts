import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';
import { BELL_BYTES, BELL_COUNTER, BELL_READY_BASE, BELL_READY_WRITTEN, BELL_SLEEPING, CONTROL_STATE, READY_SLOTS, STATE_GONE } from './ort-channel.js';
import type { FromThread, GrownArena, ThreadInit, ToThread } from './ort-messages.js';
import { startWorker, workerUrl } from '../worker-thread.js';
import { SHM_ADDON_PATH } from '../../util/mapped-memory.js';

const WORKER_URL = workerUrl('./ort-worker', import.meta.url);

/** What a hosted session reports to its instance. */
export interface SessionEvents {
  /** Once: the thread died (a crash, or killed), or the session was unloaded. */
  exited(description: string): void;
}

export interface SessionLoad {
  /** The instances of one model are spread over different threads, so that they run at once. */
  readonly modelName: string;
  readonly modelPath: string;
  readonly sessionOptions: InferenceSession.SessionOptions;
  /** The session's control block and first arena (ort-channel.ts). */
  readonly control: SharedArrayBuffer;
  readonly arena: SharedArrayBuffer;
}

/** One session on an execution thread, as its instance holds it. */
export interface HostedSession {
  /** Resolves with the graph's input and output names once loaded; rejects with why it could not load. */
  readonly ready: Promise<{ readonly inputNames: readonly string[]; readonly outputNames: readonly string[] }>;
  /** Hands the request now in the control block and arena to the thread. */
  ring(): void;
  /** Gives the thread a larger arena for this session (before the request that needs it). */
  replaceArena(arena: SharedArrayBuffer): void;
  /** The arena the thread grew for the reply now in it (CONTROL_GROWN). */
  takeGrownArena(): SharedArrayBuffer;
  /** Releases the session on its thread; resolves once done. A thread left without sessions exits. */
  unload(): Promise<void>;
  /** Ends the whole thread as a crash would, after the run in progress: every session on it exits (killWorkersForTesting). */
  kill(): void;
}

interface Guest {
  readonly modelName: string;
  readonly control: Int32Array;
  readonly events: SessionEvents;
  readonly loaded: (names: { inputNames: readonly string[]; outputNames: readonly string[] }) => void;
  readonly failed: (error: Error) => void;
  unloaded?: () => void;
}

/** One execution thread and the sessions it hosts. */
class ExecutionThread {
  readonly guests = new Map<number, Guest>();
  readonly #worker: Worker;
  readonly #bell: Int32Array;
  readonly #controlPort: MessagePort;
  readonly #arenaPort: MessagePort;
  readonly #grown = new Map<number, SharedArrayBuffer>();
  #isExiting = false;
  #isGone = false;

  constructor(onGone: (thread: ExecutionThread) => void) {
    const bell = new SharedArrayBuffer(BELL_BYTES);
    const control = new MessageChannel();
    const arenas = new MessageChannel();
    this.#bell = new Int32Array(bell);
    this.#controlPort = control.port1;
    this.#arenaPort = arenas.port1;
    this.#worker = startWorker(WORKER_URL, { bell, controlPort: control.port2, arenaPort: arenas.port2, shmAddonPath: SHM_ADDON_PATH } satisfies ThreadInit, [control.port2, arenas.port2]);
    let crash: string | undefined;
    this.#worker.on('message', (message: FromThread) => this.#onMessage(message));
    this.#worker.on('error', (error) => {
      crash = error.stack ?? error.message;
    });
    this.#worker.on('exit', (code) => {
      this.#isGone = true;
      this.#controlPort.close();
      this.#arenaPort.close();
      onGone(this);
      const description = `exited with code ${code}${crash !== undefined ? ` (uncaught error: ${crash.split('\n')[0]})` : ''}`;
      for (const guest of this.guests.values()) {
        Atomics.store(guest.control, CONTROL_STATE, STATE_GONE);
        Atomics.notify(guest.control, CONTROL_STATE);
        guest.failed(new Error(`the worker thread ${description} before the model was loaded`));
        if (guest.unloaded !== undefined) guest.unloaded();
        else guest.events.exited(description);
      }
      this.guests.clear();
    });
  }

  /** Retired or dead: takes no new sessions. */
  get isExiting(): boolean {
    return this.#isExiting || this.#isGone;
  }

  sessionsOf(modelName: string): number {
    let count = 0;
    for (const guest of this.guests.values()) if (guest.modelName === modelName) count++;
    return count;
  }

  post(message: ToThread, transfer: readonly SharedArrayBuffer[] = []): void {
    this.#controlPort.postMessage(message, transfer as never);
    this.ring();
  }

  /** Puts `session` on the ready list (its control block holds a request) and rings. */
  ringFor(session: number): void {
    const written = this.#bell[BELL_READY_WRITTEN]!;
    this.#bell[BELL_READY_BASE + (written & (READY_SLOTS - 1))] = session;
    Atomics.store(this.#bell, BELL_READY_WRITTEN, (written + 1) | 0);
    this.ring();
  }

  ring(): void {
    Atomics.add(this.#bell, BELL_COUNTER, 1);
    if (Atomics.load(this.#bell, BELL_SLEEPING) === 1) Atomics.notify(this.#bell, BELL_COUNTER);
  }

  takeGrownArena(session: number): SharedArrayBuffer {
    for (let received = receiveMessageOnPort(this.#arenaPort); received !== undefined; received = receiveMessageOnPort(this.#arenaPort)) {
      const grown = received.message as GrownArena;
      this.#grown.set(grown.session, grown.arena);
    }
    const arena = this.#grown.get(session)!;
    this.#grown.delete(session);
    return arena;
  }

  /** Asks a thread without sessions to exit; it takes no new ones. */
  retire(): void {
    this.#isExiting = true;
    this.post({ type: 'exit', code: 0 });
  }

  /**
   * Ends the thread as a crash would, once the run in progress (if any) returns: terminating it in
   * the middle of a run would abort the process (see OrtInstance's NOTE).
   */
  crash(): void {
    this.post({ type: 'exit', code: 1 });
  }

  #onMessage(message: FromThread): void {
    const guest = this.guests.get(message.session);
    if (guest === undefined) return;
    if (message.type === 'loaded') guest.loaded(message);
    else if (message.type === 'load-error') {
      this.guests.delete(message.session);
      guest.failed(new Error(`ONNX Runtime cannot load the model: ${message.message}`));
      // The session is gone as a worker would be; reported after `ready` has rejected, so that the
      // supervisor names the load error rather than an exit.
      setImmediate(() => guest.events.exited('could not load the model'));
    } else {
      this.guests.delete(message.session);
      guest.unloaded?.();
    }
  }
}

/**
 * The execution threads every ONNX Runtime instance of the process shares (issue 19, item 1): up to
 * `count` threads, each hosting many sessions, in place of one thread (and one JavaScript heap) per
 * instance. Threads start when a session needs one and exit when their last session is unloaded.
 * A model's instances go to the threads holding the fewest of its sessions, then the fewest sessions.
 */
export class ExecutionThreads {
  #count: number;
  readonly #threads: Array<ExecutionThread | undefined> = [];
  #nextSession = 0;

  constructor(count: number) {
    this.#count = Math.max(1, count);
  }

  /** The most threads; sessions already placed stay where they are. */
  set count(count: number) {
    this.#count = Math.max(1, count);
  }

  load(load: SessionLoad, events: SessionEvents): HostedSession {
    const index = this.#place(load.modelName);
    const thread = this.#threads[index] ?? this.#start(index);
    const session = this.#nextSession++;
    let resolveReady!: (names: { inputNames: readonly string[]; outputNames: readonly string[] }) => void;
    let rejectReady!: (error: Error) => void;
    const ready = new Promise<{ inputNames: readonly string[]; outputNames: readonly string[] }>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    const guest: Guest = { modelName: load.modelName, control: new Int32Array(load.control), events, loaded: resolveReady, failed: rejectReady };
    thread.guests.set(session, guest);
    thread.post({ type: 'load', session, modelPath: load.modelPath, sessionOptions: load.sessionOptions, control: load.control, arena: load.arena });
    ready.catch(() => {
      // The instance learns of a failed load from `ready`; the thread may have no session left.
      this.#retireIfIdle(thread);
    });
    return {
      ready,
      ring: () => thread.ringFor(session),
      replaceArena: (arena) => thread.post({ type: 'arena', session, arena }),
      takeGrownArena: () => thread.takeGrownArena(session),
      unload: () =>
        new Promise<void>((resolve) => {
          if (!thread.guests.has(session)) {
            resolve();
            return;
          }
          guest.unloaded = () => {
            Atomics.store(guest.control, CONTROL_STATE, STATE_GONE);
            Atomics.notify(guest.control, CONTROL_STATE);
            resolve();
            events.exited('was stopped');
            this.#retireIfIdle(thread);
          };
          thread.post({ type: 'unload', session });
        }),
      kill: () => thread.crash(),
    };
  }

  #place(modelName: string): number {
    let best = 0;
    let bestKey = [Infinity, Infinity];
    for (let index = 0; index < this.#count; index++) {
      const thread = this.#threads[index];
      const key = thread === undefined ? [0, 0] : [thread.sessionsOf(modelName), thread.guests.size];
      if (key[0]! < bestKey[0]! || (key[0] === bestKey[0] && key[1]! < bestKey[1]!)) {
        best = index;
        bestKey = key;
      }
    }
    return best;
  }

  #start(index: number): ExecutionThread {
    const thread = new ExecutionThread((gone) => {
      if (this.#threads[index] === gone) this.#threads[index] = undefined;
    });
    this.#threads[index] = thread;
    return thread;
  }

  #retireIfIdle(thread: ExecutionThread): void {
    if (thread.guests.size > 0 || thread.isExiting) return;
    const index = this.#threads.indexOf(thread);
    if (index !== -1) this.#threads[index] = undefined;
    thread.retire();
  }
}

/** Cores' worth of execution threads by default (`--backend-config=onnxruntime,execution-thread-count=N`). */
export const executionThreads = new ExecutionThreads(1);
