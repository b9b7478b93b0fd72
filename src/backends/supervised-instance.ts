/**
 * The supervision every backend's instance gets: one worker (a thread or a process) that runs the
 * model, watched and replaced by one policy, so that the same failure looks the same in every backend.
 *
 *                start() ok                       worker exits / errors
 *   STARTING ──────────────▶ HEALTHY ─────────────────────────────────▶ RESTARTING ──┐
 *      │                       ▲     ─── execute timeout: kill ──────▶     │   ▲     │ restart failed:
 *      │ start() fails         └──────────── restart ok ────────────────────┘   └─────┘ wait 1 s, 2 s … 30 s
 *      ▼                                                                         │
 *   (load fails)             close() from any state ──▶ CLOSED ◀──────────────────┘
 *
 * - A crash is a worker that exits or errors after it was ready. The executions it held fail, the
 *   instance is unhealthy (its model reports not ready), and a new worker is started at once; a
 *   restart that fails is tried again after 1 s, doubling up to 30 s (the Python backend's policy).
 * - Executions given to an unhealthy instance fail at once with UNAVAILABLE, as Triton answers for
 *   an unhealthy Python stub.
 * - An execute timeout (a backend's config parameter, such as the JavaScript backend's
 *   `execute_timeout_ms`) fails the executions held, then kills the worker, which restarts as after
 *   a crash.
 * - A health check (a backend's config parameter, such as the Python backend's `STUB_TIMEOUT_SECONDS`)
 *   pings a ready worker every quarter of its timeout; one that answers none for the timeout is killed
 *   as hung, a crash whose exit says so.
 * - close() fails the executions held and lets the worker finalize; a worker still starting
 *   finalizes once it is ready. How a worker finalizes is its own (SupervisedWorker.finalize).
 * - A worker that exits or errors before it is ready fails start() at once, naming the exit.
 * - start(signal): when the signal aborts first (the load timeout), start() rejects with its reason
 *   and the instance closes: a worker that may be killed while starting is killed and start()
 *   resolves its exit first; any other is finalized once it is ready.
 *
 * One status for one failure, in every backend (`label` is `instance '<instance>' of model '<model>'`):
 *
 * | failure                                  | status      | message                                                                               |
 * |------------------------------------------|-------------|---------------------------------------------------------------------------------------|
 * | the model fails to initialize            | INVALID_ARG | `<label>: <cause>` (the load fails)                                                    |
 * | the worker dies while holding a request  | INTERNAL    | `<label>: the <worker> <exit> while running the request`                              |
 * | a request reaches an unhealthy instance  | UNAVAILABLE | `<label> is restarting: its <worker> <exit>; the model reports not ready until it is back` |
 * | an execution runs past its timeout       | UNAVAILABLE | `<label> did not finish executing within <ms> ms (config parameter <name>); the instance is restarted` |
 * | the instance is closed under a request   | UNAVAILABLE | `<label> was stopped before the request finished`                                     |
 */
import { NereidError } from '../kernel/errors.js';
import type { Logger } from '../logging/logger.js';
import { abortable } from '../util/abortable.js';
import { deferred } from '../util/deferred.js';

/** How a worker ended, in words that follow "the <worker>": "exited with code 3", "was killed by signal SIGKILL". */
export interface WorkerExit {
  readonly description: string;
}

/** What a worker reports to its supervisor. */
export interface WorkerEvents {
  /** Once, when the worker has exited, whatever the reason (crash, kill, finalize, failed start). */
  exited(exit: WorkerExit): void;
  /** The worker answered a health check (`ping`). */
  answered(): void;
}

/** What a backend's worker offers its supervisor. */
export interface SupervisedWorker {
  /**
   * Settles once: resolves when the model is initialized and the worker takes executions; rejects
   * with an Error whose message says why it could not start (the worker is then gone or going).
   */
  readonly ready: Promise<void>;
  /** Stops the worker at once (it timed out or hung); its exit follows. */
  kill(): void;
  /** Asks the worker to finalize the model and exit; resolves once it has exited. */
  finalize(): Promise<void>;
  /** Sends a health check, answered through `WorkerEvents.answered` (needed with a `healthCheck`). */
  ping?(): void;
}

/** An execution a worker holds: failed by the supervisor if the worker dies or times out. */
export interface HeldExecution {
  fail(error: NereidError): void;
}

export interface SupervisedInstanceOptions<W extends SupervisedWorker> {
  readonly instanceName: string;
  readonly modelName: string;
  /** What the worker is, for messages: 'worker thread', 'Python process'. */
  readonly workerKind: string;
  /** Starts a new worker, which reports to `events`. */
  readonly spawn: (events: WorkerEvents) => W;
  readonly logger: Logger;
  /** The component log lines name: the backend. */
  readonly logComponent: string;
  /** An execution held longer fails and the worker is replaced; absent or 0: no limit. */
  readonly executeTimeout?: { readonly ms: number; readonly parameter: string };
  /** A ready worker that answers no health check for this long is killed as hung; absent: no checks. */
  readonly healthCheck?: { readonly timeoutMs: number };
  /**
   * Whether `kill()` is safe while the model is still initializing, to stop a start that was
   * aborted (a worker thread blocked in native code is not: see OrtInstance). Default false.
   */
  readonly isKillableWhileStarting?: boolean;
}

