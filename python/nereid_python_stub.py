"""Entry point of a Nereid Python stub process.

Nereid runs ``python3 -B nereid_python_stub.py serve|auto-complete <model.py>`` with a Unix socket on
file descriptor 3, over which it exchanges the frames of nereid_stub/wire.py. This folder is first on
sys.path, so a model's ``import triton_python_backend_utils as pb_utils`` finds Nereid's module.
"""

import sys

from nereid_stub.main import main

if __name__ == "__main__":
    main(sys.argv[1:])
