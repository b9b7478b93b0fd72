#!/usr/bin/python3
"""Generate the bundled example models and the end-to-end test fixtures.

Writes:
  examples/model_repository/{simple,digits,identity_bytes,accumulator}/
  examples/model_repository/digits_torch/  (TorchScript; only where torch is installed)
  test/fixtures/model_repository/{identity_all_types,nobatch_fp32,versioned,
      versioned_latest,autocomplete_none,autocomplete_partial,broken_model,
      bad_config,slow,custom_filename,batching,kind_gpu,warmup_ok,
      warmup_bad}/
  test/fixtures/digits_samples.json

Requirements (Debian 12): apt-get install -y python3-onnx python3-sklearn python3-numpy
                          (and python3-torch for digits_torch, skipped with a message without it)
Run from anywhere:          /usr/bin/python3 scripts/generate_models.py

The output is deterministic: fixed seeds, fixed producer metadata, no
timestamps, so rerunning produces byte-identical files.  Graphs are built by
hand with onnx.helper (opset 13, IR version 8).
"""

import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "model_repository")
FIXTURES_DIR = os.path.join(ROOT, "test", "fixtures")
FIXTURES = os.path.join(FIXTURES_DIR, "model_repository")

OPSET = 13
IR_VERSION = 8

# Triton datatype name -> (ONNX element type, config.pbtxt data_type)
DTYPES = [
    ("BOOL", TensorProto.BOOL, "TYPE_BOOL"),
    ("UINT8", TensorProto.UINT8, "TYPE_UINT8"),
    ("UINT16", TensorProto.UINT16, "TYPE_UINT16"),
    ("UINT32", TensorProto.UINT32, "TYPE_UINT32"),
    ("UINT64", TensorProto.UINT64, "TYPE_UINT64"),
    ("INT8", TensorProto.INT8, "TYPE_INT8"),
    ("INT16", TensorProto.INT16, "TYPE_INT16"),
    ("INT32", TensorProto.INT32, "TYPE_INT32"),
    ("INT64", TensorProto.INT64, "TYPE_INT64"),
    ("FP16", TensorProto.FLOAT16, "TYPE_FP16"),
    ("FP32", TensorProto.FLOAT, "TYPE_FP32"),
    ("FP64", TensorProto.DOUBLE, "TYPE_FP64"),
    ("BYTES", TensorProto.STRING, "TYPE_STRING"),
]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def make_model(graph):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="nereid-generate_models",
        producer_version="1",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_text(path, text):
    write_bytes(path, text.encode("utf-8"))


def save_model(model, path):
    write_bytes(path, model.SerializeToString())


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name=name)


def dims_str(dims):
    return "[ " + ", ".join(str(d) for d in dims) + " ]"


def io_block(kind, entries):
    """entries: list of (name, data_type, dims, extra_lines)."""
    blocks = []
    for name, data_type, dims, extra in entries:
        lines = [
            "  {",
            f'    name: "{name}"',
            f"    data_type: {data_type}",
            f"    dims: {dims_str(dims)}",
        ]
        lines += [f"    {e}" for e in extra]
        lines.append("  }")
        blocks.append("\n".join(lines))
    return f"{kind} [\n" + ",\n".join(blocks) + "\n]\n"


def _entry(e):
    """(name, data_type, dims[, extra_lines]) -> (name, data_type, dims, extra)."""
    return tuple(e) if len(e) == 4 else (*e, [])


def config_pbtxt(comment, name, max_batch_size, inputs, outputs,
                 platform="onnxruntime_onnx", extra=""):
    text = f"# {comment}\n"
    text += f'name: "{name}"\n'
    text += f'platform: "{platform}"\n'
    text += f"max_batch_size: {max_batch_size}\n"
    text += io_block("input", [_entry(i) for i in inputs])
    text += io_block("output", [_entry(o) for o in outputs])
    if extra:
        text += extra
    return text


def reset_dir(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)


# --------------------------------------------------------------------------
# examples/model_repository
# --------------------------------------------------------------------------

