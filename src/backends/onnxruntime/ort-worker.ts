/**
 * One ONNX Runtime session in its own thread. NOTE: onnxruntime-node's `session.run()` blocks the
 * thread that calls it (the promise only wraps a synchronous native call), so every instance runs
 * here and the main event loop stays free.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
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
    if (!Array.isArray(tensor.data) && tensor.data.buffer instanceof ArrayBuffer) buffers.push(tensor.data.buffer);
  }
  return buffers;
}

async function run(session: InferenceSession, message: RunMessage): Promise<void> {
  try {
    const feeds: Record<string, OrtTensor> = {};
    for (const feed of message.feeds) {
      feeds[feed.name] = new OrtTensor(feed.type, feed.data as never, feed.dims);
    }
    const runStartMs = performance.timeOrigin + performance.now();
    const results = await session.run(feeds, [...message.fetches]);
    const runEndMs = performance.timeOrigin + performance.now();
    const outputs: WorkerTensor[] = message.fetches.map((name) => {
      const value = results[name] as OrtTensor;
      return { name, type: value.type, dims: value.dims, data: value.data };
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
