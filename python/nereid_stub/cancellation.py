"""Which requests a model is running have been cancelled (Nereid's CANCEL message): the flag behind
``request.is_cancelled()`` and ``response_sender.is_cancelled()``, set from the channel's reader thread
while ``execute`` runs."""

import threading


class Cancellation:
    """One request's flag; cancelled once, never reset."""

    def __init__(self):
        self._event = threading.Event()

    def cancel(self):
        self._event.set()

    def is_cancelled(self):
        return self._event.is_set()


_lock = threading.Lock()
# execution id -> the Cancellation of each of its requests, while the execution is running.
_running = {}


def start(exec_id, count):
    """The flags of a new execution's requests."""
    flags = [Cancellation() for _ in range(count)]
    with _lock:
        _running[exec_id] = flags
    return flags


def cancel(exec_id, index):
    with _lock:
        flags = _running.get(exec_id)
    if flags is not None and index < len(flags):
        flags[index].cancel()


def finish(exec_id):
    """The execution has answered every request: CANCEL messages for it are too late."""
    with _lock:
        _running.pop(exec_id, None)