def gen_simple(repo):
    d = os.path.join(repo, "simple")
    reset_dir(d)
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
            helper.make_node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"]),
        ],
        "simple",
        [tensor("INPUT0", TensorProto.INT32, ["batch", 16]),
         tensor("INPUT1", TensorProto.INT32, ["batch", 16])],
        [tensor("OUTPUT0", TensorProto.INT32, ["batch", 16]),
         tensor("OUTPUT1", TensorProto.INT32, ["batch", 16])],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Triton's classic add_sub example: OUTPUT0 = INPUT0 + INPUT1, "
        "OUTPUT1 = INPUT0 - INPUT1 (element-wise, INT32).",
        "simple", 8,
        [("INPUT0", "TYPE_INT32", [16]), ("INPUT1", "TYPE_INT32", [16])],
        [("OUTPUT0", "TYPE_INT32", [16]), ("OUTPUT1", "TYPE_INT32", [16])],
    ))


ACCUMULATOR_SEQUENCE_BATCHING = """sequence_batching {
  max_sequence_idle_microseconds: 5000000
  direct { }
  control_input [
    {
      name: "START"
      control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "READY"
      control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ]
    }
  ]
  state [
    {
      input_name: "ACC_IN"
      output_name: "ACC_OUT"
      data_type: TYPE_INT32
      dims: [ 1 ]
      initial_state { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "zero" }
    }
  ]
}
"""


def gen_accumulator(repo):
    """A running sum per sequence, kept by the server as implicit state.

    OUTPUT = READY ? (START ? 0 : ACC_IN) + INPUT : ACC_IN, and ACC_OUT = OUTPUT, so
    a slot that is not ready keeps its state and a start forgets it.
    """
    d = os.path.join(repo, "accumulator")
    reset_dir(d)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["START"], ["start_b"], to=TensorProto.BOOL),
            helper.make_node("Cast", ["READY"], ["ready_b"], to=TensorProto.BOOL),
            helper.make_node("Where", ["start_b", "zero", "ACC_IN"], ["previous"]),
            helper.make_node("Add", ["previous", "INPUT"], ["sum"]),
            helper.make_node("Where", ["ready_b", "sum", "ACC_IN"], ["OUTPUT"]),
            helper.make_node("Identity", ["OUTPUT"], ["ACC_OUT"]),
        ],
        "accumulator",
        [tensor("INPUT", TensorProto.INT32, ["batch", 1]),
         tensor("START", TensorProto.INT32, ["batch", 1]),
         tensor("READY", TensorProto.INT32, ["batch", 1]),
         tensor("ACC_IN", TensorProto.INT32, ["batch", 1])],
        [tensor("OUTPUT", TensorProto.INT32, ["batch", 1]),
         tensor("ACC_OUT", TensorProto.INT32, ["batch", 1])],
        initializer=[const("zero", np.zeros([1, 1], dtype=np.int32))],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "A stateful model: OUTPUT is the running sum of INPUT over the requests of one "
        "sequence. The sequence batcher gives each sequence a slot, fills START and READY, "
        "and keeps the sum between requests as the implicit state ACC_IN / ACC_OUT.",
        "accumulator", 8,
        [("INPUT", "TYPE_INT32", [1])],
        [("OUTPUT", "TYPE_INT32", [1])],
        extra=ACCUMULATOR_SEQUENCE_BATCHING + "instance_group [ { kind: KIND_CPU count: 1 } ]\n",
    ))


DIGIT_NAMES = ["zero", "one", "two", "three", "four",
               "five", "six", "seven", "eight", "nine"]
N_TRAIN = 1500


def train_digits():
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    digits = load_digits()
    X = digits.data  # float64, raw pixel intensities 0..16
    y = digits.target
    X_train, y_train = X[:N_TRAIN], y[:N_TRAIN]
    X_test, y_test = X[N_TRAIN:], y[N_TRAIN:]

    clf = MLPClassifier(hidden_layer_sizes=(32,), activation="relu",
                        solver="adam", alpha=1e-4, max_iter=500,
                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X_train / 16.0, y_train)
    assert clf.out_activation_ == "softmax"
    assert list(clf.classes_) == list(range(10))
    acc = float((clf.predict(X_test / 16.0) == y_test).mean())
    return clf, X_test, y_test, acc


