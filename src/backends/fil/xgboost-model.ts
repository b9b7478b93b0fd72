/**
 * XGBoost's model schema (the document its JSON and UBJSON files hold, `doc/model.schema` in the
 * XGBoost repository) read into a Forest. Both formats parse to the same document; UBJSON's arrays
 * arrive as typed arrays, JSON's as plain ones, so every array is read as ArrayLike.
 *
 * What the prediction adds to the trees' sum, as XGBoost's objectives define it (`ProbToMargin` and
 * `PredTransform` in src/objective/regression_loss.h and multiclass_obj.cu):
 *
 * | objective                                                   | base margin          | transform |
 * |-------------------------------------------------------------|----------------------|-----------|
 * | reg:squarederror, reg:linear, reg:squaredlogerror,          | base_score           | identity  |
 * | reg:pseudohubererror, reg:absoluteerror, reg:quantileerror, |                      |           |
 * | rank:pairwise, rank:ndcg, rank:map                          |                      |           |
 * | reg:logistic, binary:logistic                               | logit(base_score)    | sigmoid   |
 * | binary:logitraw                                             | base_score           | identity  |
 * | binary:hinge                                                | base_score           | x > 0     |
 * | count:poisson, reg:gamma, reg:tweedie, survival:cox,        | log(base_score)      | exp       |
 * | survival:aft                                                |                      |           |
 * | multi:softprob, multi:softmax                               | base_score per class | softmax   |
 */
import { CATEGORY_RIGHT, type Forest, type ForestHeader, NUMERIC_DEFAULT_LEFT, NUMERIC_DEFAULT_RIGHT, type OutputTransform, type TreeInput, buildForest } from './forest.js';
import { ModelFileError } from './model-file-error.js';

type Doc = Record<string, unknown>;

const IDENTITY_OBJECTIVES = new Set([
  'reg:squarederror',
  'reg:linear',
  'reg:squaredlogerror',
  'reg:pseudohubererror',
  'reg:absoluteerror',
  'reg:quantileerror',
  'rank:pairwise',
  'rank:ndcg',
  'rank:map',
]);
const LOG_LINK_OBJECTIVES = new Set(['count:poisson', 'reg:gamma', 'reg:tweedie', 'survival:cox', 'survival:aft']);

/** The base margin and transform of an XGBoost objective, per the table above; undefined when unknown. */
export function xgboostObjective(name: string, baseScore: number): { readonly margin: number; readonly transform: OutputTransform } | undefined {
  if (IDENTITY_OBJECTIVES.has(name)) return { margin: baseScore, transform: { kind: 'identity' } };
  if (name === 'reg:logistic' || name === 'binary:logistic') return { margin: logit(baseScore), transform: { kind: 'sigmoid', scale: 1 } };
  if (name === 'binary:logitraw') return { margin: baseScore, transform: { kind: 'identity' } };
  if (name === 'binary:hinge') return { margin: baseScore, transform: { kind: 'hinge' } };
  if (LOG_LINK_OBJECTIVES.has(name)) return { margin: Math.log(baseScore), transform: { kind: 'exp' } };
  if (name === 'multi:softprob' || name === 'multi:softmax') return { margin: baseScore, transform: { kind: 'softmax' } };
  return undefined;
}

const logit = (p: number): number => -Math.log(1 / p - 1);

function field(doc: unknown, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || !(key in value)) throw new ModelFileError(`has no '${path}'`);
    value = (value as Doc)[key];
  }
  return value;
}

function numberField(doc: unknown, path: string): number {
  const raw = field(doc, path);
  const value = typeof raw === 'string' ? Number(raw) : typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof value !== 'number' || Number.isNaN(value)) throw new ModelFileError(`'${path}' is ${JSON.stringify(String(raw))}, not a number`);
  return value;
}

function arrayField(doc: unknown, path: string, at: string): ArrayLike<number> {
  const value = field(doc, path);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return value as unknown as ArrayLike<number>;
  throw new ModelFileError(`${at}: '${path}' is not an array`);
}

