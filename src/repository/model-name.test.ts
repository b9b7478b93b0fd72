import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateModelName } from './model-name.js';

test('a model name that could name a folder passes', () => {
  for (const name of ['simple', 'my.model-2', 'x..y', ' padded ', 'a'.repeat(255)]) validateModelName('load', name);
});

test("names that name no model folder are refused with Triton's message and the reason", () => {
  const cases: Array<[string, string]> = [
    ['', 'a model name cannot be empty'],
    ['   ', 'a model name cannot be only whitespace'],
    ['..', "a model name cannot be '.' or contain '..'"],
    ['.', "a model name cannot be '.' or contain '..'"],
    ['../../etc', "a model name cannot be '.' or contain '..'"],
    ['simple/..', "a model name cannot be '.' or contain '..'"],
    ['a/b', "a model name cannot contain a path separator ('/' or '\\')"],
    ['a\\b', "a model name cannot contain a path separator ('/' or '\\')"],
    ['a\0b', 'a model name cannot contain a NUL character'],
    ['é'.repeat(128), 'a model name cannot be longer than 255 bytes, the longest folder name'],
  ];
  for (const [name, reason] of cases) {
    assert.throws(() => validateModelName('load', name), { status: 'INVALID_ARG', message: `failed to load '${name}', failed to poll from model repository; ${reason}` }, name);
    assert.throws(
      () => validateModelName('unload', name),
      { status: 'INVALID_ARG', message: `failed to unload '${name}': Request for unknown model: '${name}' is not found; ${reason}` },
      name,
    );
  }
});