/*
 * NOTE: the timers here are Node's own (tests drive them with node:test's mock timers), not the
 * schedulers' injectable Clock: the execute timeout is armed for every execution and must cost no
 * more than one setTimeout, and the health-check interval is unref'd so that it never keeps the
 * process alive, which the Clock's timers do not offer.
 */

/** Waits between failed restarts: 1 s, doubling up to 30 s. */
const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;

type State = 'starting' | 'healthy' | 'restarting' | 'closed';

/** Live instances, for killWorkersForTesting only. */
const liveInstances = new Set<{ readonly label: string; killForTesting(): Promise<void> }>();

/**
 * One instance's worker under the policy above. The backend's ModelInstance owns one, gives each
 * execution to `worker` after `unavailable()` said none, and holds it with `hold` until its answer
 * comes (`release`).
 */
export class SupervisedInstance<W extends SupervisedWorker, H extends HeldExecution = HeldExecution> {
  readonly label: string;
  readonly #options: SupervisedInstanceOptions<W>;
  readonly #held = new Map<number, H>();
  readonly #timers = new Map<number, NodeJS.Timeout>();
  readonly #timeoutMs: number;
  #state: State = 'starting';
  #worker!: W;
  #isWorkerAlive = false;
  #workerExited: Promise<void> = Promise.resolve();
  /** Why the last worker stopped, for the unhealthy answer. */
  #lastExit = '';
  /** Set when the supervisor killed the worker, to say why in place of its exit. */
  #killReason: string | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #healthTimer: NodeJS.Timeout | undefined;
  /** Health checks in a row that the worker has not answered. */
  #unansweredChecks = 0;

  constructor(options: SupervisedInstanceOptions<W>) {
    this.#options = options;
    this.#timeoutMs = options.executeTimeout?.ms ?? 0;
    this.label = `instance '${options.instanceName}' of model '${options.modelName}'`;
  }

  /**
   * Starts the first worker; rejects with the INVALID_ARG load error when the model cannot initialize,
   * or with the signal's reason when it aborts first (the instance is then closed, see above).
   */
  async start(signal?: AbortSignal): Promise<void> {
    const launched = this.#launch();
    try {
      await abortable(launched, signal);
    } catch (error) {
      if (signal?.aborted !== true) throw error;
      launched.catch(() => {});
      const closed = this.close();
      if (this.#options.isKillableWhileStarting !== true) {
        closed.catch(() => {});
        throw error;
      }
      this.#worker.kill();
      await closed;
      throw error;
    }
    liveInstances.add(this);
  }

  get isHealthy(): boolean {
    return this.#state === 'healthy';
  }

  /** The current worker; give it an execution only when `unavailable()` returned undefined. */
  get worker(): W {
    return this.#worker;
  }

