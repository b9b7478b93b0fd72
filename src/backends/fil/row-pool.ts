import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../logging/logger.js';
import { startWorker, workerUrl } from '../worker-thread.js';
import type { Forest } from './forest.js';
import type { FilSettings } from './fil-settings.js';
import type { RowResult, RowTask, RowWorkerInit } from './row-messages.js';

const WORKER_URL = workerUrl('./row-worker', import.meta.url);

export interface RowPoolOptions {
  readonly label: string;
  readonly forest: Forest;
  readonly settings: FilSettings;
  readonly hasShap: boolean;
  readonly threadCount: number;
  readonly logger: Logger;
}

interface Slice {
  readonly output: Float32Array;
  readonly contributions?: Float32Array;
}

/**
 * Worker threads that evaluate a large batch together: its rows are cut into one slice per thread,
 * each evaluated by the same code as on the main thread (fil-outputs.ts, tree-shap.ts), and the
 * results joined in row order. The workers start with the first batch that needs them (most models
 * never get one), and the forest is copied into each once.
 *
 * A pool whose worker fails is closed for good (`isUsable` false) after saying so in the log; the
 * instance then evaluates on the main thread, so a worker failure costs speed, never a request.
 */
export class RowPool {
  readonly #options: RowPoolOptions;
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, { resolve: (result: RowResult) => void; reject: (error: Error) => void }>();
  #nextId = 0;
  #isUsable = true;

  constructor(options: RowPoolOptions) {
    this.#options = options;
  }

  #start(): void {
    const options = this.#options;
    const init: RowWorkerInit = { forest: options.forest, settings: options.settings, hasShap: options.hasShap };
    for (let index = 0; index < options.threadCount; index++) {
      const worker = startWorker(WORKER_URL, init);
      worker.on('message', (result: RowResult) => {
        worker.unref();
        const pending = this.#pending.get(result.id);
        this.#pending.delete(result.id);
        pending?.resolve(result);
      });
      worker.on('error', (error) => this.#fail(`failed: ${error.message}`));
      worker.on('exit', (code) => this.#fail(`exited with code ${code}`));
      // NOTE: referenced only while it holds a slice, so that an idle pool never keeps the process alive.
      worker.unref();
      this.#workers.push(worker);
    }
  }

  get isUsable(): boolean {
    return this.#isUsable;
  }

  #fail(what: string): void {
    if (!this.#isUsable) return;
    this.#isUsable = false;
    this.#options.logger.error('fil', `${this.#options.label}: a row worker thread ${what}; large batches are evaluated on the main thread from now on`);
    for (const pending of this.#pending.values()) pending.reject(new Error(`a row worker thread ${what}`));
    this.#pending.clear();
    for (const worker of this.#workers) void worker.terminate();
  }

  /** The outputs of `rows` rows, row-major: output__0 and, when asked, the SHAP contributions. */
  async run(input: Float32Array, rows: number, wantsShap: boolean): Promise<Slice> {
    if (this.#workers.length === 0) this.#start();
    const features = this.#options.forest.numFeatures;
    const count = Math.min(this.#options.threadCount, rows);
    const slices = await Promise.all(
      Array.from({ length: count }, (_, index) => {
        const start = Math.floor((rows * index) / count);
        const end = Math.floor((rows * (index + 1)) / count);
        const task: RowTask = { id: this.#nextId++, input: input.slice(start * features, end * features), rows: end - start, wantsShap };
        return new Promise<RowResult>((resolve, reject) => {
          this.#pending.set(task.id, { resolve, reject });
          const worker = this.#workers[index]!;
          worker.ref();
          worker.postMessage(task, [task.input.buffer as ArrayBuffer]);
        });
      }),
    );
    const join = (parts: Array<Float32Array | undefined>): Float32Array => {
      const out = new Float32Array(parts.reduce((sum, part) => sum + part!.length, 0));
      let offset = 0;
      for (const part of parts) {
        out.set(part!, offset);
        offset += part!.length;
      }
      return out;
    };
    const output = join(slices.map((slice) => slice.output));
    return wantsShap ? { output, contributions: join(slices.map((slice) => slice.contributions)) } : { output };
  }

  async close(): Promise<void> {
    this.#isUsable = false;
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}
