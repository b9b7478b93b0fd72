/**
 * One ONNX Runtime session in its own thread. NOTE: onnxruntime-node's `session.run()` blocks the
 * thread that calls it (the promise only wraps a synchronous native call), so every instance runs
 * here and the main event loop stays free.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { deserializeBytes } from '../../protocol/tensor-data.js';
import type { CloseMessage, RunMessage, WorkerInit, WorkerReply, WorkerTensor } from './ort-messages.js';

const port = parentPort;
if (port === null) throw new Error('ort-worker.ts must run in a worker thread');
const init = workerData as WorkerInit;

function reply(message: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

function transferables(tensors: readonly WorkerTensor[]): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  for (const tensor of tensors) {
    if (tensor.data.buffer instanceof ArrayBuffer) buffers.push(tensor.data.buffer);
  }
  return buffers;
}

const utf8 = new TextDecoder('utf-8');

/** A string feed's strings, from the serialized bytes the main thread sent (checked there: UTF-8, no NUL). */
function feedStrings(bytes: Uint8Array): string[] {
  const elements = deserializeBytes(bytes);
  if (typeof elements === 'string') throw new Error(`a string input arrived malformed: ${elements}`);
  return elements.map((element) => (element.byteLength === 0 ? '' : utf8.decode(element)));
}

/** A string output's strings in Triton's serialized BYTES layout, in a buffer of their own. */
function serializeStrings(strings: readonly string[]): Uint8Array {
  let total = 0;
  for (const text of strings) total += 4 + Buffer.byteLength(text, 'utf8');
  const out = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  for (const text of strings) {
    const written = out.write(text, offset + 4, 'utf8');
    out.writeUInt32LE(written, offset);
    offset += 4 + written;
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

async function run(session: InferenceSession, message: RunMessage): Promise<void> {
  try {
    const feeds: Record<string, OrtTensor> = {};
    for (const feed of message.feeds) {
      const data = feed.type === 'string' ? feedStrings(feed.data as Uint8Array) : feed.data;
      feeds[feed.name] = new OrtTensor(feed.type, data as never, feed.dims);
    }
    const runStartMs = performance.timeOrigin + performance.now();
    const results = await session.run(feeds, [...message.fetches]);
    const runEndMs = performance.timeOrigin + performance.now();
    const outputs: WorkerTensor[] = message.fetches.map((name) => {
      const value = results[name] as OrtTensor;
      const data = value.type === 'string' ? serializeStrings(value.data as string[]) : (value.data as WorkerTensor['data']);
      return { name, type: value.type, dims: value.dims, data };
    });
    reply({ type: 'result', id: message.id, outputs, runStartMs, runEndMs }, transferables(outputs));
  } catch (error) {
    reply({ type: 'run-error', id: message.id, message: error instanceof Error ? error.message : String(error) });
  }
}

let session: InferenceSession;
try {
  session = await InferenceSession.create(init.modelPath, init.sessionOptions);
  reply({ type: 'ready' });
} catch (error) {
  reply({ type: 'load-error', message: error instanceof Error ? error.message : String(error) });
  process.exit(0);
}

let queue = Promise.resolve();
let isClosing = false;
port.on('message', (message: RunMessage | CloseMessage) => {
  if (message.type === 'close') {
    isClosing = true;
    queue = queue.then(() => process.exit(0));
    return;
  }
  queue = queue.then(() => (isClosing ? undefined : run(session, message)));
});
