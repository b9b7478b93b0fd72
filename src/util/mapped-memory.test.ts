import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeMapping, holdMapping, releaseMapping, trackMapping } from './mapped-memory.js';

test('a tracked mapping gives the address of a view into it; other memory gives none', () => {
  const buffer = new ArrayBuffer(64);
  trackMapping(buffer, 4096);
  const view = new Uint8Array(buffer, 24, 8);
  assert.equal(holdMapping(view), 4096 + 24);
  assert.equal(holdMapping(new Uint8Array(16)), undefined);
  releaseMapping(view);
});

test('a mapping closed while held is unmapped by its last release, and once', () => {
  const buffer = new ArrayBuffer(64);
  trackMapping(buffer, 8192);
  const first = new Float32Array(buffer, 0, 4);
  const second = new Uint8Array(buffer, 32, 32);
  assert.equal(holdMapping(first), 8192);
  assert.equal(holdMapping(second), 8192 + 32);
  let unmapped = 0;
  closeMapping(buffer, () => unmapped++);
  assert.equal(unmapped, 0, 'held by two runs');
  assert.equal(holdMapping(second), undefined, 'a closing mapping takes no new hold');
  releaseMapping(first);
  assert.equal(unmapped, 0, 'held by one run');
  releaseMapping(second);
  assert.equal(unmapped, 1);
  releaseMapping(second);
  assert.equal(unmapped, 1);
});

test('a mapping nobody holds is unmapped when closed', () => {
  const buffer = new ArrayBuffer(8);
  trackMapping(buffer, 12288);
  const view = new Uint8Array(buffer);
  assert.equal(holdMapping(view), 12288);
  releaseMapping(view);
  let unmapped = 0;
  closeMapping(buffer, () => unmapped++);
  assert.equal(unmapped, 1);
  assert.equal(holdMapping(view), undefined, 'forgotten once unmapped');
});
