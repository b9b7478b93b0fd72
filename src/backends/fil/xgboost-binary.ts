/**
 * XGBoost's legacy binary model format (`xgboost.model`), deprecated since XGBoost 1.6 but still
 * what FIL's `model_type: "xgboost"` reads. Little-endian C structs written one after the other
 * (XGBoost 1.7 src/learner.cc `LearnerModelParamLegacy`, src/gbm/gbtree_model.h `GBTreeModelParam`,
 * include/xgboost/tree_model.h `TreeParam`, `Node`, `RTreeNodeStat`):
 *
 *   ["binf"]  LearnerModelParam (136 B: base_score f32, num_feature u32, num_class i32, …)
 *   objective name, booster name            (u64 length + bytes each)
 *   GBTreeModelParam (160 B: num_trees i32, …, num_output_group at byte 32, size_leaf_vector at 36)
 *   per tree: TreeParam (148 B: num_nodes at byte 4, size_leaf_vector at 20)
 *             num_nodes × Node (20 B: parent, left, right i32, sindex u32 [bit 31: default left], value f32)
 *             num_nodes × RTreeNodeStat (16 B: loss_chg, sum_hess, base_weight f32, leaf_child_cnt i32)
 *   tree_info: num_trees × i32 (the class of each tree)
 *   dart only: weight_drop (u64 count + f32 each)
 *
 * Categorical splits and vector leaves never reach this format (XGBoost refuses to write them).
 */
import { type Forest, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, type TreeInput, buildForest } from './forest.js';
import { ModelFileError } from './model-file-error.js';
import { xgboostObjective } from './xgboost-model.js';

const LEARNER_PARAM_BYTES = 136;
const GBTREE_PARAM_BYTES = 160;
const TREE_PARAM_BYTES = 148;
const NODE_BYTES = 20;
const STAT_BYTES = 16;

class Cursor {
  offset = 0;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  take(count: number, what: string): number {
    if (!(count >= 0) || this.offset + count > this.bytes.byteLength) {
      throw new ModelFileError(`ends early: ${what} needs ${count} bytes at byte ${this.offset}, ${this.bytes.byteLength - this.offset} are left (XGBoost binary format)`);
    }
    const at = this.offset;
    this.offset += count;
    return at;
  }

  string(what: string): string {
    const length = Number(this.view.getBigUint64(this.take(8, what), true));
    if (length > 256) throw new ModelFileError(`has a ${what} of ${length} bytes; this does not look like an XGBoost binary model`);
    const at = this.take(length, what);
    return new TextDecoder().decode(this.bytes.subarray(at, at + length));
  }
}

/** A Forest from the bytes of an XGBoost binary model. Throws ModelFileError. */
export function forestFromXgboostBinary(bytes: Uint8Array): Forest {
  const cursor = new Cursor(bytes);
  const { view } = cursor;
  if (bytes.byteLength >= 4 && new TextDecoder().decode(bytes.subarray(0, 4)) === 'binf') cursor.offset = 4;
  if (bytes[cursor.offset] === 0x7b || bytes[cursor.offset] === 0x5b) {
    throw new ModelFileError(`starts with '${String.fromCharCode(bytes[cursor.offset]!)}': it looks like JSON or UBJSON; set model_type to 'xgboost_json' or 'xgboost_ubj'`);
  }
  const learner = cursor.take(LEARNER_PARAM_BYTES, 'the learner parameters');
  const baseScore = view.getFloat32(learner, true);
  const numFeatures = view.getUint32(learner + 4, true);
  const numClass = view.getInt32(learner + 8, true);
  const objective = cursor.string('objective name');
  const booster = cursor.string('booster name');
  if (booster !== 'gbtree' && booster !== 'dart') throw new ModelFileError(`uses booster '${booster}'; only tree boosters (gbtree, dart) can be served by the fil backend`);
  const link = xgboostObjective(objective, baseScore);
  if (link === undefined) throw new ModelFileError(`has objective '${objective}', which the fil backend does not know how to transform`);
  const gbtree = cursor.take(GBTREE_PARAM_BYTES, 'the tree booster parameters');
  const numTrees = view.getInt32(gbtree, true);
  if (numTrees < 0 || numTrees > bytes.byteLength) throw new ModelFileError(`claims ${numTrees} trees; this does not look like an XGBoost binary model`);
  if (view.getInt32(gbtree + 36, true) !== 0) throw new ModelFileError('has vector leaves, which the fil backend does not serve');
  const numGroups = Math.max(1, numClass);
  const trees: Array<Omit<TreeInput, 'group'>> = [];
  for (let t = 0; t < numTrees; t++) {
    const param = cursor.take(TREE_PARAM_BYTES, `tree ${t}'s parameters`);
    const numNodes = view.getInt32(param + 4, true);
    if (view.getInt32(param + 20, true) !== 0) throw new ModelFileError(`tree ${t} has vector leaves, which the fil backend does not serve`);
    const nodes = cursor.take(numNodes * NODE_BYTES, `tree ${t}'s ${numNodes} nodes`);
    const stats = cursor.take(numNodes * STAT_BYTES, `tree ${t}'s node statistics`);
    const left = new Int32Array(numNodes);
    const right = new Int32Array(numNodes);
    const feature = new Int32Array(numNodes);
    const kind = new Uint8Array(numNodes);
    const defaultLeft = new Uint8Array(numNodes);
    const value = new Float64Array(numNodes);
    const cover = new Float64Array(numNodes);
    for (let n = 0; n < numNodes; n++) {
      const at = nodes + n * NODE_BYTES;
      left[n] = view.getInt32(at + 4, true);
      right[n] = view.getInt32(at + 8, true);
      const sindex = view.getUint32(at + 12, true);
      feature[n] = sindex & 0x7fffffff;
      defaultLeft[n] = sindex >>> 31;
      kind[n] = defaultLeft[n] === 1 ? NUMERIC_DEFAULT_LEFT : NUMERIC_DEFAULT_RIGHT;
      value[n] = view.getFloat32(at + 16, true);
      cover[n] = view.getFloat32(stats + n * STAT_BYTES + 4, true);
    }
    trees.push({ left, right, feature, kind, defaultLeft, value, cover });
  }
  const info = cursor.take(numTrees * 4, 'tree_info');
  const groups = Array.from({ length: numTrees }, (_, t) => view.getInt32(info + t * 4, true));
  if (booster === 'dart') {
    const count = Number(view.getBigUint64(cursor.take(8, 'weight_drop'), true));
    if (count !== numTrees) throw new ModelFileError(`has ${count} DART weights for ${numTrees} trees`);
    const weights = cursor.take(count * 4, 'weight_drop');
    trees.forEach((tree, t) => {
      const weight = view.getFloat32(weights + t * 4, true);
      for (let n = 0; n < tree.left.length; n++) if (tree.left[n] === -1) (tree.value as Float64Array)[n]! *= weight;
    });
  }
  return buildForest(
    { numFeatures, numGroups, objective, transform: link.transform, baseMargin: Array.from({ length: numGroups }, () => link.margin) },
    trees.map((tree, t) => ({ ...tree, group: groups[t]! })),
  );
}
