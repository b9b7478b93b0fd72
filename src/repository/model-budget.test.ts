import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import { type LoadOrigin, ModelBudget } from './model-budget.js';

const MB = 2 ** 20;
const idle = (): boolean => true;

/** Loads `names` in order, each committed at once. */
function loadAll(budget: ModelBudget, names: readonly string[], origin: LoadOrigin = 'on_demand', bytes = MB): void {
  for (const name of names) budget.reserve({ name, bytes, origin, isIdle: idle }).commit();
}

test('the least recently used model loaded on demand makes room; a request makes its model the most recent', () => {
  const budget = new ModelBudget({ maxLoadedModels: 3 });
  loadAll(budget, ['a', 'b', 'c']);
  budget.touch('a');
  const reservation = budget.reserve({ name: 'd', bytes: MB, origin: 'on_demand', isIdle: idle });
  assert.deepEqual(reservation.victims, ['b']);
  assert.equal(reservation.limit, 'count');
  assert.equal(budget.count, 3);
  reservation.commit();
  assert.deepEqual(budget.reserve({ name: 'e', bytes: MB, origin: 'on_demand', isIdle: idle }).victims, ['c']);
});

test('no room needed: no victims', () => {
  const budget = new ModelBudget({ maxLoadedModels: 3, memoryBudgetBytes: 10 * MB });
  loadAll(budget, ['a']);
  const reservation = budget.reserve({ name: 'b', bytes: MB, origin: 'on_demand', isIdle: idle });
  assert.deepEqual(reservation.victims, []);
  assert.equal(reservation.limit, undefined);
});

test('models loaded at start-up, by the API or by POLL mode are kept; with nothing to evict the load is refused', () => {
  const budget = new ModelBudget({ maxLoadedModels: 3 });
  loadAll(budget, ['s'], 'startup');
  loadAll(budget, ['a'], 'api');
  loadAll(budget, ['p'], 'poll');
  assert.throws(
    () => budget.reserve({ name: 'x', bytes: MB, origin: 'on_demand', isIdle: idle }),
    (error: unknown) =>
      error instanceof NereidError &&
      error.status === 'UNAVAILABLE' &&
      error.message ===
        "loading it would pass --max-loaded-models 3 (3 models loaded or loading) and no loaded model can be unloaded to make room: " +
          'models loaded at start-up, by --load-model or by the repository API are kept, and so are models with requests queued or running and the models a loaded ensemble runs',
  );
  assert.equal(budget.count, 3, 'a refused load counts nothing');
});

test('a busy model (requests queued or running) and a model still loading are passed over', () => {
  const budget = new ModelBudget({ maxLoadedModels: 3 });
  loadAll(budget, ['busy', 'b']);
  budget.reserve({ name: 'loading', bytes: MB, origin: 'on_demand', isIdle: idle });
  const isIdle = (name: string): boolean => name !== 'busy';
  assert.deepEqual(budget.reserve({ name: 'x', bytes: MB, origin: 'on_demand', isIdle }).victims, ['b']);
  assert.throws(() => budget.reserve({ name: 'y', bytes: MB, origin: 'on_demand', isIdle }), /no loaded model can be unloaded/);
});

test("an ensemble's steps go only with the ensemble, or after it", () => {
  const budget = new ModelBudget({ maxLoadedModels: 3 });
  loadAll(budget, ['step', 'other']);
  loadAll(budget, ['ensemble']);
  budget.addDependency('ensemble', 'step');
  // step is the least recently used but the ensemble needs it: other goes first.
  assert.deepEqual(budget.reserve({ name: 'x', bytes: MB, origin: 'on_demand', isIdle: idle }).victims, ['other']);
  // Now only step and the ensemble can go: the ensemble first, then step is needed by nothing.
  const budgetTwo = new ModelBudget({ maxLoadedModels: 2 });
  loadAll(budgetTwo, ['step', 'ensemble']);
  budgetTwo.addDependency('ensemble', 'step');
  assert.deepEqual(budgetTwo.reserve({ name: 'x', bytes: MB, origin: 'on_demand', isIdle: idle }).victims, ['ensemble']);
  assert.deepEqual(budgetTwo.reserve({ name: 'y', bytes: MB, origin: 'on_demand', isIdle: idle }).victims, ['step']);
});

