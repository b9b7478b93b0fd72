/**
 * LightGBM's text model format (`model.txt`, what `Booster.save_model` writes; LightGBM
 * src/io/gbdt_model_text.cpp and src/io/tree.cpp): `key=value` header lines, then one block per
 * tree starting `Tree=<i>`, up to `end of trees`. A tree's children are node indices, or
 * `~leaf` (negative) for leaves. Decisions, as LightGBM's `Tree::Decision` takes them:
 *
 * - decision_type bit 0: categorical; bit 1: default left; bits 2–3: missing type (0 None, 1 Zero, 2 NaN).
 * - numerical: NaN counts as 0 unless the missing type is NaN; a missing value (NaN for NaN, 0 for Zero)
 *   goes the default way; otherwise `x <= threshold` goes left.
 * - categorical: NaN goes right when the missing type is NaN, else counts as 0; a negative value goes
 *   right; trunc(x) in the node's bitset (cat_threshold words from cat_boundaries[threshold]) goes left.
 *
 * Objectives: `regression*`, `huber`, `fair`, `quantile`, `mape`, `lambdarank`, `rank_xendcg`, `custom`:
 * identity; `binary sigmoid:<s>`, `cross_entropy`, `multiclassova`: sigmoid; `multiclass`: softmax;
 * `poisson`, `gamma`, `tweedie`: exp. `average_output` (random forest mode) divides the sum by the
 * number of iterations.
 */
import { CATEGORY_LEFT, type Forest, type ForestHeader, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, type OutputTransform, type TreeInput, ZERO_AS_MISSING, buildForest, nextUp } from './forest.js';
import { ModelFileError } from './model-file-error.js';

const IDENTITY_OBJECTIVES = new Set(['regression', 'regression_l1', 'regression_l2', 'huber', 'fair', 'quantile', 'mape', 'lambdarank', 'rank_xendcg', 'custom', 'none']);

function transformOf(objective: string): OutputTransform | undefined {
  const [name = '', ...options] = objective.split(' ');
  if (IDENTITY_OBJECTIVES.has(name)) return { kind: 'identity' };
  if (name === 'binary' || name === 'multiclassova' || name === 'cross_entropy') {
    const sigmoid = options.find((option) => option.startsWith('sigmoid:'));
    return { kind: 'sigmoid', scale: sigmoid === undefined ? 1 : Number(sigmoid.slice('sigmoid:'.length)) };
  }
  if (name === 'multiclass') return { kind: 'softmax' };
  if (name === 'poisson' || name === 'gamma' || name === 'tweedie') return { kind: 'exp' };
  return undefined;
}

/** The `key=value` lines of one section, and lines without `=` as keys of ''. */
function readSection(lines: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of lines) {
    const at = line.indexOf('=');
    if (at === -1) out.set(line.trim(), '');
    else out.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return out;
}

function numbers(section: Map<string, string>, key: string, at: string, count: number): number[] {
  const text = section.get(key);
  if (text === undefined) throw new ModelFileError(`${at} has no '${key}'`);
  const values = text === '' ? [] : text.split(' ').map(Number);
  if (values.length !== count) throw new ModelFileError(`${at}: '${key}' has ${values.length} values, ${count} expected`);
  const bad = values.findIndex((value) => Number.isNaN(value));
  if (bad !== -1) throw new ModelFileError(`${at}: '${key}' value ${bad} is not a number`);
  return values;
}

