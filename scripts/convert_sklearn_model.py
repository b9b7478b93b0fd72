#!/usr/bin/python3
"""Convert a fitted scikit-learn forest into LightGBM's text format, which Nereid's fil backend reads.

Triton's FIL backend serves scikit-learn models through Treelite checkpoints, whose binary layout
Nereid cannot read; LightGBM's text format is documented and holds the same trees. Supported:

| model                                             | LightGBM objective          | output__0 (config)                      |
|---------------------------------------------------|-----------------------------|-----------------------------------------|
| RandomForestRegressor, ExtraTreesRegressor        | regression, average_output  | predict() (output_class false)          |
| RandomForestClassifier, ExtraTreesClassifier      | custom, average_output      | predict_proba() (predict_proba true)    |
| GradientBoostingRegressor                         | regression                  | predict()                               |
| GradientBoostingClassifier (binary / multiclass)  | binary / multiclass         | predict_proba() (predict_proba true)    |
| IsolationForest                                   | regression, average_output  | mean path length E[h(x)]: score_samples |
|                                                   |                             | is -2 ** (-E / c(max_samples_))         |

Splits keep scikit-learn's rule, x <= threshold (float32 input, double threshold); scikit-learn
trees of this version have no missing-value support, so a NaN input goes where 0 would. A gradient
boosting model's initial prediction becomes a first tree with one leaf.

  /usr/bin/python3 scripts/convert_sklearn_model.py MODEL.pkl OUT/model.txt   (a pickled fitted model)
  /usr/bin/python3 scripts/convert_sklearn_model.py --fixtures                (the test fixtures sk_*)

--fixtures trains one model of each kind and writes test/fixtures/fil_repository/sk_<kind>/ and
test/fixtures/fil_expected/sk_<kind>.json with scikit-learn's own predictions for the test rows.
Requirements (Debian 12): apt-get install -y python3-sklearn python3-numpy
"""

import json
import math
import os
import pickle
import shutil
import sys

import numpy as np
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier, GradientBoostingRegressor,
                              IsolationForest, RandomForestClassifier, RandomForestRegressor)


def tree_text(index, tree, leaf_values, feature_map=None):
    """One LightGBM `Tree=` block for a sklearn tree_, with the given value for each sklearn node that is a leaf."""
    left, right = tree.children_left, tree.children_right
    internal = [n for n in range(tree.node_count) if left[n] != -1]
    leaves = [n for n in range(tree.node_count) if left[n] == -1]
    internal_id = {n: i for i, n in enumerate(internal)}
    leaf_id = {n: i for i, n in enumerate(leaves)}

    def child(n):
        return internal_id[n] if left[n] != -1 else ~leaf_id[n]

    lines = [f"Tree={index}", f"num_leaves={len(leaves)}", "num_cat=0"]
    if internal:
        features = [int(tree.feature[n]) if feature_map is None else int(feature_map[tree.feature[n]]) for n in internal]
        lines += [
            "split_feature=" + " ".join(map(str, features)),
            "split_gain=" + " ".join("0" for _ in internal),
            "threshold=" + " ".join(repr(float(tree.threshold[n])) for n in internal),
            "decision_type=" + " ".join("0" for _ in internal),
            "left_child=" + " ".join(str(child(left[n])) for n in internal),
            "right_child=" + " ".join(str(child(right[n])) for n in internal),
        ]
    lines.append("leaf_value=" + " ".join(repr(float(leaf_values[n])) for n in leaves))
    lines.append("leaf_count=" + " ".join(str(int(tree.n_node_samples[n])) for n in leaves))
    if internal:
        lines.append("internal_count=" + " ".join(str(int(tree.n_node_samples[n])) for n in internal))
    lines += ["is_linear=0", "shrinkage=1", "", ""]
    return "\n".join(lines)


def single_leaf(index, value):
    return f"Tree={index}\nnum_leaves=1\nnum_cat=0\nleaf_value={float(value)!r}\nis_linear=0\nshrinkage=1\n\n\n"


def average_path_length(n):
    """scikit-learn's _average_path_length: c(n), the mean depth of an unsuccessful search in a BST of n points."""
    n = np.asarray(n, dtype=np.float64)
    out = np.zeros_like(n)
    out[n == 2] = 1.0
    big = n > 2
    out[big] = 2.0 * (np.log(n[big] - 1.0) + np.euler_gamma) - 2.0 * (n[big] - 1.0) / n[big]
    return out


def node_depths(tree):
    depth = np.zeros(tree.node_count)
    for n in range(tree.node_count):
        for c in (tree.children_left[n], tree.children_right[n]):
            if c != -1:
                depth[c] = depth[n] + 1
    return depth


