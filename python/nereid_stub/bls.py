"""Business Logic Scripting: a model's InferenceRequest.exec() / async_exec() runs in Nereid.

The request goes to Nereid as BLS_REQUEST, runs on the target model through its scheduler, and comes
back as BLS_RESPONSE messages, read by the channel's reader thread: one final response, or for a
decoupled target (``decoupled=True``) each response then a final message.
"""

import asyncio
import queue

from . import channel as channel_module
from . import codec
from .errors import TritonModelException
from .wire import Kind, Writer


def _start(request, decoupled, on_message):
    channel = channel_module.current()
    if channel is None:
        raise TritonModelException("InferenceRequest.exec() works only inside a model served by Nereid")

    def on_frame(is_final, reader):
        response = codec.read_response(reader) if reader.u8() != 0 else None
        on_message(is_final, response)

    call_id = channel.start_call(on_frame)
    writer = Writer().u32(call_id).u8(1 if decoupled else 0).str(request._model_name).i64(request._model_version)
    # The request this call serves (trace=request.trace()), by its execution and index.
    origin = request._trace._origin
    if origin is None:
        writer.u8(0)
    else:
        writer.u8(1).u32(origin[0]).u32(origin[1])
    codec.write_request(writer, request)
    channel.send(Kind.BLS_REQUEST, writer)


class _ResponseIterator:
    """The responses of a decoupled target as they arrive; ends after the final one."""

    def __init__(self, messages):
        self._messages = messages
        self._is_done = False

    def __iter__(self):
        return self

    def __next__(self):
        while not self._is_done:
            is_final, response = self._messages.get()
            self._is_done = is_final
            if response is not None:
                return response
        raise StopIteration


def exec_blocking(request, decoupled):
    messages = queue.SimpleQueue()
    _start(request, decoupled, lambda is_final, response: messages.put((is_final, response)))
    if decoupled:
        return _ResponseIterator(messages)
    return messages.get()[1]


async def exec_async(request, decoupled):
    loop = asyncio.get_running_loop()
    responses = []
    done = loop.create_future()

    def deliver(is_final, response):
        if response is not None:
            responses.append(response)
        if is_final and not done.done():
            done.set_result(None)

    _start(request, decoupled, lambda is_final, response: loop.call_soon_threadsafe(deliver, is_final, response))
    await done
    return iter(responses) if decoupled else responses[0]
