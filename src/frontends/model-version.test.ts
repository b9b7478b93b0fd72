import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../core/index.js';
import { parseModelVersion } from './model-version.js';

test("model versions: digits or empty, refused with Triton's messages", () => {
  assert.equal(parseModelVersion(''), undefined);
  assert.equal(parseModelVersion('0'), 0);
  assert.equal(parseModelVersion('17'), 17);
  assert.throws(
    () => parseModelVersion('latest'),
    new NereidError('INVALID_ARG', "failed to get model version from specified version string 'latest' (details: stol), version should be an integral value > 0"),
  );
  assert.throws(
    () => parseModelVersion('99999999999999999999'),
    new NereidError('INVALID_ARG', "failed to get model version from specified version string '99999999999999999999' (details: stol), version should be an integral value > 0"),
  );
  assert.throws(() => parseModelVersion('-1'), new NereidError('INVALID_ARG', "invalid model version specified '-1' , version should be an integral value > 0"));
});
