import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { TREE_MODELS, TREE_REPOSITORY, rowsAsFloat32, treeExpectation } from '../../../test/helpers/tree-fixtures.js';
import { CATEGORY_LEFT, CATEGORY_RIGHT, type Forest, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, ZERO_AS_MISSING, buildForest, nextUp } from './forest.js';
import { readFilSettings } from './fil-settings.js';
import { createNativeForest, type NativeForest } from './native-forest.js';
import { predictMargins } from './predict.js';
import { MODEL_TYPES, readForest } from './read-forest.js';

const probe = createNativeForest(buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [{ left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: [1], group: 0 }]), { isFallbackForced: false });
// `npm install` builds the addon; CI must have it, a machine without a compiler skips.
const skip = 'fallbackReason' in probe && !process.env['CI'] ? probe.fallbackReason : false;

function nativeOf(forest: Forest): NativeForest {
  const choice = createNativeForest(forest, { isFallbackForced: false });
  if (!('native' in choice)) throw new Error(choice.fallbackReason);
  return choice.native;
}

/** The native margins, on the calling thread and off it on 1 and 3 threads, each bit for bit predict.ts's. */
async function assertSameMargins(forest: Forest, input: Float32Array, rows: number, what: string): Promise<void> {
  const expected = new Float64Array(rows * forest.numGroups);
  predictMargins(forest, input, rows, expected);
  const native = nativeOf(forest);
  assert.deepEqual(native.margins(input, rows), expected, `${what}: on the calling thread`);
  for (const threads of [1, 3]) assert.deepEqual(await native.marginsOffThread(input, rows, threads), expected, `${what}: on ${threads} threads`);
}

describe('the native evaluator', { skip }, () => {
  test('every fixture model: the same margins as predict.ts, bit for bit, in one row and in rows enough for several blocks', async () => {
    for (const model of TREE_MODELS) {
      const folder = join(TREE_REPOSITORY, model);
      const { modelType } = readFilSettings(parseModelConfig(readFileSync(join(folder, 'config.pbtxt'), 'utf8'), `${model}/config.pbtxt`));
      const forest = await readForest(model, join(folder, '1', MODEL_TYPES[modelType]), modelType);
      const rows = treeExpectation(model).rows;
      await assertSameMargins(forest, rowsAsFloat32(rows.slice(0, 1)), 1, `${model}, one row`);
      const many = Array.from({ length: 40 }, () => rows).flat();
      await assertSameMargins(forest, rowsAsFloat32(many), many.length, `${model}, ${many.length} rows`);
    }
  });

  test('every split kind, with NaN, infinities, zero, negative and huge categories, and LightGBM double thresholds', async () => {
    const stump = (kind: number, defaultLeft: boolean, threshold: number, categories?: number[]) =>
      buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [
        { left: [1, -1, -1], right: [2, -1, -1], feature: [0, -1, -1], kind: [kind, 0, 0], defaultLeft: [defaultLeft ? 1 : 0, 0, 0], value: [threshold, -1, 1], group: 0, categories: new Map(categories ? [[0, categories]] : []) },
      ]);
    const values = Float32Array.from([0, -0, 0.5, 1, -1, 0.1, Math.fround(0.1), 1.7, 5, 5.9, 33, 40, 2 ** 24, 2 ** 33, -(2 ** 33), Infinity, -Infinity, Number.NaN, 1e-40]);
    const withoutNaN = values.filter((value) => !Number.isNaN(value));
    for (const kind of [NUMERIC_DEFAULT_RIGHT, NUMERIC_DEFAULT_LEFT, ZERO_AS_MISSING, CATEGORY_RIGHT, CATEGORY_LEFT]) {
      for (const defaultLeft of [false, true]) {
        // 0.1 as a double lies between two floats; nextUp(0.1) is LightGBM's `x <= 0.1` rewritten.
        for (const threshold of [0.5, 0.1, nextUp(0.1), Math.fround(0.1), -Infinity, 3.5e38]) {
          const forest = stump(kind, defaultLeft, threshold, [0, 1, 5, 33]);
          const what = `kind ${kind}, default ${defaultLeft ? 'left' : 'right'}, threshold ${threshold}`;
          await assertSameMargins(forest, values, values.length, what);
          // Blocks of 64 rows without a NaN take the NaN-free walk, the block with one the other.
          const mixed = Float32Array.from([...Array.from({ length: 4 }, () => [...withoutNaN]).flat(), ...values]);
          await assertSameMargins(forest, mixed, mixed.length, `${what}, ${mixed.length} rows, NaN in the second block only`);
          // A row alone takes the other loop (trees walked side by side).
          for (let row = 0; row < values.length; row++) await assertSameMargins(forest, values.subarray(row, row + 1), 1, `${what}, row ${row} alone`);
        }
      }
    }
  });

  test('batches in flight at once on the evaluator threads each get their own margins', async () => {
    const models = TREE_MODELS.slice(0, 3);
    const cases = await Promise.all(
      models.map(async (model) => {
        const folder = join(TREE_REPOSITORY, model);
        const { modelType } = readFilSettings(parseModelConfig(readFileSync(join(folder, 'config.pbtxt'), 'utf8'), `${model}/config.pbtxt`));
        const forest = await readForest(model, join(folder, '1', MODEL_TYPES[modelType]), modelType);
        const rows = Array.from({ length: 30 }, () => treeExpectation(model).rows).flat();
        const expected = new Float64Array(rows.length * forest.numGroups);
        predictMargins(forest, rowsAsFloat32(rows), rows.length, expected);
        return { native: nativeOf(forest), input: rowsAsFloat32(rows), rows: rows.length, expected };
      }),
    );
    const results = await Promise.all(cases.flatMap((item) => [1, 2, 4].map((threads) => item.native.marginsOffThread(item.input, item.rows, threads))));
    cases.forEach((item, index) => {
      for (let t = 0; t < 3; t++) assert.deepEqual(results[index * 3 + t], item.expected, `${models[index]}, call ${t}`);
    });
  });

  test('arguments that do not fit the forest are refused, not read past their end', () => {
    const forest = buildForest({ numFeatures: 2, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [{ left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: [1], group: 0 }]);
    const native = nativeOf(forest);
    assert.throws(() => native.margins(new Float32Array(3), 2), /bad arguments/);
    assert.deepEqual(native.margins(new Float32Array(0), 0), new Float64Array(0));
  });
});

test('NEREID_FIL_FALLBACK=1 chooses the JavaScript evaluator without trying the addon', () => {
  const previous = process.env.NEREID_FIL_FALLBACK;
  process.env.NEREID_FIL_FALLBACK = '1';
  try {
    const choice = createNativeForest(buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [{ left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: [1], group: 0 }]));
    assert.deepEqual(choice, { fallbackReason: 'NEREID_FIL_FALLBACK=1' });
  } finally {
    if (previous === undefined) delete process.env.NEREID_FIL_FALLBACK;
    else process.env.NEREID_FIL_FALLBACK = previous;
  }
});
