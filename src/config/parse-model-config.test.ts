import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NereidError } from '../kernel/errors.js';
import { modelConfigToProtoJson } from './model-config-json.js';
import { parseModelConfig } from './parse-model-config.js';

// Triton's own configurations and their reference parse (test/fixtures/triton-configs/README.md).
const corpusDir = fileURLToPath(new URL('../../test/fixtures/triton-configs/', import.meta.url));
const configsDir = `${corpusDir}configs/`;
const hasCorpus = existsSync(configsDir) && existsSync(`${corpusDir}expected.json`);

describe("Triton's own config.pbtxt files", () => {
  if (!hasCorpus) {
    test('corpus is present', () => {
      assert.fail(`Triton config corpus not found: expected ${configsDir} and ${corpusDir}expected.json (see test/fixtures/triton-configs/README.md)`);
    });
    return;
  }
  const expected = JSON.parse(readFileSync(`${corpusDir}expected.json`, 'utf8')) as Record<string, unknown>;
  const files = readdirSync(configsDir).filter((name) => name.endsWith('.pbtxt')).sort();

  test('every file has an expected result', () => {
    assert.equal(files.length, 419);
    assert.deepEqual(files.filter((name) => !(name in expected)), []);
  });

  for (const name of files) {
    test(name, () => {
      const config = parseModelConfig(readFileSync(`${configsDir}${name}`, 'utf8'), name);
      assert.deepEqual(modelConfigToProtoJson(config), expected[name]);
    });
  }
});

/** Parses `text` as models/simple/config.pbtxt and returns the error message. */
function errorOf(text: string): string {
  try {
    parseModelConfig(text, 'models/simple/config.pbtxt');
  } catch (error) {
    assert.ok(error instanceof NereidError);
    assert.equal(error.status, 'INVALID_ARG');
    return error.message;
  }
  assert.fail('expected a parse error');
}

