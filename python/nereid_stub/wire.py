"""Frames and fields between Nereid and this process.

The same layout is written and read by src/backends/python/frame-codec.ts and stub-protocol.ts, which
list every message and its fields; change both sides together.

    frame: u32 body_length | u8 kind | 3 zero bytes | body (body_length bytes, a multiple of 8)

Fields are little-endian u8, u32, i64, u64, f64, str (u32 byte length then UTF-8) and data blocks
(u32 length, zero padding to a multiple of 8 from the body start, then the bytes), so that a frame
read into its own buffer views as numpy arrays without copying.
"""

import struct

HEADER = struct.Struct("<IB3x")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")

# Blocks at least this large are sent from the caller's memory rather than copied into the frame.
ZERO_COPY_MIN_BYTES = 16 * 1024


class Kind:
    """Message kinds (stub-protocol.ts ``Kind``)."""

    INIT = 1
    EXECUTE = 2
    BLS_RESPONSE = 3
    PING = 4
    FINALIZE = 5
    AUTO_COMPLETE = 6
    CANCEL = 7
    API_RESPONSE = 8
    READY = 16
    FAILED = 17
    EXECUTE_DONE = 18
    RESPONSE = 19
    BLS_REQUEST = 20
    PONG = 21
    LOG = 22
    CONFIG = 23
    API_REQUEST = 24


class Outcome:
    """How a call of ``execute`` ended, in EXECUTE_DONE."""

    RESPONSES = 0
    FAILED = 1
    RETURNED = 2


# Tensor data types by wire code (stub-protocol.ts DATA_TYPE_CODES).
DATA_TYPES = (
    "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
    "FP16", "FP32", "FP64", "BYTES", "BF16",
)
CODE_OF = {name: code for code, name in enumerate(DATA_TYPES)}


class Writer:
    """Builds one frame. Small fields are packed together; large blocks stay the caller's buffers."""

    __slots__ = ("_parts", "_buf", "_flushed")

    def __init__(self):
        self._buf = bytearray()
        self._parts = [b"", self._buf]
        self._flushed = 0

    def u8(self, value):
        self._buf.append(value)
        return self

    def u32(self, value):
        self._buf += _U32.pack(value)
        return self

    def i64(self, value):
        self._buf += _I64.pack(value)
        return self

    def u64(self, value):
        self._buf += _U64.pack(value)
        return self

    def f64(self, value):
        self._buf += _F64.pack(value)
        return self

    def str(self, text):
        data = text.encode("utf-8")
        self._buf += _U32.pack(len(data))
        self._buf += data
        return self

    def block(self, data):
        """A data block from a bytes-like object of unsigned bytes (format 'B')."""
        size = len(data)
        if size > 0xFFFFFFF8:
            raise ValueError(f"a block of {size} bytes exceeds the 4 GiB limit of one message")
        self._buf += _U32.pack(size)
        self._pad()
        if size < ZERO_COPY_MIN_BYTES:
            self._buf += data
        else:
            self._flushed += len(self._buf) + size
            self._parts.append(data)
            self._buf = bytearray()
            self._parts.append(self._buf)
        return self

    def finish(self, kind):
        """The frame's buffers in order: the header, then the body padded to a multiple of 8."""
        self._pad()
        self._parts[0] = HEADER.pack(self._flushed + len(self._buf), kind)
        return [part for part in self._parts if len(part) > 0]

    def _pad(self):
        remainder = (self._flushed + len(self._buf)) % 8
        if remainder:
            self._buf += bytes(8 - remainder)


class Reader:
    """Reads the fields of one frame body in order."""

    __slots__ = ("_body", "_pos")

    def __init__(self, body):
        self._body = body
        self._pos = 0

    def u8(self):
        value = self._body[self._pos]
        self._pos += 1
        return value

    def u32(self):
        value = _U32.unpack_from(self._body, self._pos)[0]
        self._pos += 4
        return value

    def i64(self):
        value = _I64.unpack_from(self._body, self._pos)[0]
        self._pos += 8
        return value

    def u64(self):
        value = _U64.unpack_from(self._body, self._pos)[0]
        self._pos += 8
        return value

    def f64(self):
        value = _F64.unpack_from(self._body, self._pos)[0]
        self._pos += 8
        return value

    def str(self):
        size = self.u32()
        text = str(self._body[self._pos:self._pos + size], "utf-8")
        self._pos += size
        return text

    def block(self):
        """A data block, as a memoryview of the body (no copy)."""
        size = self.u32()
        self._pos += -self._pos % 8
        data = self._body[self._pos:self._pos + size]
        if len(data) != size:
            raise ValueError(f"malformed message from Nereid: a block of {size} bytes is cut off")
        self._pos += size
        return data
