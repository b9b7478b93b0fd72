import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/*
 * A table of malformed requests, built by putting each bad value into each place of a valid request:
 * none may get a 500 (a 500 is a bug that the client's bytes reached), and each gets a JSON error.
 */

/** Bad JSON values, as text: integers past 2^53 reach messages as bigints, deep nesting reaches recursion. */
const BAD_VALUES: readonly string[] = [
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551616',
  '123456789012345678901234567890',
  '[9007199254740993]',
  '[1,9007199254740993]',
  '{"a":9007199254740993}',
  '1e400',
  '-1',
  '1.5',
  'NaN',
  'Infinity',
  'null',
  'true',
  '""',
  '"x"',
  '[]',
  '{}',
  '[[]]',
  '[null]',
  '["a",1]',
  '{"__proto__":{"x":1}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
  `[${'['.repeat(200)}1${']'.repeat(200)}]`,
];

const VALID_INPUT = { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) };
const VALID_REQUEST = {
  id: 'r',
  parameters: {},
  inputs: [VALID_INPUT, { ...VALID_INPUT, name: 'INPUT1' }],
  outputs: [{ name: 'OUTPUT0', parameters: {} }],
};

/** The places a bad value goes, as JSON text with `@` where it goes. */
const PLACES: readonly string[] = [
  '@',
  '{"inputs":@}',
  '{"inputs":[@]}',
  '{"id":@,"inputs":[]}',
  '{"parameters":@,"inputs":[]}',
  '{"parameters":{"priority":@},"inputs":[]}',
  '{"parameters":{"timeout":@},"inputs":[]}',
  '{"parameters":{"sequence_id":@},"inputs":[]}',
  '{"parameters":{"binary_data_output":@},"inputs":[]}',
  '{"outputs":@,"inputs":[]}',
  '{"outputs":[@],"inputs":[]}',
  '{"outputs":[{"name":@}],"inputs":[]}',
  '{"outputs":[{"name":"OUTPUT0","parameters":{"classification":@}}],"inputs":[]}',
  ...['name', 'datatype', 'shape', 'data', 'parameters'].map((field) =>
    JSON.stringify({ ...VALID_REQUEST, inputs: [{ ...VALID_INPUT, [field]: '@' }, VALID_REQUEST.inputs[1]] }).replace('"@"', '@'),
  ),
  JSON.stringify({ inputs: [{ ...VALID_INPUT, shape: ['@', 16] }] }).replace('"@"', '@'),
  JSON.stringify({ inputs: [{ ...VALID_INPUT, parameters: { binary_data_size: '@' } }] }).replace('"@"', '@'),
  JSON.stringify({ inputs: [{ ...VALID_INPUT, data: ['@'] }] }).replace('"@"', '@'),
];

const PATHS = ['/v2/models/simple/infer', '/v2/models/identity_bytes/infer'];

/** Bodies for the control routes, each with `@` for the bad value. */
const CONTROL: ReadonlyArray<{ readonly path: string; readonly body: string }> = [
  { path: '/v2/repository/index', body: '@' },
  { path: '/v2/repository/index', body: '{"ready":@}' },
  { path: '/v2/repository/models/simple/load', body: '@' },
  { path: '/v2/repository/models/simple/load', body: '{"parameters":@}' },
  { path: '/v2/repository/models/simple/load', body: '{"parameters":{"config":@}}' },
  { path: '/v2/logging', body: '@' },
  { path: '/v2/logging', body: '{"log_verbose_level":@}' },
  { path: '/v2/models/simple/generate', body: '@' },
];

describe('no malformed request gets a 500', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple', 'identity_bytes'] });
  });
  after(() => server.close());

  test(`${BAD_VALUES.length * (PLACES.length * PATHS.length + CONTROL.length)} variants: none answered 500, every refusal with a JSON error`, async () => {
    const failures: string[] = [];
    const send = async (path: string, body: string): Promise<void> => {
      const response = await server.post(path, body);
      const text = await response.text();
      if (response.status === 500 || (response.status >= 400 && typeof (JSON.parse(text) as { error?: unknown }).error !== 'string')) {
        failures.push(`${path} ${body.slice(0, 120)} -> ${response.status} ${text.slice(0, 200)}`);
      }
    };
    for (const value of BAD_VALUES) {
      for (const path of PATHS) for (const place of PLACES) await send(path, place.replace('@', value));
      for (const { path, body } of CONTROL) await send(path, body.replace('@', value));
    }
    assert.deepEqual(failures, []);
  });

  test('file:1/ as a load parameter is refused with 400, and the model stays loaded', async () => {
    const response = await server.post('/v2/repository/models/simple/load', {
      parameters: { config: JSON.stringify({ name: 'simple', platform: 'onnxruntime_onnx' }), 'file:1/': 'AAAA' },
    });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: string }).error, /^load parameter 'file:1\/' is not a file inside a version folder/);
    assert.equal((await server.get('/v2/models/simple/ready')).status, 200);
  });

  test('nesting past the limit is refused with its depth named, without recursion', async () => {
    const response = await server.post('/v2/models/simple/infer', `{"inputs":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: 'failed to parse the request JSON buffer: arrays and objects nest deeper than 128 levels (at character 137) in the inference request',
    });
  });

  test('an integer past 2^53 in a shape is named digit for digit', async () => {
    const response = await server.post('/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[9007199254740993],"data":[]}]}');
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: "Unable to parse 'shape': input 'INPUT0': 'shape' must be an array of non-negative integers, got [9007199254740993]",
    });
  });
});
