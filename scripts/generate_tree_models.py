#!/usr/bin/python3
"""Generate the tree models of the fil backend's tests, with the predictions they must give.

Writes examples/model_repository/breast_cancer/ (the example classifier), test/fixtures/fil_repository/<model>/{config.pbtxt,1/<model file>} and
test/fixtures/fil_expected/<model>.json: rows of float32 features (null: missing) and, per output,
the values XGBoost gives for them (Booster.predict, pred_contribs for treeshap_output). Every
XGBoost objective gets a small model (xgb_<objective>); a few larger ones cover depth 25, 500 trees,
categorical splits, DART and the three XGBoost file formats.

LightGBM is not installable here, so its models (lgb_*) are random trees written in LightGBM's text
format (src/io/tree.cpp) whose predictions a tiny reference evaluator below computes, written from
LightGBM's Tree::Decision and objective transforms, in double precision as LightGBM predicts.

Requirements (Debian 12): apt-get install -y python3-xgboost python3-numpy
Run from anywhere:          /usr/bin/python3 scripts/generate_tree_models.py

Deterministic: fixed seeds and one thread, so rerunning writes identical files.
"""

import json
import math
import os
import shutil

import numpy as np
import xgboost as xgb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.join(ROOT, "test", "fixtures", "fil_repository")
EXPECTED = os.path.join(ROOT, "test", "fixtures", "fil_expected")
FILE_NAMES = {"xgboost_json": "xgboost.json", "xgboost_ubj": "xgboost.ubj", "xgboost": "xgboost.model", "lightgbm": "model.txt"}
TEST_ROWS = 24