function readTree(section: Map<string, string>, index: number, group: number): TreeInput {
  const at = `tree ${index}`;
  const numLeaves = Number(section.get('num_leaves'));
  if (!Number.isInteger(numLeaves) || numLeaves < 1) throw new ModelFileError(`${at}: num_leaves is '${section.get('num_leaves') ?? ''}'`);
  const leafValue = numbers(section, 'leaf_value', at, numLeaves);
  const leafCount = section.has('leaf_count') ? numbers(section, 'leaf_count', at, numLeaves) : undefined;
  if (numLeaves === 1) return { left: [-1], right: [-1], feature: [-1], kind: [0], defaultLeft: [0], value: leafValue, group, ...(leafCount ? { cover: leafCount } : {}) };
  if (section.get('is_linear') === '1') throw new ModelFileError(`${at} is a linear tree, which the fil backend does not serve`);
  const splits = numLeaves - 1;
  const feature = numbers(section, 'split_feature', at, splits);
  const threshold = numbers(section, 'threshold', at, splits);
  const decision = numbers(section, 'decision_type', at, splits);
  const leftChild = numbers(section, 'left_child', at, splits);
  const rightChild = numbers(section, 'right_child', at, splits);
  const internalCount = section.has('internal_count') ? numbers(section, 'internal_count', at, splits) : undefined;
  const numCat = Number(section.get('num_cat') ?? 0);
  const boundaries = numCat > 0 ? numbers(section, 'cat_boundaries', at, numCat + 1) : [];
  const bits = numCat > 0 ? numbers(section, 'cat_threshold', at, boundaries[numCat]!) : [];
  // Splits keep their indices 0..splits-1; leaf k becomes node splits + k.
  const size = splits + numLeaves;
  const child = (c: number): number => (c < 0 ? splits + ~c : c);
  const tree = {
    left: new Int32Array(size).fill(-1),
    right: new Int32Array(size).fill(-1),
    feature: new Int32Array(size).fill(-1),
    kind: new Uint8Array(size),
    defaultLeft: new Uint8Array(size),
    value: new Float64Array(size),
    cover: new Float64Array(size).fill(Number.NaN),
    categories: new Map<number, number[]>(),
    group,
  };
  for (let n = 0; n < splits; n++) {
    tree.left[n] = child(leftChild[n]!);
    tree.right[n] = child(rightChild[n]!);
    tree.feature[n] = feature[n]!;
    if (internalCount) tree.cover[n] = internalCount[n]!;
    const type = decision[n]!;
    const isDefaultLeft = (type & 2) !== 0;
    const missing = (type >> 2) & 3;
    if ((type & 1) !== 0) {
      const cat = threshold[n]!;
      if (!(Number.isInteger(cat) && cat >= 0 && cat < numCat)) throw new ModelFileError(`${at}: split ${n} names category set ${cat}, but the tree has ${numCat}`);
      const categories: number[] = [];
      for (let w = boundaries[cat]!; w < boundaries[cat + 1]!; w++) {
        for (let b = 0; b < 32; b++) if (((bits[w]! >>> b) & 1) === 1) categories.push((w - boundaries[cat]!) * 32 + b);
      }
      tree.kind[n] = CATEGORY_LEFT;
      tree.categories.set(n, categories);
      // NaN: right for missing type NaN, else the way category 0 goes.
      tree.defaultLeft[n] = missing !== 2 && categories.includes(0) ? 1 : 0;
      continue;
    }
    const t = nextUp(threshold[n]!);
    tree.value[n] = t;
    if (missing === 1) {
      tree.kind[n] = ZERO_AS_MISSING;
      tree.defaultLeft[n] = isDefaultLeft ? 1 : 0;
    } else {
      // Missing type None: NaN counts as 0, which goes left when 0 <= threshold.
      const isNanLeft = missing === 2 ? isDefaultLeft : 0 < t;
      tree.kind[n] = isNanLeft ? NUMERIC_DEFAULT_LEFT : NUMERIC_DEFAULT_RIGHT;
      tree.defaultLeft[n] = isNanLeft ? 1 : 0;
    }
  }
  for (let k = 0; k < numLeaves; k++) {
    tree.value[splits + k] = leafValue[k]!;
    if (leafCount) tree.cover[splits + k] = leafCount[k]!;
  }
  return tree;
}

/** A Forest from the text of a LightGBM model. Throws ModelFileError. */
export function forestFromLightgbmText(text: string): Forest {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== 'tree') throw new ModelFileError(`starts with '${(lines[0] ?? '').slice(0, 40)}', not 'tree': this is not a LightGBM text model`);
  const sections: string[][] = [[]];
  for (const line of lines.slice(1)) {
    if (line.startsWith('end of trees')) break;
    if (line.startsWith('Tree=')) sections.push([]);
    else if (line.trim() !== '') sections.at(-1)!.push(line);
  }
  const header = readSection(sections[0]!);
  const numClass = Number(header.get('num_class') ?? 1);
  const perIteration = Number(header.get('num_tree_per_iteration') ?? numClass);
  const maxFeature = Number(header.get('max_feature_idx'));
  if (!Number.isInteger(maxFeature) || maxFeature < 0) throw new ModelFileError(`has max_feature_idx '${header.get('max_feature_idx') ?? ''}'`);
  if (!Number.isInteger(perIteration) || perIteration < 1) throw new ModelFileError(`has num_tree_per_iteration '${header.get('num_tree_per_iteration') ?? ''}'`);
  const objective = header.get('objective') ?? 'regression';
  const transform = transformOf(objective);
  if (transform === undefined) throw new ModelFileError(`has objective '${objective}', which the fil backend does not know how to transform`);
  const trees = sections.slice(1).map((lines, t) => readTree(readSection(lines), t, t % perIteration));
  const iterations = trees.length / perIteration;
  const forestHeader: ForestHeader = {
    numFeatures: maxFeature + 1,
    numGroups: perIteration,
    objective,
    transform,
    baseMargin: Array.from({ length: perIteration }, () => 0),
    averageDivisor: header.has('average_output') && iterations > 0 ? iterations : 1,
  };
  return buildForest(forestHeader, trees);
}
