import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { ModelMetadata } from '../client/index.js';
import { type InputDataOptions, buildRequestInputs } from './input-data.js';
import { createRandom } from './random.js';

const SIMPLE: ModelMetadata = {
  name: 'simple',
  versions: ['1'],
  platform: 'onnxruntime_onnx',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [-1, 4] },
    { name: 'TEXT', datatype: 'BYTES', shape: [-1, 2] },
  ],
  outputs: [],
};
const VARIABLE: ModelMetadata = { ...SIMPLE, name: 'variable', inputs: [{ name: 'X', datatype: 'FP16', shape: [-1, -1] }] };

const options = (overrides: Partial<InputDataOptions> = {}): InputDataOptions => ({
  maxBatchSize: 8,
  batchSize: 1,
  shapes: new Map(),
  source: { kind: 'random' },
  stringLength: 5,
  random: createRandom(1),
  ...overrides,
});

const dir = mkdtempSync(join(tmpdir(), 'nereid-input-data-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, json: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
};

describe('perf input data', () => {
  test('random: made once, batch dimension first, strings of --string-length', async () => {
    const sets = await buildRequestInputs(SIMPLE, options({ batchSize: 3 }));
    assert.equal(sets.length, 1);
    const [numbers, text] = sets[0]!;
    assert.deepEqual(numbers!.shape, [3, 4]);
    assert.ok(numbers!.data instanceof Int32Array && numbers!.data.length === 12);
    assert.ok([...(numbers!.data as Int32Array)].every((value) => value >= 0 && value < 100));
    assert.deepEqual(text!.shape, [3, 2]);
    assert.ok((text!.data as string[]).every((value) => /^[A-Za-z0-9]{5}$/.test(value)));
  });

  test('zero, and --shape for variable dimensions; FP16 in [0.5, 1) when random', async () => {
    const [zero] = (await buildRequestInputs(VARIABLE, options({ source: { kind: 'zero' }, shapes: new Map([['X', [2, 3]]]) })))[0]!;
    assert.deepEqual(zero!.shape, [1, 2, 3]);
    assert.deepEqual(zero!.data, new Uint16Array(6));
    const [random] = (await buildRequestInputs(VARIABLE, options({ maxBatchSize: 0, shapes: new Map([['X', [4, 1]]]) })))[0]!;
    assert.deepEqual(random!.shape, [4, 1]);
    assert.ok([...(random!.data as Uint16Array)].every((bits) => bits >= 0x3800 && bits < 0x3c00));
  });

  test("a data file in perf_analyzer's format: plain, content with shape, base64; batches join entries in turn", async () => {
    const bytes = (values: number[]) => Buffer.from(new Int32Array(values).buffer).toString('base64');
    const path = file('data.json', {
      data: [
        { INPUT0: [1, 2, 3, 4], TEXT: ['a', 'b'] },
        { INPUT0: { content: [[5, 6], [7, 8]], shape: [4] }, TEXT: { content: ['c', 'd'] } },
        { INPUT0: { b64: bytes([9, 10, 11, 12]) }, TEXT: { b64: Buffer.from([1, 0, 0, 0, 0x65, 1, 0, 0, 0, 0x66]).toString('base64') } },
      ],
    });
    const sets = await buildRequestInputs(SIMPLE, options({ batchSize: 2, source: { kind: 'file', path } }));
    assert.equal(sets.length, 2);
    assert.deepEqual(sets[0]![0]!.shape, [2, 4]);
    assert.deepEqual(sets[0]![0]!.data, new Int32Array([1, 2, 3, 4, 5, 6, 7, 8]));
    assert.deepEqual(
      (sets[0]![1]!.data as Array<string | Uint8Array>).map((element) => Buffer.from(element).toString()),
      ['a', 'b', 'c', 'd'],
    );
    assert.deepEqual(sets[1]![0]!.data, new Int32Array([9, 10, 11, 12, 1, 2, 3, 4]), 'the last batch wraps to the first entry');
    assert.deepEqual(
      (sets[1]![1]!.data as Array<string | Uint8Array>).map((element) => Buffer.from(element).toString()),
      ['e', 'f', 'a', 'b'],
    );
  });

  test('what cannot be sent is said before measuring', async () => {
    const cases: Array<[ModelMetadata, Partial<InputDataOptions>, string]> = [
      [VARIABLE, {}, "input 'X' has a variable shape [-1] (without the batch dimension); give its size with --shape X:N"],
      [SIMPLE, { maxBatchSize: 0, batchSize: 2 }, "model 'simple' does not batch (max_batch_size 0), so -b must be 1, not 2"],
      [SIMPLE, { batchSize: 9 }, "-b 9 is more than model 'simple' takes (max_batch_size 8)"],
      [SIMPLE, { shapes: new Map([['INPUT9', [1]]]) }, "--shape names input 'INPUT9', but model 'simple' has 'INPUT0', 'TEXT'"],
      [SIMPLE, { source: { kind: 'file', path: file('missing.json', { data: [{ INPUT0: [1, 2, 3, 4] }] }) } }, `--input-data ${join(dir, 'missing.json')}: entry 0 has no data for input 'TEXT'`],
      [SIMPLE, { source: { kind: 'file', path: file('count.json', { data: [{ INPUT0: [1, 2, 3], TEXT: ['a', 'b'] }] }) } }, `--input-data ${join(dir, 'count.json')}: entry 0, input 'INPUT0': input 'INPUT0': shape [4] has 4 elements but the data holds 3`],
      [SIMPLE, { source: { kind: 'file', path: file('type.json', { data: [{ INPUT0: [1, 2, 3, 'x'], TEXT: ['a', 'b'] }] }) } }, `--input-data ${join(dir, 'type.json')}: entry 0, input 'INPUT0': input 'INPUT0': element 3 is x, but INT32 data must be integers from -2147483648 to 2147483647`],
      [SIMPLE, { source: { kind: 'file', path: file('empty.json', { data: [] }) } }, `--input-data ${join(dir, 'empty.json')}: expected {"data": [ {"INPUT_NAME": [...], ...}, ... ]} with at least one entry`],
    ];
    for (const [metadata, overrides, message] of cases) {
      await assert.rejects(buildRequestInputs(metadata, options(overrides)), { name: 'InputDataError', message });
    }
  });
});
