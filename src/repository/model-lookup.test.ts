import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelState } from '../protocol/repository-index.js';
import type { ModelEntry, VersionState } from './model-lifecycle.js';
import { ModelLookup, hasReadyVersion, isReadyVersion } from './model-lookup.js';
import type { Model } from './model.js';

/** A stand-in for a loaded version: the lookup reads only these fields. */
const fakeModel = (name: string, version: number, options: { inflightCount?: number; isHealthy?: boolean } = {}): Model =>
  ({ name, version, inflightCount: options.inflightCount ?? 0, isHealthy: options.isHealthy ?? true }) as unknown as Model;

const version = (name: string, number: number, state: ModelState, reason = '', model: Model | undefined = fakeModel(name, number)): VersionState =>
  state === 'READY' || state === 'UNLOADING' ? { version: number, state, reason, model } : { version: number, state, reason };

function entry(name: string, versions: VersionState[], error?: string): ModelEntry {
  return { name, modelDir: `/models/${name}`, versions: new Map(versions.map((state) => [state.version, state])), ...(error !== undefined ? { error } : {}) };
}

function lookup(...entries: ModelEntry[]): ModelLookup {
  const models = new ModelLookup();
  for (const model of entries) models.set(model.name, model);
  return models;
}

const described = (model: Model): string => `${model.name}:${model.version}`;

test('a version is ready only when READY with its model', () => {
  assert.equal(isReadyVersion(version('m', 1, 'READY')), true);
  assert.equal(isReadyVersion({ version: 1, state: 'READY', reason: '' }), false);
  for (const state of ['LOADING', 'UNLOADING', 'UNAVAILABLE', 'UNKNOWN'] as const) assert.equal(isReadyVersion(version('m', 1, state)), false, state);
  assert.equal(hasReadyVersion(undefined), false);
  assert.equal(hasReadyVersion(entry('m', [version('m', 1, 'UNAVAILABLE', 'broken'), version('m', 2, 'READY')])), true);
  assert.equal(hasReadyVersion(entry('m', [], 'unloaded')), false);
});

test('a request without a version gets the highest READY one', () => {
  const models = lookup(entry('m', [version('m', 3, 'READY'), version('m', 5, 'UNLOADING'), version('m', 2, 'READY'), version('m', 4, 'LOADING')]));
  assert.equal(described(models.getModel('m')), 'm:3');
  assert.equal(described(models.getModel('m', 2)), 'm:2');
});

test("Triton's errors: unknown model 400, unknown version 404, not ready 503 with the reason", () => {
  const models = lookup(entry('m', [version('m', 1, 'UNAVAILABLE', 'warmup failed')]), entry('gone', [], 'unloaded'), entry('plain', [version('plain', 1, 'LOADING')]));
  assert.throws(() => models.getModel('x'), { status: 'INVALID_ARG', message: "Request for unknown model: 'x' is not found" });
  assert.throws(() => models.getModel('m', 7), { status: 'NOT_FOUND', message: "Request for unknown model: 'm' version 7 is not found" });
  assert.throws(() => models.getModel('m', 1), { status: 'UNAVAILABLE', message: "Request for unknown model: 'm' version 1 is not at ready state: warmup failed" });
  assert.throws(() => models.getModel('plain', 1), { status: 'UNAVAILABLE', message: "Request for unknown model: 'plain' version 1 is not at ready state" });
  assert.throws(() => models.getModel('m'), { status: 'UNAVAILABLE', message: "Request for unknown model: 'm' has no available versions" });
  assert.throws(() => models.getModel('gone'), { status: 'UNAVAILABLE', message: "Request for unknown model: 'gone' has no available versions: unloaded" });
});

test('ready models and versions are sorted by name then version', () => {
  const models = lookup(
    entry('b', [version('b', 2, 'READY'), version('b', 1, 'READY')]),
    entry('a', [version('a', 1, 'UNAVAILABLE', 'x'), version('a', 3, 'READY')]),
  );
  assert.deepEqual(models.readyModels().map(described), ['a:3', 'b:1', 'b:2']);
  assert.deepEqual(models.readyModels('b').map(described), ['b:1', 'b:2']);
  assert.deepEqual(models.readyModels('b', 2).map(described), ['b:2']);
  assert.throws(() => models.readyModels('zz'), { status: 'INVALID_ARG', message: "Request for unknown model: 'zz' is not found" });
  assert.deepEqual(models.readyVersions('b'), [1, 2]);
  assert.deepEqual(models.readyVersions('zz'), []);
});

test('the index lists every version, or the whole model when it failed before any version', () => {
  const models = lookup(entry('b', [version('b', 2, 'READY'), version('b', 1, 'UNAVAILABLE', 'bad file')]), entry('a', [], 'no backend'));
  assert.deepEqual(models.index(), [
    { name: 'a', version: '', state: 'UNAVAILABLE', reason: 'no backend' },
    { name: 'b', version: '1', state: 'UNAVAILABLE', reason: 'bad file' },
    { name: 'b', version: '2', state: 'READY', reason: '' },
  ]);
});

