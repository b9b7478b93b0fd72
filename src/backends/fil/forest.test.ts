import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CATEGORY_LEFT, CATEGORY_RIGHT, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, ZERO_AS_MISSING, buildForest, nextUp } from './forest.js';
import { predictMargins } from './predict.js';

test('nextUp is the next double: x <= t exactly when x < nextUp(t)', () => {
  assert.equal(nextUp(1), 1 + Number.EPSILON);
  assert.equal(nextUp(0), Number.MIN_VALUE);
  assert.equal(nextUp(-1), -1 + Number.EPSILON / 2);
  assert.equal(nextUp(Infinity), Infinity);
});

/** One split on feature 0 at 0.5 of the given kind, leaves -1 (left) and +1 (right). */
function stump(kind: number, defaultLeft: boolean, categories?: number[]) {
  return buildForest(
    { numFeatures: 1, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] },
    [{ left: [1, -1, -1], right: [2, -1, -1], feature: [0, -1, -1], kind: [kind, 0, 0], defaultLeft: [defaultLeft ? 1 : 0, 0, 0], value: [0.5, -1, 1], group: 0, categories: new Map(categories ? [[0, categories]] : []) }],
  );
}

function predict(forest: ReturnType<typeof stump>, values: number[]): number[] {
  const out = new Float64Array(values.length);
  predictMargins(forest, Float32Array.from(values), values.length, out);
  return [...out];
}

test('every split kind: numeric with either default, zero as missing, both category rules', () => {
  assert.deepEqual(predict(stump(NUMERIC_DEFAULT_RIGHT, false), [0, 0.5, 1, Number.NaN]), [-1, 1, 1, 1]);
  assert.deepEqual(predict(stump(NUMERIC_DEFAULT_LEFT, true), [0, 0.5, 1, Number.NaN]), [-1, 1, 1, -1]);
  assert.deepEqual(predict(stump(ZERO_AS_MISSING, false), [0, 0.25, 1, Number.NaN]), [1, -1, 1, 1]);
  // XGBoost: listed categories go right; negative, unlisted and NaN (default left here) go left.
  assert.deepEqual(predict(stump(CATEGORY_RIGHT, true, [1, 33]), [1, 33, 2, -1, 1.7, Number.NaN, 40]), [1, 1, -1, -1, 1, -1, -1]);
  // LightGBM: listed categories go left; negative and unlisted go right.
  assert.deepEqual(predict(stump(CATEGORY_LEFT, false, [0, 5]), [0, 5, 5.9, 6, -1, Number.NaN]), [-1, -1, -1, 1, 1, 1]);
});

test('a tree whose children point outside it, or back at a node, is refused with the place', () => {
  const header = { numFeatures: 2, numGroups: 1, objective: 'test', transform: { kind: 'identity' }, baseMargin: [0] } as const;
  const tree = { right: [2, -1, -1], kind: [0, 0, 0], defaultLeft: [0, 0, 0], value: [0, 1, 2], group: 0 };
  assert.throws(() => buildForest(header, [{ ...tree, left: [7, -1, -1], feature: [0, -1, -1] }]), { message: 'tree 0: node 0 has child 7, outside 1..2' });
  assert.throws(() => buildForest(header, [{ ...tree, left: [1, 2, -1], right: [2, 2, -1], feature: [0, 1, -1] }]), { message: 'tree 0: node 2 is reached twice' });
  assert.throws(() => buildForest(header, [{ ...tree, left: [1, -1, -1], feature: [5, -1, -1] }]), { message: 'tree 0: node 0 splits on feature 5, but the model has 2 features' });
  assert.throws(() => buildForest(header, [{ ...tree, left: [1, -1, -1], feature: [0, -1, -1], group: 1 }]), { message: 'tree 0 adds to output group 1, but the model has 1' });
});
