/** The worker thread a JavaScript model instance runs in: the model host behind the thread's port. */
import { parentPort, workerData } from 'node:worker_threads';
import type { JsWorkerInit, ToWorker } from './js-messages.js';
import { hostModel } from './js-model-host.js';

const port = parentPort;
if (port === null) throw new Error('js-worker.ts must run in a worker thread');

hostModel(workerData as JsWorkerInit, {
  post: (message, transfer) => port.postMessage(message, transfer),
  listen: (handler) => port.on('message', (message: ToWorker) => handler(message)),
  exit: (code) => process.exit(code),
});
