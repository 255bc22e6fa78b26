"""`ll-to-simt`: lower tensor-level kernels to per-thread SIMT code in upstream dialects.

See `linear_layout.patterns.to_simt` for the steps and patterns and `docs/passes.md` for the
closed list of ops it emits. A failure (an unsupported op, mismatched layouts, too many warps for
the launch) is reported at the op and leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..patterns.to_simt import check_function, kernel_functions, lower_checked_functions
from ..core.targets import TargetError, nvptx_target
from . import Pass, PipelineError

CHIP_HELP = (
    "target chip, e.g. sm_90: shared-memory conversions of 8/16-bit data use ldmatrix (sm_75+) and "
    "stmatrix (sm_90+) where they reach the bandwidth floor; empty (the default): portable"
)


def check_chip(argument: str, chip: str) -> None:
    """PipelineError for a chip option LLVM's NVPTX back end does not know."""
    if chip:
        try:
            nvptx_target(chip)
        except TargetError as error:
            raise PipelineError(f"bad value '{chip}' for option 'chip' of pass '{argument}': {error}") from None


@dataclasses.dataclass(frozen=True)
class LLToSimt(Pass):
    argument = "ll-to-simt"
    summary = "Lower tensor kernels (ll.load/store, elementwise, convert_layout, local_*) to gpu.func SIMT code"
    chip: str = dataclasses.field(default="", metadata={"help": CHIP_HELP})

    def __post_init__(self) -> None:
        check_chip(self.argument, self.chip)

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        with op.context, op.location:
            return [error for func_op in kernel_functions(op) for error in check_function(func_op)]

    def apply(self, op: ir.Operation) -> None:
        with op.context, op.location:
            lower_checked_functions(op.context, kernel_functions(op), self.chip or None)


PASS = LLToSimt
