"""The operations Triton 3.9 registers in its own dialects, asked of Triton itself.

Triton's Python bindings do not list registered operations, so the list is found in two steps
(the parsing in a child process: a malformed op name can abort LLVM; ~10 s of one core):

1. every dotted name of a Triton dialect (`tt.`, `ttg.`, `ttng.`, `amdg.`, `nvg.`) among the
   strings of `libtriton.so` (each op's name is there: its `getOperationName()`), as candidates;
2. each candidate parsed as `"name"() : () -> ()` by Triton's own parser, with every dialect
   loaded, in a child process (`triton_printer`): Triton reports an op it does not know as
   unregistered; any other complaint (missing operands, attributes, parent) means the op exists.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

from triton_printer import triton_prints

__all__ = ["TRITON_OP_DIALECTS", "registered_ops"]

TRITON_OP_DIALECTS = ("tt", "ttg", "ttng", "amdg", "nvg")

_NAME = r"(?<![A-Za-z0-9_.])(?:%s)\.[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*"


@functools.cache
def registered_ops() -> frozenset[str]:
    """The names of the operations Triton registers in `TRITON_OP_DIALECTS`."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("triton")
    [library] = Path(spec.origin).parent.glob("_C/libtriton*.so")
    pattern = re.compile((_NAME % "|".join(TRITON_OP_DIALECTS)).encode())
    candidates = sorted({match.group().decode() for match in pattern.finditer(library.read_bytes())})
    verdicts = triton_prints([f'"{name}"() : () -> ()\n' for name in candidates])
    return frozenset(name for name, (_printed, errors) in zip(candidates, verdicts) if "unregistered" not in errors)
