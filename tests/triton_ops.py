"""The operations Triton 3.9 registers in its own dialects, asked of Triton itself.

Triton's Python bindings do not list registered operations, so the list is found in two steps,
in a child process (a malformed op name can abort LLVM, and the scan is ~10 s of one core):

1. every dotted name of a Triton dialect (`tt.`, `ttg.`, `ttng.`, `amdg.`, `nvg.`) among the
   strings of `libtriton.so` (each op's name is there: its `getOperationName()`), as candidates;
2. each candidate parsed as `"name"() : () -> ()` by Triton's own parser, with every dialect
   loaded: Triton reports an op it does not know as unregistered; any other complaint (missing
   operands, attributes, parent) means the op exists.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

__all__ = ["TRITON_OP_DIALECTS", "registered_ops"]

TRITON_OP_DIALECTS = ("tt", "ttg", "ttng", "amdg", "nvg")

_PROBE = r"""
import json, os, re, sys, tempfile
import triton._C.libtriton as L
from triton._C.libtriton import ir
data = open(L.__file__, "rb").read()
pattern = rb"(?<![A-Za-z0-9_.])(?:%s)\.[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*"
candidates = sorted({m.group().decode() for m in re.finditer(pattern % "|".join(sys.argv[1:]).encode(), data)})
context = ir.context()
ir.load_dialects(context)
L.amd.load_dialects(context)
L.nvidia.load_dialects(context)
directory = tempfile.mkdtemp()
path = os.path.join(directory, "op.mlir")
errors = os.open(os.path.join(directory, "errors"), os.O_RDWR | os.O_CREAT | os.O_TRUNC)
saved = os.dup(2)
found = []
for name in candidates:
    with open(path, "w") as f:
        f.write('"%s"() : () -> ()\n' % name)
    os.ftruncate(errors, 0)
    os.lseek(errors, 0, 0)
    os.dup2(errors, 2)
    try:
        ir.parse_mlir_module(path, context)
    except RuntimeError:
        pass
    finally:
        os.dup2(saved, 2)
    os.lseek(errors, 0, 0)
    message = os.read(errors, 1 << 16).decode(errors="replace")
    if "unregistered" not in message:
        found.append(name)
print(json.dumps(found))
"""


@functools.cache
def registered_ops() -> frozenset[str]:
    """The names of the operations Triton registers in `TRITON_OP_DIALECTS`."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *TRITON_OP_DIALECTS], capture_output=True, text=True, timeout=600, check=True
    )
    return frozenset(json.loads(result.stdout.strip().splitlines()[-1]))