test("every model is ready when each version is READY and no instance is down (Triton's strict readiness)", () => {
  assert.equal(lookup(entry('m', [version('m', 1, 'READY')])).isEveryModelReady(), true);
  assert.equal(lookup().isEveryModelReady(), true, 'no model loaded (EXPLICIT mode before any load) is ready, as in Triton');
  const notLoaded = { ...entry('n', [version('n', 1, 'UNAVAILABLE', 'unloaded to stay within --max-loaded-models 1 (least recently used)')]), isUnloaded: true };
  assert.equal(lookup(entry('m', [version('m', 1, 'READY')]), notLoaded).isEveryModelReady(), true, 'a model not loaded on purpose does not count');
  assert.equal(lookup(entry('m', [version('m', 2, 'READY'), version('m', 1, 'UNAVAILABLE', 'unloaded')])).isEveryModelReady(), true, 'a version unloaded does not count');
  assert.equal(lookup(entry('m', [version('m', 1, 'READY')]), entry('n', [], 'broken')).isEveryModelReady(), false);
  assert.equal(lookup(entry('m', [version('m', 1, 'READY'), version('m', 2, 'LOADING')])).isEveryModelReady(), false);
  assert.deepEqual(lookup(entry('m', [version('m', 1, 'READY')]), notLoaded, entry('n2', [], 'broken')).failures(), [{ name: 'n2', version: '', state: 'UNAVAILABLE', reason: 'broken' }]);
  assert.equal(lookup(entry('m', [version('m', 1, 'READY', '', fakeModel('m', 1, { isHealthy: false }))])).isEveryModelReady(), false);
});

test('requests in flight are counted over every loaded version, draining ones too', () => {
  const models = lookup(
    entry('m', [version('m', 1, 'READY', '', fakeModel('m', 1, { inflightCount: 2 })), version('m', 2, 'UNLOADING', '', fakeModel('m', 2, { inflightCount: 3 }))]),
    entry('n', [version('n', 1, 'UNAVAILABLE', 'x')]),
  );
  assert.equal(models.inflightCount, 5);
  models.delete('m');
  assert.equal(models.inflightCount, 0);
  assert.equal(models.get('m'), undefined);
});

test('--model-namespacing: a name finds the one model of that name in any namespace, its key that model alone; several loaded are ambiguous', () => {
  const namespaced = (namespace: string, name: string, versions: VersionState[], error?: string): [string, ModelEntry] => [
    `${namespace}::${name}`,
    { ...entry(name, versions, error), namespace, ...(error === 'unloaded' ? { isUnloaded: true } : {}) },
  ];
  const models = new ModelLookup();
  for (const [key, model] of [
    namespaced('/b', 'shared', [version('shared', 1, 'READY')]),
    namespaced('/a', 'shared', [version('shared', 2, 'READY')]),
    namespaced('/a', 'alone', [version('alone', 1, 'READY')]),
    namespaced('/a', 'gone', [], 'unloaded'),
    namespaced('/b', 'gone', [], 'unloaded'),
  ] as const) {
    models.set(key, model);
  }
  assert.equal(described(models.getModel('alone')), 'alone:1');
  assert.equal(described(models.getModel('/b::shared')), 'shared:1');
  assert.throws(() => models.getModel('shared'), {
    status: 'INVALID_ARG',
    message: "There are 2 identifiers of model 'shared' in global map, model namespace must be provided to resolve ambiguity. (Nereid: a request may name one of them as '/a::shared' or '/b::shared')",
  });
  assert.throws(() => models.getModel('gone'), { status: 'NOT_FOUND', message: "Identifier of model 'gone' is not found in global map (Nereid: none of the models of that name is loaded: '/a::gone', '/b::gone')" });
  assert.throws(() => models.getModel('nothing'), { status: 'INVALID_ARG', message: "Request for unknown model: 'nothing' is not found" });
  assert.deepEqual(models.keysNamed('shared').sort(), ['/a::shared', '/b::shared']);
  // The index: by namespace, then name; a shared name twice.
  assert.deepEqual(
    models.index().map(({ name, version: number }) => `${name}:${number}`),
    ['alone:1', 'gone:', 'shared:2', 'gone:', 'shared:1'],
  );
  models.set('/b::gone', { ...entry('gone', [version('gone', 4, 'READY')]), namespace: '/b' });
  assert.equal(described(models.getModel('gone')), 'gone:4', 'once one of them loads, the name is that one');
  models.delete('/b::shared');
  assert.equal(described(models.getModel('shared')), 'shared:2');
  assert.deepEqual(models.keysNamed('shared'), ['/a::shared']);
});

test('--model-namespacing: a model loaded from a request\'s files, without a namespace, is one more model of its name', () => {
  const models = new ModelLookup();
  models.set('m', { ...entry('m', [], 'unloaded'), isUnloaded: true });
  models.set('/a::m', { ...entry('m', [version('m', 1, 'READY')]), namespace: '/a' });
  assert.equal(described(models.getModel('m')), 'm:1', 'the unloaded one does not hide the loaded one');
  models.set('m', entry('m', [version('m', 7, 'READY')]));
  assert.throws(() => models.getModel('m'), { status: 'INVALID_ARG', message: /^There are 2 identifiers of model 'm' in global map, .* as '\/a::m' or 'm'\)$/ });
});
