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

from ..core.arguments import require_int, require_sequence, require_str, short, type_name
from ..passes import build_pass_manager
from ..passes.ptx import emit_ptx
from ..simt.interpreter import Report, run_kernel
from ..ttgir import parse_ttgir

__all__ = ["lower_ttgir", "run_triton_kernel", "ttgir_to_ptx"]


def lower_ttgir(text: str, *, chip: str | None = None, context: ir.Context | None = None) -> ir.Module:
    """The TTGIR module `text` lowered by `ll-lower` (`ll-lower{chip=...}` when `chip` is given).

    Raises TtgirError for malformed text and MLIRError (its diagnostics name each op that has no
    lowering, with its location) when the lowering fails; nothing half-lowered is returned;
    TypeError for arguments of the wrong type."""
    require_str(text, "lower_ttgir", "text", "TTGIR text")
    if chip is not None:
        require_str(chip, "lower_ttgir", "chip", "a chip name such as 'sm_90'")
    if context is not None and not isinstance(context, ir.Context):
        raise TypeError(f"lower_ttgir: argument 'context' must be an MLIR Context or None, got {type_name(context)}")
    module = parse_ttgir(text, context)
    pipeline = f"ll-lower{{chip={chip}}}" if chip else "ll-lower"
    with module.context, ir.Location.unknown():
        build_pass_manager(pipeline).run(module.operation)
    return module


def ttgir_to_ptx(text: str, *, chip: str = "sm_90", short_pointers: bool = False) -> str:
    """The PTX of TTGIR `text`: `lower_ttgir`, then the stock `gpu-lower-to-nvvm-pipeline` for
    `chip` (`emit_ptx`, with the oldest PTX version the chip and the kernel's instructions accept;
    `short_pointers`: 32-bit shared addresses, as Triton's)."""
    require_str(chip, "ttgir_to_ptx", "chip", "a chip name such as 'sm_90'")
    module = lower_ttgir(text, chip=chip)
    with module.context, ir.Location.unknown():
        return emit_ptx(module, chip, short_pointers=short_pointers)


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
    `on_race="record"`; a race raises RaceError by default). Arguments of the wrong type are a
    TypeError, a grid that is not 1-3 sizes >= 1 or an unknown kernel name a ValueError."""
    grid, args = _checked_launch(module, args, grid, kernel)
    flat = [arg.reshape(-1) if isinstance(arg, np.ndarray) else arg for arg in args]
    for original, view in zip(args, flat):
        if isinstance(original, np.ndarray) and not np.shares_memory(original, view):
            raise ValueError("pointer arguments must be C-contiguous numpy arrays (their flat view is the memref)")
    with module.context:
        return run_kernel(module, flat, num_blocks=tuple(grid), kernel=kernel, on_race=on_race)


def _checked_launch(module: object, args: object, grid: object, kernel: object) -> tuple[tuple[int, ...], tuple]:
    """(grid, args) of `run_triton_kernel` once checked: a module, a sequence of numpy arrays and
    numbers, 1-3 grid sizes >= 1 and a kernel name or None."""
    where = "run_triton_kernel"
    if not isinstance(module, ir.Module):
        raise TypeError(
            f"{where}: argument 'module' must be a lowered MLIR module (lower_ttgir), got {type_name(module)}"
        )
    arguments = require_sequence(args, where, "args", "numpy arrays and numbers")
    for index, value in enumerate(arguments):
        if not isinstance(value, (np.ndarray, int, float, np.number, np.bool_)):
            raise TypeError(
                f"{where}: argument 'args' item {index} must be a numpy array or a number, "
                f"got {type_name(value)} {short(value)}"
            )
    sizes = tuple(
        require_int(size, where, "grid", minimum=1) for size in require_sequence(grid, where, "grid", "sizes")
    )
    if not 1 <= len(sizes) <= 3:
        raise ValueError(f"{where}: argument 'grid' must hold 1 to 3 sizes, got {len(sizes)}")
    if kernel is not None:
        require_str(kernel, where, "kernel", "a kernel name")
    return sizes, arguments
