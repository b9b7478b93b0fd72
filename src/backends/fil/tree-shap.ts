/**
 * Per-feature SHAP contributions (FIL's `treeshap_output`), by the exact TreeSHAP algorithm
 * (Lundberg, Erion and Lee, "Consistent Individualized Feature Attribution for Tree Ensembles",
 * Algorithm 2) as XGBoost implements it for `pred_contribs` (src/tree/tree_model.cc `TreeShap`):
 * the same path bookkeeping, node covers as weights and default directions for missing values, so
 * that the contributions equal XGBoost's. Row r of group g gets `numFeatures + 1` values: one per
 * feature, then the bias (each tree's expected value, plus the base margin). They add up to the
 * margin, before the output transform.
 */
import type { Forest } from './forest.js';
import { goesLeft } from './predict.js';

const MAX_DEPTH = 1000;

/** The path of features from the root, as the algorithm extends and unwinds it. */
class Path {
  readonly feature: Int32Array;
  readonly zero: Float64Array;
  readonly one: Float64Array;
  readonly weight: Float64Array;
  constructor(size: number) {
    this.feature = new Int32Array(size);
    this.zero = new Float64Array(size);
    this.one = new Float64Array(size);
    this.weight = new Float64Array(size);
  }

  copy(from: number, to: number, count: number): void {
    this.feature.copyWithin(to, from, from + count);
    this.zero.copyWithin(to, from, from + count);
    this.one.copyWithin(to, from, from + count);
    this.weight.copyWithin(to, from, from + count);
  }

  extend(at: number, depth: number, zero: number, one: number, feature: number): void {
    const { weight } = this;
    this.feature[at + depth] = feature;
    this.zero[at + depth] = zero;
    this.one[at + depth] = one;
    weight[at + depth] = depth === 0 ? 1 : 0;
    for (let i = depth - 1; i >= 0; i--) {
      weight[at + i + 1]! += (one * weight[at + i]! * (i + 1)) / (depth + 1);
      weight[at + i] = (zero * weight[at + i]! * (depth - i)) / (depth + 1);
    }
  }

  unwind(at: number, depth: number, index: number): void {
    const { weight } = this;
    const one = this.one[at + index]!;
    const zero = this.zero[at + index]!;
    let nextOne = weight[at + depth]!;
    for (let i = depth - 1; i >= 0; i--) {
      if (one !== 0) {
        const saved = weight[at + i]!;
        weight[at + i] = (nextOne * (depth + 1)) / ((i + 1) * one);
        nextOne = saved - (weight[at + i]! * zero * (depth - i)) / (depth + 1);
      } else {
        weight[at + i] = (weight[at + i]! * (depth + 1)) / (zero * (depth - i));
      }
    }
    for (let i = index; i < depth; i++) {
      this.feature[at + i] = this.feature[at + i + 1]!;
      this.zero[at + i] = this.zero[at + i + 1]!;
      this.one[at + i] = this.one[at + i + 1]!;
    }
  }

  unwoundSum(at: number, depth: number, index: number): number {
    const { weight } = this;
    const one = this.one[at + index]!;
    const zero = this.zero[at + index]!;
    let nextOne = weight[at + depth]!;
    let total = 0;
    for (let i = depth - 1; i >= 0; i--) {
      if (one !== 0) {
        const part = (nextOne * (depth + 1)) / ((i + 1) * one);
        total += part;
        nextOne = weight[at + i]! - part * zero * ((depth - i) / (depth + 1));
      } else if (zero !== 0) {
        total += weight[at + i]! / zero / ((depth - i) / (depth + 1));
      }
    }
    return total;
  }
}

/** The depth of the deepest leaf below node n (a leaf: 0). */
function depthBelow(forest: Forest, n: number): number {
  let deepest = 0;
  const stack = [n, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const node = stack.pop()!;
    if (forest.feature[node]! < 0) deepest = Math.max(deepest, depth);
    else stack.push(forest.firstChild[node]!, depth + 1, forest.firstChild[node]! + 1, depth + 1);
  }
  return deepest;
}

/** Each node's expected value: its leaves' values weighted by cover (XGBoost's FillNodeMeanValues). */
function meanValues(forest: Forest): Float64Array {
  const { feature, firstChild, value, cover } = forest;
  const means = new Float64Array(feature.length);
  // Children always come after their parent in the layout, so a backward pass sees them first.
  for (let n = feature.length - 1; n >= 0; n--) {
    if (feature[n]! < 0) {
      means[n] = value[n]!;
      continue;
    }
    const left = firstChild[n]!;
    means[n] = (means[left]! * cover[left]! + means[left + 1]! * cover[left + 1]!) / cover[n]!;
  }
  return means;
}

