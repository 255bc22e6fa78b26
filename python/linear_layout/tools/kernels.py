"""Triton kernels end to end, as a Python API: TTGIR text -> upstream IR -> PTX, and runs of the
lowered kernel over a whole grid in the SIMT interpreter (docs/triton-kernels.md).

    module = lower_ttgir(text)                       # ll-lower: a gpu.module in upstream dialects
    ptx = ttgir_to_ptx(text, chip="sm_80")           # ... through the stock gpu-lower-to-nvvm-pipeline
    report = run_triton_kernel(module, [x, y, out, n], grid=(4,))   # numpy arrays are updated in place

The kernel ABI is `patterns/triton_kernel.py`'s: one argument per `tt.func` argument, a numpy
array (any shape, C-contiguous: it is seen as the flat memref) for each pointer and a Python number
for each scalar. Every block of the grid runs, one after the other, on the same arrays, with the
interpreter's bank model and race detection on (`on_race="raise"`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from ..passes import build_pass_manager
from ..passes.ptx import emit_ptx
from ..simt.interpreter import Report, run_kernel
from ..ttgir import parse_ttgir

__all__ = ["lower_ttgir", "run_triton_kernel", "ttgir_to_ptx"]


def lower_ttgir(text: str, *, chip: str | None = None, context: ir.Context | None = None) -> ir.Module:
    """The TTGIR module `text` lowered by `ll-lower` (`ll-lower{chip=...}` when `chip` is given).

    Raises TtgirError for malformed text and MLIRError (its diagnostics name each op that has no
    lowering, with its location) when the lowering fails; nothing half-lowered is returned."""
    module = parse_ttgir(text, context)
    pipeline = f"ll-lower{{chip={chip}}}" if chip else "ll-lower"
    with module.context, ir.Location.unknown():
        build_pass_manager(pipeline).run(module.operation)
    return module


def ttgir_to_ptx(text: str, *, chip: str = "sm_90") -> str:
    """The PTX of TTGIR `text`: `lower_ttgir`, then the stock `gpu-lower-to-nvvm-pipeline` for
    `chip` (`emit_ptx`, with the oldest PTX version the chip and the kernel's instructions accept)."""
    module = lower_ttgir(text, chip=chip)
    with module.context, ir.Location.unknown():
        return emit_ptx(module, chip)


def run_triton_kernel(
    module: ir.Module,
    args: Sequence,
    grid: Sequence[int],
    *,
    kernel: str | None = None,
    on_race: str = "raise",
) -> Report:
    """Run lowered kernel `kernel` (the only one by default) of `module` over every block of
    `grid`; numpy arrays (pointer arguments) are updated in place, scalars are Python numbers.

    Requires: each array C-contiguous and writeable, of the pointee's element type.
    Postcondition: the report of the whole grid (accesses, wavefronts, races recorded when
    `on_race="record"`; a race raises RaceError by default)."""
    flat = [arg.reshape(-1) if isinstance(arg, np.ndarray) else arg for arg in args]
    for original, view in zip(args, flat):
        if isinstance(original, np.ndarray) and not np.shares_memory(original, view):
            raise ValueError("pointer arguments must be C-contiguous numpy arrays (their flat view is the memref)")
    with module.context:
        return run_kernel(module, flat, num_blocks=tuple(grid), kernel=kernel, on_race=on_race)
