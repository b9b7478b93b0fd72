"""Text arguments as Triton's pb_utils takes them: its bindings (pybind11 ``std::string``) accept a
``str`` or a ``bytes`` wherever they take text, so a model may pass ``as_numpy()[0]`` of a BYTES
tensor straight on as a model name."""

from .errors import TritonModelException


def text(value, what):
    """``value`` as a ``str``: a ``str`` as is, ``bytes`` (or ``bytearray``, ``numpy.bytes_``) decoded as UTF-8."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as error:
            raise TritonModelException(f"{what} is not valid UTF-8: {error}") from error
    raise TritonModelException(f"{what} must be a str or bytes, got {type(value).__name__}")


def texts(values, what):
    """A list of text arguments (``requested_output_names``), each a ``str`` or ``bytes``."""
    return [text(value, f"{what}[{index}]") for index, value in enumerate(values)]
