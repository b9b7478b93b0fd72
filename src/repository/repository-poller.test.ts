import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import type { Logger } from '../logging/logger.js';
import { RepositoryPoller } from './repository-poller.js';

const INTERVAL_MS = 1000;
const flush = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * A poller over a repository the test edits in memory: `folders` maps each model to its fingerprint;
 * `broken` models fail to load. Every reload, removal and log line is recorded in `events`.
 */
function setup(options: { isScanFailing?: () => boolean; holdReloads?: boolean } = {}) {
  const clock = new FakeClock();
  const folders = new Map<string, string>();
  const broken = new Set<string>();
  /** Models the reload only lists (loading on demand). */
  const listed = new Set<string>();
  const events: string[] = [];
  const held: Array<() => void> = [];
  const logger: Logger = {
    info: (_component, message) => void events.push(`info ${message}`),
    error: (_component, message) => void events.push(`error ${message}`),
    warning() {},
    verbose() {},
  };
  const poller = new RepositoryPoller({
    clock,
    logger,
    scan: async () => {
      if (options.isScanFailing?.() === true) throw new Error("cannot read model repository '/models': EACCES");
      return new Map([...folders.keys()].map((name) => [name, [`/models/${name}`]]));
    },
    fingerprint: async ([dir]) => folders.get(dir!.slice('/models/'.length)) ?? '',
    reload: async (name) => {
      events.push(`reload ${name}`);
      if (options.holdReloads === true) await new Promise<void>((resolve) => held.push(resolve));
      if (broken.has(name)) throw new Error(`failed to load '${name}': models/${name}/config.pbtxt:3:1: unexpected end of input`);
      return listed.has(name) ? 'listed' : 'loaded';
    },
    remove: async (name) => void events.push(`remove ${name}`),
  });
  const tick = async (): Promise<void> => {
    clock.advance(INTERVAL_MS * 1000);
    await flush();
  };
  return { clock, folders, broken, listed, events, held, poller, tick };
}

test('nothing is read before the first interval; then each interval reads the repository once', async () => {
  const { clock, folders, events, poller, tick } = setup();
  folders.set('a', 'v1');
  poller.start(INTERVAL_MS);
  clock.advance(INTERVAL_MS * 1000 - 1);
  await flush();
  assert.deepEqual(events, []);
  clock.advance(1);
  await flush();
  assert.deepEqual(events, ['reload a', "info poll: loaded 'a' after a change in its folder"]);
  await tick();
  assert.equal(events.length, 2, 'an unchanged folder is not reloaded');
});

test('models loaded at start-up are reloaded only once their folder changes', async () => {
  const { folders, events, poller, tick } = setup();
  folders.set('a', 'v1');
  poller.remember('a', 'v1');
  poller.start(INTERVAL_MS);
  await tick();
  assert.deepEqual(events, []);
  folders.set('a', 'v2');
  await tick();
  assert.deepEqual(events, ['reload a', "info poll: loaded 'a' after a change in its folder"]);
});

test('a model that fails to load is logged and read again only when its folder changes again', async () => {
  const { folders, broken, events, poller, tick } = setup();
  folders.set('a', 'v1');
  poller.remember('a', 'v1');
  poller.start(INTERVAL_MS);
  folders.set('a', 'half-written');
  broken.add('a');
  await tick();
  await tick();
  await tick();
  assert.deepEqual(events, [
    'reload a',
    "error poll: failed to load 'a': models/a/config.pbtxt:3:1: unexpected end of input; the folder is read again when it changes",
  ]);
  folders.set('a', 'complete');
  broken.delete('a');
  await tick();
  assert.deepEqual(events.slice(2), ['reload a', "info poll: loaded 'a' after a change in its folder"]);
});

test('a new folder is loaded; a removed one is unloaded once and forgotten', async () => {
  const { folders, events, poller, tick } = setup();
  folders.set('a', 'v1');
  poller.remember('a', 'v1');
  poller.start(INTERVAL_MS);
  folders.set('b', 'v1');
  await tick();
  assert.deepEqual(events, ['reload b', "info poll: loaded 'b' after a change in its folder"]);
  folders.delete('a');
  await tick();
  await tick();
  assert.deepEqual(events.slice(2), ['remove a', "info poll: unloaded 'a', whose folder is gone"]);
  folders.set('a', 'v1');
  await tick();
  assert.deepEqual(events.slice(4), ['reload a', "info poll: loaded 'a' after a change in its folder"], 'a folder that comes back loads again');
});

test('the models changed since the last pass reload together, not one after another', async () => {
  const { folders, events, held, poller, tick } = setup({ holdReloads: true });
  poller.start(INTERVAL_MS);
  for (const name of ['a', 'b', 'c']) folders.set(name, 'v1');
  await tick();
  assert.deepEqual(events, ['reload a', 'reload b', 'reload c'], 'all three started before any finished');
  for (const release of held) release();
  await tick();
  assert.equal(events.filter((event) => event.startsWith('info poll: loaded')).length, 3);
});

test('a model only listed (loading on demand) is logged as listed, not loaded', async () => {
  const { folders, listed, events, poller, tick } = setup();
  poller.start(INTERVAL_MS);
  folders.set('lazy', 'v1');
  listed.add('lazy');
  await tick();
  assert.deepEqual(events, ['reload lazy', "info poll: listed 'lazy' after a change in its folder; it loads when a request asks for it"]);
});

test('a poll still running when the next interval comes makes that interval skip', async () => {
  const { folders, events, held, poller, tick } = setup({ holdReloads: true });
  folders.set('a', 'v1');
  poller.start(INTERVAL_MS);
  await tick();
  assert.deepEqual(events, ['reload a']);
  folders.set('a', 'v2');
  await tick();
  await tick();
  assert.deepEqual(events, ['reload a'], 'no second pass while the first is loading');
  held.shift()!();
  await flush();
  await tick();
  assert.deepEqual(events, ['reload a', "info poll: loaded 'a' after a change in its folder", 'reload a']);
  held.shift()!();
  await flush();
});

test('an unreadable repository is logged and read again at the next interval', async () => {
  let isFailing = true;
  const { folders, events, poller, tick } = setup({ isScanFailing: () => isFailing });
  folders.set('a', 'v1');
  poller.start(INTERVAL_MS);
  await tick();
  assert.deepEqual(events, ["error poll: cannot read model repository '/models': EACCES"]);
  isFailing = false;
  await tick();
  assert.deepEqual(events.slice(1), ['reload a', "info poll: loaded 'a' after a change in its folder"]);
});

test('stop() leaves no timer behind and no later pass', async () => {
  const { clock, folders, events, poller, tick } = setup();
  poller.start(INTERVAL_MS);
  assert.equal(clock.timerCount, 1);
  poller.stop();
  assert.equal(clock.timerCount, 0);
  folders.set('a', 'v1');
  await tick();
  assert.deepEqual(events, []);
});
