"""Requests, responses and parameter values in frames (stub-protocol.ts lists the fields)."""

from . import inference
from .errors import TritonError, TritonModelException
from .tensor import read_tensor, write_tensor

_BOOL, _INT, _UINT, _DOUBLE, _STRING = 0, 1, 2, 3, 4


def write_value(writer, value, what):
    if isinstance(value, bool):
        writer.u8(_BOOL).u8(1 if value else 0)
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            writer.u8(_INT).i64(value)
        elif 0 <= value < (1 << 64):
            writer.u8(_UINT).u64(value)
        else:
            raise TritonModelException(f"{what} {value} does not fit in 64 bits")
    elif isinstance(value, float):
        writer.u8(_DOUBLE).f64(value)
    elif isinstance(value, str):
        writer.u8(_STRING).str(value)
    else:
        raise TritonModelException(f"{what} is a {type(value).__name__}; expected bool, int, float or str")


def read_value(reader):
    tag = reader.u8()
    if tag == _BOOL:
        return reader.u8() != 0
    if tag == _INT:
        return reader.i64()
    if tag == _UINT:
        return reader.u64()
    if tag == _DOUBLE:
        return reader.f64()
    return reader.str()


def _write_parameters(writer, parameters):
    writer.u32(len(parameters))
    for key, value in parameters.items():
        writer.str(key)
        write_value(writer, value, f"parameter '{key}'")


def _read_parameters(reader):
    parameters = {}
    for _ in range(reader.u32()):
        key = reader.str()
        parameters[key] = read_value(reader)
    return parameters


def read_request(reader, model_name, sender, origin):
    """A request the model receives; ``origin`` is its (execution id, index), which its trace names."""
    request_id = reader.str()
    correlation_id = read_value(reader)
    flags = reader.u32()
    parameters = _read_parameters(reader)
    requested_output_names = [reader.str() for _ in range(reader.u32())]
    inputs = [read_tensor(reader) for _ in range(reader.u32())]
    return inference.InferenceRequest._received(
        model_name, request_id, correlation_id, flags, parameters, requested_output_names, inputs, sender, origin
    )


def write_request(writer, request):
    """A request the model makes (BLS). Its timeout travels as the request's `timeout` parameter."""
    writer.str(request._request_id)
    write_value(writer, request._correlation_id, "correlation_id")
    writer.u32(request._flags)
    parameters = dict(request._parameters)
    if request._timeout:
        parameters["timeout"] = request._timeout
    _write_parameters(writer, parameters)
    writer.u32(len(request._requested_output_names))
    for name in request._requested_output_names:
        writer.str(name)
    writer.u32(len(request._inputs))
    for tensor in request._inputs:
        write_tensor(writer, tensor)


def write_response(writer, response):
    if response.has_error():
        writer.u8(1).u8(response.error().code()).str(response.error().message())
        return
    outputs = response.output_tensors()
    writer.u8(0).u32(len(outputs))
    for tensor in outputs:
        write_tensor(writer, tensor)
    _write_parameters(writer, response._parameters)


def read_response(reader):
    if reader.u8() != 0:
        code = reader.u8()
        return inference.InferenceResponse(error=TritonError(reader.str(), code))
    outputs = [read_tensor(reader) for _ in range(reader.u32())]
    return inference.InferenceResponse(output_tensors=outputs, parameters=_read_parameters(reader))
