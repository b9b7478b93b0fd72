"""Triton's auto-complete: calls ``TritonPythonModel.auto_complete_config`` in a throw-away process."""

import json
import traceback

from .errors import TritonModelException
from .logger import Logger, send_log
from .model_config import ModelConfig
from .model_loader import describe, load_model_class
from .wire import Kind, Writer


def auto_complete(channel, model_file):
    frame = channel.read_frame()
    if frame is None:
        return 0
    _, reader = frame
    config = json.loads(reader.str())
    try:
        model_class = load_model_class(model_file)
    except Exception as error:
        send_log(Logger.ERROR, "model.py", traceback.format_exc().rstrip())
        channel.send(Kind.FAILED, Writer().str(f"cannot import '{model_file}': {describe(error)}"))
        return 1
    complete = getattr(model_class, "auto_complete_config", None)
    if complete is not None:
        try:
            result = complete(ModelConfig(config))
            if not isinstance(result, ModelConfig):
                raise TritonModelException(
                    f"auto_complete_config must return the pb_utils.ModelConfig it was given, got {type(result).__name__}"
                )
            config = result.as_dict()
        except Exception as error:
            send_log(Logger.ERROR, "model.py", traceback.format_exc().rstrip())
            channel.send(Kind.FAILED, Writer().str(f"auto_complete_config failed: {describe(error)}"))
            return 1
    channel.send(Kind.CONFIG, Writer().str(json.dumps(config)))
    return 0
