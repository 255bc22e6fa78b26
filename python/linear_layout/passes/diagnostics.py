"""How a pass reports what went wrong: every message is one diagnostic line at a location.

- A problem the pass found (`Pass.problems`) is reported at its location.
- An exception while the pass ran is classified. A bad type or attribute in the input
  (`ir.MLIRError`, e.g. "Unable to parse type", or a `ValueError` from our own decoders) is a
  user error: its message, on one line, at the op it was raised at (`ir.walk.op_location`), else
  at the pass's anchor. Anything else is a bug: one `internal error: pass '...' failed: ...` line.
- `LINEAR_LAYOUT_DEBUG=1` also prints the traceback of either to stderr.

`native_stderr` collects what C++ writes to file descriptor 2 while upstream passes with options
are added to a pipeline (LLVM's option parser reports bad option values there, not in the
exception), so that it becomes part of a one-line error; it redirects descriptor 2 only for that
call, and only when the passes have options.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import traceback
from collections.abc import Iterator

from mlir import ir

from ..ir.walk import op_location, op_name

__all__ = ["debugging", "internal_error", "native_stderr", "one_line", "report_exception"]


def debugging() -> bool:
    """Whether `LINEAR_LAYOUT_DEBUG` asks for tracebacks."""
    return os.environ.get("LINEAR_LAYOUT_DEBUG", "") not in ("", "0")


def one_line(message: str) -> str:
    """`message` with its whitespace (newlines included) collapsed to single spaces."""
    return " ".join(message.split())


def _user_message(error: BaseException) -> str:
    message = str(error)
    if isinstance(error, ir.MLIRError):
        details = [str(d.message) for d in error.error_diagnostics]
        message = "; ".join([error.message, *details]) if details else error.message
    name = op_name(error)
    return message if name is None or message.startswith(f"'{name}'") else f"'{name}': {message}"


def internal_error(pass_name: str, error: BaseException) -> str:
    suffix = "" if debugging() else " (set LINEAR_LAYOUT_DEBUG=1 for a traceback)"
    return one_line(f"internal error: pass '{pass_name}' failed: {type(error).__name__}: {error}") + suffix


def report_exception(pass_name: str, error: Exception, fallback: ir.Location) -> None:
    """Emit `error`, raised while pass `pass_name` ran, as one diagnostic (see the module doc)."""
    if debugging():
        traceback.print_exception(error, file=sys.stderr)
    location = op_location(error) or fallback
    if isinstance(error, ir.MLIRError | ValueError):
        location.emit_error(one_line(_user_message(error)))
    else:
        location.emit_error(internal_error(pass_name, error))


@contextlib.contextmanager
def native_stderr(captured: list[str]) -> Iterator[None]:
    """Collect what C++ writes to file descriptor 2 inside the block into `captured`."""
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode(errors="replace"))
