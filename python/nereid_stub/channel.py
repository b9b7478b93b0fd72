"""The connection to Nereid: frames over the Unix socket on fd 3, read by a thread of their own.

The reader thread answers health checks (PING) itself, so a model that holds the interpreter lock
forever stops answering and Nereid restarts the process; it hands BLS answers to the call waiting
for them (and the answers of server calls, server_api.py), marks cancelled requests (CANCEL) while ``execute`` runs, and everything else (INIT, EXECUTE, FINALIZE, AUTO_COMPLETE) to the main thread's inbox.
Frames are sent from any thread, one at a time.
"""

import os
import queue
import threading

from . import cancellation
from .wire import HEADER, Kind, Reader, Writer

_current = None


def current():
    """The channel of this process, or None outside a stub process."""
    return _current


class Channel:
    def __init__(self, sock):
        global _current
        sock.setblocking(True)
        self._sock = sock
        self._input = sock.makefile("rb", buffering=1 << 16)
        self._send_lock = threading.Lock()
        self._calls = {}
        self._calls_lock = threading.Lock()
        self._next_call = 0
        # (kind, Reader) messages for the main thread; None once Nereid has closed the channel.
        self.inbox = queue.SimpleQueue()
        _current = self

    def send(self, kind, writer=None):
        parts = [memoryview(part).cast("B") for part in (writer or Writer()).finish(kind)]
        with self._send_lock:
            while parts:
                sent = self._sock.sendmsg(parts)
                while parts and sent >= len(parts[0]):
                    sent -= len(parts[0])
                    parts.pop(0)
                if sent:
                    parts[0] = parts[0][sent:]

    def read_frame(self):
        """The next (kind, Reader), or None at the end of the stream."""
        header = self._input.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        size, kind = HEADER.unpack(header)
        body = memoryview(bytearray(size))
        received = 0
        while received < size:
            count = self._input.readinto(body[received:])
            if not count:
                return None
            received += count
        return kind, Reader(body)

    def start_reader(self):
        threading.Thread(target=self._read_forever, name="nereid-channel", daemon=True).start()

    def start_call(self, on_message):
        """Registers a BLS call or a server call; ``on_message(is_final, reader)`` gets each BLS_RESPONSE
        (or the one API_RESPONSE) on the reader thread."""
        with self._calls_lock:
            call_id = self._next_call
            self._next_call += 1
            self._calls[call_id] = on_message
        return call_id

    def _read_forever(self):
        while True:
            frame = self.read_frame()
            if frame is None:
                # Nereid is gone: nothing can reach this process any more.
                os._exit(0)
            kind, reader = frame
            if kind == Kind.PING:
                self.send(Kind.PONG, Writer().u32(reader.u32()))
            elif kind == Kind.CANCEL:
                cancellation.cancel(reader.u32(), reader.u32())
            elif kind == Kind.BLS_RESPONSE:
                call_id = reader.u32()
                is_final = reader.u8() != 0
                with self._calls_lock:
                    on_message = self._calls.pop(call_id, None) if is_final else self._calls.get(call_id)
                if on_message is not None:
                    on_message(is_final, reader)
            elif kind == Kind.API_RESPONSE:
                with self._calls_lock:
                    on_message = self._calls.pop(reader.u32(), None)
                if on_message is not None:
                    on_message(True, reader)
            else:
                self.inbox.put((kind, reader))
