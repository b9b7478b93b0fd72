"""Serves one model instance: ``initialize(args)``, one ``execute(requests)`` per EXECUTE message,
then ``finalize()`` when Nereid unloads the instance."""

import asyncio
import inspect
import json
import threading
import time
import traceback

from . import cancellation, codec
from .errors import TritonModelException
from .inference import (
    TRITONSERVER_REQUEST_RELEASE_ALL,
    TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
    TRITONSERVER_RESPONSE_COMPLETE_FINAL,
    InferenceResponse,
    InferenceResponseSender,
)
from .logger import Logger, send_log
from .model_config import using_decoupled_model_transaction_policy
from .model_loader import describe, load_model_class
from .wire import Kind, Outcome, Writer


class _EventLoopThread:
    """Runs the coroutines of ``async def execute`` on one event loop, in a thread of its own, so that
    work they leave running (tasks holding a response sender) carries on between calls."""

    def __init__(self):
        self._loop = None

    def run(self, coroutine):
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, name="nereid-asyncio", daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()


def _log_traceback():
    send_log(Logger.ERROR, "model.py", traceback.format_exc().rstrip())


class _ExecuteReturnError(Exception):
    """What the backend finds wrong with what execute returned (Triton's PythonBackendException in
    Stub::ProcessReturnedResponses): its text reaches the client as it is, with no exception type."""


class ModelRunner:
    def __init__(self, channel, model, args):
        self._channel = channel
        self._model = model
        self._model_name = args["model_name"]
        self._instance_name = args["model_instance_name"]
        self._is_decoupled = using_decoupled_model_transaction_policy(json.loads(args["model_config"]))
        self._event_loop = _EventLoopThread()

    def execute(self, reader):
        exec_id = reader.u32()
        count = reader.u32()
        cancellations = cancellation.start(exec_id, count)
        finals = _Countdown(count, lambda: cancellation.finish(exec_id))
        requests = [
            codec.read_request(
                reader,
                self._model_name,
                self._sender(exec_id, index, cancellations[index], finals) if self._is_decoupled else None,
                (exec_id, index),
            )
            for index in range(count)
        ]
        for request, flag in zip(requests, cancellations):
            request._cancellation = flag
        start_ns = time.time_ns()
        try:
            result = self._model.execute(requests)
            if inspect.isawaitable(result):
                result = self._event_loop.run(result)
            writer = Writer().u32(exec_id).i64(start_ns).i64(time.time_ns())
            self._write_outcome(writer, result, requests, finals)
            if not self._is_decoupled:
                cancellation.finish(exec_id)
        except Exception as error:
            _log_traceback()
            detail = str(error) if isinstance(error, _ExecuteReturnError) else describe(error)
            message = f"Failed to process the request(s) for model instance '{self._instance_name}', message: {detail}"
            writer = Writer().u32(exec_id).i64(start_ns).i64(time.time_ns()).u8(Outcome.FAILED).str(message)
            cancellation.finish(exec_id)
        self._channel.send(Kind.EXECUTE_DONE, writer)

    def finalize(self):
        finalize = getattr(self._model, "finalize", None)
        if finalize is None:
            return
        try:
            finalize()
        except Exception:
            _log_traceback()

    def _write_outcome(self, writer, result, requests, finals):
        request_count = len(requests)
        if self._is_decoupled:
            if result is not None:
                raise _ExecuteReturnError(
                    f"Python model '{self._instance_name}' is using the decoupled mode and the execute function must return None."
                )
            writer.u8(Outcome.RETURNED).u32(request_count)
            for request in requests:
                is_rescheduled = self._is_rescheduled(request)
                writer.u32(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE if is_rescheduled else TRITONSERVER_REQUEST_RELEASE_ALL)
                if is_rescheduled:
                    # Done for this execution: its CANCEL messages now wait for the next one.
                    finals.count_down()
            return
        if not isinstance(result, list):
            raise _ExecuteReturnError(f"Expected a list in the execute return, found type '{type(result)}'.")
        if len(result) != request_count:
            raise _ExecuteReturnError(
                "Number of InferenceResponse objects do not match the number of InferenceRequest objects. "
                f"InferenceRequest(s) size is:{request_count}, and InferenceResponse(s) size is:{len(result)}\n"
            )
        for request, response in zip(requests, result):
            if request._release_flags & TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
                if response is not None:
                    raise _ExecuteReturnError(
                        f"Expected a None object in the execute function return list for reschduled request, found type '{type(response)}'."
                    )
            elif not isinstance(response, InferenceResponse):
                raise _ExecuteReturnError(
                    f"Expected an 'InferenceResponse' object in the execute function return list, found type '{type(response)}'."
                )
        writer.u8(Outcome.RESPONSES).u32(request_count)
        for response in result:
            if response is None:
                writer.u32(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
            else:
                writer.u32(TRITONSERVER_REQUEST_RELEASE_ALL)
                codec.write_response(writer, response)

    def _is_rescheduled(self, request):
        """A decoupled request released with RESCHEDULE, unless it has had its final response: Triton
        reschedules only requests still open, so that one ends."""
        if not request._release_flags & TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
            return False
        if request.get_response_sender()._has_sent_final():
            send_log(
                Logger.ERROR,
                "model.py",
                f"request '{request.request_id()}' was released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE after its "
                "final response (TRITONSERVER_RESPONSE_COMPLETE_FINAL): it is not rescheduled",
            )
            return False
        return True

    def _sender(self, exec_id, index, flag, finals):
        def send_response(response, flags):
            writer = Writer().u32(exec_id).u32(index).u32(flags).u8(0 if response is None else 1)
            if response is not None:
                codec.write_response(writer, response)
            self._channel.send(Kind.RESPONSE, writer)
            if flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL:
                finals.count_down()

        return InferenceResponseSender(send_response, flag)


class _Countdown:
    """Calls ``on_zero`` once ``count_down`` has been called ``count`` times: a decoupled execution's
    requests are cancellable until each has sent its final response, execute having returned or not."""

    def __init__(self, count, on_zero):
        self._left = count
        self._on_zero = on_zero
        self._lock = threading.Lock()

    def count_down(self):
        with self._lock:
            self._left -= 1
            is_zero = self._left == 0
        if is_zero:
            self._on_zero()


def serve(channel, model_file):
    channel.start_reader()
    _, reader = channel.inbox.get()
    args = json.loads(reader.str())
    try:
        model_class = load_model_class(model_file)
    except Exception as error:
        _log_traceback()
        channel.send(Kind.FAILED, Writer().str(f"cannot import '{model_file}': {describe(error)}"))
        return 1
    try:
        model = model_class()
        initialize = getattr(model, "initialize", None)
        if initialize is not None:
            initialize(args)
    except Exception as error:
        _log_traceback()
        channel.send(Kind.FAILED, Writer().str(f"initialize() failed: {describe(error)}"))
        return 1
    channel.send(Kind.READY)
    runner = ModelRunner(channel, model, args)
    while True:
        kind, reader = channel.inbox.get()
        if kind == Kind.EXECUTE:
            runner.execute(reader)
        elif kind == Kind.FINALIZE:
            runner.finalize()
            return 0