def gen_digits(repo, clf):
    d = os.path.join(repo, "digits")
    reset_dir(d)
    # Fold the 1/16 input scaling into the first weight matrix.
    w1 = (clf.coefs_[0] / 16.0).astype(np.float32)
    b1 = clf.intercepts_[0].astype(np.float32)
    w2 = clf.coefs_[1].astype(np.float32)
    b2 = clf.intercepts_[1].astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["INPUT", "W1"], ["h_mm"]),
            helper.make_node("Add", ["h_mm", "B1"], ["h_pre"]),
            helper.make_node("Relu", ["h_pre"], ["h"]),
            helper.make_node("MatMul", ["h", "W2"], ["logits_mm"]),
            helper.make_node("Add", ["logits_mm", "B2"], ["logits"]),
            helper.make_node("Softmax", ["logits"], ["PROBABILITIES"], axis=-1),
        ],
        "digits",
        [tensor("INPUT", TensorProto.FLOAT, ["batch", 64])],
        [tensor("PROBABILITIES", TensorProto.FLOAT, ["batch", 10])],
        initializer=[const("W1", w1), const("B1", b1),
                     const("W2", w2), const("B2", b2)],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "labels.txt"), "\n".join(DIGIT_NAMES) + "\n")
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Handwritten digit classifier (scikit-learn MLP, 64-32-10, trained on "
        "the 8x8 load_digits dataset): INPUT is 64 raw pixel values in 0..16, "
        "PROBABILITIES are softmax scores for digits 0-9.",
        "digits", 32,
        [("INPUT", "TYPE_FP32", [64])],
        [("PROBABILITIES", "TYPE_FP32", [10], ['label_filename: "labels.txt"'])],
        extra="dynamic_batching { max_queue_delay_microseconds: 200 }\n",
    ))
    return w1, b1, w2, b2


def digits_forward_np(x, w1, b1, w2, b2):
    x = x.astype(np.float32)
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def gen_digits_torch(repo, w1, b1, w2, b2):
    """The digits classifier again, as TorchScript for platform pytorch_libtorch (Triton's
    INPUT__0 / OUTPUT__0 naming), with the same float32 weights as the ONNX graph."""
    try:
        import torch
    except ImportError:
        print("skipped examples/model_repository/digits_torch: torch is not installed "
              "(apt-get install python3-torch)")
        return
    d = os.path.join(repo, "digits_torch")
    reset_dir(d)

    class DigitsNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w1", torch.from_numpy(w1.copy()))
            self.register_buffer("b1", torch.from_numpy(b1.copy()))
            self.register_buffer("w2", torch.from_numpy(w2.copy()))
            self.register_buffer("b2", torch.from_numpy(b2.copy()))

        def forward(self, pixels):
            hidden = torch.relu(pixels @ self.w1 + self.b1)
            return torch.softmax(hidden @ self.w2 + self.b2, dim=1)

    os.makedirs(os.path.join(d, "1"))
    torch.jit.save(torch.jit.script(DigitsNet()), os.path.join(d, "1", "model.pt"))
    write_text(os.path.join(d, "labels.txt"), "\n".join(DIGIT_NAMES) + "\n")
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "The digits classifier as a TorchScript model (same weights as digits), "
        "served through Nereid's Python runtime with torch: INPUT__0 is 64 raw "
        "pixel values in 0..16, OUTPUT__0 the softmax scores for digits 0-9.",
        "digits_torch", 32,
        [("INPUT__0", "TYPE_FP32", [64])],
        [("OUTPUT__0", "TYPE_FP32", [10], ['label_filename: "labels.txt"'])],
        platform="pytorch_libtorch",
        extra="dynamic_batching { max_queue_delay_microseconds: 200 }\n",
    ))


