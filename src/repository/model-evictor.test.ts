import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../logging/logger.js';
import { deferred } from '../util/deferred.js';
import { KeyedMutex } from './keyed-mutex.js';
import { ModelBudget } from './model-budget.js';
import { ModelEvictor } from './model-evictor.js';
import { ModelLeases } from './model-leases.js';
import type { ModelEntry } from './model-lifecycle.js';
import { ModelLookup } from './model-lookup.js';
import type { Model } from './model.js';

const MB = 2 ** 20;

/** A repository of loaded one-version models the test controls: `busy` ones have a request in flight. */
function setup(names: readonly string[], options: { busy?: readonly string[] } = {}) {
  const budget = new ModelBudget({ maxLoadedModels: names.length });
  const models = new ModelLookup();
  const mutex = new KeyedMutex();
  const leases = new ModelLeases();
  const unloading = deferred();
  const log: string[] = [];
  for (const name of names) {
    const model = {
      inflightCount: options.busy?.includes(name) === true ? 1 : 0,
      unload: async () => {
        log.push(`unload ${name}`);
        await unloading.promise;
      },
    } as unknown as Model;
    const entry: ModelEntry = { name, modelDir: `/models/${name}`, versions: new Map([[1, { version: 1, state: 'READY', reason: '', model }]]) };
    models.set(name, entry);
    budget.reserve({ name, bytes: MB, origin: 'on_demand', isIdle: () => true }).commit();
  }
  const evictor = new ModelEvictor({
    budget,
    models,
    mutex,
    leases,
    drainOptions: () => ({ drainTimeoutMs: 1000 }),
    logger: silentLogger,
    events: { onModelEvicted: ({ name }) => void log.push(`evicted ${name}`) },
  });
  return { budget, models, mutex, leases, evictor, unloading, log };
}

test('a victim stops taking requests in the tick it is chosen, and is listed with the reason once unloaded', async () => {
  const { models, evictor, unloading, log } = setup(['a', 'b']);
  const making = evictor.makeRoom('c', MB, 'on_demand');
  const a = models.get('a')!;
  assert.equal(a.versions.get(1)!.state, 'UNLOADING', 'before any await: no request can get the victim any more');
  assert.equal(a.isUnloaded, true);
  assert.throws(() => models.getModel('a'), { status: 'UNAVAILABLE' });
  unloading.resolve();
  const reservation = await making;
  assert.deepEqual(reservation.victims, ['a']);
  assert.deepEqual(log, ['unload a', 'evicted a']);
  assert.deepEqual(a.versions.get(1), { version: 1, state: 'UNAVAILABLE', reason: 'unloaded to stay within --max-loaded-models 2 (least recently used)' });
  assert.equal(models.get('b')!.versions.get(1)!.state, 'READY');
});

test('a model with a request in flight, one a request is about to use, and one with a load or unload under way are passed over', async () => {
  const { mutex, leases, evictor, unloading, log } = setup(['busy', 'leased', 'locked', 'free'], { busy: ['busy'] });
  const returnLease = leases.take('leased');
  const lock = deferred();
  void mutex.run('locked', () => lock.promise);
  unloading.resolve();
  assert.deepEqual((await evictor.makeRoom('x', MB, 'on_demand')).victims, ['free']);
  await assert.rejects(evictor.makeRoom('y', MB, 'on_demand'), { status: 'UNAVAILABLE', message: /no loaded model can be unloaded to make room/ });
  returnLease();
  lock.resolve();
  await mutex.settled('locked');
  assert.deepEqual((await evictor.makeRoom('y', MB, 'on_demand')).victims, ['leased']);
  assert.deepEqual(log, ['unload free', 'evicted free', 'unload leased', 'evicted leased']);
});
