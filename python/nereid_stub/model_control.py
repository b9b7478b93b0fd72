"""pb_utils.load_model, unload_model and is_model_ready: Triton's model loading API for models.

They make the repository calls of the HTTP and gRPC repository extension (so they are refused, in
Triton's words, unless the server runs with --model-control-mode=explicit) and wait for them.
"""

import base64

from . import server_api
from .errors import TritonModelException
from .text import text


def load_model(model_name, config="", files=None):
    """Loads (or reloads) ``model_name``; ``config`` is a JSON configuration, ``files`` maps
    ``"file:<version>/<name>"`` to the file's bytes (and needs ``config``)."""
    encoded = {}
    for path, data in (files or {}).items():
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TritonModelException(f"load_model files['{path}'] must be bytes, got {type(data).__name__}")
        encoded[text(path, "load_model file name")] = base64.b64encode(bytes(data)).decode("ascii")
    server_api.call(
        "load_model", "pb_utils.load_model", name=text(model_name, "load_model model_name"), config=text(config or "", "load_model config"), files=encoded
    )


def unload_model(model_name, unload_dependents=False):
    """Unloads ``model_name`` once its accepted requests are done."""
    server_api.call("unload_model", "pb_utils.unload_model", name=text(model_name, "unload_model model_name"), unload_dependents=bool(unload_dependents))


def is_model_ready(model_name, model_version=""):
    """Whether the model (``model_version``, a string; empty: the version served) is ready."""
    version = model_version if isinstance(model_version, int) else text(model_version, "is_model_ready model_version")
    return server_api.call(
        "is_model_ready", "pb_utils.is_model_ready", name=text(model_name, "is_model_ready model_name"), version=str(version)
    )["ready"]
