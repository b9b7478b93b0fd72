import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rapidJsonError } from './rapidjson-error.js';

test("RapidJSON's message and byte offset for each error a client's text can hold", () => {
  const cases: Array<[string, string, number]> = [
    ['AAAA', 'Invalid value.', 0],
    ['', 'The document is empty.', 0],
    ['   ', 'The document is empty.', 3],
    ['{"a":1}x', 'The document root must not be followed by other values.', 7],
    ['{"a" 1}', 'Missing a colon after a name of object member.', 5],
    ['{1:2}', 'Missing a name for object member.', 1],
    ['{"a":1,}', 'Missing a name for object member.', 7],
    ['{"a":1 "b":2}', "Missing a comma or '}' after an object member.", 7],
    ['[1,2', "Missing a comma or ']' after an array element.", 4],
    ['"abc', 'Missing a closing quotation mark in string.', 4],
    ['"a\\x"', 'Invalid escape character in string.', 2],
    ['"\\u12G4"', 'Incorrect hex digit after \\u escape in string.', 1],
    ['"\\uD800"', 'The surrogate pair in string is invalid.', 1],
    ['["\\uDC00", x]', 'Invalid value.', 11],
    ['"a\tb"', 'Invalid escape character in string.', 2],
    ['1.', 'Miss fraction part in number.', 2],
    ['1e+', 'Miss exponent in number.', 3],
    ['-', 'Invalid value.', 1],
    ['[-x]', 'Invalid value.', 2],
    ['nul', 'Invalid value.', 3],
    ['Infinit', 'Invalid value.', 7],
    ['{"a":[1,{"b":tru}]}', 'Invalid value.', 16],
    // Offsets count UTF-8 bytes, as RapidJSON's stream does.
    ['{"é":x}', 'Invalid value.', 6],
  ];
  for (const [text, message, offset] of cases) assert.deepEqual(rapidJsonError(text), { message, offset }, text);
});

test('what RapidJSON accepts, NaN and Infinity included (kParseNanAndInfFlag), has no error; no nesting overflows the scan', () => {
  for (const text of ['[1,2]', '{"a":{"b":[]}}', '\t\n{}', 'NaN', '-Infinity', '[Inf, -0.5e-3, "\\ud83d\\ude00"]', 'null', ' true ']) {
    assert.equal(rapidJsonError(text), undefined, text);
  }
  assert.deepEqual(rapidJsonError(`${'['.repeat(200_000)}1`), { message: "Missing a comma or ']' after an array element.", offset: 200_001 });
});
