#!/usr/bin/python3
"""Generate the models of the hot-path tests (test/e2e/onnx-execution-threads.test.ts).

Writes test/fixtures/hot_path_repository/:
  slow/, slow_b/  OUTPUT0 = INPUT0 (FP32 [1]) after a Loop of ITERATIONS MatMul + Tanh steps on a
          [64,256] state that starts from INPUT0: about 100 ms of compute on one core of the 2-core
          test machine, a few hundred bytes on disk (the weights come from ConstantOfShape).
  solo/   OUTPUT0 = INPUT0 (FP32 [1]), one instance.
  wide/   OUTPUT0 = INPUT0 four times over (FP32 [-1]), one instance: requests and replies past the
          instance's arena (the reply four times the request, so that the execution thread grows it).
  echo/   OUTPUT0 = INPUT0 (FP32 [-1, 4]), dynamic batching, 2 instances.

Requirements (Debian 12): apt-get install -y python3-onnx
Run from anywhere:          /usr/bin/python3 scripts/generate_hot_path_models.py [--iterations N]
The output is deterministic (opset 13, IR version 8, fixed producer).
"""

import argparse
import os

import onnx
from onnx import TensorProto, helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "hot_path_repository")


def save(name, graph, config):
    folder = os.path.join(ROOT, name)
    os.makedirs(os.path.join(folder, "1"), exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="nereid-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "1", "model.onnx"))
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(config)


def slow(name, iterations):
    const = lambda name, dims, values: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name + "_v", TensorProto.INT64, dims, values))
    body = helper.make_graph(
        [
            const("w_shape", [2], [256, 256]),
            helper.make_node("ConstantOfShape", ["w_shape"], ["w"], value=helper.make_tensor("w_fill", TensorProto.FLOAT, [1], [0.01])),
            helper.make_node("MatMul", ["state_in", "w"], ["product"]),
            helper.make_node("Tanh", ["product"], ["state_out"]),
            helper.make_node("Identity", ["condition_in"], ["condition_out"]),
        ],
        "step",
        [
            helper.make_tensor_value_info("iteration", TensorProto.INT64, []),
            helper.make_tensor_value_info("condition_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("state_in", TensorProto.FLOAT, [64, 256]),
        ],
        [
            helper.make_tensor_value_info("condition_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [64, 256]),
        ],
    )
    graph = helper.make_graph(
        [
            const("trips", [], [iterations]),
            helper.make_node("Constant", [], ["always"], value=helper.make_tensor("always_v", TensorProto.BOOL, [], [True])),
            const("state_shape", [2], [64, 256]),
            helper.make_node("Expand", ["INPUT0", "state_shape"], ["state0"]),
            helper.make_node("Loop", ["trips", "always", "state0"], ["state"], body=body),
            helper.make_node("ReduceSum", ["state"], ["total"], keepdims=0),
            helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero_v", TensorProto.FLOAT, [], [0.0])),
            helper.make_node("Mul", ["total", "zero"], ["nothing"]),
            helper.make_node("Add", ["INPUT0", "nothing"], ["OUTPUT0"]),
        ],
        "slow",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [1])],
    )
    save(name, graph, f'name: "{name}"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
         'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
         'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
         'instance_group [ { count: 1 kind: KIND_CPU } ]\n')


def solo():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
        "solo",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [1])],
    )
    save("solo", graph, 'name: "solo"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
         'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
         'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
         'instance_group [ { count: 1 kind: KIND_CPU } ]\n')


def wide():
    graph = helper.make_graph(
        [helper.make_node("Concat", ["INPUT0"] * 4, ["OUTPUT0"], axis=0)],
        "wide",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [-1])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [-1])],
    )
    save("wide", graph, 'name: "wide"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
         'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n'
         'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n'
         'instance_group [ { count: 1 kind: KIND_CPU } ]\n')


def echo():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
        "echo",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [-1, 4])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [-1, 4])],
    )
    save("echo", graph, 'name: "echo"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 64\n'
         'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
         'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
         'instance_group [ { count: 2 kind: KIND_CPU } ]\n'
         'dynamic_batching { max_queue_delay_microseconds: 500 }\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=100, help="Loop trips of the slow model (default 100: about 100 ms here)")
    args = parser.parse_args()
    slow("slow", args.iterations)
    slow("slow_b", args.iterations)
    solo()
    wide()
    echo()


if __name__ == "__main__":
    main()