def to_lightgbm_text(model):
    """The LightGBM text of a fitted model (see the table above); raises ValueError for other models."""
    features = model.n_features_in_
    blocks, objective, per_iteration, average = [], "regression", 1, False
    if isinstance(model, (RandomForestRegressor, ExtraTreesRegressor)):
        average = True
        blocks = [tree_text(i, e.tree_, e.tree_.value[:, 0, 0]) for i, e in enumerate(model.estimators_)]
    elif isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        average, objective = True, "custom"
        classes = len(model.classes_)
        per_iteration = 1 if classes == 2 else classes
        for e in model.estimators_:
            proba = e.tree_.value[:, 0, :] / e.tree_.value[:, 0, :].sum(axis=1, keepdims=True)
            for k in ([1] if classes == 2 else range(classes)):
                blocks.append(tree_text(len(blocks), e.tree_, proba[:, k]))
    elif isinstance(model, GradientBoostingRegressor):
        init = model._raw_predict_init(np.zeros((1, features), dtype=np.float32))[0, 0]
        blocks = [single_leaf(0, init)] + [tree_text(i + 1, e.tree_, e.tree_.value[:, 0, 0] * model.learning_rate) for i, e in enumerate(model.estimators_[:, 0])]
    elif isinstance(model, GradientBoostingClassifier):
        init = model._raw_predict_init(np.zeros((1, features), dtype=np.float32))[0]
        per_iteration = model.estimators_.shape[1]
        objective = "binary sigmoid:1" if per_iteration == 1 else f"multiclass num_class:{per_iteration}"
        blocks = [single_leaf(k, init[k]) for k in range(per_iteration)]
        for stage in model.estimators_:
            for e in stage:
                blocks.append(tree_text(len(blocks), e.tree_, e.tree_.value[:, 0, 0] * model.learning_rate))
    elif isinstance(model, IsolationForest):
        average = True
        for i, (e, used) in enumerate(zip(model.estimators_, model.estimators_features_)):
            tree = e.tree_
            # scikit-learn counts the nodes on the path (depth + 1), then subtracts 1: depth + c(leaf samples).
            path = node_depths(tree) + average_path_length(tree.n_node_samples)
            blocks.append(tree_text(i, tree, path, feature_map=used if len(used) != features else None))
    else:
        raise ValueError(f"{type(model).__name__} is not a model this script converts")
    num_class = per_iteration
    header = ["tree", "version=v3", f"num_class={num_class}", f"num_tree_per_iteration={per_iteration}", "label_index=0",
              f"max_feature_idx={features - 1}", f"objective={objective}"]
    if average:
        header.append("average_output")
    header += ["feature_names=" + " ".join(f"Column_{i}" for i in range(features)), "feature_infos=" + " ".join("none" for _ in range(features)), "", ""]
    return "\n".join(header) + "".join(blocks) + "end of trees\n"


# ---------------------------------------------------------------------------------------------------- fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.join(ROOT, "test", "fixtures", "fil_repository")
EXPECTED = os.path.join(ROOT, "test", "fixtures", "fil_expected")


def write_fixture(name, model, x, expected, dims, parameters, comment):
    folder = os.path.join(REPOSITORY, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "1"))
    with open(os.path.join(folder, "1", "model.txt"), "w") as f:
        f.write(to_lightgbm_text(model))
    params = ",\n".join(f'  {{ key: "{k}", value: {{ string_value: "{v}" }} }}' for k, v in {"model_type": "lightgbm", **parameters}.items())
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(f'# {comment}\nname: "{name}"\nbackend: "fil"\nmax_batch_size: 8192\n'
                f'input [\n  {{\n    name: "input__0"\n    data_type: TYPE_FP32\n    dims: [ {model.n_features_in_} ]\n  }}\n]\n'
                f'output [\n  {{\n    name: "output__0"\n    data_type: TYPE_FP32\n    dims: [ {dims} ]\n  }}\n]\n'
                f'instance_group [ {{ count: 1, kind: KIND_CPU }} ]\ndynamic_batching {{ }}\nparameters [\n{params}\n]\n')
    with open(os.path.join(EXPECTED, f"{name}.json"), "w") as f:
        json.dump({"rows": [[float(v) for v in row] for row in x], "outputs": {"output__0": [float(v) for v in np.ravel(expected)]}}, f)
        f.write("\n")


def fixtures():
    os.makedirs(EXPECTED, exist_ok=True)
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 6)).astype(np.float32)
    y = x[:, 0] * 2 + np.sin(x[:, 1] * 3) + x[:, 2] * x[:, 3]
    three = np.digitize(y, [-1, 1])
    xt = rng.normal(size=(24, 6)).astype(np.float32)
    kw = {"n_estimators": 10, "max_depth": 6, "random_state": 0}
    proba = {"output_class": "true", "predict_proba": "true"}
    for name, model in [("sk_random_forest_regressor", RandomForestRegressor(**kw)), ("sk_extra_trees_regressor", ExtraTreesRegressor(**kw)),
                        ("sk_gradient_boosting_regressor", GradientBoostingRegressor(**kw))]:
        model.fit(x, y)
        write_fixture(name, model, xt, model.predict(xt), 1, {"output_class": "false"}, f"scikit-learn {type(model).__name__} via scripts/convert_sklearn_model.py: predict().")
    for name, model, labels in [("sk_random_forest_classifier", RandomForestClassifier(**kw), three), ("sk_extra_trees_classifier", ExtraTreesClassifier(**kw), y > 0),
                                ("sk_gradient_boosting_classifier", GradientBoostingClassifier(**kw), y > 0),
                                ("sk_gradient_boosting_multiclass", GradientBoostingClassifier(**kw), three)]:
        model.fit(x, labels)
        classes = len(model.classes_)
        write_fixture(name, model, xt, model.predict_proba(xt), classes, proba,
                      f"scikit-learn {type(model).__name__} ({classes} classes) via scripts/convert_sklearn_model.py: predict_proba().")
    forest = IsolationForest(n_estimators=10, max_samples=128, random_state=0).fit(x)
    score = forest.score_samples(xt)
    mean_path = -np.log2(-score) * average_path_length([forest.max_samples_])[0]
    write_fixture("sk_isolation_forest", forest, xt, mean_path, 1, {"output_class": "false"},
                  "scikit-learn IsolationForest via scripts/convert_sklearn_model.py: the mean path length E, score_samples() = -2 ** (-E / c(max_samples_)).")


if __name__ == "__main__":
    if sys.argv[1:] == ["--fixtures"]:
        fixtures()
    elif len(sys.argv) == 3:
        with open(sys.argv[1], "rb") as f:
            fitted = pickle.load(f)
        with open(sys.argv[2], "w") as f:
            f.write(to_lightgbm_text(fitted))
    else:
        sys.exit(__doc__)
