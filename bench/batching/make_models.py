#!/usr/bin/python3
"""Writes the model repository for the batching benchmark (bench/batching/run.ts builds it when missing).

Writes, under --out (default bench/batching/.work, gitignored):
  model_repository/<m>_nobatch/{config.pbtxt,1/model.onnx}   no scheduling block: one request, one run
  model_repository/<m>_batch/{config.pbtxt,1/model.onnx}     dynamic_batching { max_queue_delay_microseconds }
  torch/<m>.pt                 the PyTorch state dict the FastAPI service loads (the same weights)
  samples/<m>.input.bin        one request's input, FP32 little-endian, batch 1
  samples/<m>.output.bin       PyTorch's output for it: run.ts checks every server's answer against it
  manifest.json                shapes, options, file hashes
for m in resnet18 (torchvision resnet18(weights=None), random weights) and mlp (64 -> 256 -> 256 -> 10, ReLU).
Both model folders of a model share one .onnx (a hard link, or a copy where links fail): same bytes.

Requirements (Debian 12): apt-get install -y python3-torch python3-torchvision python3-onnx python3-numpy
Run from anywhere:          /usr/bin/python3 bench/batching/make_models.py [--instance-count 2] ...

Weights, inputs and configs are fixed by seeds and flags; the ONNX export is rerun only when a file is
missing or with --force, while the config.pbtxt files are rewritten on every run (cheap), so changing
--instance-count or --max-queue-delay-us takes effect at once.

Instance count (--instance-count N for every model, or per model: resnet18=1,mlp=2, the default),
chosen for a 2-core machine from engine-limit.ts's two layouts, with Nereid's default of an equal share
of the cores per instance as ONNX Runtime intra-op threads:
- resnet18: 1 instance with 2 intra-op threads. One session on both cores runs about as many
  inferences per second as two single-threaded sessions at every batch size, and answers a lone
  request in half the time (~12 ms instead of ~25 ms): the concurrency-1 latency the naive server,
  one session with ONNX Runtime's default threads, also gets.
- mlp: 2 instances with 1 thread each. Its runs take tens of microseconds, where ONNX Runtime's
  thread pool costs more than it gives (two single-threaded sessions run about twice what one
  two-threaded session does), and while one instance runs a batch the batcher gathers the next one
  for the other. Triton's own default for CPU models is also 2 instances.
--intra-op-threads writes Triton's `intra_op_thread_count` parameter to override the share.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # keep bench/batching/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import SHAPES, build_model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# torch 1.13 (Debian 12) exports opsets 7..17; ONNX Runtime 1.30 runs them all.
OPSET = 17
SEED = 20261130


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, ".work"), help="output folder (default bench/batching/.work)")
    parser.add_argument("--models", default="resnet18,mlp", help="comma-separated subset of resnet18,mlp,identity")
    parser.add_argument("--max-batch-size", type=int, default=64)
    parser.add_argument(
        "--instance-count", default="resnet18=1,mlp=2",
        help="instance_group count (KIND_CPU): N for every model, or MODEL=N,... (default resnet18=1,mlp=2)",
    )
    parser.add_argument(
        "--intra-op-threads", type=int, default=0,
        help="ONNX Runtime intra-op threads per instance; 0 (default) writes no parameter: Nereid's equal share of the cores",
    )
    parser.add_argument("--max-queue-delay-us", type=int, default=100, help="dynamic_batching max_queue_delay_microseconds of <m>_batch (default 100)")
    parser.add_argument("--force", action="store_true", help="re-export the models even when the files exist")
    return parser.parse_args()


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def instance_counts(text, names):
    """Parses --instance-count: "N" for every model, or "MODEL=N,..." (every model in `names` needs one)."""
    if "=" not in text:
        counts = {name: text for name in names}
    else:
        counts = dict(item.split("=", 1) for item in text.split(",") if item)
    result = {}
    for name in names:
        value = counts.get(name)
        if value is None or not value.isdigit() or int(value) < 1:
            sys.exit(f"make_models.py: --instance-count {text!r} gives {name} no count of at least 1; "
                     f"expected N or MODEL=N,... for {','.join(names)}")
        result[name] = int(value)
    return result


def config_text(name, shapes, args, batching, instance_count):
    dims = lambda shape: ", ".join(str(d) for d in shape)  # noqa: E731
    lines = [
        f'name: "{name}"',
        'platform: "onnxruntime_onnx"',
        f"max_batch_size: {args.max_batch_size}",
        f'input [ {{ name: "INPUT" data_type: TYPE_FP32 dims: [ {dims(shapes["input"])} ] }} ]',
        f'output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ {dims(shapes["output"])} ] }} ]',
        f"instance_group [ {{ count: {instance_count} kind: KIND_CPU }} ]",
    ]
    if args.intra_op_threads > 0:
        lines.append(f'parameters {{ key: "intra_op_thread_count" value: {{ string_value: "{args.intra_op_threads}" }} }}')
    if batching:
        lines.append(f"dynamic_batching {{ max_queue_delay_microseconds: {args.max_queue_delay_us} }}")
    return "\n".join(lines) + "\n"


def export(name, shapes, onnx_path, weights_path, samples_dir):
    """Builds `name` with seeded random weights, saves them, exports the ONNX file and a sample."""
    import onnx

    torch.manual_seed(SEED)
    model = build_model(name)
    os.makedirs(os.path.dirname(weights_path), exist_ok=True)
    torch.save(model.state_dict(), weights_path)

    dummy = torch.zeros([2] + shapes["input"], dtype=torch.float32)
    os.makedirs(os.path.dirname(onnx_path), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            model, dummy, onnx_path,
            input_names=["INPUT"], output_names=["OUTPUT"],
            dynamic_axes={"INPUT": {0: "batch"}, "OUTPUT": {0: "batch"}},
            opset_version=OPSET, do_constant_folding=True,
        )
    onnx.checker.check_model(onnx.load(onnx_path))

    sample = np.random.default_rng(SEED).standard_normal([1] + shapes["input"], dtype=np.float32)
    with torch.inference_mode():
        reference = model(torch.from_numpy(sample)).numpy()
    os.makedirs(samples_dir, exist_ok=True)
    sample.astype("<f4").tofile(os.path.join(samples_dir, f"{name}.input.bin"))
    reference.astype("<f4").tofile(os.path.join(samples_dir, f"{name}.output.bin"))


def link_or_copy(source, target):
    if os.path.exists(target):
        os.remove(target)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def main():
    args = parse_args()
    out = os.path.abspath(args.out)
    repository = os.path.join(out, "model_repository")
    names = [m for m in args.models.split(",") if m]
    for name in names:
        if name not in SHAPES:
            sys.exit(f"make_models.py: unknown model '{name}'; expected one of {sorted(SHAPES)}")
    counts = instance_counts(args.instance_count, names)

    manifest = {
        "opset": OPSET,
        "seed": SEED,
        "torch": torch.__version__,
        "max_batch_size": args.max_batch_size,
        "instance_count": counts,  # of the models written this time
        "intra_op_threads": args.intra_op_threads,
        "max_queue_delay_us": args.max_queue_delay_us,
        "models": {},
    }
    manifest_path = os.path.join(out, "manifest.json")
    if os.path.exists(manifest_path):  # keep the entries of models not rebuilt this time
        with open(manifest_path) as f:
            manifest["models"] = json.load(f).get("models", {})
    for name in names:
        shapes = SHAPES[name]
        onnx_path = os.path.join(out, "onnx", f"{name}.onnx")
        weights_path = os.path.join(out, "torch", f"{name}.pt")
        samples_dir = os.path.join(out, "samples")
        wanted = [onnx_path, weights_path, os.path.join(samples_dir, f"{name}.input.bin"), os.path.join(samples_dir, f"{name}.output.bin")]
        if args.force or not all(os.path.exists(p) for p in wanted):
            print(f"make_models.py: exporting {name} (torch {torch.__version__}, opset {OPSET})", file=sys.stderr)
            export(name, shapes, onnx_path, weights_path, samples_dir)
        for variant, batching in (("nobatch", False), ("batch", True)):
            model_name = f"{name}_{variant}"
            folder = os.path.join(repository, model_name)
            os.makedirs(os.path.join(folder, "1"), exist_ok=True)
            link_or_copy(onnx_path, os.path.join(folder, "1", "model.onnx"))
            with open(os.path.join(folder, "config.pbtxt"), "w") as f:
                f.write(config_text(model_name, shapes, args, batching, counts[name]))
        manifest["models"][name] = {
            "input": shapes["input"],
            "output": shapes["output"],
            "onnx": os.path.relpath(onnx_path, out),
            "onnx_sha256": sha256(onnx_path),
            "weights": os.path.relpath(weights_path, out),
        }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"make_models.py: wrote {repository} ({', '.join(f'{n}: {counts[n]} instance(s)' for n in names)}, "
          f"max_queue_delay_microseconds {args.max_queue_delay_us})", file=sys.stderr)


if __name__ == "__main__":
    main()
