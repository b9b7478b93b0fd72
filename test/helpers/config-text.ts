import assert from 'node:assert/strict';
import { NereidError } from '../../src/kernel/errors.js';

/** A config.pbtxt `parameters` block of string values. */
export const parametersText = (entries: Record<string, string>): string =>
  `parameters [${Object.entries(entries)
    .map(([key, value]) => `{ key: "${key}" value: { string_value: "${value}" } }`)
    .join(', ')}]`;

/** The message with which `load` refuses a configuration (INVALID_ARG); the test fails if it loads. */
export async function refusalOf(load: () => Promise<unknown>): Promise<string> {
  try {
    await load();
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, 'INVALID_ARG');
    return error.message;
  }
  assert.fail('the configuration loaded');
}