def gen_identity_bytes(repo):
    d = os.path.join(repo, "identity_bytes")
    reset_dir(d)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
        "identity_bytes",
        [tensor("INPUT0", TensorProto.STRING, ["batch", "len"])],
        [tensor("OUTPUT0", TensorProto.STRING, ["batch", "len"])],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Identity on BYTES (string) tensors: OUTPUT0 = INPUT0.",
        "identity_bytes", 8,
        [("INPUT0", "TYPE_STRING", [-1])],
        [("OUTPUT0", "TYPE_STRING", [-1])],
    ))


def write_digits_samples(clf, x_test, y_test, w1, b1, w2, b2, path):
    # The first occurrence of each digit 0..9 in the held-out test set
    # (indices >= N_TRAIN, never seen in training).
    idx = [int(np.nonzero(y_test == k)[0][0]) for k in range(10)]
    images = x_test[idx]
    proba = clf.predict_proba(images / 16.0)
    onnx_like = digits_forward_np(images, w1, b1, w2, b2)
    predicted = onnx_like.argmax(axis=1)
    data = {
        "description": "10 held-out samples (one per digit) from scikit-learn "
                       "load_digits, indices >= %d (not used for training). "
                       "images: 64 raw pixel values 0..16; labels: true digit; "
                       "predicted: argmax of the digits model; probabilities: "
                       "sklearn predict_proba." % N_TRAIN,
        "indices": [N_TRAIN + i for i in idx],
        "images": [[int(v) for v in row] for row in images],
        "labels": [int(v) for v in y_test[idx]],
        "predicted": [int(v) for v in predicted],
        "probabilities": [[round(float(v), 8) for v in row] for row in proba],
    }
    write_text(path, json.dumps(data, indent=None, separators=(",", ":")) + "\n")


# --------------------------------------------------------------------------
# test/fixtures/model_repository
# --------------------------------------------------------------------------

def identity_all_types_graph(name):
    """OUTPUT_<T> = INPUT_<T> for every data type, batched, one variable dim: the graph and its config tensors."""
    nodes, inputs, outputs = [], [], []
    cfg_in, cfg_out = [], []
    for tname, onnx_t, cfg_t in DTYPES:
        i, o = f"INPUT_{tname}", f"OUTPUT_{tname}"
        nodes.append(helper.make_node("Identity", [i], [o]))
        inputs.append(tensor(i, onnx_t, ["batch", f"len_{tname.lower()}"]))
        outputs.append(tensor(o, onnx_t, ["batch", f"len_{tname.lower()}"]))
        cfg_in.append((i, cfg_t, [-1]))
        cfg_out.append((o, cfg_t, [-1]))
    return helper.make_graph(nodes, name, inputs, outputs), cfg_in, cfg_out


def gen_identity_all_types(repo):
    d = os.path.join(repo, "identity_all_types")
    reset_dir(d)
    graph, cfg_in, cfg_out = identity_all_types_graph("identity_all_types")
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Identity for every Triton datatype: OUTPUT_<T> = INPUT_<T> for T in "
        + " ".join(t for t, _, _ in DTYPES) + ".",
        "identity_all_types", 8, cfg_in, cfg_out,
    ))


def nobatch_fp32_model():
    graph = helper.make_graph(
        [helper.make_node("Mul", ["INPUT0", "two"], ["OUTPUT0"])],
        "nobatch_fp32",
        [tensor("INPUT0", TensorProto.FLOAT, ["d0", "d1"])],
        [tensor("OUTPUT0", TensorProto.FLOAT, ["d0", "d1"])],
        initializer=[const("two", np.array(2.0, dtype=np.float32))],
    )
    return make_model(graph)


def gen_nobatch_fp32(repo):
    d = os.path.join(repo, "nobatch_fp32")
    reset_dir(d)
    save_model(nobatch_fp32_model(), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "No batching, variable 2-D shape: OUTPUT0 = INPUT0 * 2 (FP32).",
        "nobatch_fp32", 0,
        [("INPUT0", "TYPE_FP32", [-1, -1])],
        [("OUTPUT0", "TYPE_FP32", [-1, -1])],
    ))


