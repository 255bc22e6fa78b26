"""The one-line error contract shared by the console scripts.

A user error prints one line and exits 1; a closed pipe exits 1; Ctrl-C exits 130; any other
exception is a bug, reported on one line as an internal error (``LINEAR_LAYOUT_DEBUG=1`` re-raises
it for a traceback). Never a traceback for the user, never an abort.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def guarded_main(
    prog: str,
    run: Callable[[], int],
    user_errors: tuple[type[BaseException], ...],
    describe: Callable[[BaseException], str],
) -> int:
    """``run()``, with every failure turned into one line on stderr and an exit status."""
    try:
        return run()
    except user_errors as error:
        print(_one_line(describe(error)), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: keep the one-line contract, but allow debugging
        if os.environ.get("LINEAR_LAYOUT_DEBUG"):
            raise
        print(
            _one_line(f"{prog}: internal error: {type(error).__name__}: {error}")
            + " (set LINEAR_LAYOUT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


def _one_line(message: str) -> str:
    """``message`` with its whitespace (newlines included) collapsed to single spaces."""
    return " ".join(message.split())
