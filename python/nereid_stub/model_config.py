"""pb_utils.ModelConfig for ``auto_complete_config``, and the config lookups models use."""

import numpy as np

from .errors import TritonModelException
from .tensor import NUMPY_TYPES, TRITON_TYPE_CODES

_INPUT_KEYS = ("name", "data_type", "dims", "optional")
_OUTPUT_KEYS = ("name", "data_type", "dims")


class ModelConfig:
    """The configuration being auto-completed, as the dict Triton prints (GET .../config)."""

    def __init__(self, model_config):
        self._config = model_config

    def as_dict(self):
        return self._config

    def set_max_batch_size(self, max_batch_size):
        if not isinstance(max_batch_size, int) or max_batch_size < 0:
            raise ValueError(f"set_max_batch_size takes a non-negative int, got {max_batch_size!r}")
        current = int(self._config.get("max_batch_size", 0))
        if current not in (0, max_batch_size):
            raise ValueError(
                f"configuration specified max_batch_size {current}, but auto_complete_config for model "
                f"'{self._config.get('name')}' specified max_batch_size {max_batch_size}"
            )
        self._config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        if "sequence_batching" in self._config:
            raise ValueError(
                f"configuration of model '{self._config.get('name')}' specifies sequence_batching, "
                "so auto_complete_config cannot set dynamic_batching"
            )
        self._config.setdefault("dynamic_batching", {})

    def set_model_transaction_policy(self, transaction_policy_dict):
        unknown = set(transaction_policy_dict) - {"decoupled"}
        if unknown:
            raise ValueError(f"model_transaction_policy has only the key 'decoupled', got {sorted(unknown)}")
        decoupled = bool(transaction_policy_dict.get("decoupled", False))
        current = self._config.get("model_transaction_policy", {}).get("decoupled")
        if current is not None and current != decoupled:
            raise ValueError(
                f"configuration specified model_transaction_policy decoupled {current}, but auto_complete_config "
                f"for model '{self._config.get('name')}' specified decoupled {decoupled}"
            )
        self._config["model_transaction_policy"] = {"decoupled": decoupled}

    def add_input(self, input):
        self._add("input", input, _INPUT_KEYS)

    def add_output(self, output):
        self._add("output", output, _OUTPUT_KEYS)

    def _add(self, kind, entry, allowed_keys):
        if not isinstance(entry, dict):
            raise ValueError(f"add_{kind} takes a dict, got {type(entry).__name__}")
        unknown = set(entry) - set(allowed_keys)
        if unknown:
            raise ValueError(f"model {kind} '{entry.get('name')}' has unknown key(s) {sorted(unknown)}; expected {list(allowed_keys)}")
        missing = [key for key in ("name", "data_type", "dims") if key not in entry]
        if missing:
            raise ValueError(f"model {kind} {entry!r} is missing {missing}; it needs 'name', 'data_type' and 'dims'")
        entries = self._config.setdefault(kind, [])
        existing = next((item for item in entries if item.get("name") == entry["name"]), None)
        if existing is None:
            entries.append(dict(entry))
            return
        for key in ("data_type", "dims"):
            given = existing.get(key)
            is_unset = given in (None, "TYPE_INVALID", [])
            if not is_unset and _normalized(given) != _normalized(entry[key]):
                raise ValueError(
                    f"model '{self._config.get('name')}', {kind} '{entry['name']}': configuration specified "
                    f"{key} {given}, but auto_complete_config specified {entry[key]}"
                )
            if is_unset:
                existing[key] = entry[key]
        if "optional" in entry:
            existing["optional"] = entry["optional"]


def _normalized(value):
    return [int(item) for item in value] if isinstance(value, list) else value


def _find(model_config, kind, name):
    return next((entry for entry in model_config.get(kind, []) if entry.get("name") == name), None)


def get_input_config_by_name(model_config, name):
    """The config entry of input ``name`` (model_config is the dict of args['model_config']), or None."""
    return _find(model_config, "input", name)


def get_output_config_by_name(model_config, name):
    """The config entry of output ``name``, or None."""
    return _find(model_config, "output", name)


def using_decoupled_model_transaction_policy(model_config):
    return bool(model_config.get("model_transaction_policy", {}).get("decoupled", False))


def triton_string_to_numpy(triton_type_string):
    """The numpy type of a config data type: 'TYPE_FP32' -> numpy.float32, 'TYPE_STRING' -> numpy.object_."""
    name = triton_type_string[len("TYPE_"):] if triton_type_string.startswith("TYPE_") else triton_type_string
    numpy_type = NUMPY_TYPES.get("BYTES" if name == "STRING" else name)
    if numpy_type is None:
        raise TritonModelException(f"data type '{triton_type_string}' has no numpy type")
    return numpy_type


def numpy_to_triton_type(numpy_type):
    """Triton's TRITONSERVER_DataType code of a numpy type (numpy.float32 -> 11), or None, as in Triton."""
    dtype = np.dtype(numpy_type)
    for name, candidate in NUMPY_TYPES.items():
        if np.dtype(candidate) == dtype or (name == "BYTES" and dtype.kind == "S"):
            return TRITON_TYPE_CODES[name]
    return None


def triton_to_numpy_type(data_type):
    """The numpy type of a TRITONSERVER_DataType code (11 -> numpy.float32), or None, as in Triton."""
    for name, code in TRITON_TYPE_CODES.items():
        if code == data_type:
            return NUMPY_TYPES.get(name)
    return None