import { CATEGORY_LEFT, CATEGORY_RIGHT, type Forest, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, ZERO_AS_MISSING } from './forest.js';

/*
 * The fil backend's evaluator in TypeScript: the fallback of the native one (native-forest.ts) when
 * the addon is absent, and what the native one is tested against, bit for bit. Chosen over ONNX
 * Runtime's ai.onnx.ml TreeEnsembleRegressor by measurement (docs/benchmarks.md, "Tree models"):
 * 15 times faster at one row (no session-run overhead), even up to 1,024 rows.
 */

/**
 * Rows are walked in blocks through one tree at a time, so that a tree's nodes stay in cache while
 * the block's rows go through it (a forest of 500 trees of depth 8 is about 4 MB).
 */
const BLOCK_ROWS = 64;

/** Whether x (a feature value, NaN for missing) goes to the left child of split node n. */
export function goesLeft(forest: Forest, n: number, x: number): boolean {
  const kind = forest.kind[n]!;
  if (kind === NUMERIC_DEFAULT_RIGHT) return x < forest.value[n]!;
  if (kind === NUMERIC_DEFAULT_LEFT) return !(x >= forest.value[n]!);
  if (Number.isNaN(x)) return forest.defaultLeft[n] === 1;
  // LightGBM's IsZero: |x| <= kZeroThreshold (1e-35).
  if (kind === ZERO_AS_MISSING) return Math.abs(x) <= 1e-35 ? forest.defaultLeft[n] === 1 : x < forest.value[n]!;
  const category = Math.trunc(x);
  const isInSet = category >= 0 && isCategoryInSet(forest, n, category);
  if (kind === CATEGORY_RIGHT) return category < 0 || category >= 2 ** 24 || !isInSet;
  if (kind === CATEGORY_LEFT) return isInSet;
  return x < forest.value[n]!;
}

function isCategoryInSet(forest: Forest, n: number, category: number): boolean {
  const word = category >>> 5;
  if (category > 0xffffffff || word >= forest.categoryCount[n]!) return false;
  return (forest.categoryBits[forest.categoryStart[n]! + word]! & (1 << (category & 31))) !== 0;
}

/** The leaf that a row (features from `offset` in `input`) reaches in the tree rooted at `root`. */
export function leafOf(forest: Forest, root: number, input: Float32Array, offset: number): number {
  const { feature, kind, value, firstChild } = forest;
  let n = root;
  for (let f = feature[n]!; f >= 0; f = feature[n]!) {
    const x = input[offset + f]!;
    const k = kind[n]!;
    // NOTE: the two numeric kinds, nearly every split, are decided inline; the rest in goesLeft.
    const isLeft = k === NUMERIC_DEFAULT_RIGHT ? x < value[n]! : k === NUMERIC_DEFAULT_LEFT ? !(x >= value[n]!) : goesLeft(forest, n, x);
    n = isLeft ? firstChild[n]! : firstChild[n]! + 1;
  }
  return n;
}

/**
 * The raw margins of `rows` rows (row-major, `numFeatures` each) into `margins`
 * (`rows * numGroups`, row-major): base margin plus the sum of each group's trees, divided by
 * `averageDivisor`. No transform.
 */
export function predictMargins(forest: Forest, input: Float32Array, rows: number, margins: Float64Array): void {
  sumTrees(forest, input, rows, margins);
  finishMargins(forest, margins, rows);
}

/**
 * Each row's sum of leaf values per group into `sums`, trees added in order: what the native
 * evaluator (native/fil/fil.cc) computes, to the last bit.
 */
export function sumTrees(forest: Forest, input: Float32Array, rows: number, sums: Float64Array): void {
  const { numFeatures, numGroups, roots, treeGroup, value } = forest;
  const treeCount = roots.length;
  sums.fill(0, 0, rows * numGroups);
  for (let start = 0; start < rows; start += BLOCK_ROWS) {
    const end = Math.min(rows, start + BLOCK_ROWS);
    for (let t = 0; t < treeCount; t++) {
      const root = roots[t]!;
      const group = treeGroup[t]!;
      for (let row = start; row < end; row++) sums[row * numGroups + group]! += value[leafOf(forest, root, input, row * numFeatures)]!;
    }
  }
}

/** Sums of trees (sumTrees) made margins in place: divided by `averageDivisor`, plus the base margin. */
export function finishMargins(forest: Forest, sums: Float64Array, rows: number): void {
  const { numGroups, baseMargin, averageDivisor } = forest;
  for (let row = 0; row < rows; row++) {
    for (let g = 0; g < numGroups; g++) {
      const index = row * numGroups + g;
      sums[index] = sums[index]! / averageDivisor + baseMargin[g]!;
    }
  }
}

/** The forest's transform applied in place to each row's margins (`numGroups` per row). */
export function transformMargins(forest: Forest, margins: Float64Array, rows: number): void {
  const { transform, numGroups } = forest;
  switch (transform.kind) {
    case 'identity':
      return;
    case 'sigmoid':
      for (let i = 0; i < rows * numGroups; i++) margins[i] = 1 / (1 + Math.exp(-transform.scale * margins[i]!));
      return;
    case 'exp':
      for (let i = 0; i < rows * numGroups; i++) margins[i] = Math.exp(margins[i]!);
      return;
    case 'hinge':
      for (let i = 0; i < rows * numGroups; i++) margins[i] = margins[i]! > 0 ? 1 : 0;
      return;
    case 'softmax':
      for (let row = 0; row < rows; row++) {
        const start = row * numGroups;
        let max = -Infinity;
        for (let g = 0; g < numGroups; g++) max = Math.max(max, margins[start + g]!);
        let sum = 0;
        for (let g = 0; g < numGroups; g++) sum += margins[start + g] = Math.exp(margins[start + g]! - max);
        for (let g = 0; g < numGroups; g++) margins[start + g] = margins[start + g]! / sum;
      }
  }
}
