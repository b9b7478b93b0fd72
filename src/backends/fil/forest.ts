/**
 * One flat representation of a tree ensemble, whatever file it came from (XGBoost JSON, UBJSON or
 * binary, LightGBM text), laid out for the evaluator (predict.ts) in typed arrays indexed by node.
 *
 *   tree t:  roots[t] ─▶ node n ── feature[n] ≥ 0: a split; its children are firstChild[n] (left)
 *                                  and firstChild[n] + 1 (right), always side by side
 *                         └─────── feature[n] = -1: a leaf whose value is value[n]
 *
 * A split's `kind` says how the feature value x picks a child; every rule is the source format's
 * own, rewritten once here so that the evaluator needs no branch per format:
 *
 * | kind                 | left when                                    | NaN goes              |
 * |----------------------|----------------------------------------------|-----------------------|
 * | NUMERIC_DEFAULT_RIGHT| x < value[n]                                 | right                 |
 * | NUMERIC_DEFAULT_LEFT | !(x >= value[n])                             | left                  |
 * | ZERO_AS_MISSING      | x < value[n], but x = 0 goes the default way | default (LightGBM's   |
 * |                      | (`defaultLeft`)                              | missing_type Zero)    |
 * | CATEGORY_RIGHT       | trunc(x) is not in the node's category set   | default (`defaultLeft`)|
 * |                      | (XGBoost: listed categories go right; a      |                       |
 * |                      | negative or huge category goes left)         |                       |
 * | CATEGORY_LEFT        | trunc(x) is in the set (LightGBM; a negative | default (`defaultLeft`)|
 * |                      | category goes right)                         |                       |
 *
 * LightGBM's `x <= threshold` (double) becomes `x < nextUp(threshold)`: inputs are float32, held as
 * doubles, so the comparison is exact and thresholds keep LightGBM's double precision.
 */
import { ModelFileError } from './model-file-error.js';

export const NUMERIC_DEFAULT_RIGHT = 0;
export const NUMERIC_DEFAULT_LEFT = 1;
export const ZERO_AS_MISSING = 2;
export const CATEGORY_RIGHT = 3;
export const CATEGORY_LEFT = 4;

/** How the summed margins of a row become its prediction. */
export type OutputTransform =
  | { readonly kind: 'identity' }
  | { readonly kind: 'sigmoid'; readonly scale: number }
  | { readonly kind: 'softmax' }
  | { readonly kind: 'exp' }
  | { readonly kind: 'hinge' };

export interface Forest {
  /** The number of input features (columns) a row has. */
  readonly numFeatures: number;
  /** Margins per row: 1 for regression and binary classification, the class count for multiclass. */
  readonly numGroups: number;
  /** The objective as the model file names it, for messages and logs. */
  readonly objective: string;
  readonly transform: OutputTransform;
  /** Added to each group's margin (XGBoost's base_score, turned into a margin). */
  readonly baseMargin: Float64Array;
  /** Margins are divided by this before the transform (LightGBM's average_output: the iterations). */
  readonly averageDivisor: number;
  readonly roots: Int32Array;
  /** The group (class) each tree adds to. */
  readonly treeGroup: Int32Array;
  readonly feature: Int32Array;
  readonly kind: Uint8Array;
  readonly defaultLeft: Uint8Array;
  /** A split's threshold, or a leaf's value. */
  readonly value: Float64Array;
  readonly firstChild: Int32Array;
  /** A categorical split's set: `categoryCount[n]` 32-bit words of `categoryBits` from `categoryStart[n]`. */
  readonly categoryStart: Int32Array;
  readonly categoryCount: Int32Array;
  readonly categoryBits: Uint32Array;
  /** Training rows (or hessian sum) that reached each node: TreeSHAP's weights; NaN when the file has none. */
  readonly cover: Float64Array;
}

/** One tree as a format reader sees it: node 0 is the root; children by index, -1 for none. */
export interface TreeInput {
  readonly left: ArrayLike<number>;
  readonly right: ArrayLike<number>;
  /** -1 (or anything) for a leaf; a leaf is a node whose left child is -1. */
  readonly feature: ArrayLike<number>;
  readonly kind: ArrayLike<number>;
  readonly defaultLeft: ArrayLike<number | boolean>;
  /** A split's threshold (already in the "x < threshold goes left" form), or a leaf's value. */
  readonly value: ArrayLike<number>;
  readonly cover?: ArrayLike<number>;
  /** The category values of each categorical split, by node. */
  readonly categories?: ReadonlyMap<number, readonly number[]>;
  readonly group: number;
}