def gen_batching(repo):
    """OUTPUT0 = INPUT0 * 2 behind Triton's dynamic batcher, one instance, so that concurrent
    requests are gathered into batches."""
    d = os.path.join(repo, "batching")
    reset_dir(d)
    save_model(versioned_model(2), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Dynamic batching: OUTPUT0 = INPUT0 * 2 (FP32 [4]); requests wait up to 20 ms to share a batch.",
        "batching", 8,
        [("INPUT0", "TYPE_FP32", [4])],
        [("OUTPUT0", "TYPE_FP32", [4])],
        extra=("dynamic_batching { max_queue_delay_microseconds: 20000 }\n"
               "instance_group [ { count: 1, kind: KIND_CPU } ]\n"),
    ))


def gen_kind_gpu(repo):
    """A valid model whose instance group asks for a GPU: it must fail to load on a CPU-only server."""
    d = os.path.join(repo, "kind_gpu")
    reset_dir(d)
    save_model(nobatch_fp32_model(), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "OUTPUT0 = INPUT0 * 2 (FP32) on KIND_GPU instances, which a CPU-only server cannot give it.",
        "kind_gpu", 0,
        [("INPUT0", "TYPE_FP32", [-1, -1])],
        [("OUTPUT0", "TYPE_FP32", [-1, -1])],
        extra="instance_group [ { count: 1, kind: KIND_GPU } ]\n",
    ))


WARMUP_OK = '''model_warmup [
  {
    name: "zeros"
    batch_size: 2
    count: 2
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } }
  },
  {
    name: "random"
    batch_size: 1
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } }
  },
  {
    name: "from_file"
    batch_size: 1
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "input0.bin" } }
  }
]
'''

WARMUP_BAD = '''model_warmup [
  {
    name: "wrong_shape"
    batch_size: 1
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 5 ] zero_data: true } }
  }
]
'''


def gen_warmup(repo):
    """OUTPUT0 = INPUT0 * 2 with model_warmup samples: one model whose warmup passes (zero, random
    and file data), one whose warmup sample has the wrong shape and so must fail to load."""
    for name, extra, comment in (
        ("warmup_ok", WARMUP_OK, "warms up with zero, random and file data before it is READY"),
        ("warmup_bad", WARMUP_BAD, "has a warmup sample of the wrong shape, so it must fail to load"),
    ):
        d = os.path.join(repo, name)
        reset_dir(d)
        save_model(versioned_model(2), os.path.join(d, "1", "model.onnx"))
        if name == "warmup_ok":
            write_bytes(os.path.join(d, "warmup", "input0.bin"),
                        np.array([1, 2, 3, 4], dtype="<f4").tobytes())
        write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
            "OUTPUT0 = INPUT0 * 2 (FP32 [4]); " + comment + ".",
            name, 4,
            [("INPUT0", "TYPE_FP32", [4])],
            [("OUTPUT0", "TYPE_FP32", [4])],
            extra=extra,
        ))


def gen_custom_filename(repo):
    """The nobatch_fp32 graph under another file name, found through default_model_filename."""
    d = os.path.join(repo, "custom_filename")
    reset_dir(d)
    save_model(nobatch_fp32_model(), os.path.join(d, "1", "doubler.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "OUTPUT0 = INPUT0 * 2 (FP32), read from 1/doubler.onnx through default_model_filename.",
        "custom_filename", 0,
        [("INPUT0", "TYPE_FP32", [-1, -1])],
        [("OUTPUT0", "TYPE_FP32", [-1, -1])],
        extra='default_model_filename: "doubler.onnx"\n',
    ))


def versioned_model(version):
    graph = helper.make_graph(
        [helper.make_node("Mul", ["INPUT0", "version"], ["OUTPUT0"])],
        f"versioned_v{version}",
        [tensor("INPUT0", TensorProto.FLOAT, ["batch", 4])],
        [tensor("OUTPUT0", TensorProto.FLOAT, ["batch", 4])],
        initializer=[const("version", np.array(float(version), dtype=np.float32))],
    )
    return make_model(graph)


