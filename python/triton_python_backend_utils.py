"""Nereid's ``triton_python_backend_utils``: the API Triton's Python-backend models import as pb_utils.

Written for Nereid from Triton's python_backend documentation; what is here behaves as documented there.
Not provided: custom metrics (MetricFamily), the model loading API (load_model, unload_model,
is_model_ready), request rescheduling (set_release_flags) and GPU tensors.
"""

from nereid_stub.errors import TritonError, TritonModelException
from nereid_stub.inference import (
    TRITONSERVER_MEMORY_CPU,
    TRITONSERVER_MEMORY_GPU,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_END,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_START,
    TRITONSERVER_RESPONSE_COMPLETE_FINAL,
    InferenceRequest,
    InferenceResponse,
    InferenceResponseSender,
    PreferredMemory,
)
from nereid_stub.logger import Logger
from nereid_stub.model_config import (
    ModelConfig,
    get_input_config_by_name,
    get_output_config_by_name,
    numpy_to_triton_type,
    triton_string_to_numpy,
    using_decoupled_model_transaction_policy,
)
from nereid_stub.tensor import Tensor


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
    "Logger",
    "ModelConfig",
    "PreferredMemory",
    "TRITONSERVER_MEMORY_CPU",
    "TRITONSERVER_MEMORY_GPU",
    "TRITONSERVER_REQUEST_FLAG_SEQUENCE_END",
    "TRITONSERVER_REQUEST_FLAG_SEQUENCE_START",
    "TRITONSERVER_RESPONSE_COMPLETE_FINAL",
    "Tensor",
    "TritonError",
    "TritonModelException",
    "get_input_config_by_name",
    "get_input_tensor_by_name",
    "get_output_config_by_name",
    "get_output_tensor_by_name",
    "numpy_to_triton_type",
    "triton_string_to_numpy",
    "using_decoupled_model_transaction_policy",
]
