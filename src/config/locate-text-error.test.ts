import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fromText } from '@bufbuild/protobuf/txtpb';
import { ModelConfigSchema } from '../protocol/gen/model_config_pb.js';
import { locateTextError, scanTokens } from './locate-text-error.js';

function reasonOf(text: string): string {
  try {
    fromText(ModelConfigSchema, text);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('expected a parse error');
}

describe('scanTokens', () => {
  test('splits names, numbers, strings and symbols, skipping comments', () => {
    const tokens = scanTokens('dims: [ -1, 0x1F, 2.5e-3 ] # note\nname: \'a\\\'b\' x: -inf');
    assert.deepEqual(
      tokens.map((t) => [t.kind, t.text, t.start]),
      [
        ['identifier', 'dims', 0],
        ['symbol', ':', 4],
        ['symbol', '[', 6],
        ['symbol', '-', 8],
        ['number', '1', 9],
        ['symbol', ',', 10],
        ['number', '0x1F', 12],
        ['symbol', ',', 16],
        ['number', '2.5e-3', 18],
        ['symbol', ']', 25],
        ['identifier', 'name', 34],
        ['symbol', ':', 38],
        ['string', "'a\\'b'", 40],
        ['identifier', 'x', 47],
        ['symbol', ':', 48],
        ['identifier', '-inf', 50],
      ],
    );
  });

  test('stops after a character that starts no token', () => {
    assert.deepEqual(
      scanTokens('a: $ b').map((t) => [t.kind, t.text]),
      [['identifier', 'a'], ['symbol', ':'], ['invalid', '$']],
    );
  });
});

describe('locateTextError', () => {
  // These pin the txtpb behaviour the search relies on: the parser reads no further than the token it fails at.
  test('finds the token a value error is about', () => {
    const text = 'input { name: "a" }\ninput { name: "b" dims: [ 1, "2" ] }';
    const context = locateTextError(ModelConfigSchema, text, reasonOf(text));
    assert.equal(context.offset, text.indexOf('"2"'));
    assert.equal(context.position, 'value');
    assert.equal(context.blockPath, 'input[1]');
    assert.equal(context.fieldName, 'dims');
  });

  test('finds the token after a field name when the colon is missing', () => {
    const text = 'name "x"';
    const context = locateTextError(ModelConfigSchema, text, reasonOf(text));
    assert.equal(context.offset, 5);
    assert.equal(context.position, 'after-name');
  });

  test('reports the end of input with the innermost open block', () => {
    const text = 'sequence_batching { oldest { ';
    const context = locateTextError(ModelConfigSchema, text, reasonOf(text));
    assert.equal(context.token, undefined);
    assert.equal(context.offset, text.length);
    assert.equal(context.openedAt, text.indexOf('{', 20));
    assert.equal(context.blockPath, 'sequence_batching.oldest');
  });
});
