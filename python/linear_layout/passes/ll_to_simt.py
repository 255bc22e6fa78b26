"""`ll-to-simt`: lower tensor-level kernels to per-thread SIMT code in upstream dialects.

See `linear_layout.patterns.to_simt` for the steps and patterns and `docs/passes.md` for the
closed list of ops it emits. A failure (an unsupported op, mismatched layouts, too many warps for
the launch) is reported at the op and leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ..patterns.to_simt import check_function, kernel_functions, lower_checked_functions
from ..patterns.triton_kernel import check_triton_kernels, lower_triton_kernels
from ..core.targets import TargetError, nvptx_target
from . import Pass, PipelineError

CHIP_HELP = (
    "target chip, e.g. sm_90: shared-memory conversions of 8/16-bit data use ldmatrix (sm_75+) and "
    "stmatrix (sm_90+) where they reach the bandwidth floor; empty (the default): portable"
)


@dataclasses.dataclass(frozen=True)
class ChipOption:
    """The `chip` option of the passes and pipelines that lower conversions, checked when the pass
    is configured: a chip LLVM's NVPTX back end does not know is a PipelineError."""

    argument: ClassVar[str]
    chip: str = dataclasses.field(default="", metadata={"help": CHIP_HELP})

    def __post_init__(self) -> None:
        if self.chip:
            try:
                nvptx_target(self.chip)
            except TargetError as error:
                raise PipelineError(
                    f"bad value '{self.chip}' for option 'chip' of pass '{self.argument}': {error}"
                ) from None

    @property
    def target_chip(self) -> str | None:
        """The chip, or None for portable code (the option left empty)."""
        return self.chip or None


@dataclasses.dataclass(frozen=True)
class LLToSimt(ChipOption, Pass):
    argument = "ll-to-simt"
    summary = "Lower tensor kernels (ll.load/store, elementwise, convert_layout, local_*) to gpu.func SIMT code"
    op_name = "builtin.module"  # the kernels go into a gpu.module of the module: never nested in func.func

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        with op.context, op.location:
            triton_kernels = check_triton_kernels(op)  # tt.func kernels
            return triton_kernels + [error for func_op in kernel_functions(op) for error in check_function(func_op)]

    def apply(self, op: ir.Operation) -> None:
        with op.context, op.location:
            lower_checked_functions(op.context, kernel_functions(op), self.target_chip)
            lower_triton_kernels(op, self.target_chip)


PASS = LLToSimt
