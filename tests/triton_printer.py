"""Triton 3.9's own printer, asked in a child process: each snippet (a module in generic or custom
form) is parsed and verified by Triton's parser with every Triton dialect loaded, and printed back
in Triton's custom syntax (or Triton's error). One child process for a whole batch."""

from __future__ import annotations

import json
import subprocess
import sys

__all__ = ["triton_prints"]

_PRINT = r"""
import json, os, sys, tempfile
import triton._C.libtriton as L
from triton._C.libtriton import ir
context = ir.context()
ir.load_dialects(context)
L.amd.load_dialects(context)
L.nvidia.load_dialects(context)
directory = tempfile.mkdtemp()
path = os.path.join(directory, "snippet.mlir")
errors = os.open(os.path.join(directory, "errors"), os.O_RDWR | os.O_CREAT | os.O_TRUNC)
saved = os.dup(2)
out = []
for text in json.load(sys.stdin):
    with open(path, "w") as f:
        f.write(text)
    os.ftruncate(errors, 0)
    os.lseek(errors, 0, 0)
    os.dup2(errors, 2)
    try:
        printed = str(ir.parse_mlir_module(path, context))
    except RuntimeError:
        printed = None
    finally:
        os.dup2(saved, 2)
    os.lseek(errors, 0, 0)
    message = os.read(errors, 1 << 16).decode(errors="replace")
    out.append({"printed": printed, "error": message.strip()})
print(json.dumps(out))
"""


def triton_prints(texts: list[str]) -> list[tuple[str | None, str]]:
    """For each module text: (Triton's print of it, or None where Triton rejects it; Triton's errors)."""
    result = subprocess.run(
        [sys.executable, "-c", _PRINT], input=json.dumps(texts), capture_output=True, text=True, timeout=600, check=True
    )
    return [(item["printed"], item["error"]) for item in json.loads(result.stdout.strip().splitlines()[-1])]
