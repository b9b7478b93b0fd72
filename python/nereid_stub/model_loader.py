"""Imports a model.py and finds its TritonPythonModel class."""

import importlib.util
import os
import sys


def load_model_class(model_file):
    # As in Triton, modules beside model.py are importable from it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(model_file)))
    spec = importlib.util.spec_from_file_location("model", model_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    model_class = getattr(module, "TritonPythonModel", None)
    if model_class is None:
        raise ImportError(f"'{model_file}' defines no class TritonPythonModel; every Python model needs one")
    return model_class


def describe(error):
    """``Type: message``, as a one-line error for Nereid."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