/** A forest ready for TreeSHAP: its node means and the path room its deepest tree needs. */
export class TreeShap {
  readonly #forest: Forest;
  readonly #means: Float64Array;
  readonly #path: Path;

  /** Throws an Error when a node has no cover (the model file did not record it). */
  constructor(forest: Forest) {
    this.#forest = forest;
    if (forest.cover.some((cover) => Number.isNaN(cover))) throw new Error('its model file records no node covers (sum_hessian, internal_count), which TreeSHAP weighs paths by');
    this.#means = meanValues(forest);
    let maxDepth = 0;
    for (const root of forest.roots) maxDepth = Math.max(maxDepth, depthBelow(forest, root));
    // The algorithm recurses once per level and keeps a path per level: bound both.
    if (maxDepth > MAX_DEPTH) throw new Error(`its deepest tree has ${maxDepth} levels; TreeSHAP is computed for trees of up to ${MAX_DEPTH}`);
    const size = maxDepth + 2;
    this.#path = new Path((size * (size + 1)) / 2);
  }

  /**
   * The contributions of `rows` rows into `out` (`rows * numGroups * (numFeatures + 1)`, row-major
   * over row, group, feature), bias last.
   */
  contributions(input: Float32Array, rows: number, out: Float32Array): void {
    const forest = this.#forest;
    const { numFeatures, numGroups, roots, treeGroup, baseMargin, averageDivisor } = forest;
    const width = numFeatures + 1;
    const phi = new Float64Array(numGroups * width);
    for (let row = 0; row < rows; row++) {
      phi.fill(0);
      const offset = row * numFeatures;
      for (let t = 0; t < roots.length; t++) {
        const base = treeGroup[t]! * width;
        phi[base + numFeatures]! += this.#means[roots[t]!]!;
        this.#recurse({ input, offset, phi, base, node: roots[t]!, depth: 0, at: 0, zero: 1, one: 1, feature: -1, fraction: 1 });
      }
      for (let g = 0; g < numGroups; g++) {
        for (let f = 0; f < width; f++) {
          const value = phi[g * width + f]! / averageDivisor + (f === numFeatures ? baseMargin[g]! : 0);
          out[(row * numGroups + g) * width + f] = value;
        }
      }
    }
  }

  #recurse(step: { input: Float32Array; offset: number; phi: Float64Array; base: number; node: number; depth: number; at: number; zero: number; one: number; feature: number; fraction: number }): void {
    const forest = this.#forest;
    const path = this.#path;
    const { input, offset, phi, base, node, zero, one, feature, fraction } = step;
    let { depth } = step;
    // Each level's path lives after its parent's, as in XGBoost's unique_path_data.
    const at = step.at + depth;
    if (depth > 0) path.copy(step.at, at, depth);
    path.extend(at, depth, zero, one, feature);
    const split = forest.feature[node]!;
    if (split < 0) {
      const leaf = forest.value[node]!;
      for (let i = 1; i <= depth; i++) {
        const weight = path.unwoundSum(at, depth, i);
        phi[base + path.feature[at + i]!]! += weight * (path.one[at + i]! - path.zero[at + i]!) * leaf * fraction;
      }
      return;
    }
    const left = forest.firstChild[node]!;
    const isHotLeft = goesLeft(forest, node, input[offset + split]!);
    const hot = isHotLeft ? left : left + 1;
    const cold = isHotLeft ? left + 1 : left;
    const cover = forest.cover[node]!;
    const hotZero = forest.cover[hot]! / cover;
    const coldZero = forest.cover[cold]! / cover;
    let incomingZero = 1;
    let incomingOne = 1;
    let index = 0;
    while (index <= depth && path.feature[at + index] !== split) index++;
    if (index !== depth + 1) {
      incomingZero = path.zero[at + index]!;
      incomingOne = path.one[at + index]!;
      path.unwind(at, depth, index);
      depth -= 1;
    }
    this.#recurse({ ...step, node: hot, depth: depth + 1, at, zero: hotZero * incomingZero, one: incomingOne, feature: split });
    this.#recurse({ ...step, node: cold, depth: depth + 1, at, zero: coldZero * incomingZero, one: 0, feature: split });
  }
}
