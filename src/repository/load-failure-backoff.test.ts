import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../kernel/errors.js';
import { LOAD_RETRY_BACKOFF_MS, LoadFailureBackoff } from './load-failure-backoff.js';

test('a failed load is answered from memory until the backoff ends, then forgotten', () => {
  let nowMs = 5000;
  const backoff = new LoadFailureBackoff(() => nowMs);
  const error = new NereidError('INVALID_ARG', "load failed for model 'broken': bad config\n");
  backoff.record('broken', error);
  assert.equal(backoff.recentFailure('broken'), error);
  assert.equal(backoff.recentFailure('other'), undefined);
  nowMs += LOAD_RETRY_BACKOFF_MS - 1;
  assert.equal(backoff.recentFailure('broken'), error);
  nowMs += 1;
  assert.equal(backoff.recentFailure('broken'), undefined);
});

test('a refusal for want of room is not remembered; forget ends a backoff at once', () => {
  const backoff = new LoadFailureBackoff(() => 0);
  backoff.record('crowded', new NereidError('UNAVAILABLE', "load failed for model 'crowded': loading it would pass --max-loaded-models 3\n"));
  assert.equal(backoff.recentFailure('crowded'), undefined);
  const failure = new Error('EACCES');
  backoff.record('broken', failure);
  assert.equal(backoff.recentFailure('broken'), failure);
  backoff.forget('broken');
  assert.equal(backoff.recentFailure('broken'), undefined);
});
