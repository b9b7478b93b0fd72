"""Nereid's built-in model for ``platform: "pytorch_libtorch"``: runs ``model.pt`` (TorchScript) with torch.

Inputs reach ``forward`` as Triton's PyTorch backend passes them: a single ``Dict[str, Tensor]``
argument gets every input by name; otherwise inputs named like forward()'s arguments go to those
arguments, inputs named ``<name>__<index>`` (INPUT__0, INPUT__1) to that position, and any other
names in config order. Outputs named ``<name>__<index>`` (OUTPUT__0) take that element of what
forward returns; other names follow config order. A batch of requests runs as one forward call.
BYTES (TYPE_STRING) inputs reach forward as a ``List[str]`` of every element (UTF-8), and a
``List[str]`` forward returns is a BYTES output, as Triton's libtorch backend passes them.
Config parameters: DISABLE_OPTIMIZED_EXECUTION ("true"), INTRA_OP_THREAD_COUNT, as in Triton.
"""

import json
import os
import re
import sys

import numpy as np
import triton_python_backend_utils as pb_utils
from nereid_stub.tensor import datatype_name

try:
    import torch
    import torch.utils.dlpack

    _TORCH_IMPORT_ERROR = None
except ImportError as error:
    torch = None
    _TORCH_IMPORT_ERROR = error

_NAMED_INDEX = re.compile(r"^.+__(\d+)$")


def _forward_arguments(module):
    """forward()'s arguments after self: (name, type text) pairs."""
    return [(argument.name, str(argument.type)) for argument in module.forward.schema.arguments if argument.name != "self"]


def _named_indices(names):
    matches = [_NAMED_INDEX.match(name) for name in names]
    return [int(match.group(1)) for match in matches] if all(matches) else None


def _parameter(config, key):
    return config.get("parameters", {}).get(key, {}).get("string_value", "")


class TritonPythonModel:
    def initialize(self, args):
        if torch is None:
            raise pb_utils.TritonModelException(
                f"platform 'pytorch_libtorch' needs PyTorch, but the Python interpreter '{sys.executable}' cannot "
                f"import torch ({_TORCH_IMPORT_ERROR}); install python3-torch (Debian) or pip install torch, or set "
                "EXECUTION_ENV_PATH to an environment that has it"
            )
        config = json.loads(args["model_config"])
        self.model_name = args["model_name"]
        path = os.path.join(args["model_repository"], args["model_version"], config.get("default_model_filename") or "model.pt")
        if _parameter(config, "DISABLE_OPTIMIZED_EXECUTION").lower() == "true":
            torch._C._set_graph_executor_optimize(False)
        threads = _parameter(config, "INTRA_OP_THREAD_COUNT")
        if threads:
            torch.set_num_threads(int(threads))
        try:
            self.module = torch.jit.load(path, map_location="cpu")
        except Exception as error:
            raise pb_utils.TritonModelException(f"torch.jit.load cannot read '{path}' as TorchScript: {error}") from error
        self.module.eval()
        self.is_batching = int(config.get("max_batch_size", 0)) > 0
        self._place_inputs([entry["name"] for entry in config.get("input", [])])
        output_names = [entry["name"] for entry in config.get("output", [])]
        indices = _named_indices(output_names)
        self.output_positions = list(zip(output_names, indices if indices is not None else range(len(output_names))))

    def _place_inputs(self, names):
        arguments = _forward_arguments(self.module)
        self.is_dict_input = len(arguments) == 1 and arguments[0][1].startswith("Dict[")
        if self.is_dict_input:
            return
        if len(arguments) != len(names):
            raise pb_utils.TritonModelException(
                f"model '{self.model_name}': configuration expects {len(names)} input(s), but forward() of the "
                f"TorchScript model takes {len(arguments)}: {', '.join(name for name, _ in arguments)}"
            )
        argument_names = [name for name, _ in arguments]
        if all(name in argument_names for name in names):
            positions = [argument_names.index(name) for name in names]
        else:
            positions = _named_indices(names) or list(range(len(names)))
        self.input_positions = dict(zip(names, positions))

    def execute(self, requests):
        sizes = [self._batch_size(request) for request in requests]
        tensors = {}
        for tensor in requests[0].inputs():
            parts = [pb_utils.get_input_tensor_by_name(request, tensor.name()) for request in requests]
            tensors[tensor.name()] = _to_torch(parts, self.is_batching)
        with torch.no_grad():
            if self.is_dict_input:
                result = self.module(tensors)
            else:
                ordered = [None] * len(self.input_positions)
                for name, value in tensors.items():
                    ordered[self.input_positions[name]] = value
                result = self.module(*ordered)
        if isinstance(result, torch.Tensor):
            result = (result,)
        responses = [[] for _ in requests]
        for name, position in self.output_positions:
            if position >= len(result):
                raise pb_utils.TritonModelException(
                    f"model '{self.model_name}': output '{name}' is element {position} of forward()'s result, which has {len(result)}"
                )
            value = result[position]
            if isinstance(value, list):
                for outputs, piece in zip(responses, _split_strings(value, sizes, self.is_batching)):
                    outputs.append(pb_utils.Tensor(name, piece))
                continue
            pieces = torch.split(value, sizes) if self.is_batching and len(requests) > 1 else (value,)
            for outputs, piece in zip(responses, pieces):
                outputs.append(_from_torch(name, piece))
        return [pb_utils.InferenceResponse(output_tensors=outputs) for outputs in responses]

    def _batch_size(self, request):
        return request.inputs()[0].shape()[0] if self.is_batching else 1


def _to_torch(tensors, is_batching):
    if datatype_name(tensors[0]) == "BYTES":
        return [element.decode("utf-8") for tensor in tensors for element in tensor.as_numpy().reshape(-1)]
    if datatype_name(tensors[0]) == "BF16":
        parts = [torch.utils.dlpack.from_dlpack(tensor.to_dlpack()) for tensor in tensors]
        return torch.cat(parts) if len(parts) > 1 else parts[0]
    arrays = [tensor.as_numpy() for tensor in tensors]
    array = np.concatenate(arrays) if is_batching and len(arrays) > 1 else arrays[0]
    return torch.from_numpy(np.require(array, requirements=["W"]))


def _split_strings(strings, sizes, is_batching):
    """A List[str] result as one BYTES array per request: [batch, n] pieces when batching, else [n]."""
    array = np.empty(len(strings), dtype=np.object_)
    array[:] = [text.encode("utf-8") for text in strings]
    if not is_batching:
        return [array]
    total = sum(sizes)
    if total == 0 or len(array) % total != 0:
        raise pb_utils.TritonModelException(
            f"forward() returned {len(array)} strings, which a batch of {total} cannot share evenly"
        )
    per_item = len(array) // total
    pieces, start = [], 0
    for size in sizes:
        pieces.append(array[start:start + size * per_item].reshape(size, per_item))
        start += size * per_item
    return pieces


def _from_torch(name, value):
    value = value.detach().cpu().contiguous()
    if value.dtype == torch.bfloat16:
        return pb_utils.Tensor.from_dlpack(name, value)
    return pb_utils.Tensor(name, value.numpy())
