import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ModelCaller } from '../kernel/model-caller.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { Clock } from '../scheduling/clock.js';
import { LOAD_RETRY_BACKOFF_MS } from './load-failure-backoff.js';
import { RepositoryManager, type RepositoryOptions } from './repository-manager.js';

/** A repository manager with the tests' settings, `options` over them. */
const managerOf = (options: Partial<RepositoryOptions> & Pick<RepositoryOptions, 'repositoryPaths' | 'controlMode'>): RepositoryManager =>
  new RepositoryManager({
    startupModels: [],
    unloadTimeoutMs: 1000,
    loadTimeoutMs: 60_000,
    maxInputBytes: 2 ** 26,
    isAutoCompleteEnabled: true,
    context: { logger: silentLogger, defaultMaxBatchSize: 4, cpuCount: 2, caller: {} as ModelCaller },
    logger: silentLogger,
    ...options,
  });

test('a failed load on demand is not retried by the requests that follow it until the backoff ends', async (t) => {
  const repositoryPath = mkdtempSync(join(tmpdir(), 'nereid-backoff-'));
  t.after(() => rmSync(repositoryPath, { recursive: true, force: true }));
  mkdirSync(join(repositoryPath, 'broken', '1'), { recursive: true });
  writeFileSync(join(repositoryPath, 'broken', 'config.pbtxt'), 'name: "broken"\nplatform: "onnxruntime_onnx"\nmax_batch_size: "eight"\n');
  let nowUs = 1_000_000;
  const clock: Clock = { nowUs: () => nowUs, setTimer: () => undefined, clearTimer: () => {} };
  const loads: string[] = [];
  const logger: Logger = { ...silentLogger, info: (_category, message) => void (message.startsWith("loading 'broken' on demand") && loads.push(message)) };
  const repository = managerOf({ repositoryPaths: [repositoryPath], controlMode: 'none', isLoadOnDemand: true, clock, logger });
  await repository.loadAll();
  const reasonOf = (name: string): Promise<string> =>
    repository.prepareModel(name).then(
      () => 'loaded',
      (error: Error) => error.message,
    );

  // Eight clients at once share one load; the requests after its failure get its reason without another.
  const first = await Promise.all(Array.from({ length: 8 }, () => reasonOf('broken')));
  const after = await Promise.all(Array.from({ length: 8 }, () => reasonOf('broken')));
  nowUs += (LOAD_RETRY_BACKOFF_MS - 1) * 1000;
  const late = await reasonOf('broken');
  assert.match(first[0]!, /^load failed for model 'broken': .*max_batch_size/);
  assert.deepEqual([...first, ...after, late], Array(17).fill(first[0]));
  assert.equal(loads.length, 1);

  nowUs += 1000;
  assert.equal(await reasonOf('broken'), first[0]);
  assert.equal(loads.length, 2, 'once the backoff has passed, the next request loads again');
  await repository.unloadAll();
});

/** A JavaScript identity over two INT32, and an ensemble of one step running `step`. */
function writeIdentity(repository: string, name: string): void {
  mkdirSync(join(repository, name, '1'), { recursive: true });
  writeFileSync(join(repository, name, 'config.pbtxt'), `backend: "javascript"\nmax_batch_size: 0\n${IDENTITY_TENSORS}`);
  writeFileSync(join(repository, name, '1', 'model.js'), "export default class M { execute(requests) { return requests.map((r) => ({ outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [2], data: r.input('INPUT0').data }] })); } }\n");
}
const IDENTITY_TENSORS = 'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]\n';
function writeEnsemble(repository: string, name: string, step: string): void {
  mkdirSync(join(repository, name, '1'), { recursive: true });
  const steps = `ensemble_scheduling { step [ { model_name: "${step}" model_version: -1 input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }\n`;
  writeFileSync(join(repository, name, 'config.pbtxt'), `platform: "ensemble"\nmax_batch_size: 0\n${IDENTITY_TENSORS}${steps}`);
}

test('--model-namespacing with --load-on-demand: a model folder added after start loads when a request names it', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nereid-namespaces-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const [a, b] = [join(root, 'a'), join(root, 'b')];
  mkdirSync(a);
  mkdirSync(b);
  const repository = managerOf({ repositoryPaths: [a, b], isModelNamespacing: true, controlMode: 'none', isLoadOnDemand: true });
  await repository.loadAll();
  writeIdentity(a, 'late');
  await repository.prepareModel('late');
  assert.equal(repository.getModel('late').spec.namespace, a);
  writeIdentity(a, 'twice');
  writeIdentity(b, 'twice');
  await assert.rejects(repository.prepareModel('twice'), { status: 'INVALID_ARG', message: /^There are 2 identifiers of model 'twice' in global map/ });
  await repository.prepareModel(`${b}::twice`);
  assert.equal(repository.getModel('twice').spec.namespace, b, 'the one loaded is the name');
  await repository.unloadAll();
});

test('--model-namespacing in POLL mode: a poll whose second scan fails logs it and keeps the server up; the next one links the ensemble', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nereid-namespaces-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const [a, b] = [join(root, 'a'), join(root, 'b')];
  writeIdentity(b, 'step');
  writeEnsemble(a, 'ensemble', 'step');
  const ticks: Array<() => void> = [];
  const clock: Clock = { nowUs: () => 0, setTimer: (tick) => ticks.push(tick), clearTimer: () => {} };
  const syncs: { count: number; failing?: number } = { count: 0 };
  const log: string[] = [];
  const repository = managerOf({
    repositoryPaths: [a, b],
    isModelNamespacing: true,
    controlMode: 'poll',
    clock,
    syncRepositories: async () => {
      if (++syncs.count === syncs.failing) throw new Error('the object store did not answer');
    },
    logger: { ...silentLogger, info: (_category, message) => void log.push(message), error: (_category, message) => void log.push(message) },
  });
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  t.after(() => process.off('unhandledRejection', onRejection));
  const logged = async (text: string): Promise<void> => {
    for (let wait = 0; wait < 200 && !log.some((line) => line.includes(text)); wait++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(log.some((line) => line.includes(text)), `not logged: ${text}\n${log.join('\n')}`);
  };
  await repository.loadAll();
  repository.startPolling(1);
  writeIdentity(a, 'step');
  // The poll's own scan passes; the scan that would link the ensemble again does not.
  syncs.failing = syncs.count + 2;
  ticks.shift()!();
  await logged('the object store did not answer; ensembles are linked again at the next poll that finds a change');
  assert.deepEqual(rejections, []);
  // The next poll that finds a change links the ensemble to its own namespace's step.
  writeIdentity(a, 'other');
  ticks.shift()!();
  await logged(`reloaded '${a}::ensemble': a model it runs was added or removed`);
  assert.deepEqual(
    repository.index().map(({ name, state }) => `${name}:${state}`),
    ['ensemble:READY', 'other:READY', 'step:READY', 'step:READY'],
  );
  await repository.unloadAll();
});
