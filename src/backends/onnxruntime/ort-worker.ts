/**
 * An execution thread: hosts the ONNX Runtime sessions of many instances and runs their requests one
 * at a time. A run blocks the thread that calls it (sync-session.ts), so sessions run here and the
 * main event loop stays free.
 *
 * The thread sleeps in Atomics.wait on its doorbell; each wake it reads its messages (receiveMessageOnPort:
 * no event-loop turn needed) and runs the sessions on the doorbell's ready list (ort-channel.ts).
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { Tensor as OrtTensor } from 'onnxruntime-node';
import {
  arenaBytesFor,
  BELL_COUNTER,
  BELL_READY_BASE,
  BELL_READY_WRITTEN,
  BELL_SLEEPING,
  type ChannelTensor,
  CONTROL_FETCH_COUNT,
  CONTROL_FETCHES,
  CONTROL_GROWN,
  CONTROL_RUN_END,
  CONTROL_RUN_START,
  CONTROL_STATE,
  type MappedAccess,
  READY_SLOTS,
  readTensors,
  STATE_DONE,
  STATE_FAILED,
  STATE_REQUEST,
  writeError,
  writeTensors,
} from './ort-channel.js';
import type { FromThread, GrownArena, ThreadInit, ToThread } from './ort-messages.js';
import { loadSyncSession, type SyncSession } from './sync-session.js';
import { loadShmAddon } from '../../util/mapped-memory.js';

const init = workerData as ThreadInit;
const bell = new Int32Array(init.bell);
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

interface Hosted {
  readonly id: number;
  readonly session: SyncSession;
  readonly control: Int32Array;
  readonly times: Float64Array;
  arena: SharedArrayBuffer;
  /** Reused for the inputs of every run (ORT refuses SharedArrayBuffer memory). */
  local: ArrayBuffer;
}

const sessions = new Map<number, Hosted>();

function reply(message: FromThread): void {
  parentPort!.postMessage(message);
}

function handle(message: ToThread): void {
  switch (message.type) {
    case 'load': {
      try {
        const session = loadSyncSession(message.modelPath, message.sessionOptions);
        sessions.set(message.session, {
          id: message.session,
          session,
          control: new Int32Array(message.control, 0, CONTROL_RUN_START * 2),
          times: new Float64Array(message.control),
          arena: message.arena,
          local: new ArrayBuffer(1024),
        });
        reply({ type: 'loaded', session: message.session, inputNames: session.inputNames, outputNames: session.outputNames });
      } catch (error) {
        reply({ type: 'load-error', session: message.session, message: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    case 'unload': {
      const hosted = sessions.get(message.session);
      sessions.delete(message.session);
      hosted?.session.release();
      reply({ type: 'unloaded', session: message.session });
      return;
    }
    case 'arena': {
      const hosted = sessions.get(message.session);
      if (hosted !== undefined) hosted.arena = message.arena;
      return;
    }
    case 'exit':
      process.exit(message.code);
  }
}

/** The addon, loaded the first time a run's inputs lie in mapped regions (ort-channel.ts DATA_MAPPED). */
const mappedAccess = (): MappedAccess => loadShmAddon(init.shmAddonPath);

function localBuffer(hosted: Hosted, byteLength: number): ArrayBuffer {
  if (hosted.local.byteLength < byteLength) hosted.local = new ArrayBuffer(Math.max(byteLength, hosted.local.byteLength * 2));
  return hosted.local;
}

function run(hosted: Hosted): void {
  const { session, control, times } = hosted;
  try {
    const feeds: Record<string, OrtTensor> = {};
    for (const input of readTensors(hosted.arena, (byteLength) => localBuffer(hosted, byteLength), mappedAccess)) {
      const data = Array.isArray(input.data) ? input.data.map((element) => utf8Decoder.decode(element)) : input.data;
      feeds[session.inputNames[input.nameIndex]!] = new OrtTensor(input.type, data as never, input.dims);
    }
    const fetches: string[] = [];
    const fetchIndexes = control.subarray(CONTROL_FETCHES, CONTROL_FETCHES + control[CONTROL_FETCH_COUNT]!);
    for (const index of fetchIndexes) fetches.push(session.outputNames[index]!);
    times[CONTROL_RUN_START] = performance.timeOrigin + performance.now();
    const results = session.run(feeds, fetches);
    times[CONTROL_RUN_END] = performance.timeOrigin + performance.now();
    const outputs: ChannelTensor[] = [];
    for (const [position, name] of fetches.entries()) {
      const value = results[name] as OrtTensor;
      const isString = value.type === 'string';
      const data = value.data as ArrayBufferView | string[];
      const parts = isString ? (data as string[]).map((element) => utf8Encoder.encode(element)) : [new Uint8Array((data as ArrayBufferView).buffer, (data as ArrayBufferView).byteOffset, (data as ArrayBufferView).byteLength)];
      outputs.push({ nameIndex: fetchIndexes[position]!, type: value.type, dims: value.dims, parts, isString });
    }
    const needed = arenaBytesFor(outputs);
    if (needed > hosted.arena.byteLength) {
      hosted.arena = new SharedArrayBuffer(Math.max(needed, hosted.arena.byteLength * 2));
      init.arenaPort.postMessage({ session: hosted.id, arena: hosted.arena } satisfies GrownArena);
      control[CONTROL_GROWN] = 1;
    }
    writeTensors(hosted.arena, outputs);
    Atomics.store(control, CONTROL_STATE, STATE_DONE);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    writeError(hosted.arena, message);
    Atomics.store(control, CONTROL_STATE, STATE_FAILED);
  }
  Atomics.notify(control, CONTROL_STATE);
}

function handleMessages(): void {
  for (let received = receiveMessageOnPort(init.controlPort); received !== undefined; received = receiveMessageOnPort(init.controlPort)) {
    handle(received.message as ToThread);
  }
}

/** The thread's own event loop turns at most every TURN_EVERY_MS, between runs. */
const TURN_EVERY_MS = 5;
let lastTurnMs = performance.now();

/** Runs `hosted` if its control block holds a request; an unload or an exit waits for one run at most, not for every session's. */
function runIfRequested(hosted: Hosted | undefined): void {
  if (hosted === undefined || Atomics.load(hosted.control, CONTROL_STATE) !== STATE_REQUEST) return;
  run(hosted);
  handleMessages();
}

/** How many ready-list entries this thread has read (wrapping, as BELL_READY_WRITTEN). */
let readyRead = 0;

for (;;) {
  const seen = Atomics.load(bell, BELL_COUNTER);
  handleMessages();
  const readyWritten = Atomics.load(bell, BELL_READY_WRITTEN);
  if (((readyWritten - readyRead) | 0) > READY_SLOTS) {
    readyRead = readyWritten;
    for (const hosted of sessions.values()) runIfRequested(hosted);
  } else {
    for (; readyRead !== readyWritten; readyRead = (readyRead + 1) | 0) runIfRequested(sessions.get(bell[BELL_READY_BASE + (readyRead & (READY_SLOTS - 1))]!));
  }
  // NOTE: runs and messages are handled without an event-loop turn (nothing above awaits a
  // macrotask: a turn per run cost a setImmediate each), but native finalizers and the worker's own
  // handles still need turns now and then; a request that arrives meanwhile bumps the counter read
  // above, so it is not slept through.
  if (performance.now() - lastTurnMs >= TURN_EVERY_MS) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    lastTurnMs = performance.now();
  }
  Atomics.store(bell, BELL_SLEEPING, 1);
  Atomics.wait(bell, BELL_COUNTER, seen);
  Atomics.store(bell, BELL_SLEEPING, 0);
}
