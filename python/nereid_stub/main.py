"""Starts a stub process in its mode: ``serve`` a model instance, or ``auto-complete`` a config."""

import os
import signal
import socket
import sys

from .channel import Channel
from .wire import Kind, Writer


def main(argv):
    """Runs the mode, then ends the process at once, without waiting for threads the model left running."""
    mode, model_file = argv
    # Nereid decides when this process ends (FINALIZE, or the channel closing): a Ctrl-C or SIGTERM
    # sent to the whole process group must not end it before Nereid has drained its requests.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    code = _run(mode, model_file, Channel(socket.socket(fileno=3)))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _run(mode, model_file, channel):
    try:
        import numpy  # noqa: F401  (pb_utils needs it: say so before the model's import fails obscurely)
    except ImportError as error:
        channel.send(
            Kind.FAILED,
            Writer().str(
                f"the Python interpreter '{sys.executable}' cannot import numpy ({error}), which "
                "triton_python_backend_utils needs; install python3-numpy (Debian) or pip install numpy in the model's environment"
            ),
        )
        return 1
    if mode == "serve":
        from .serve import serve

        return serve(channel, model_file)
    from .auto_complete import auto_complete

    return auto_complete(channel, model_file)