  /** Undefined while healthy; else the UNAVAILABLE error to answer a new execution with. */
  unavailable(): NereidError | undefined {
    if (this.#state === 'healthy') return undefined;
    const cause = this.#state === 'restarting' ? `is restarting: its ${this.#options.workerKind} ${this.#lastExit}` : 'is stopping';
    return new NereidError('UNAVAILABLE', `${this.label} ${cause}; the model reports not ready until it is back`);
  }

  /** Records an execution the worker now holds, under the execute timeout if there is one. */
  hold(id: number, execution: H): void {
    this.#held.set(id, execution);
    if (this.#timeoutMs > 0) this.#timers.set(id, setTimeout(() => this.#timeOut(id), this.#timeoutMs));
  }

  /** The held execution `id` (its answer came), no longer held; undefined if it was failed meanwhile. */
  release(id: number): H | undefined {
    const execution = this.#held.get(id);
    if (execution === undefined) return undefined;
    this.#held.delete(id);
    if (this.#timeoutMs > 0) {
      clearTimeout(this.#timers.get(id));
      this.#timers.delete(id);
    }
    return execution;
  }

  /** The held execution `id`, still held (a decoupled model's response on its way). */
  peek(id: number): H | undefined {
    return this.#held.get(id);
  }

  /** Fails what the worker holds and lets it finalize; resolves once it has exited. */
  async close(): Promise<void> {
    const wasStarting = this.#state === 'starting' || this.#state === 'restarting';
    this.#state = 'closed';
    liveInstances.delete(this);
    clearTimeout(this.#restartTimer);
    clearInterval(this.#healthTimer);
    this.#failHeld(new NereidError('UNAVAILABLE', `${this.label} was stopped before the request finished`));
    // A worker still starting is finalized once ready (#launch); one that failed to start is gone.
    if (this.#isWorkerAlive && !wasStarting) await this.#worker.finalize();
    await this.#workerExited;
  }

  /** Kills the worker now, as a crash would (test-only: see killWorkersForTesting). */
  killForTesting(): Promise<void> {
    const exited = this.#workerExited;
    this.#worker.kill();
    return exited;
  }

  #launch(): Promise<void> {
    const workerExited = deferred();
    this.#workerExited = workerExited.promise;
    this.#isWorkerAlive = true;
    this.#killReason = undefined;
    let isReady = false;
    // A backend's `ready` rejects when its worker dies starting; this makes sure of it for every backend.
    const exitedStarting = deferred();
    exitedStarting.promise.catch(() => {});
    const worker: W = this.#options.spawn({
      exited: (exit) => {
        if (worker === this.#worker) this.#isWorkerAlive = false;
        workerExited.resolve();
        if (isReady) this.#onExit(worker, exit);
        else exitedStarting.reject(new Error(`the ${this.#options.workerKind} ${exit.description} before the model was ready`));
      },
      answered: () => {
        if (worker === this.#worker) this.#unansweredChecks = 0;
      },
    });
    this.#worker = worker;
    return Promise.race([worker.ready, exitedStarting.promise]).then(
      () => {
        isReady = true;
        if (this.#state === 'closed') {
          void worker.finalize();
          return;
        }
        this.#state = 'healthy';
        this.#startHealthChecks();
      },
      (error: Error) => {
        throw new NereidError('INVALID_ARG', `${this.label}: ${error.message}`, { cause: error });
      },
    );
  }

  /**
   * Pings the worker every quarter of the timeout; four unanswered in a row (the timeout, give or
   * take a quarter) mean it is hung. Checks start once the worker is ready, so a slow start is never cut short.
   */
  #startHealthChecks(): void {
    const timeoutMs = this.#options.healthCheck?.timeoutMs;
    if (timeoutMs === undefined) return;
    this.#unansweredChecks = 0;
    const worker = this.#worker;
    this.#healthTimer = setInterval(() => {
      if (this.#unansweredChecks < 4) {
        this.#unansweredChecks++;
        worker.ping!();
        return;
      }
      clearInterval(this.#healthTimer);
      this.#killReason = `answered no health check for ${timeoutMs / 1000} s (hung) and was killed`;
      worker.kill();
    }, Math.max(1, timeoutMs / 4));
    this.#healthTimer.unref();
  }

  #onExit(worker: W, exit: WorkerExit): void {
    if (worker !== this.#worker) return;
    clearInterval(this.#healthTimer);
    const description = this.#killReason ?? exit.description;
    this.#lastExit = description;
    this.#failHeld(new NereidError('INTERNAL', `${this.label}: the ${this.#options.workerKind} ${description} while running the request`));
    if (this.#state === 'closed') return;
    this.#state = 'restarting';
    this.#options.logger.error(this.#options.logComponent, `${this.label}: the ${this.#options.workerKind} ${description}; starting a new one`);
    this.#restart(0);
  }

  #restart(attempt: number): void {
    this.#launch().then(
      () => {
        if (this.#state === 'healthy') this.#options.logger.info(this.#options.logComponent, `${this.label} is serving again after a restart`);
      },
      (error: NereidError) => {
        if (this.#state === 'closed') return;
        const delayMs = Math.min(RESTART_DELAY_MS * 2 ** attempt, MAX_RESTART_DELAY_MS);
        this.#lastExit = `could not be restarted (${(error.cause as Error).message})`;
        this.#options.logger.error(this.#options.logComponent, `restart failed: ${error.message}; trying again in ${delayMs / 1000} s`);
        this.#restartTimer = setTimeout(() => this.#restart(attempt + 1), delayMs);
      },
    );
  }

  /** An execution ran too long: everything held fails and the worker is replaced (stopping it is the only way to stop the model's code). */
  #timeOut(id: number): void {
    if (!this.#held.has(id)) return;
    const { ms, parameter } = this.#options.executeTimeout!;
    const reason = `did not finish executing within ${ms} ms (config parameter ${parameter})`;
    this.#options.logger.error(this.#options.logComponent, `${this.label} ${reason}; starting a new ${this.#options.workerKind}`);
    this.#failHeld(new NereidError('UNAVAILABLE', `${this.label} ${reason}; the instance is restarted`));
    this.#killReason = `${reason} and was stopped`;
    this.#lastExit = this.#killReason;
    this.#state = 'restarting';
    this.#worker.kill();
  }

  #failHeld(error: NereidError): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const execution of held) execution.fail(error);
  }
}

/**
 * Test-only entry point: kills the worker of every live instance of `modelName` as a crash would, and
 * resolves once each has exited (the supervisor then restarts it). For an ONNX Runtime instance this
 * ends its whole execution thread, with every session on it, once the run in progress returns.
 */
export async function killWorkersForTesting(modelName: string): Promise<number> {
  const instances = [...liveInstances].filter((instance) => instance.label.endsWith(` of model '${modelName}'`));
  await Promise.all(instances.map((instance) => instance.killForTesting()));
  return instances.length;
}
