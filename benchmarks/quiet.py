"""End a benchmark as quietly as the tests end (see the root ``conftest.py``).

Triton's nanobind extension prints hundreds of ``nanobind: leaked ...`` lines when the interpreter
tears it down. Once a benchmark has printed its table there is nothing left to run, so
:func:`run_quietly` flushes the output and, when Triton was imported, ends the process with
``os._exit`` (skipping that teardown) and the benchmark's own exit status.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn


def run_quietly(main: Callable[[], object]) -> NoReturn:
    """Run ``main`` (its return value, an int or None, is the exit status) and exit without the leak report.

    An exception from ``main`` propagates as usual (a traceback is what a failed benchmark should show).
    """
    status = main()
    code = status if isinstance(status, int) else 0
    sys.stdout.flush()
    sys.stderr.flush()
    if "triton" in sys.modules:
        os._exit(code)
    sys.exit(code)