describe('parseModelConfig errors', () => {
  test('a character that starts no token, where a number belongs (Triton: "29:17: Expected integer, got: $")', () => {
    assert.equal(
      errorOf('name: "simple"\nmax_batch_size: $\n'),
      "models/simple/config.pbtxt:2:17: unexpected character '$' in field 'max_batch_size'; expected an integer",
    );
  });

  test('a string for max_batch_size', () => {
    assert.equal(
      errorOf('name: "simple"\nmax_batch_size: "eight"\n'),
      'models/simple/config.pbtxt:2:17: invalid value "eight" in field \'max_batch_size\'; expected an integer',
    );
  });

  test('a fraction for max_batch_size', () => {
    assert.equal(
      errorOf('max_batch_size: 1.5'),
      "models/simple/config.pbtxt:1:17: invalid value '1.5' in field 'max_batch_size'; expected an integer",
    );
  });

  test('a number out of the field range', () => {
    assert.equal(
      errorOf('max_batch_size: 99999999999'),
      "models/simple/config.pbtxt:1:17: value 99999999999 is out of range in field 'max_batch_size'; expected an integer from -2147483648 to 2147483647",
    );
  });

  test('a negative value for an unsigned field, reported at the sign', () => {
    assert.equal(
      errorOf('dynamic_batching {\n  max_queue_delay_microseconds: -100\n}'),
      "models/simple/config.pbtxt:2:33: invalid value '-100' in field 'dynamic_batching.max_queue_delay_microseconds'; expected a non-negative integer",
    );
  });

  test('an unknown top-level field, with the closest name', () => {
    assert.equal(
      errorOf('name: "simple"\nmax_batch_sise: 8'),
      "models/simple/config.pbtxt:2:1: unknown field 'max_batch_sise' at the top level; did you mean 'max_batch_size'?",
    );
  });

  test('a camelCase field name is matched to its proto name', () => {
    assert.equal(
      errorOf('maxBatchSize: 8'),
      "models/simple/config.pbtxt:1:1: unknown field 'maxBatchSize' at the top level; did you mean 'max_batch_size'?",
    );
  });

  test('an unknown field inside the second element of a list', () => {
    const text = 'input [\n  { name: "INPUT0" },\n  {\n    name: "INPUT1"\n    dimz: [ 16 ]\n  }\n]';
    assert.equal(
      errorOf(text),
      "models/simple/config.pbtxt:5:5: unknown field 'dimz' in field 'input[1]'; did you mean 'dims'?",
    );
  });

  test('repeated blocks of the same field are counted like list elements', () => {
    assert.equal(
      errorOf('output { name: "A" }\noutput { name: "B" dims: [ 1, x ] }'),
      "models/simple/config.pbtxt:2:31: invalid value 'x' in field 'output[1].dims'; expected an integer",
    );
  });

  test('an unknown name with nothing close lists the allowed names', () => {
    assert.equal(
      errorOf('response_cache { on: true }'),
      "models/simple/config.pbtxt:1:18: unknown field 'on' in field 'response_cache'; expected one of enable",
    );
  });

  test('an unknown enum value, with the closest value', () => {
    assert.equal(
      errorOf('input [ { name: "INPUT0", data_type: TYPE_FP23, dims: [ 4 ] } ]'),
      "models/simple/config.pbtxt:1:38: unknown value 'TYPE_FP23' in field 'input[0].data_type'; did you mean 'TYPE_FP32'?",
    );
  });

  test('a missing colon before a scalar value', () => {
    assert.equal(
      errorOf('input [\n  {\n    name: "INPUT0"\n    data_type TYPE_INT32\n  }\n]'),
      "models/simple/config.pbtxt:4:15: unexpected 'TYPE_INT32' in field 'input[0].data_type'; expected ':'",
    );
  });

  test('an unquoted string', () => {
    assert.equal(
      errorOf('name: "simple"\nplatform: onnxruntime_onnx'),
      "models/simple/config.pbtxt:2:11: invalid value 'onnxruntime_onnx' in field 'platform'; expected a quoted string",
    );
  });

  test('list elements without a comma', () => {
    assert.equal(
      errorOf('input { dims: [ 3 224 224 ] }'),
      "models/simple/config.pbtxt:1:19: unexpected '224' in field 'input[0].dims'; expected ',' or ']'",
    );
  });

  test('a stray closing brace', () => {
    assert.equal(
      errorOf('input { name: "a" }\n}'),
      "models/simple/config.pbtxt:2:1: unexpected '}' at the top level; expected a field name",
    );
  });

  test('an unclosed block names where it opened', () => {
    assert.equal(
      errorOf('name: "simple"\ninstance_group [\n  {\n    count: 2\n'),
      "models/simple/config.pbtxt:5:1: unexpected end of input in field 'instance_group[0]'; expected '}' to close the block opened at 3:3",
    );
  });

  test('an unterminated string', () => {
    assert.equal(
      errorOf('name: "simple\nmax_batch_size: 8'),
      "models/simple/config.pbtxt:1:7: unterminated string (a string must end on the line it starts) in field 'name'; expected a quoted string",
    );
  });

  test('a singular field set twice', () => {
    assert.equal(
      errorOf('max_batch_size: 8\n# raised later\nmax_batch_size: 16'),
      "models/simple/config.pbtxt:3:1: field 'max_batch_size' is set more than once; expected a single value, it is not a repeated field",
    );
  });

  test('two members of one oneof', () => {
    assert.equal(
      errorOf('dynamic_batching { }\nsequence_batching { }'),
      "models/simple/config.pbtxt:2:1: field 'sequence_batching' cannot be set together with 'dynamic_batching'; " +
        "expected only one of 'dynamic_batching', 'sequence_batching', 'ensemble_scheduling'",
    );
  });

  test('a field path through a map entry names its key', () => {
    assert.equal(
      errorOf('parameters {\n  key: "EXECUTION_ENV_PATH"\n  value: { string_valu: "env.tar.gz" }\n}'),
      "models/simple/config.pbtxt:3:12: unknown field 'string_valu' in field 'parameters[\"EXECUTION_ENV_PATH\"]'; did you mean 'string_value'?",
    );
  });

  test('comments and a byte-order mark do not shift positions', () => {
    assert.equal(
      errorOf('\uFEFF# header\nname: "x" # trailing\n  max_batch_size: true'),
      "models/simple/config.pbtxt:3:19: invalid value 'true' in field 'max_batch_size'; expected an integer",
    );
  });
});

describe('parseModelConfig', () => {
  test('reads 64-bit fields as bigint and enums as numbers', () => {
    const config = parseModelConfig('input [ { name: "A" data_type: TYPE_FP32 dims: [ -1, 3 ] } ]', 'x');
    assert.deepEqual(config.input[0]?.dims, [-1n, 3n]);
    assert.equal(config.input[0]?.dataType, 11);
  });

  test('an empty file is an empty configuration', () => {
    assert.deepEqual(modelConfigToProtoJson(parseModelConfig('# nothing\n', 'x')), {});
  });
});
