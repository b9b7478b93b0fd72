"""pb_utils.Tensor: a named numpy array, and how it travels in a frame.

BYTES tensors are numpy object arrays of ``bytes`` (Triton's convention); BF16 has no numpy type, so a
BF16 tensor keeps its raw 16-bit patterns and is reached through DLPack with torch.
"""

import struct

import numpy as np

from .errors import TritonModelException
from .text import text
from .wire import CODE_OF, DATA_TYPES

_U32 = struct.Struct("<I")

NUMPY_TYPES = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BYTES": np.object_,
}
# TRITONSERVER_DataType codes (Tensor.triton_dtype, numpy_to_triton_type, triton_to_numpy_type).
TRITON_TYPE_CODES = {
    "BOOL": 1, "UINT8": 2, "UINT16": 3, "UINT32": 4, "UINT64": 5, "INT8": 6, "INT16": 7, "INT32": 8,
    "INT64": 9, "FP16": 10, "FP32": 11, "FP64": 12, "BYTES": 13, "BF16": 14,
}
_BY_KIND_AND_SIZE = {
    (np.dtype(numpy_type).kind, np.dtype(numpy_type).itemsize): name
    for name, numpy_type in NUMPY_TYPES.items()
    if name != "BYTES"
}


def datatype_of(dtype):
    """The Triton data type of a numpy dtype, or None when there is none."""
    if dtype == np.object_ or dtype.kind == "S":
        return "BYTES"
    return _BY_KIND_AND_SIZE.get((dtype.kind, dtype.itemsize))


def _optional_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _require_torch(what):
    torch = _optional_torch()
    if torch is None:
        raise TritonModelException(f"{what} needs torch, which this Python environment cannot import")
    return torch


class _Capsule:
    """Gives a bare DLPack capsule the ``__dlpack__`` protocol numpy reads (a CPU tensor)."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


class Tensor:
    """A named tensor: ``pb_utils.Tensor(name, numpy_array)``."""

    __slots__ = ("_name", "_datatype", "_array", "_shape", "_bf16")

    def __init__(self, name, numpy_array):
        name = text(name, "pb_utils.Tensor name")
        if not isinstance(numpy_array, np.ndarray):
            raise TritonModelException(
                f"pb_utils.Tensor '{name}' needs a numpy array, got {type(numpy_array).__name__}; "
                "wrap the data with numpy.asarray or use Tensor.from_dlpack"
            )
        datatype = datatype_of(numpy_array.dtype)
        if datatype is None:
            raise TritonModelException(
                f"pb_utils.Tensor '{name}': numpy dtype {numpy_array.dtype} has no Triton data type; "
                "use bool, (u)int8-64, float16/32/64, or an object array of bytes"
            )
        self._name = name
        self._datatype = datatype
        self._array = numpy_array
        self._shape = tuple(numpy_array.shape)
        self._bf16 = None

    @classmethod
    def _from_bf16(cls, name, shape, raw):
        tensor = cls.__new__(cls)
        tensor._name = name
        tensor._datatype = "BF16"
        tensor._array = None
        tensor._shape = tuple(shape)
        tensor._bf16 = raw
        return tensor

    def name(self):
        return self._name

    def shape(self):
        return list(self._shape)

    def is_cpu(self):
        return True

    def triton_dtype(self):
        """The tensor's TRITONSERVER_DataType code (11 for FP32, 13 for BYTES), as Triton's."""
        return TRITON_TYPE_CODES[self._datatype]

    def __dlpack__(self, stream=None):
        return self.to_dlpack()

    def __dlpack_device__(self):
        return (1, 0)

    def as_numpy(self):
        if self._datatype == "BF16":
            raise TritonModelException(
                f"tensor '{self._name}' is BF16, which numpy cannot hold; use to_dlpack() with torch"
            )
        return self._array

    def to_dlpack(self):
        """A DLPack capsule sharing this tensor's memory (BF16 through torch; BYTES has none)."""
        if self._datatype == "BYTES":
            raise TritonModelException(f"tensor '{self._name}' is BYTES, which has no DLPack form")
        if self._datatype == "BF16":
            torch = _require_torch(f"to_dlpack() of BF16 tensor '{self._name}'")
            return torch.utils.dlpack.to_dlpack(self._bf16_torch(torch))
        try:
            return self._array.__dlpack__()
        except (BufferError, TypeError) as error:
            raise TritonModelException(f"tensor '{self._name}' ({self._datatype}) cannot be shared through DLPack: {error}") from error

    @staticmethod
    def from_dlpack(name, dlpack):
        """A Tensor from a DLPack capsule or an object with ``__dlpack__`` (a torch tensor, a numpy array)."""
        name = text(name, "pb_utils.Tensor name")
        source = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
        try:
            return Tensor(name, np.from_dlpack(source))
        except (BufferError, TypeError, RuntimeError) as numpy_error:
            torch = _optional_torch()
            if torch is None:
                raise TritonModelException(f"Tensor.from_dlpack('{name}'): numpy cannot read it: {numpy_error}") from numpy_error
            value = dlpack if isinstance(dlpack, torch.Tensor) else torch.utils.dlpack.from_dlpack(dlpack)
            value = value.detach().cpu().contiguous()
            if value.dtype == torch.bfloat16:
                return Tensor._from_bf16(name, value.shape, value.view(torch.int16).numpy().tobytes())
            return Tensor(name, value.numpy())

    def _bf16_torch(self, torch):
        if len(self._bf16) == 0:
            return torch.empty(self._shape, dtype=torch.bfloat16)
        return torch.frombuffer(bytearray(self._bf16), dtype=torch.bfloat16).reshape(self._shape)

    def _wire_bytes(self):
        if self._datatype == "BF16":
            return self._bf16
        if self._datatype == "BYTES":
            return serialize_bytes(self._array)
        array = self._array
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        return memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))

    def __repr__(self):
        return f"Tensor({self._name!r}, {self._datatype}, shape={list(self._shape)})"


def datatype_name(tensor):
    """A tensor's data type as the protocol names it: 'FP32', 'BYTES', 'BF16'..."""
    return tensor._datatype


def serialize_bytes(array):
    """Triton's BYTES layout: each element as a 4-byte little-endian length and its bytes."""
    parts = []
    for item in array.reshape(-1):
        if isinstance(item, (bytes, bytearray)):
            data = bytes(item)
        else:
            data = str(item).encode("utf-8")
        parts.append(_U32.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def deserialize_bytes(data, shape):
    elements = []
    position = 0
    end = len(data)
    while position < end:
        size = _U32.unpack_from(data, position)[0]
        position += 4
        elements.append(bytes(data[position:position + size]))
        position += size
    array = np.empty(len(elements), dtype=np.object_)
    array[:] = elements
    return array.reshape(shape)


def write_tensor(writer, tensor):
    writer.str(tensor._name).u8(CODE_OF[tensor._datatype]).u8(len(tensor._shape))
    for dim in tensor._shape:
        writer.i64(dim)
    writer.block(tensor._wire_bytes())


def read_tensor(reader):
    name = reader.str()
    datatype = DATA_TYPES[reader.u8()]
    rank = reader.u8()
    shape = tuple(reader.i64() for _ in range(rank))
    data = reader.block()
    if datatype == "BF16":
        return Tensor._from_bf16(name, shape, data)
    if datatype == "BYTES":
        return Tensor(name, deserialize_bytes(data, shape))
    return Tensor(name, np.frombuffer(data, dtype=NUMPY_TYPES[datatype]).reshape(shape))