test('the dependencies recorded answer which models a model needs and whether another still needs one', () => {
  const budget = new ModelBudget({});
  loadAll(budget, ['step', 'shared', 'ens_a', 'ens_b']);
  budget.addDependency('ens_a', 'step');
  budget.addDependency('ens_a', 'shared');
  budget.addDependency('ens_b', 'shared');
  assert.deepEqual(budget.dependenciesOf('ens_a'), ['step', 'shared']);
  assert.deepEqual(budget.dependenciesOf('step'), []);
  budget.forget('ens_a');
  assert.deepEqual([budget.isNeeded('step'), budget.isNeeded('shared'), budget.isNeeded('shared', ['ens_b'])], [false, true, false]);
});

test('the memory budget evicts until the new model fits, and refuses a model larger than the whole budget', () => {
  const budget = new ModelBudget({ memoryBudgetBytes: 10 * MB });
  loadAll(budget, ['a', 'b', 'c'], 'on_demand', 3 * MB);
  const reservation = budget.reserve({ name: 'big', bytes: 6 * MB, origin: 'on_demand', isIdle: idle });
  assert.deepEqual(reservation.victims, ['a', 'b']);
  assert.equal(reservation.limit, 'bytes');
  assert.equal(budget.bytes, 9 * MB);
  assert.throws(
    () => budget.reserve({ name: 'huge', bytes: 11 * MB, origin: 'on_demand', isIdle: idle }),
    (error: unknown) =>
      error instanceof NereidError &&
      error.status === 'UNAVAILABLE' &&
      error.message === "its estimated memory (11MB) is more than the whole --model-memory-budget 10MB",
  );
});

test('parallel reservations never pick the same victim nor pass the limit together', () => {
  const budget = new ModelBudget({ maxLoadedModels: 2 });
  loadAll(budget, ['a', 'b']);
  const first = budget.reserve({ name: 'x', bytes: MB, origin: 'on_demand', isIdle: idle });
  const second = budget.reserve({ name: 'y', bytes: MB, origin: 'on_demand', isIdle: idle });
  assert.deepEqual([first.victims, second.victims], [['a'], ['b']]);
  assert.throws(() => budget.reserve({ name: 'z', bytes: MB, origin: 'on_demand', isIdle: idle }), /--max-loaded-models 2 \(2 models loaded or loading\)/);
});

test('a reload counts once, with its new size; a failed reload counts the old versions again', () => {
  const budget = new ModelBudget({ maxLoadedModels: 1, memoryBudgetBytes: 10 * MB });
  loadAll(budget, ['a'], 'on_demand', 2 * MB);
  const reload = budget.reserve({ name: 'a', bytes: 5 * MB, origin: 'poll', isIdle: idle });
  assert.deepEqual(reload.victims, []);
  assert.equal(budget.bytes, 5 * MB);
  assert.equal(budget.originOf('a'), 'on_demand', 'a model loaded on demand stays evictable after POLL reloads it');
  reload.cancel();
  assert.equal(budget.bytes, 2 * MB);
  const failed = budget.reserve({ name: 'b', bytes: MB, origin: 'api', isIdle: idle });
  assert.deepEqual(failed.victims, ['a']);
  failed.cancel();
  assert.equal(budget.count, 0, 'a failed first load counts nothing; its victim is gone all the same');
});

test('an API load of a model loaded on demand keeps it from then on; forget stops counting it', () => {
  const budget = new ModelBudget({ maxLoadedModels: 1 });
  loadAll(budget, ['a']);
  budget.reserve({ name: 'a', bytes: MB, origin: 'api', isIdle: idle }).commit();
  assert.equal(budget.originOf('a'), 'api');
  assert.throws(() => budget.reserve({ name: 'b', bytes: MB, origin: 'on_demand', isIdle: idle }), /no loaded model can be unloaded/);
  budget.forget('a');
  assert.deepEqual(budget.reserve({ name: 'b', bytes: MB, origin: 'on_demand', isIdle: idle }).victims, []);
});
