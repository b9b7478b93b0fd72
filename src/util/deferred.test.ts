import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deferred } from './deferred.js';

test('deferred settles its promise from outside, once', async () => {
  const resolved = deferred<number>();
  resolved.resolve(7);
  resolved.resolve(8);
  assert.equal(await resolved.promise, 7);
  const rejected = deferred();
  rejected.reject(new Error('no'));
  await assert.rejects(rejected.promise, /^Error: no$/);
});
