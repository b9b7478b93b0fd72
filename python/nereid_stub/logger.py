"""pb_utils.Logger: log lines in Nereid's server log, at Nereid's levels, marked with file:line."""

import os
import sys

from . import channel as channel_module
from .wire import Kind, Writer


class Logger:
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3

    @staticmethod
    def log(message, level=INFO):
        _emit(message, level)

    @staticmethod
    def log_info(message):
        _emit(message, Logger.INFO)

    @staticmethod
    def log_warn(message):
        _emit(message, Logger.WARNING)

    @staticmethod
    def log_error(message):
        _emit(message, Logger.ERROR)

    @staticmethod
    def log_verbose(message):
        _emit(message, Logger.VERBOSE)


def _emit(message, level):
    caller = sys._getframe(2)
    where = f"{os.path.basename(caller.f_code.co_filename)}:{caller.f_lineno}"
    send_log(level, where, str(message))


def send_log(level, where, message):
    channel = channel_module.current()
    if channel is None:
        print(f"{where}] {message}", file=sys.stderr)
        return
    channel.send(Kind.LOG, Writer().u8(level).str(where).str(message))
