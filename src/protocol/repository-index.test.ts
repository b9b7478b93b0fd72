import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelStateOf } from './repository-index.js';

test("a reply's state is one of Triton's, or UNKNOWN", () => {
  for (const state of ['UNKNOWN', 'READY', 'UNAVAILABLE', 'LOADING', 'UNLOADING']) assert.equal(modelStateOf(state), state);
  assert.equal(modelStateOf('Ready'), 'UNKNOWN');
  assert.equal(modelStateOf(''), 'UNKNOWN');
  assert.equal(modelStateOf(undefined), 'UNKNOWN');
});
