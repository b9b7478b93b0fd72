import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonObjectMembers } from './json-members.js';

test('members come in the order written, a name given twice kept twice, each value as its text', () => {
  const text = ' { "PROMPT" : "a \\" } ,", "n": [1, {"x": "]"}], "PROMPT":true,"e\\u0041":{}, "v":-1.5e3 , "z":null } ';
  assert.deepEqual(jsonObjectMembers(text), [
    { name: 'PROMPT', valueText: '"a \\" } ,"' },
    { name: 'n', valueText: '[1, {"x": "]"}]' },
    { name: 'PROMPT', valueText: 'true' },
    { name: 'eA', valueText: '{}' },
    { name: 'v', valueText: '-1.5e3' },
    { name: 'z', valueText: 'null' },
  ]);
});

test('an empty object has no members; a value that is no object has none to list', () => {
  assert.deepEqual(jsonObjectMembers('{}'), []);
  assert.equal(jsonObjectMembers('[{"a":1}]'), undefined);
  assert.equal(jsonObjectMembers('"{}"'), undefined);
});
