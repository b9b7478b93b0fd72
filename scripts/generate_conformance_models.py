#!/usr/bin/python3
"""Generate the ONNX Runtime repository of the backend conformance suite.

Writes test/fixtures/conformance/onnxruntime/{identity,batching,reshape,bad_output,crashy,slow}/,
the ONNX twins of the JavaScript and Python models beside it (test/fixtures/conformance/javascript,
test/fixtures/conformance/python): the same model names, tensors and configuration, so that
test/helpers/backend-conformance.ts runs the same cases against each backend.

Requirements (Debian 12): apt-get install -y python3-onnx python3-numpy
Run from anywhere:          /usr/bin/python3 scripts/generate_conformance_models.py

Deterministic, as scripts/generate_models.py (whose helpers it uses): rerunning writes identical files.
"""

import os
import sys

from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_models import (  # noqa: E402
    FIXTURES_DIR, config_pbtxt, gen_slow, identity_all_types_graph, make_model, reset_dir, save_model, tensor,
    write_text,
)

REPOSITORY = os.path.join(FIXTURES_DIR, "conformance", "onnxruntime")


def write(name, graph, comment, max_batch_size, inputs, outputs, extra=""):
    d = os.path.join(REPOSITORY, name)
    reset_dir(d)
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(comment, name, max_batch_size, inputs, outputs, extra=extra))


def gen_identity():
    graph, cfg_in, cfg_out = identity_all_types_graph("identity")
    write("identity", graph,
          "Identity for every data type: OUTPUT_<T> = INPUT_<T>.", 8, cfg_in, cfg_out)


def gen_batching():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])], "batching",
        [tensor("INPUT0", TensorProto.STRING, ["batch", "n"])],
        [tensor("OUTPUT0", TensorProto.STRING, ["batch", "n"])],
    )
    write("batching", graph,
          "BYTES identity behind a batcher that waits for 4 requests; an element holding a NUL byte fails its request.",
          8, [("INPUT0", "TYPE_STRING", [-1])], [("OUTPUT0", "TYPE_STRING", [-1])],
          extra=("dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 60000000 }\n"
                 "instance_group [ { count: 1, kind: KIND_CPU } ]\n"))


def gen_reshape():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"]), helper.make_node("Shape", ["INPUT0"], ["SHAPE"])],
        "reshape",
        [tensor("INPUT0", TensorProto.FLOAT, [2, 2])],
        [tensor("OUTPUT0", TensorProto.FLOAT, [2, 2]), tensor("SHAPE", TensorProto.INT64, [2])],
    )
    write("reshape", graph, "The model sees INPUT0 as [2, 2] (SHAPE says so); the client sends and gets [4].", 0,
          [("INPUT0", "TYPE_FP32", [4], ["reshape: { shape: [ 2, 2 ] }"])],
          [("OUTPUT0", "TYPE_FP32", [4], ["reshape: { shape: [ 2, 2 ] }"]), ("SHAPE", "TYPE_INT64", [2])])


def gen_bad_output():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])], "bad_output",
        [tensor("INPUT0", TensorProto.FLOAT, ["batch", "n"])],
        [tensor("OUTPUT0", TensorProto.FLOAT, ["batch", "n"])],
    )
    write("bad_output", graph, "Identity whose configuration promises OUTPUT0 dims [2]: any other length breaks it.", 8,
          [("INPUT0", "TYPE_FP32", [-1])], [("OUTPUT0", "TYPE_FP32", [2])])


def gen_crashy():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])], "crashy",
        [tensor("INPUT0", TensorProto.FLOAT, [1])],
        [tensor("OUTPUT0", TensorProto.FLOAT, [1])],
    )
    write("crashy", graph, "Identity; the conformance suite stops its worker thread through killWorkersForTesting.", 0,
          [("INPUT0", "TYPE_FP32", [1])], [("OUTPUT0", "TYPE_FP32", [1])],
          extra="instance_group [ { count: 1, kind: KIND_CPU } ]\n")


def gen_conformance_slow():
    gen_slow(REPOSITORY)
    write_text(os.path.join(REPOSITORY, "slow", "config.pbtxt"), config_pbtxt(
        "Slow identity (chained MatMuls built in-graph), one instance, so that requests queue behind it.",
        "slow", 0, [("INPUT0", "TYPE_FP32", [-1])], [("OUTPUT0", "TYPE_FP32", [-1])],
        extra="instance_group [ { count: 1, kind: KIND_CPU } ]\n",
    ))


def main():
    gen_identity()
    gen_batching()
    gen_reshape()
    gen_bad_output()
    gen_crashy()
    gen_conformance_slow()
    print(f"wrote {REPOSITORY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
