"""Nereid's ``triton_python_backend_utils``: the API Triton's Python-backend models import as pb_utils.

Written for Nereid from Triton's python_backend documentation; what is here behaves as documented there.
docs/python-backend-api.md lists Triton's members and where each stands here.
"""

import numpy as np
from nereid_stub.errors import TritonError, TritonModelException
from nereid_stub.inference import (
    TRITONSERVER_MEMORY_CPU,
    TRITONSERVER_MEMORY_GPU,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_END,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_START,
    TRITONSERVER_REQUEST_RELEASE_ALL,
    TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
    TRITONSERVER_RESPONSE_COMPLETE_FINAL,
    InferenceRequest,
    InferenceResponse,
    InferenceResponseSender,
    InferenceTrace,
    PreferredMemory,
)
from nereid_stub.logger import Logger
from nereid_stub.metrics import Metric, MetricFamily
from nereid_stub.model_control import is_model_ready, load_model, unload_model
from nereid_stub.model_config import (
    ModelConfig,
    get_input_config_by_name,
    get_output_config_by_name,
    numpy_to_triton_type,
    triton_string_to_numpy,
    triton_to_numpy_type,
    using_decoupled_model_transaction_policy,
)
from nereid_stub.tensor import Tensor, serialize_bytes


def serialize_byte_tensor(input_tensor):
    """Triton's BYTES layout of a numpy array of bytes or str (each element as a 4-byte length and its
    bytes), as a 1-D uint8 array; None for an empty array, as in Triton."""
    if input_tensor.size == 0:
        return None
    return np.frombuffer(serialize_bytes(input_tensor), dtype=np.uint8)


def deserialize_bytes_tensor(encoded_tensor):
    """The elements of Triton's BYTES layout, as a 1-D numpy object array of bytes."""
    from nereid_stub.tensor import deserialize_bytes

    data = memoryview(encoded_tensor).cast("B") if not isinstance(encoded_tensor, bytes) else encoded_tensor
    elements = deserialize_bytes(data, (-1,))
    return elements.reshape(-1)


def get_input_tensor_by_name(inference_request, name):
    """The request's input tensor called ``name``, or None."""
    return next((tensor for tensor in inference_request.inputs() if tensor.name() == name), None)


def get_output_tensor_by_name(inference_response, name):
    """The response's output tensor called ``name``, or None."""
    return next((tensor for tensor in inference_response.output_tensors() if tensor.name() == name), None)


__all__ = [
    "InferenceRequest",
    "InferenceResponse",
    "InferenceResponseSender",
    "InferenceTrace",
    "Logger",
    "Metric",
    "MetricFamily",
    "ModelConfig",
    "PreferredMemory",
    "TRITONSERVER_MEMORY_CPU",
    "TRITONSERVER_MEMORY_GPU",
    "TRITONSERVER_REQUEST_FLAG_SEQUENCE_END",
    "TRITONSERVER_REQUEST_FLAG_SEQUENCE_START",
    "TRITONSERVER_REQUEST_RELEASE_ALL",
    "TRITONSERVER_REQUEST_RELEASE_RESCHEDULE",
    "TRITONSERVER_RESPONSE_COMPLETE_FINAL",
    "Tensor",
    "TritonError",
    "TritonModelException",
    "deserialize_bytes_tensor",
    "get_input_config_by_name",
    "get_input_tensor_by_name",
    "get_output_config_by_name",
    "get_output_tensor_by_name",
    "is_model_ready",
    "load_model",
    "numpy_to_triton_type",
    "serialize_byte_tensor",
    "triton_string_to_numpy",
    "triton_to_numpy_type",
    "unload_model",
    "using_decoupled_model_transaction_policy",
]
