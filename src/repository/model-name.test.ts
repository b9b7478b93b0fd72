import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateModelName } from './model-name.js';

test('a model name that could name a folder passes', () => {
  for (const name of ['simple', 'my.model-2', ' padded ', 'a'.repeat(255)]) validateModelName('load', name);
  // Triton refuses any '..' in a name to load; an unload of it finds no model and succeeds.
  validateModelName('unload', 'x..y');
});

test("names Triton refuses to load are refused in its words (core ValidateModelName)", () => {
  const cases: Array<[string, string]> = [
    ['', 'model name must not be empty'],
    [' \t', 'model name must not contain only whitespace characters'],
    ['..', "invalid model name '..', model name must not contain path traversal characters"],
    ['x..y', "invalid model name 'x..y', model name must not contain path traversal characters"],
    ['../../etc', "invalid model name '../../etc', model name must not contain path traversal characters"],
    ['a/b', "invalid model name 'a/b', model name must not contain path traversal characters"],
  ];
  for (const [name, message] of cases) assert.throws(() => validateModelName('load', name), { status: 'INVALID_ARG', message }, name);
});

test("other names that name no model folder are refused with Triton's not-found message and the reason", () => {
  const cases: Array<[string, string]> = [
    ['', 'a model name cannot be empty'],
    ['   ', 'a model name cannot be only whitespace'],
    ['..', "a model name cannot be '.' or contain '..'"],
    ['.', "a model name cannot be '.' or contain '..'"],
    ['simple/..', "a model name cannot be '.' or contain '..'"],
    ['a/b', "a model name cannot contain a path separator ('/' or '\\')"],
    ['a\\b', "a model name cannot contain a path separator ('/' or '\\')"],
    ['a\0b', 'a model name cannot contain a NUL character'],
    ['é'.repeat(128), 'a model name cannot be longer than 255 bytes, the longest folder name'],
  ];
  for (const [name, reason] of cases) {
    assert.throws(
      () => validateModelName('unload', name),
      { status: 'INVALID_ARG', message: `failed to unload '${name}': Request for unknown model: '${name}' is not found; ${reason}` },
      name,
    );
  }
  // Those Triton does not check before it looks: its not-found message on load too.
  for (const [name, reason] of cases.filter(([name]) => name === '.' || /[\\\0]/.test(name) || name.length > 100)) {
    assert.throws(() => validateModelName('load', name), { status: 'INVALID_ARG', message: `failed to load '${name}', failed to poll from model repository; ${reason}` }, name);
  }
});