def gen_versioned(repo, name, with_policy):
    d = os.path.join(repo, name)
    reset_dir(d)
    for v in (1, 2, 3):
        save_model(versioned_model(v), os.path.join(d, str(v), "model.onnx"))
    if with_policy:
        comment = ("Three versions; version N computes OUTPUT0 = INPUT0 * N. "
                   "version_policy serves only versions 1 and 3.")
        extra = "version_policy: { specific: { versions: [ 1, 3 ] } }\n"
    else:
        comment = ("Three versions; version N computes OUTPUT0 = INPUT0 * N. "
                   "Default version_policy (latest 1), so only version 3 loads.")
        extra = ""
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        comment, name, 4,
        [("INPUT0", "TYPE_FP32", [4])],
        [("OUTPUT0", "TYPE_FP32", [4])],
        extra=extra,
    ))
    if with_policy:
        write_text(os.path.join(d, "notes", "README.txt"),
                   "This folder is not a numeric version directory. The server "
                   "must ignore it (with a warning) when loading the model.\n")


def gen_autocomplete_none(repo):
    d = os.path.join(repo, "autocomplete_none")
    reset_dir(d)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])],
        "autocomplete_none",
        [tensor("x", TensorProto.FLOAT, ["batch", 3])],
        [tensor("y", TensorProto.FLOAT, ["batch", 3])],
        initializer=[const("one", np.array(1.0, dtype=np.float32))],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))


def gen_autocomplete_partial(repo):
    d = os.path.join(repo, "autocomplete_partial")
    reset_dir(d)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["b"])],
        "autocomplete_partial",
        [tensor("a", TensorProto.INT64, [2])],
        [tensor("b", TensorProto.INT64, [2])],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"),
               "# Partial config: inputs/outputs are auto-completed from the "
               "model (INT64 a [2] -> b = a).\n"
               'backend: "onnxruntime"\n'
               "max_batch_size: 0\n")


def gen_broken_model(repo):
    d = os.path.join(repo, "broken_model")
    reset_dir(d)
    # 64 bytes that are not a valid ONNX (protobuf) file: the first byte 't'
    # (0x74) decodes as an END_GROUP tag with no open group.
    garbage = b"this is not an onnx model; loading it must fail cleanly.\n"
    garbage = (garbage + b"#" * 64)[:63] + b"\n"
    assert len(garbage) == 64
    write_bytes(os.path.join(d, "1", "model.onnx"), garbage)
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Valid config, but 1/model.onnx is 64 bytes of garbage: loading must "
        "fail and leave this model UNAVAILABLE.",
        "broken_model", 0,
        [("INPUT0", "TYPE_FP32", [4])],
        [("OUTPUT0", "TYPE_FP32", [4])],
    ))


def gen_bad_config(repo):
    d = os.path.join(repo, "bad_config")
    reset_dir(d)
    save_model(nobatch_fp32_model(), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"),
               "# Deliberately invalid: line 3 has a non-integer max_batch_size.\n"
               'name: "bad_config"\n'
               "max_batch_size: eight\n"
               'platform: "onnxruntime_onnx"\n'
               + io_block("input", [("INPUT0", "TYPE_FP32", [-1, -1], [])])
               + io_block("output", [("OUTPUT0", "TYPE_FP32", [-1, -1], [])]))


SLOW_N = 1000       # matrix size
SLOW_MATMULS = 8    # number of chained [N,N] x [N,N] MatMuls (~100 ms on 1 thread)


