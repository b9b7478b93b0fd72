"""Calls from the model to the server other than inference: custom metrics and the model loading API.

Each call is an API_REQUEST with JSON arguments, answered by one API_RESPONSE (src/backends/python/
stub-api.ts runs them); the caller waits, as Triton's stub waits for its parent process. An error
comes back with Triton's message and is raised as TritonModelException.
"""

import json
import queue

from . import channel as channel_module
from .errors import TritonModelException
from .wire import Kind, Writer


def call(method, what, **arguments):
    """Runs ``method`` in the server and returns its JSON result; ``what`` names the caller in errors."""
    channel = channel_module.current()
    if channel is None:
        raise TritonModelException(f"{what} works only inside a model served by Nereid")
    answers = queue.SimpleQueue()
    call_id = channel.start_call(lambda _is_final, reader: answers.put(_read_answer(reader)))
    channel.send(Kind.API_REQUEST, Writer().u32(call_id).str(method).str(json.dumps(arguments)))
    is_error, result = answers.get()
    if is_error:
        raise TritonModelException(result)
    return result


def post(method, **arguments):
    """Runs ``method`` without waiting for its answer (deletions, from ``__del__``)."""
    channel = channel_module.current()
    if channel is None:
        return
    call_id = channel.start_call(lambda _is_final, _reader: None)
    channel.send(Kind.API_REQUEST, Writer().u32(call_id).str(method).str(json.dumps(arguments)))


def _read_answer(reader):
    if reader.u8() == 0:
        return False, json.loads(reader.str())
    reader.u8()
    return True, reader.str()
