#!/usr/bin/python3
"""The two tree models of bench/trees.ts, and XGBoost's own throughput on them.

  /usr/bin/python3 bench/tree_models.py make <folder>
      writes <folder>/{example,forest}/ as fil model folders (xgboost.json and config.pbtxt): the
      breast-cancer classifier of examples/model_repository (copied), and a 500-tree depth-8 forest on 100
      features; beside each, model.onnx: the same trees as one ai.onnx.ml TreeEnsembleRegressor node
      (the other evaluator candidate), converted here from the XGBoost JSON.
  /usr/bin/python3 bench/tree_models.py xgboost <folder> <threads> <seconds> <batch>...
      prints one JSON line per model and batch: rows/s of Booster.inplace_predict in-process, and the
      CPU time per call (time.process_time: all of the process's threads, OpenMP's waiting included).

Requirements (Debian 12): python3-xgboost python3-sklearn python3-onnx python3-numpy.
"""

import json
import os
import sys
import time

import numpy as np
import xgboost as xgb
from onnx import TensorProto, helper, save_model


def onnx_from_xgboost(json_path, onnx_path, features, post_transform):
    """One TreeEnsembleRegressor with the XGBoost trees: x < threshold goes left, NaN the default way."""
    model = json.load(open(json_path))["learner"]
    trees = model["gradient_booster"]["model"]["trees"]
    base_score = float(model["learner_model_param"]["base_score"])
    attrs = {k: [] for k in ["nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes", "nodes_truenodeids",
                             "nodes_falsenodeids", "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids", "target_ids", "target_weights"]}
    for t, tree in enumerate(trees):
        for n, left in enumerate(tree["left_children"]):
            leaf = left == -1
            attrs["nodes_treeids"].append(t)
            attrs["nodes_nodeids"].append(n)
            attrs["nodes_featureids"].append(0 if leaf else tree["split_indices"][n])
            attrs["nodes_values"].append(0.0 if leaf else tree["split_conditions"][n])
            attrs["nodes_modes"].append("LEAF" if leaf else "BRANCH_LT")
            attrs["nodes_truenodeids"].append(0 if leaf else left)
            attrs["nodes_falsenodeids"].append(0 if leaf else tree["right_children"][n])
            attrs["nodes_missing_value_tracks_true"].append(int(tree["default_left"][n]) if not leaf else 0)
            if leaf:
                attrs["target_treeids"].append(t)
                attrs["target_nodeids"].append(n)
                attrs["target_ids"].append(0)
                attrs["target_weights"].append(tree["split_conditions"][n])
    margin = base_score if post_transform == "NONE" else float(np.log(base_score / (1 - base_score)))
    # The margins, without the sigmoid: bench/tree-evaluators.ts compares them with predict.ts's.
    node = helper.make_node("TreeEnsembleRegressor", ["input__0"], ["output__0"], domain="ai.onnx.ml", n_targets=1,
                            base_values=[margin], post_transform="NONE", **attrs)
    graph = helper.make_graph([node], "forest", [helper.make_tensor_value_info("input__0", TensorProto.FLOAT, [None, features])],
                              [helper.make_tensor_value_info("output__0", TensorProto.FLOAT, [None, 1])])
    save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]), onnx_path)


def config(name, features, dims, parameters):
    params = ",\n".join(f'  {{ key: "{k}", value: {{ string_value: "{v}" }} }}' for k, v in parameters.items())
    return (f'name: "{name}"\nbackend: "fil"\nmax_batch_size: 16384\n'
            f'input [ {{ name: "input__0", data_type: TYPE_FP32, dims: [ {features} ] }} ]\n'
            f'output [ {{ name: "output__0", data_type: TYPE_FP32, dims: [ {dims} ] }} ]\n'
            f'instance_group [ {{ count: 1, kind: KIND_CPU }} ]\nparameters [\n{params}\n]\n')


def make(folder):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    example = xgb.Booster(model_file=os.path.join(root, "examples", "model_repository", "breast_cancer", "1", "xgboost.json"))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 100)).astype(np.float32)
    y = x[:, :20].sum(axis=1) + rng.normal(size=4000)
    forest = xgb.train({"max_depth": 8, "eta": 0.05, "nthread": 2, "seed": 0, "tree_method": "hist"}, xgb.DMatrix(x, y), 500)
    for name, booster, features, transform in [("example", example, 30, "LOGISTIC"), ("forest", forest, 100, "NONE")]:
        os.makedirs(os.path.join(folder, name, "1"), exist_ok=True)
        path = os.path.join(folder, name, "1", "xgboost.json")
        booster.save_model(path)
        parameters = {"model_type": "xgboost_json", "output_class": "false"}
        with open(os.path.join(folder, name, "config.pbtxt"), "w") as f:
            f.write(config(name, features, 1, parameters))
        onnx_from_xgboost(path, os.path.join(folder, name, "model.onnx"), features, transform)


def measure_xgboost(folder, threads, seconds, batches):
    rng = np.random.default_rng(1)
    for name, features in [("example", 30), ("forest", 100)]:
        booster = xgb.Booster(model_file=os.path.join(folder, name, "1", "xgboost.json"))
        booster.set_param({"nthread": threads})
        for batch in batches:
            x = rng.normal(size=(batch, features)).astype(np.float32)
            for _ in range(3):
                booster.inplace_predict(x)
            count = 0
            start = time.perf_counter()
            cpu_start = time.process_time()
            while time.perf_counter() - start < seconds:
                booster.inplace_predict(x)
                count += 1
            elapsed = time.perf_counter() - start
            cpu_us = (time.process_time() - cpu_start) / count * 1e6
            print(json.dumps({"model": name, "batch": batch, "rowsPerSecond": count * batch / elapsed, "latencyUs": elapsed / count * 1e6, "cpuUs": cpu_us}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        measure_xgboost(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), [int(b) for b in sys.argv[5:]])
