import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { TREE_MODELS, TREE_REPOSITORY, rowsAsFloat32, treeExpectation } from '../../../test/helpers/tree-fixtures.js';
import { CATEGORY_LEFT, CATEGORY_RIGHT, type Forest, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, ZERO_AS_MISSING, buildForest, nextUp } from './forest.js';
import { readFilSettings } from './fil-settings.js';
import { createNativeForest, type NativeForest, type NativeKernel } from './native-forest.js';
import { predictMargins } from './predict.js';
import { MODEL_TYPES, readForest } from './read-forest.js';

const probe = createNativeForest(buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [{ left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: [1], group: 0 }]), { isFallbackForced: false });
// `npm install` builds the addon; CI must have it, a machine without a compiler skips.
const skip = 'fallbackReason' in probe && !process.env['CI'] ? probe.fallbackReason : false;

function nativeOf(forest: Forest, kernel: NativeKernel = 'auto'): NativeForest {
  const choice = createNativeForest(forest, { isFallbackForced: false, kernel });
  if (!('native' in choice)) throw new Error(choice.fallbackReason);
  return choice.native;
}

/** The kernels this CPU runs (the walk and the baseline everywhere; AVX2 and AVX-512 where it has them). */
const KERNELS = (['walk', 'avx512', 'avx2', 'baseline'] as const).filter((kernel) => {
  try {
    nativeOf(buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [{ left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: [1], group: 0 }]), kernel);
    return true;
  } catch {
    return false;
  }
});

/**
 * The native margins of every kernel this CPU runs, on the calling thread and off it on 1 and 3
 * threads, each bit for bit predict.ts's.
 */
async function assertSameMargins(forest: Forest, input: Float32Array, rows: number, what: string): Promise<void> {
  const expected = new Float64Array(rows * forest.numGroups);
  predictMargins(forest, input, rows, expected);
  for (const kernel of KERNELS) {
    const native = nativeOf(forest, kernel);
    assert.deepEqual(native.margins(input, rows), expected, `${what}, ${kernel}: on the calling thread`);
    for (const threads of [1, 3]) assert.deepEqual(await native.marginsOffThread(input, rows, threads), expected, `${what}, ${kernel}: on ${threads} threads`);
  }
}

/** A forest of `trees` random trees, each at most `depth` deep (some leaves higher up), numeric splits of both NaN directions. */
function randomForest(options: { trees: number; depth: number; features: number; groups: number; seed: number }): Forest {
  let state = options.seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const trees = Array.from({ length: options.trees }, (_, t) => {
    const tree = { left: [] as number[], right: [] as number[], feature: [] as number[], kind: [] as number[], defaultLeft: [] as number[], value: [] as number[], group: t % options.groups };
    const grow = (level: number): number => {
      const node = tree.left.length;
      const isLeaf = level === options.depth || (level > 0 && random() < 0.2);
      tree.left.push(-1);
      tree.right.push(-1);
      tree.feature.push(isLeaf ? -1 : Math.floor(random() * options.features));
      tree.kind.push(random() < 0.5 ? NUMERIC_DEFAULT_LEFT : NUMERIC_DEFAULT_RIGHT);
      tree.defaultLeft.push(0);
      tree.value.push(isLeaf ? random() * 2 - 1 : Math.fround(random() * 4 - 2));
      if (!isLeaf) {
        tree.left[node] = grow(level + 1);
        tree.right[node] = grow(level + 1);
      }
      return node;
    };
    grow(0);
    return tree;
  });
  return buildForest({ numFeatures: options.features, numGroups: options.groups, objective: 'test', transform: { kind: 'identity' }, baseMargin: new Array(options.groups).fill(0) }, trees);
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

  test('random forests of depth 0 to 6, one group and three: the same margins from every kernel, with NaN, infinities and thresholds met exactly', async () => {
    for (const depth of [0, 1, 2, 3, 4, 5, 6]) {
      for (const groups of [1, 3]) {
        const forest = randomForest({ trees: 40, depth, features: 7, groups, seed: depth * 10 + groups });
        const thresholds = [...forest.value.filter((_, n) => forest.feature[n]! >= 0)];
        let state = depth + 1;
        const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
        const specials = [Number.NaN, Infinity, -Infinity, 0, -0];
        // 150 rows: blocks with a NaN and without, and a last block of 6 rows.
        const input = Float32Array.from({ length: 150 * 7 }, (_, i) => {
          const pick = random();
          if (i < 64 * 7 && pick < 0.1) return specials[Math.floor(random() * specials.length)]!;
          return pick < 0.3 && thresholds.length > 0 ? thresholds[Math.floor(random() * thresholds.length)]! : random() * 4 - 2;
        });
        await assertSameMargins(forest, input, 150, `depth ${depth}, ${groups} groups`);
        await assertSameMargins(forest, input.subarray(7 * 10, 7 * 15), 5, `depth ${depth}, ${groups} groups, 5 rows`);
      }
    }
  });

  test("'auto' lays out complete trees for a shallow forest of numeric splits, and walks a deeper one or one with categories", () => {
    const widest = KERNELS.find((kernel) => kernel !== 'walk')!;
    assert.equal(nativeOf(randomForest({ trees: 3, depth: 5, features: 2, groups: 1, seed: 1 })).kernel, widest);
    assert.equal(nativeOf(randomForest({ trees: 3, depth: 6, features: 2, groups: 1, seed: 1 })).kernel, 'walk');
    const categorical = buildForest({ numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] }, [
      { left: [1, -1, -1], right: [2, -1, -1], feature: [0, -1, -1], kind: [CATEGORY_LEFT, 0, 0], defaultLeft: [0, 0, 0], value: [0, -1, 1], group: 0, categories: new Map([[0, [1]]]) },
    ]);
    assert.equal(nativeOf(categorical).kernel, 'walk');
    assert.throws(() => nativeOf(categorical, 'sse9' as NativeKernel), /kernel 'sse9' is not one this CPU runs/);
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
