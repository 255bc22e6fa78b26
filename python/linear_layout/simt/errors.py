"""The errors of the SIMT interpreter."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import Race

__all__ = [
    "KernelChoiceError",
    "MemoryAccessError",
    "RaceError",
    "SimtError",
    "UndefinedBehaviorError",
    "UnsupportedOp",
]


class SimtError(Exception):
    """Base class of every error raised while interpreting a kernel."""

    located = False  # True once the message names the op and location that failed


class UnsupportedOp(SimtError):
    """The kernel uses an op (or a type or attribute form) outside the interpreter's closed set."""


class MemoryAccessError(SimtError):
    """An out-of-bounds, misaligned or uninitialised memory access, or a bad argument buffer."""


class UndefinedBehaviorError(SimtError):
    """The kernel would have undefined behaviour: division by zero, oversized shift, divergent
    barrier or shuffle, out-of-range dynamic vector position, ..."""


class RaceError(SimtError):
    """Two warps touched the same workgroup element in one barrier interval (see module doc)."""

    race: Race | None = None  # the race found, set by the interpreter when it raises


class KernelChoiceError(SimtError, ValueError):
    """The module has no kernel of the name asked for, or several and no name was given (a
    ValueError too: the caller's argument is wrong)."""
