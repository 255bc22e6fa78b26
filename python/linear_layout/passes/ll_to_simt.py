"""`ll-to-simt`: lower tensor-level kernels to per-thread SIMT code in upstream dialects.

See `linear_layout.patterns.to_simt` for the steps and patterns and `docs/passes.md` for the
closed list of ops it emits. A failure (an unsupported op, mismatched layouts, too many warps for
the launch) is reported at the op and leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..patterns.to_simt import check_function, kernel_functions, lower_to_simt
from . import Pass


@dataclasses.dataclass(frozen=True)
class LLToSimt(Pass):
    argument = "ll-to-simt"
    summary = "Lower tensor kernels (ll.load/store, elementwise, convert_layout, local_*) to gpu.func SIMT code"

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        with op.context, op.location:
            return [error for func_op in kernel_functions(op) for error in check_function(func_op)]

    def apply(self, op: ir.Operation) -> None:
        with op.context, op.location:
            errors = lower_to_simt(op)
        if errors:  # problems() found none: a planner that changed its mind
            raise RuntimeError(errors[0][1])


PASS = LLToSimt