export interface ForestHeader {
  readonly numFeatures: number;
  readonly numGroups: number;
  readonly objective: string;
  readonly transform: OutputTransform;
  readonly baseMargin: readonly number[];
  readonly averageDivisor?: number;
}

/** The smallest double greater than `x`: `x <= t` is `x < nextUp(t)` for every double x. */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  view.setBigInt64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/**
 * Lays the trees out flat, each tree's nodes depth first with siblings side by side. Throws a
 * ModelFileError naming the tree and node when a child index is out of range, a node is reached
 * twice (a cycle or a shared child), or a split's feature is outside [0, numFeatures).
 */
export function buildForest(header: ForestHeader, trees: readonly TreeInput[]): Forest {
  let total = 0;
  for (const tree of trees) total += tree.left.length;
  const feature = new Int32Array(total);
  const kind = new Uint8Array(total);
  const defaultLeft = new Uint8Array(total);
  const value = new Float64Array(total);
  const firstChild = new Int32Array(total);
  const categoryStart = new Int32Array(total);
  const categoryCount = new Int32Array(total);
  const cover = new Float64Array(total).fill(Number.NaN);
  const words: number[] = [];
  const roots = new Int32Array(trees.length);
  const treeGroup = new Int32Array(trees.length);
  let next = 0;
  trees.forEach((tree, t) => {
    const size = tree.left.length;
    if (size === 0) throw new ModelFileError(`tree ${t} has no nodes`);
    if (!(tree.group >= 0 && tree.group < header.numGroups)) throw new ModelFileError(`tree ${t} adds to output group ${tree.group}, but the model has ${header.numGroups}`);
    const seen = new Uint8Array(size);
    roots[t] = next;
    treeGroup[t] = tree.group;
    next++;
    // [source node, flat slot] pairs still to write.
    const stack: number[] = [0, roots[t]!];
    while (stack.length > 0) {
      const slot = stack.pop()!;
      const node = stack.pop()!;
      if (seen[node] === 1) throw new ModelFileError(`tree ${t}: node ${node} is reached twice`);
      seen[node] = 1;
      const left = tree.left[node]!;
      value[slot] = tree.value[node]!;
      if (tree.cover !== undefined) cover[slot] = tree.cover[node]!;
      if (left === -1) {
        feature[slot] = -1;
        continue;
      }
      const right = tree.right[node]!;
      for (const child of [left, right]) {
        if (!(Number.isInteger(child) && child > 0 && child < size)) throw new ModelFileError(`tree ${t}: node ${node} has child ${child}, outside 1..${size - 1}`);
      }
      const f = tree.feature[node]!;
      if (!(Number.isInteger(f) && f >= 0 && f < header.numFeatures)) throw new ModelFileError(`tree ${t}: node ${node} splits on feature ${f}, but the model has ${header.numFeatures} features`);
      feature[slot] = f;
      kind[slot] = tree.kind[node]!;
      defaultLeft[slot] = tree.defaultLeft[node] ? 1 : 0;
      if (kind[slot] === CATEGORY_LEFT || kind[slot] === CATEGORY_RIGHT) {
        const categories = tree.categories?.get(node) ?? [];
        const wordCount = categories.length === 0 ? 0 : (Math.max(...categories) >>> 5) + 1;
        categoryStart[slot] = words.length;
        categoryCount[slot] = wordCount;
        const start = words.length;
        for (let w = 0; w < wordCount; w++) words.push(0);
        for (const category of categories) words[start + (category >>> 5)]! |= 1 << (category & 31);
      }
      firstChild[slot] = next;
      next += 2;
      stack.push(right, firstChild[slot]! + 1, left, firstChild[slot]!);
    }
  });
  const trim = <T extends Int32Array | Uint8Array | Float64Array>(array: T): T => array.subarray(0, next) as T;
  return {
    numFeatures: header.numFeatures,
    numGroups: header.numGroups,
    objective: header.objective,
    transform: header.transform,
    baseMargin: Float64Array.from(header.baseMargin),
    averageDivisor: header.averageDivisor ?? 1,
    roots,
    treeGroup,
    feature: trim(feature),
    kind: trim(kind),
    defaultLeft: trim(defaultLeft),
    value: trim(value),
    firstChild: trim(firstChild),
    categoryStart: trim(categoryStart),
    categoryCount: trim(categoryCount),
    categoryBits: Uint32Array.from(words),
    cover: trim(cover),
  };
}