def reset(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def rows_json(x):
    return [[None if math.isnan(v) else float(v) for v in row] for row in x.astype(np.float32)]


def values_json(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def config_pbtxt(name, model_type, features, outputs, parameters, comment, max_batch_size=8192):
    params = "".join(
        f'  {{ key: "{k}", value: {{ string_value: "{v}" }} }},\n' for k, v in [("model_type", model_type), *parameters.items()]
    ).rstrip(",\n")
    outs = ",\n".join(
        f'  {{\n    name: "{o}"\n    data_type: TYPE_FP32\n    dims: [ {", ".join(str(d) for d in dims)} ]\n  }}' for o, dims in outputs
    )
    return (
        f"# {comment}\n"
        f'name: "{name}"\nbackend: "fil"\nmax_batch_size: {max_batch_size}\n'
        f'input [\n  {{\n    name: "input__0"\n    data_type: TYPE_FP32\n    dims: [ {features} ]\n  }}\n]\n'
        f"output [\n{outs}\n]\n"
        f"instance_group [ {{ count: 1, kind: KIND_CPU }} ]\n"
        f"dynamic_batching {{ }}\n"
        f"parameters [\n{params}\n]\n"
    )


def write_model(name, model_type, save, features, outputs, parameters, comment, x, expected):
    """save(path) writes the model file; expected maps each output name to its values for rows x."""
    folder = os.path.join(REPOSITORY, name)
    reset(os.path.join(folder, "1"))
    save(os.path.join(folder, "1", FILE_NAMES[model_type]))
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(config_pbtxt(name, model_type, features, outputs, parameters, comment))
    with open(os.path.join(EXPECTED, f"{name}.json"), "w") as f:
        json.dump({"rows": rows_json(x), "outputs": {k: values_json(v) for k, v in expected.items()}}, f)
        f.write("\n")


def with_missing(rng, x, fraction=0.15):
    x = x.copy()
    x[rng.random(x.shape) < fraction] = np.nan
    return x


# ---------------------------------------------------------------------------------------------------- XGBoost

def regression_data(rng, n, features):
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = x[:, 0] * 2 + np.sin(x[:, 1] * 3) + x[:, 2 % features] * x[:, 3 % features] + rng.normal(scale=0.1, size=n)
    return with_missing(rng, x), y


OBJECTIVES = {
    # objective: (label maker, extra params, fil parameters, output dims)
    "reg:squarederror": ("real", {"base_score": 0.3}),
    "reg:squaredlogerror": ("positive", {}),
    "reg:logistic": ("unit", {}),
    "reg:pseudohubererror": ("real", {}),
    "reg:absoluteerror": ("real", {}),
    "binary:logistic": ("binary", {"base_score": 0.3}),
    "binary:logitraw": ("binary", {}),
    "binary:hinge": ("binary", {}),
    "count:poisson": ("count", {}),
    "reg:gamma": ("positive", {}),
    "reg:tweedie": ("positive", {}),
    "survival:cox": ("cox", {}),
    "rank:pairwise": ("rank", {}),
    "rank:ndcg": ("rank", {}),
    "rank:map": ("rank_binary", {}),
    "multi:softprob": ("multi", {"num_class": 3}),
    "multi:softmax": ("multi", {"num_class": 3}),
}


def labels(kind, rng, y):
    if kind == "real":
        return y
    if kind == "positive":
        return np.exp(y / 3)
    if kind == "unit":
        return 1 / (1 + np.exp(-y))
    if kind in ("binary", "rank_binary"):
        return (y > 0).astype(np.float32)
    if kind == "count":
        return rng.poisson(np.exp(y / 3))
    if kind == "cox":
        return np.where(y > 0, 1, -1) * np.exp(y / 3)
    if kind == "rank":
        return np.clip(np.round(y + 2), 0, 4)
    if kind == "multi":
        return np.digitize(y, [-1, 1])
    raise ValueError(kind)


def gen_objectives(rng):
    features = 6
    for objective, (kind, extra) in OBJECTIVES.items():
        x, y = regression_data(rng, 300, features)
        dtrain = xgb.DMatrix(x, labels(kind, rng, y))
        if kind.startswith("rank"):
            dtrain.set_group([30] * 10)
        params = {"objective": objective, "max_depth": 4, "eta": 0.3, "nthread": 1, "seed": 0, **extra}
        booster = xgb.train(params, dtrain, 12)
        name = "xgb_" + objective.replace(":", "_")
        xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
        dt = xgb.DMatrix(xt)
        if objective.startswith("multi:"):
            probs = booster.predict(dt, output_margin=True)
            probs = np.exp(probs - probs.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            write_model(name, "xgboost_json", booster.save_model, features, [("output__0", [3])],
                        {"output_class": "true", "predict_proba": "true"},
                        f"XGBoost {objective}, 3 classes, 12 rounds of depth 4: softmax probabilities.", xt, {"output__0": probs})
        elif objective in ("binary:logistic",):
            p = booster.predict(dt)
            write_model(name, "xgboost_json", booster.save_model, features, [("output__0", [2])],
                        {"output_class": "true", "predict_proba": "true"},
                        f"XGBoost {objective} with base_score 0.3: [1 - p, p].", xt, {"output__0": np.stack([1 - p, p], axis=1)})
        else:
            write_model(name, "xgboost_json", booster.save_model, features, [("output__0", [1])], {"output_class": "false"},
                        f"XGBoost {objective}, 12 rounds of depth 4, as a regressor: XGBoost's predict().", xt, {"output__0": booster.predict(dt)})


def gen_classes(rng):
    """Class ids, with the threshold, from one binary and one multiclass model."""
    features = 6
    x, y = regression_data(rng, 300, features)
    xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
    binary = xgb.train({"objective": "binary:logistic", "max_depth": 3, "nthread": 1, "seed": 0}, xgb.DMatrix(x, (y > 0).astype(np.float32)), 10)
    p = binary.predict(xgb.DMatrix(xt))
    write_model("xgb_binary_class", "xgboost_json", binary.save_model, features, [("output__0", [1])],
                {"output_class": "true", "threshold": "0.3"},
                "XGBoost binary:logistic with output_class and threshold 0.3: the class id (p > 0.3).", xt, {"output__0": (p > 0.3).astype(np.float32)})
    multi = xgb.train({"objective": "multi:softmax", "num_class": 4, "max_depth": 3, "nthread": 1, "seed": 0},
                      xgb.DMatrix(x, np.digitize(y, [-1, 0, 1])), 8)
    write_model("xgb_multi_class", "xgboost_ubj", multi.save_model, features, [("output__0", [1])], {"output_class": "true"},
                "XGBoost multi:softmax, 4 classes, as UBJSON: the class id XGBoost's predict() gives.", xt, {"output__0": multi.predict(xgb.DMatrix(xt))})


def gen_large(rng):
    """Depth 25 (UBJSON), 500 trees (legacy binary), 100 features."""
    features = 8
    x, y = regression_data(rng, 3000, features)
    xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
    deep = xgb.train({"max_depth": 25, "min_child_weight": 0, "eta": 0.5, "nthread": 1, "seed": 0, "lambda": 0}, xgb.DMatrix(x, y + rng.normal(size=len(y))), 6)
    write_model("xgb_deep", "xgboost_ubj", deep.save_model, features, [("output__0", [1])], {},
                "XGBoost reg:squarederror, 6 trees of depth up to 25, as UBJSON (no output_class: a regressor).", xt, {"output__0": deep.predict(xgb.DMatrix(xt))})
    features = 100
    x = rng.normal(size=(2000, features)).astype(np.float32)
    y = (x[:, :10].sum(axis=1) + rng.normal(size=2000) > 0).astype(np.float32)
    xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
    many = xgb.train({"objective": "binary:logistic", "max_depth": 3, "nthread": 1, "seed": 0}, xgb.DMatrix(with_missing(rng, x), y), 500)
    write_model("xgb_many_trees", "xgboost", many.save_model, features, [("output__0", [2])], {"output_class": "true", "predict_proba": "true"},
                "XGBoost binary:logistic, 500 trees of depth 3 on 100 features, in the legacy binary format.", xt,
                {"output__0": np.stack([1 - many.predict(xgb.DMatrix(xt)), many.predict(xgb.DMatrix(xt))], axis=1)})


def gen_categorical(rng):
    features = 4
    n = 600
    x = np.stack([rng.integers(0, 12, n), rng.normal(size=n), rng.integers(0, 40, n), rng.normal(size=n)], axis=1).astype(np.float32)
    y = np.isin(x[:, 0], [1, 3, 5, 7]) * 2.0 + (x[:, 2] % 3 == 0) + x[:, 1] + rng.normal(scale=0.1, size=n)
    x = with_missing(rng, x, 0.1)
    dtrain = xgb.DMatrix(x, y, feature_types=["c", "q", "c", "q"], enable_categorical=True)
    booster = xgb.train({"tree_method": "hist", "max_depth": 4, "max_cat_to_onehot": 1, "nthread": 1, "seed": 0}, dtrain, 10)
    xt = np.stack([rng.integers(-1, 45, TEST_ROWS), rng.normal(size=TEST_ROWS), rng.integers(0, 50, TEST_ROWS), rng.normal(size=TEST_ROWS)], axis=1).astype(np.float32)
    xt = with_missing(rng, xt, 0.1)
    xt[0, 0] = 2.5
    pred = booster.predict(xgb.DMatrix(xt, feature_types=["c", "q", "c", "q"], enable_categorical=True))
    write_model("xgb_categorical", "xgboost_json", booster.save_model, features, [("output__0", [1])], {"output_class": "false"},
                "XGBoost with categorical features 0 and 2 (partition splits), unseen and negative categories in the rows.", xt, {"output__0": pred})


def gen_dart(rng):
    features = 5
    x, y = regression_data(rng, 300, features)
    xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
    booster = xgb.train({"booster": "dart", "rate_drop": 0.3, "max_depth": 3, "nthread": 1, "seed": 0}, xgb.DMatrix(x, y), 10)
    write_model("xgb_dart", "xgboost_json", booster.save_model, features, [("output__0", [1])], {"output_class": "false"},
                "XGBoost DART booster: leaves weighted by weight_drop.", xt, {"output__0": booster.predict(xgb.DMatrix(xt))})


def gen_shap(rng):
    features = 5
    x, y = regression_data(rng, 400, features)
    xt = with_missing(rng, rng.normal(size=(TEST_ROWS, features)).astype(np.float32))
    binary = xgb.train({"objective": "binary:logistic", "max_depth": 4, "nthread": 1, "seed": 0}, xgb.DMatrix(x, (y > 0).astype(np.float32)), 10)
    dt = xgb.DMatrix(xt)
    p = binary.predict(dt)
    write_model("xgb_shap_binary", "xgboost_json", binary.save_model, features, [("output__0", [2]), ("treeshap_output", [features + 1])],
                {"output_class": "true", "predict_proba": "true"},
                "XGBoost binary:logistic with treeshap_output: XGBoost's pred_contribs (margin space, bias last).", xt,
                {"output__0": np.stack([1 - p, p], axis=1), "treeshap_output": binary.predict(dt, pred_contribs=True)})
    multi = xgb.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "nthread": 1, "seed": 0}, xgb.DMatrix(x, np.digitize(y, [-1, 1])), 6)
    write_model("xgb_shap_multi", "xgboost_json", multi.save_model, features, [("output__0", [3]), ("treeshap_output", [3, features + 1])],
                {"output_class": "true", "predict_proba": "true"},
                "XGBoost multi:softprob with treeshap_output [classes, features + 1]: XGBoost's pred_contribs.", xt,
                {"output__0": multi.predict(dt), "treeshap_output": multi.predict(dt, pred_contribs=True)})


# ---------------------------------------------------------------------------------------------------- LightGBM

class LgbTree:
    """A random tree in LightGBM's representation: splits 0..n-2, leaves ~k."""

    def __init__(self, rng, features, leaves, categorical):
        self.split_feature, self.threshold, self.decision_type = [], [], []
        self.left, self.right, self.cat_boundaries, self.cat_threshold = [], [], [0], []
        self.leaf_value = [float(np.float64(rng.normal()).round(6)) for _ in range(leaves)]
        next_leaf = 0

        def build(count):
            nonlocal next_leaf
            if count == 1:
                leaf = next_leaf
                next_leaf += 1
                return ~leaf
            index = len(self.split_feature)
            f = int(rng.integers(0, features))
            self.split_feature.append(f)
            self.left.append(0)
            self.right.append(0)
            if f in categorical:
                cats = sorted(set(int(c) for c in rng.integers(0, 40, 5)))
                words = [0] * (max(cats) // 32 + 1)
                for c in cats:
                    words[c // 32] |= 1 << (c % 32)
                self.threshold.append(len(self.cat_boundaries) - 1)
                self.cat_threshold.extend(words)
                self.cat_boundaries.append(len(self.cat_threshold))
                missing = int(rng.integers(0, 3)) if f % 2 == 0 else 2
                self.decision_type.append(1 | (missing << 2))
            else:
                self.threshold.append(float(np.float64(rng.normal()).round(6)))
                missing = int(rng.integers(0, 3))
                self.decision_type.append((2 if rng.random() < 0.5 else 0) | (missing << 2))
            n_left = int(rng.integers(1, count))
            self.left[index] = build(n_left)
            self.right[index] = build(count - n_left)
            return index

        build(leaves)

    def text(self, index):
        lines = [f"Tree={index}", f"num_leaves={len(self.leaf_value)}", f"num_cat={len(self.cat_boundaries) - 1}"]
        if self.split_feature:
            lines += [
                "split_feature=" + " ".join(map(str, self.split_feature)),
                "split_gain=" + " ".join("1" for _ in self.split_feature),
                "threshold=" + " ".join(repr(t) if isinstance(t, float) else str(t) for t in self.threshold),
                "decision_type=" + " ".join(map(str, self.decision_type)),
                "left_child=" + " ".join(map(str, self.left)),
                "right_child=" + " ".join(map(str, self.right)),
            ]
        lines.append("leaf_value=" + " ".join(repr(v) for v in self.leaf_value))
        if len(self.cat_boundaries) > 1:
            lines += ["cat_boundaries=" + " ".join(map(str, self.cat_boundaries)), "cat_threshold=" + " ".join(map(str, self.cat_threshold))]
        lines += ["is_linear=0", "shrinkage=1", ""]
        return "\n".join(lines) + "\n"

    def predict(self, row):
        """LightGBM's Tree::Decision (NumericalDecision, CategoricalDecision), in double precision."""
        if not self.split_feature:
            return self.leaf_value[0]
        node = 0
        while node >= 0:
            fval = float(row[self.split_feature[node]])
            dt = self.decision_type[node]
            missing = (dt >> 2) & 3
            if dt & 1:
                if math.isnan(fval):
                    if missing == 2:
                        node = self.right[node]
                        continue
                    ival = 0
                else:
                    ival = int(fval)
                    if ival < 0:
                        node = self.right[node]
                        continue
                cat = int(self.threshold[node])
                lo, hi = self.cat_boundaries[cat], self.cat_boundaries[cat + 1]
                word = ival // 32
                inside = word < hi - lo and (self.cat_threshold[lo + word] >> (ival % 32)) & 1
                node = self.left[node] if inside else self.right[node]
            else:
                if math.isnan(fval) and missing != 2:
                    fval = 0.0
                if (missing == 1 and -1e-35 <= fval <= 1e-35) or (missing == 2 and math.isnan(fval)):
                    node = self.left[node] if dt & 2 else self.right[node]
                else:
                    node = self.left[node] if fval <= self.threshold[node] else self.right[node]
        return self.leaf_value[~node]


def write_lightgbm(name, rng, objective, num_class, per_iteration, iterations, features, categorical, transform, outputs, parameters, comment,
                   average=False):
    trees = [LgbTree(rng, features, int(rng.integers(1, 12)), categorical) for _ in range(iterations * per_iteration)]
    header = ["tree", "version=v3", f"num_class={num_class}", f"num_tree_per_iteration={per_iteration}", "label_index=0",
              f"max_feature_idx={features - 1}", f"objective={objective}"]
    if average:
        header.append("average_output")
    header += ["feature_names=" + " ".join(f"Column_{i}" for i in range(features)), "feature_infos=" + " ".join("none" for _ in range(features)),
               "tree_sizes=" + " ".join("0" for _ in trees), ""]
    text = "\n".join(header) + "\n" + "".join(t.text(i) for i, t in enumerate(trees)) + "end of trees\n\nparameters:\n[boosting: gbdt]\nend of parameters\n"
    x = rng.normal(size=(TEST_ROWS, features)).astype(np.float32) * 2
    for f in categorical:
        x[:, f] = rng.integers(-2, 45, TEST_ROWS)
    x = with_missing(rng, x, 0.2)
    x[rng.random(x.shape) < 0.1] = 0
    margins = np.zeros((TEST_ROWS, per_iteration))
    for r, row in enumerate(x):
        for t, tree in enumerate(trees):
            margins[r, t % per_iteration] += tree.predict(row)
    if average:
        margins /= iterations
    expected = transform(margins)

    def save(path):
        with open(path, "w") as f:
            f.write(text)
    write_model(name, "lightgbm", save, features, outputs, parameters, comment, x, {"output__0": expected})


def sigmoid(m):
    return 1 / (1 + np.exp(-m))


def softmax(m):
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gen_lightgbm(rng):
    write_lightgbm("lgb_regression", rng, "regression", 1, 1, 20, 6, set(), lambda m: m, [("output__0", [1])], {"output_class": "false"},
                   "LightGBM text, regression: random trees, every missing type, zero and NaN inputs.")
    write_lightgbm("lgb_binary", rng, "binary sigmoid:1.5", 1, 1, 15, 5, {1, 4}, lambda m: np.concatenate([1 - sigmoid(1.5 * m), sigmoid(1.5 * m)], axis=1),
                   [("output__0", [2])], {"output_class": "true", "predict_proba": "true"},
                   "LightGBM text, binary sigmoid:1.5 with categorical features 1 and 4: [1 - p, p].")
    write_lightgbm("lgb_multiclass", rng, "multiclass num_class:3", 3, 3, 8, 5, {2}, softmax, [("output__0", [3])],
                   {"output_class": "true", "predict_proba": "true"}, "LightGBM text, multiclass (softmax) over 3 classes, categorical feature 2.")
    write_lightgbm("lgb_random_forest", rng, "regression", 1, 1, 10, 4, set(), lambda m: m, [("output__0", [1])], {"output_class": "false"},
                   "LightGBM text, random forest mode (average_output): the mean of the trees.", average=True)


def gen_example():
    """examples/model_repository/breast_cancer: XGBoost on scikit-learn's bundled breast-cancer data (30 features)."""
    from sklearn.datasets import load_breast_cancer
    data = load_breast_cancer()
    x = data.data.astype(np.float32)
    classifier = xgb.XGBClassifier(n_estimators=100, max_depth=4, learning_rate=0.1, n_jobs=1, random_state=0).fit(x, data.target)
    booster = classifier.get_booster()
    folder = os.path.join(ROOT, "examples", "model_repository", "breast_cancer")
    reset(os.path.join(folder, "1"))
    booster.save_model(os.path.join(folder, "1", "xgboost.json"))
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(config_pbtxt("breast_cancer", "xgboost_json", 30, [("output__0", [2])], {"output_class": "true", "predict_proba": "true"},
                             "XGBoost classifier (100 trees of depth 4) on scikit-learn's breast-cancer data: [P(malignant), P(benign)]\n"
                             "# per row of the 30 features, in load_breast_cancer()'s column order. scripts/generate_tree_models.py made it."))
    rows = x[::57]
    with open(os.path.join(EXPECTED, "breast_cancer.json"), "w") as f:
        json.dump({"rows": rows_json(rows), "outputs": {"output__0": values_json(classifier.predict_proba(rows))}}, f)
        f.write("\n")


def main():
    os.makedirs(REPOSITORY, exist_ok=True)
    os.makedirs(EXPECTED, exist_ok=True)
    rng = np.random.default_rng(15)
    gen_objectives(rng)
    gen_classes(rng)
    gen_large(rng)
    gen_categorical(rng)
    gen_dart(rng)
    gen_shap(rng)
    gen_lightgbm(rng)
    gen_example()


if __name__ == "__main__":
    main()