/** Reads one tree object of the schema into the forest builder's form (`weight`: DART's drop weight). */
function readTree(tree: unknown, index: number, group: number, weight: number): TreeInput {
  const at = `tree ${index}`;
  const left = arrayField(tree, 'left_children', at);
  const size = left.length;
  const arrays = ['right_children', 'split_indices', 'split_conditions', 'default_left'].map((name) => arrayField(tree, name, at));
  for (const [k, array] of arrays.entries()) {
    if (array.length !== size) throw new ModelFileError(`${at}: '${['right_children', 'split_indices', 'split_conditions', 'default_left'][k]}' has ${array.length} entries, 'left_children' ${size}`);
  }
  const [right, feature, condition, defaultLeft] = arrays as [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
  const splitType = (tree as Doc).split_type === undefined ? undefined : arrayField(tree, 'split_type', at);
  const cover = (tree as Doc).sum_hessian === undefined ? undefined : arrayField(tree, 'sum_hessian', at);
  const kind = new Uint8Array(size);
  const value = new Float64Array(size);
  for (let n = 0; n < size; n++) {
    const isLeaf = left[n] === -1;
    value[n] = isLeaf ? condition[n]! * weight : condition[n]!;
    kind[n] = splitType?.[n] === 1 ? CATEGORY_RIGHT : defaultLeft[n] ? NUMERIC_DEFAULT_LEFT : NUMERIC_DEFAULT_RIGHT;
  }
  const categories = new Map<number, number[]>();
  if (splitType !== undefined && (tree as Doc).categories_nodes !== undefined) {
    const nodes = arrayField(tree, 'categories_nodes', at);
    const segments = arrayField(tree, 'categories_segments', at);
    const sizes = arrayField(tree, 'categories_sizes', at);
    const values = arrayField(tree, 'categories', at);
    for (let k = 0; k < nodes.length; k++) {
      const start = Number(segments[k]);
      const count = Number(sizes[k]);
      if (start + count > values.length) throw new ModelFileError(`${at}: the categories of node ${nodes[k]} run past 'categories'`);
      categories.set(Number(nodes[k]), Array.from({ length: count }, (_, c) => Number(values[start + c])));
    }
  }
  return { left, right, feature, kind, defaultLeft, value, ...(cover !== undefined ? { cover } : {}), categories, group };
}

/** A Forest from an XGBoost model document (parsed JSON or UBJSON). Throws ModelFileError. */
export function forestFromXgboostDocument(doc: unknown): Forest {
  const learner = field(doc, 'learner');
  const booster = field(learner, 'gradient_booster');
  const boosterName = field(booster, 'name');
  if (boosterName !== 'gbtree' && boosterName !== 'dart') {
    throw new ModelFileError(`uses booster '${String(boosterName)}'; only tree boosters (gbtree, dart) can be served by the fil backend`);
  }
  const model = boosterName === 'dart' ? field(booster, 'gbtree.model') : field(booster, 'model');
  const weights = boosterName === 'dart' ? arrayField(booster, 'weight_drop', 'dart') : undefined;
  const objective = String(field(learner, 'objective.name'));
  const numClass = numberField(learner, 'learner_model_param.num_class');
  const numFeatures = numberField(learner, 'learner_model_param.num_feature');
  const baseScore = numberField(learner, 'learner_model_param.base_score');
  const target = (learner as Doc).learner_model_param as Doc;
  if (target.num_target !== undefined && Number(target.num_target) > 1) throw new ModelFileError(`has ${String(target.num_target)} targets; the fil backend serves single-target models only`);
  const link = xgboostObjective(objective, baseScore);
  if (link === undefined) throw new ModelFileError(`has objective '${objective}', which the fil backend does not know how to transform`);
  const numGroups = Math.max(1, numClass);
  const trees = field(model, 'trees');
  if (!Array.isArray(trees)) throw new ModelFileError(`'trees' is not an array`);
  const treeInfo = arrayField(model, 'tree_info', 'model');
  if (treeInfo.length !== trees.length) throw new ModelFileError(`'tree_info' has ${treeInfo.length} entries for ${trees.length} trees`);
  const inputs = trees.map((tree, t) => readTree(tree, t, Number(treeInfo[t]), weights === undefined ? 1 : Number(weights[t] ?? 1)));
  const header: ForestHeader = { numFeatures, numGroups, objective, transform: link.transform, baseMargin: Array.from({ length: numGroups }, () => link.margin) };
  return buildForest(header, inputs);
}
