"""pb_utils.TritonError and pb_utils.TritonModelException."""


class TritonError:
    """An error a model returns in an InferenceResponse: a message and one of Triton's codes."""

    # TRITONSERVER_Error_Code order; stub-protocol.ts ERROR_CODES maps them to Nereid's statuses.
    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    def __init__(self, message, code=INTERNAL):
        if not isinstance(code, int) or not TritonError.UNKNOWN <= code <= TritonError.CANCELLED:
            raise TritonModelException(f"TritonError code must be one of the TritonError constants, got {code!r}")
        self._message = message.decode("utf-8", "replace") if isinstance(message, (bytes, bytearray)) else str(message)
        self._code = code

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __str__(self):
        return self._message

    def __repr__(self):
        return f"TritonError({self._message!r}, {self._code})"


class TritonModelException(Exception):
    """Raised by models (and by pb_utils) for errors that fail the whole call."""
