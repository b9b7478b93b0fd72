import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import { silentLogger } from '../logging/logger.js';
import { type HeldExecution, SupervisedInstance, type SupervisedWorker, type WorkerEvents } from './supervised-instance.js';

/** A worker whose start, exit and finalize the test decides. */
class FakeWorker implements SupervisedWorker {
  readonly ready: Promise<void>;
  readonly #events: WorkerEvents;
  #resolve!: () => void;
  #reject!: (error: Error) => void;
  isKilled = false;
  isFinalized = false;
  isAnswering = true;
  pingCount = 0;

  constructor(events: WorkerEvents) {
    this.#events = events;
    this.ready = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.ready.catch(() => {});
  }

  start(): void {
    this.#resolve();
  }

  failStart(message: string): void {
    this.#reject(new Error(message));
    this.#events.exited({ description: 'exited with code 1' });
  }

  exit(description: string): void {
    this.#events.exited({ description });
  }

  ping(): void {
    this.pingCount++;
    if (this.isAnswering) this.#events.answered();
  }

  kill(): void {
    this.isKilled = true;
    this.exit('was killed by signal SIGKILL');
  }

  async finalize(): Promise<void> {
    this.isFinalized = true;
    this.exit('exited with code 0');
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class Held implements HeldExecution {
  error: NereidError | undefined;
  fail(error: NereidError): void {
    this.error = error;
  }
}

interface Limits {
  readonly executeTimeout?: { readonly ms: number; readonly parameter: string };
  readonly healthCheck?: { readonly timeoutMs: number };
  readonly isKillableWhileStarting?: boolean;
}

function supervised(limits: Limits = {}): { instance: SupervisedInstance<FakeWorker, Held>; workers: FakeWorker[] } {
  const workers: FakeWorker[] = [];
  const instance = new SupervisedInstance<FakeWorker, Held>({
    instanceName: 'm_0',
    modelName: 'm',
    workerKind: 'worker thread',
    spawn: (events) => {
      const worker = new FakeWorker(events);
      workers.push(worker);
      return worker;
    },
    logger: silentLogger,
    logComponent: 'test',
    ...limits,
  });
  return { instance, workers };
}

async function started(limits: Limits = {}): Promise<{ instance: SupervisedInstance<FakeWorker, Held>; workers: FakeWorker[] }> {
  const made = supervised(limits);
  const starting = made.instance.start();
  made.workers[0]!.start();
  await starting;
  return made;
}

describe('SupervisedInstance', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval'] }));
  afterEach(() => mock.timers.reset());

  test('is healthy once its first worker is ready; a failed start is the INVALID_ARG load error', async () => {
    const { instance } = await started();
    assert.equal(instance.isHealthy, true);
    assert.equal(instance.unavailable(), undefined);

    const failing = supervised();
    const starting = failing.instance.start();
    failing.workers[0]!.failStart('ONNX Runtime cannot load the model: bad file');
    await assert.rejects(starting, new NereidError('INVALID_ARG', "instance 'm_0' of model 'm': ONNX Runtime cannot load the model: bad file"));
    assert.equal(failing.instance.isHealthy, false);
    await flush();
    assert.equal(failing.workers.length, 1, 'a failed first start is not retried: the load fails');
  });

  test('a worker that exits before it is ready fails the start at once, naming the exit, even if its backend says nothing', async () => {
    const { instance, workers } = supervised();
    const starting = instance.start();
    workers[0]!.exit('exited with code 7');
    await assert.rejects(starting, new NereidError('INVALID_ARG', "instance 'm_0' of model 'm': the worker thread exited with code 7 before the model was ready"));
    await flush();
    assert.equal(workers.length, 1);
  });

  test('an aborted start kills a worker that may be killed while starting, and rejects with the reason once it has exited', async () => {
    const { instance, workers } = supervised({ isKillableWhileStarting: true });
    const timeout = new AbortController();
    const starting = instance.start(timeout.signal);
    const reason = new NereidError('UNAVAILABLE', 'too slow');
    timeout.abort(reason);
    await assert.rejects(starting, reason);
    assert.equal(workers[0]!.isKilled, true);
    assert.equal(instance.isHealthy, false);
    await flush();
    assert.equal(workers.length, 1, 'a stopped start is not retried');
  });

  test('an aborted start rejects at once and finalizes, once it is ready, a worker that may not be killed while starting', async () => {
    const { instance, workers } = supervised();
    const timeout = new AbortController();
    const starting = instance.start(timeout.signal);
    timeout.abort(new NereidError('UNAVAILABLE', 'too slow'));
    await assert.rejects(starting, new NereidError('UNAVAILABLE', 'too slow'));
    assert.equal(workers[0]!.isKilled, false);
    workers[0]!.start();
    await flush();
    assert.equal(workers[0]!.isFinalized, true);
    assert.equal(instance.isHealthy, false);
  });

  test('a crash fails the executions held, answers UNAVAILABLE meanwhile, restarts at once and serves again', async () => {
    const { instance, workers } = await started();
    const first = new Held();
    const second = new Held();
    instance.hold(1, first);
    instance.hold(2, second);
    workers[0]!.exit('exited with code 7');
    const crash = new NereidError('INTERNAL', "instance 'm_0' of model 'm': the worker thread exited with code 7 while running the request");
    assert.deepEqual([first.error, second.error], [crash, crash]);
    assert.equal(instance.release(1), undefined);
    assert.equal(instance.isHealthy, false);
    assert.deepEqual(
      instance.unavailable(),
      new NereidError('UNAVAILABLE', "instance 'm_0' of model 'm' is restarting: its worker thread exited with code 7; the model reports not ready until it is back"),
    );
    assert.equal(workers.length, 2, 'the new worker starts at once');
    workers[1]!.start();
    await flush();
    assert.equal(instance.isHealthy, true);
    assert.equal(instance.worker, workers[1]);
  });

  test('failed restarts are retried after 1 s, doubling up to 30 s', async () => {
    const { instance, workers } = await started();
    workers[0]!.exit('was killed by signal SIGKILL');
    const delaysMs: number[] = [];
    for (let attempt = 0; attempt < 7; attempt++) {
      const count = workers.length;
      workers.at(-1)!.failStart('initialize() failed: no');
      await flush();
      let waitedMs = 0;
      while (workers.length === count) {
        mock.timers.tick(500);
        waitedMs += 500;
        await flush();
      }
      delaysMs.push(waitedMs);
    }
    assert.deepEqual(delaysMs, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    assert.deepEqual(
      instance.unavailable()?.message,
      "instance 'm_0' of model 'm' is restarting: its worker thread could not be restarted (initialize() failed: no); the model reports not ready until it is back",
    );
    workers.at(-1)!.start();
    await flush();
    assert.equal(instance.isHealthy, true);
  });

  test('an execution past the execute timeout fails what is held with UNAVAILABLE and replaces the worker', async () => {
    const { instance, workers } = await started({ executeTimeout: { ms: 100, parameter: 'execute_timeout_ms' } });
    const answered = new Held();
    instance.hold(1, answered);
    assert.equal(instance.release(1), answered);
    const hung = new Held();
    const queued = new Held();
    instance.hold(2, hung);
    mock.timers.tick(50);
    instance.hold(3, queued);
    mock.timers.tick(50);
    const timedOut = new NereidError('UNAVAILABLE', "instance 'm_0' of model 'm' did not finish executing within 100 ms (config parameter execute_timeout_ms); the instance is restarted");
    assert.deepEqual([answered.error, hung.error, queued.error], [undefined, timedOut, timedOut]);
    assert.equal(workers[0]!.isKilled, true);
    assert.equal(
      instance.unavailable()?.message,
      "instance 'm_0' of model 'm' is restarting: its worker thread did not finish executing within 100 ms (config parameter execute_timeout_ms) and was stopped; the model reports not ready until it is back",
    );
    assert.equal(workers.length, 2);
    workers[1]!.start();
    await flush();
    assert.equal(instance.isHealthy, true);
  });

  test('a worker that answers no health check for the timeout is killed as hung, failing what it held', async () => {
    const { instance, workers } = await started({ healthCheck: { timeoutMs: 1000 } });
    mock.timers.tick(250 * 8);
    assert.equal(workers[0]!.pingCount, 8);
    assert.equal(workers[0]!.isKilled, false, 'a worker that answers is left alone');
    const held = new Held();
    instance.hold(1, held);
    workers[0]!.isAnswering = false;
    mock.timers.tick(250 * 4);
    assert.equal(workers[0]!.isKilled, false, 'four checks unanswered: the timeout has not passed yet');
    mock.timers.tick(250);
    assert.equal(workers[0]!.isKilled, true);
    assert.deepEqual(held.error, new NereidError('INTERNAL', "instance 'm_0' of model 'm': the worker thread answered no health check for 1 s (hung) and was killed while running the request"));
    assert.equal(
      instance.unavailable()?.message,
      "instance 'm_0' of model 'm' is restarting: its worker thread answered no health check for 1 s (hung) and was killed; the model reports not ready until it is back",
    );
    mock.timers.tick(250 * 8);
    assert.equal(workers[0]!.pingCount, 12, 'a dead worker is not pinged');
    workers[1]!.start();
    await flush();
    mock.timers.tick(250);
    assert.equal(workers[1]!.pingCount, 1, 'the new worker is checked once it is ready');
  });

  test('close fails what is held with UNAVAILABLE, finalizes the worker and restarts nothing', async () => {
    const { instance, workers } = await started();
    const held = new Held();
    instance.hold(1, held);
    await instance.close();
    assert.deepEqual(held.error, new NereidError('UNAVAILABLE', "instance 'm_0' of model 'm' was stopped before the request finished"));
    assert.equal(workers[0]!.isFinalized, true);
    assert.equal(workers.length, 1);
    assert.equal(instance.unavailable()?.message, "instance 'm_0' of model 'm' is stopping; the model reports not ready until it is back");
  });

  test('a worker still restarting when the instance closes is finalized once it is ready; a pending retry is cancelled', async () => {
    const restarting = await started();
    restarting.workers[0]!.exit('exited with code 3');
    const closed = restarting.instance.close();
    restarting.workers[1]!.start();
    await closed;
    assert.equal(restarting.workers[1]!.isFinalized, true);
    assert.equal(restarting.instance.isHealthy, false);

    const waiting = await started();
    waiting.workers[0]!.exit('exited with code 3');
    waiting.workers[1]!.failStart('no');
    await flush();
    await waiting.instance.close();
    mock.timers.tick(60_000);
    await flush();
    assert.equal(waiting.workers.length, 2);
  });
});
