import { EventEmitter } from 'node:events';
import type { JsWorkerInit, ToWorker } from './js-messages.js';
import { hostModel } from './js-model-host.js';

/** What an instance talks to: its worker thread, or an InlineThread (both emit 'message', 'error' and 'exit'). */
export interface ModelThread extends EventEmitter {
  postMessage(message: ToWorker, transfer?: ArrayBuffer[]): void;
  terminate(): unknown;
}

/** Makes each inline start's model import its own (see hostModel's `query`). */
let starts = 0;

/**
 * A JavaScript model run on the main thread (config parameter `run_inline`), behind the interface
 * of its worker thread: the same host, messages handed over as they are (no structured clone, no
 * thread wake-up), later rather than at once, so that both sides see them in order and never
 * re-entrantly.
 * What crosses is never shared: both sides already send fresh copies of every tensor (js-wire.ts,
 * model-tensors.ts), which a transfer list would have moved.
 * NOTE: the model's code then runs on the event loop: an `execute` that computes long holds every
 * other request meanwhile, and a terminated instance cannot stop code that is still running (its
 * late messages are dropped). Meant for models that compute in microseconds and await the rest.
 */
export class InlineThread extends EventEmitter implements ModelThread {
  #toHost: ((message: ToWorker) => void) | undefined;
  readonly #queue: ToWorker[] = [];
  #isDrainScheduled = false;
  #isStopped = false;

  constructor(init: JsWorkerInit) {
    super();
    hostModel(
      init,
      {
        post: (message) => {
          if (!this.#isStopped) queueMicrotask(() => this.emit('message', message));
        },
        listen: (handler) => {
          this.#toHost = handler;
        },
        exit: (code) => this.#stop(code),
      },
      `?nereid-inline=${++starts}`,
    );
  }

  /**
   * Messages reach the host in the order they were posted. An execution starts on the next turn of
   * the event loop: the instance stays busy until then, so the requests that arrive in this turn queue
   * behind it and leave as one batch, as they would while a worker thread wakes up (run at once, each
   * request would be an execution of its own). What follows an execution waits with it.
   */
  postMessage(message: ToWorker): void {
    if (this.#isStopped || this.#toHost === undefined) return;
    this.#queue.push(message);
    if (this.#isDrainScheduled) return;
    this.#isDrainScheduled = true;
    if (message.type === 'execute') setImmediate(() => this.#drain(true));
    else queueMicrotask(() => this.#drain(false));
  }

  #drain(isNextTurn: boolean): void {
    this.#isDrainScheduled = false;
    // A terminated host is sent nothing more.
    if (this.#isStopped) this.#queue.length = 0;
    while (this.#queue.length > 0) {
      if (this.#queue[0]!.type === 'execute' && !isNextTurn) {
        this.#isDrainScheduled = true;
        setImmediate(() => this.#drain(true));
        return;
      }
      this.#toHost!(this.#queue.shift()!);
    }
  }

  terminate(): Promise<number> {
    this.#stop(1);
    return Promise.resolve(1);
  }

  /** Stops taking messages; 'exit' follows the messages already on their way, as a worker's does. */
  #stop(code: number): void {
    if (this.#isStopped) return;
    this.#isStopped = true;
    setImmediate(() => this.emit('exit', code));
  }
}
