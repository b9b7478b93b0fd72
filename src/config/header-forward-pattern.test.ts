import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileHeaderForwardPattern } from './header-forward-pattern.js';

const fail = (message: string): Error => new Error(message);

test("reads the pattern as Triton does: matched anywhere, case-insensitive unless RE2's leading (?-i) says otherwise", () => {
  const matches = (pattern: string, names: string[]): string[] => names.filter((name) => compileHeaderForwardPattern('grpc-header-forward-pattern', pattern, fail).test(name));
  const names = ['my_header_1', 'MY_HEADER_2', 'x-my_header', 'header_1'];
  assert.deepEqual(matches('my_header.*', names), ['my_header_1', 'MY_HEADER_2', 'x-my_header']);
  assert.deepEqual(matches('MY_HEADER.*', names), ['my_header_1', 'MY_HEADER_2', 'x-my_header']);
  assert.deepEqual(matches('(?-i)MY_HEADER.*', names), ['MY_HEADER_2']);
  assert.deepEqual(matches('^my_header_\\d$', names), ['my_header_1', 'MY_HEADER_2']);
  assert.deepEqual(matches('(?s-i)^header', names), ['header_1']);
});

test('a pattern JavaScript cannot read, or a flag it does not have, fails with the flag named', () => {
  assert.throws(() => compileHeaderForwardPattern('http-header-forward-pattern', 'my_header([', fail), {
    message: /^--http-header-forward-pattern 'my_header\(\[' is not a valid regular expression: /,
  });
  assert.throws(() => compileHeaderForwardPattern('http-header-forward-pattern', '(?U)a+', fail), {
    message: "--http-header-forward-pattern '(?U)a+': flag U is not supported; Nereid reads the flags i, m and s",
  });
});