def gen_slow(repo):
    """OUTPUT0 = INPUT0, computed slowly.

    A = Expand(1/N + 0 * ReduceSum(INPUT0), [N, N]); B_1 = A; B_{k+1} = B_k @ A;
    OUTPUT0 = INPUT0 + 0 * ReduceSum(B_K).  Because A depends on INPUT0, ORT's
    constant folding cannot precompute the chain at load time; with all entries
    1/N, A @ A == A (up to rounding) so nothing overflows.  No weights are
    stored, so the file stays tiny.
    """
    d = os.path.join(repo, "slow")
    reset_dir(d)
    nodes = [
        helper.make_node("ReduceSum", ["INPUT0"], ["in_sum"], keepdims=0),
        helper.make_node("Mul", ["in_sum", "zero"], ["in_zero"]),
        helper.make_node("Add", ["in_zero", "inv_n"], ["a_val"]),
        helper.make_node("Expand", ["a_val", "nn_shape"], ["A"]),
    ]
    prev = "A"
    for k in range(SLOW_MATMULS):
        out = f"B{k + 1}"
        nodes.append(helper.make_node("MatMul", [prev, "A"], [out]))
        prev = out
    nodes += [
        helper.make_node("ReduceSum", [prev], ["b_sum"], keepdims=0),
        helper.make_node("Mul", ["b_sum", "zero"], ["b_zero"]),
        helper.make_node("Add", ["INPUT0", "b_zero"], ["OUTPUT0"]),
    ]
    graph = helper.make_graph(
        nodes, "slow",
        [tensor("INPUT0", TensorProto.FLOAT, ["n"])],
        [tensor("OUTPUT0", TensorProto.FLOAT, ["n"])],
        initializer=[
            const("zero", np.array(0.0, dtype=np.float32)),
            const("inv_n", np.array(1.0 / SLOW_N, dtype=np.float32)),
            const("nn_shape", np.array([SLOW_N, SLOW_N], dtype=np.int64)),
        ],
    )
    save_model(make_model(graph), os.path.join(d, "1", "model.onnx"))
    write_text(os.path.join(d, "config.pbtxt"), config_pbtxt(
        "Deliberately slow identity: OUTPUT0 = INPUT0, after %d chained "
        "%dx%d MatMuls built in-graph (tens to hundreds of ms per request on "
        "CPU)." % (SLOW_MATMULS, SLOW_N, SLOW_N),
        "slow", 0,
        [("INPUT0", "TYPE_FP32", [-1])],
        [("OUTPUT0", "TYPE_FP32", [-1])],
        extra="instance_group [ { count: 2, kind: KIND_CPU } ]\n",
    ))


# --------------------------------------------------------------------------

def main():
    os.makedirs(EXAMPLES, exist_ok=True)
    os.makedirs(FIXTURES, exist_ok=True)

    clf, x_test, y_test, acc = train_digits()

    gen_simple(EXAMPLES)
    w1, b1, w2, b2 = gen_digits(EXAMPLES, clf)
    gen_identity_bytes(EXAMPLES)
    gen_accumulator(EXAMPLES)
    gen_digits_torch(EXAMPLES, w1, b1, w2, b2)

    # Sanity check: the exported float32 graph matches sklearn.
    ref = clf.predict_proba(x_test / 16.0)
    ours = digits_forward_np(x_test, w1, b1, w2, b2)
    max_diff = float(np.abs(ref - ours).max())
    assert max_diff < 1e-4, max_diff

    gen_identity_all_types(FIXTURES)
    gen_nobatch_fp32(FIXTURES)
    gen_custom_filename(FIXTURES)
    gen_batching(FIXTURES)
    gen_kind_gpu(FIXTURES)
    gen_warmup(FIXTURES)
    gen_versioned(FIXTURES, "versioned", with_policy=True)
    gen_versioned(FIXTURES, "versioned_latest", with_policy=False)
    gen_autocomplete_none(FIXTURES)
    gen_autocomplete_partial(FIXTURES)
    gen_broken_model(FIXTURES)
    gen_bad_config(FIXTURES)
    gen_slow(FIXTURES)
    write_digits_samples(clf, x_test, y_test, w1, b1, w2, b2,
                         os.path.join(FIXTURES_DIR, "digits_samples.json"))

    print(f"digits: test accuracy {acc:.4f} on {len(y_test)} held-out samples "
          f"(max |numpy float32 - sklearn| = {max_diff:.2e})")
    print(f"wrote {EXAMPLES}")
    print(f"wrote {FIXTURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
