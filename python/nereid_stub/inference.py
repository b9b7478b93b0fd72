"""pb_utils.InferenceRequest, InferenceResponse and InferenceResponseSender, with Triton's flags."""

import json
import threading

from . import bls
from .errors import TritonError, TritonModelException
from .text import text, texts

TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_MEMORY_CPU = 0
TRITONSERVER_MEMORY_GPU = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2


def _parameters(parameters, what):
    """Triton's request and response parameters: a dict of str keys to bool, int, float or str values, or its JSON."""
    if isinstance(parameters, (str, bytes, bytearray)):
        parameters = json.loads(parameters)
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise TritonModelException(f"{what} parameters must be a dict (or its JSON), got {type(parameters).__name__}")
    return {text(key, f"{what} parameter name"): value for key, value in parameters.items()}


def _json(parameters):
    """Parameters as Triton's JSON string: compact, as its rapidjson writer prints them."""
    return json.dumps(parameters, separators=(",", ":"))


class PreferredMemory:
    """Where a BLS call would like its outputs; Nereid runs on the CPU, so outputs are always there."""

    def __init__(self, preferred_memory_type=TRITONSERVER_MEMORY_CPU, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


class InferenceTrace:
    """The trace of a request the model receives (``request.trace()``): given to a request the model
    makes (``pb_utils.InferenceRequest(..., trace=request.trace())``), it makes that call a child of the
    request's trace when the request is traced. The trace itself lives in Nereid, which knows the
    request by its place in the execution."""

    def __init__(self, origin=None):
        # (execution id, request index) of the request received; None for an empty trace.
        self._origin = origin

    def get_context(self):
        """The OpenTelemetry context of the trace as Triton gives it; Nereid does not pass it to the model, so None."""
        return None


class InferenceRequest:
    """A request: one the model receives in ``execute``, or one it makes of another model (BLS).

    The arguments follow Triton's order, and are usually given by name::

        pb_utils.InferenceRequest(model_name="m", requested_output_names=["OUT"], inputs=[tensor])
    """

    def __init__(
        self,
        request_id="",
        correlation_id=0,
        inputs=None,
        requested_output_names=None,
        model_name=None,
        model_version=-1,
        flags=0,
        timeout=0,
        preferred_memory=None,
        trace=None,
        parameters=None,
    ):
        if model_name is None or inputs is None:
            raise TritonModelException("pb_utils.InferenceRequest needs model_name and inputs (a list of pb_utils.Tensor)")
        if not isinstance(correlation_id, int):
            correlation_id = text(correlation_id, "InferenceRequest correlation_id")
        self._request_id = text(request_id, "InferenceRequest request_id")
        self._correlation_id = correlation_id
        self._inputs = list(inputs)
        self._requested_output_names = texts(requested_output_names or [], "InferenceRequest requested_output_names")
        self._model_name = text(model_name, "InferenceRequest model_name")
        self._model_version = model_version
        self._flags = flags
        self._timeout = timeout
        if trace is not None and not isinstance(trace, InferenceTrace):
            raise TritonModelException(f"InferenceRequest trace must be a pb_utils.InferenceTrace (request.trace()), got {type(trace).__name__}")
        self._trace = trace if trace is not None else InferenceTrace()
        self._parameters = _parameters(parameters, "InferenceRequest")
        self._sender = None
        # Set on the requests a model receives (cancellation.py); None on those it makes.
        self._cancellation = None
        self._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL

    @classmethod
    def _received(cls, model_name, request_id, correlation_id, flags, parameters, requested_output_names, inputs, sender, origin):
        request = cls(
            request_id=request_id,
            correlation_id=correlation_id,
            inputs=inputs,
            requested_output_names=requested_output_names,
            model_name=model_name,
            flags=flags,
            parameters=parameters,
            trace=InferenceTrace(origin),
        )
        request._sender = sender
        return request

    def inputs(self):
        return self._inputs

    def requested_output_names(self):
        return self._requested_output_names

    def request_id(self):
        return self._request_id

    def correlation_id(self):
        return self._correlation_id

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        """Sets the flags of a request the model makes (TRITONSERVER_REQUEST_FLAG_SEQUENCE_START / _END)."""
        self._flags = flags

    def set_release_flags(self, flags):
        """How the request is released when ``execute`` returns: TRITONSERVER_REQUEST_RELEASE_RESCHEDULE
        runs it again in a later execution (a model with ``sequence_batching { iterative_sequence: true }``;
        a default-mode model returns None for it), TRITONSERVER_REQUEST_RELEASE_ALL (the default) ends it."""
        self._release_flags = flags

    def trace(self):
        """The trace the request belongs to: pass it to the requests the model makes for this one
        (``trace=request.trace()``), so that they are traced as its children."""
        return self._trace

    def timeout(self):
        return self._timeout

    def model_name(self):
        return self._model_name

    def model_version(self):
        return self._model_version

    def parameters(self):
        """The request parameters as a JSON string (Triton's form: parse it with json.loads)."""
        return _json(self._parameters)

    def is_cancelled(self):
        """Whether the request has been cancelled (its client went away, or the model calling this one
        gave up) while the model runs it: the model may stop and answer it, as Triton's docs show, with
        ``pb_utils.InferenceResponse(error=pb_utils.TritonError("...", pb_utils.TritonError.CANCELLED))``."""
        return self._cancellation is not None and self._cancellation.is_cancelled()

    def get_response_sender(self):
        """The sender of a decoupled model's responses to this request."""
        if self._sender is None:
            raise TritonModelException(
                "get_response_sender() is for requests a decoupled model receives; "
                "set model_transaction_policy { decoupled: true } in config.pbtxt"
            )
        return self._sender

    def exec(self, decoupled=False):
        """Runs the request on ``model_name`` and waits: one InferenceResponse, or with
        ``decoupled=True`` an iterator over every response of a decoupled model."""
        return bls.exec_blocking(self, decoupled)

    def async_exec(self, decoupled=False):
        """``exec`` as an awaitable, for ``async def execute``."""
        return bls.exec_async(self, decoupled)


class InferenceResponse:
    """Output tensors, or an error, for one request."""

    def __init__(self, output_tensors=None, error=None, parameters=None):
        if error is not None and not isinstance(error, TritonError):
            error = TritonError(str(error))
        self._output_tensors = list(output_tensors or [])
        self._error = error
        self._parameters = _parameters(parameters, "InferenceResponse")

    def output_tensors(self):
        return self._output_tensors

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        """The response parameters as a JSON string, as ``InferenceRequest.parameters()``."""
        return _json(self._parameters)


class InferenceResponseSender:
    """Sends a decoupled model's responses to one request, from any thread, until the final flag."""

    def __init__(self, send_response, cancellation):
        self._send_response = send_response
        self._cancellation = cancellation
        self._lock = threading.Lock()
        self._is_closed = False

    def send(self, response=None, flags=0):
        is_final = (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0
        if response is None and not is_final:
            raise TritonModelException("send() needs an InferenceResponse unless flags is TRITONSERVER_RESPONSE_COMPLETE_FINAL")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TritonModelException(f"send() takes a pb_utils.InferenceResponse, got {type(response).__name__}")
        with self._lock:
            if self._is_closed:
                raise TritonModelException("Unable to send response. Response sender has been closed.")
            self._is_closed = is_final
            self._send_response(response, flags)

    def _has_sent_final(self):
        """Whether the final response has been sent (serve.py: such a request cannot be rescheduled)."""
        with self._lock:
            return self._is_closed

    def is_cancelled(self):
        """Whether the request has been cancelled: the model may stop sending and close the sender."""
        return self._cancellation.is_cancelled()
