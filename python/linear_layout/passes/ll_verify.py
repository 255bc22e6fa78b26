"""`ll-verify`: check every layout encoding against its tensor and every ttg/ll op's rules."""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..dialects.verifier import verify
from . import Pass


@dataclasses.dataclass(frozen=True)
class LLVerify(Pass):
    argument = "ll-verify"
    summary = "Check layout encodings against tensor shapes, launch sizes and op rules"
    changes_ir = False

    check_launch: bool = dataclasses.field(
        default=True,
        metadata={"help": "compare lanes/warps/blocks with ttg.threads-per-warp, ttg.num-warps, ttg.num-ctas"},
    )
    max_errors: int = dataclasses.field(default=0, metadata={"help": "stop reporting after this many errors (0: all)"})

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        errors = verify(op, check_launch=self.check_launch)
        return errors[: self.max_errors] if self.max_errors else errors

    def apply(self, op: ir.Operation) -> None:
        """Nothing to change: the module verified."""


PASS = LLVerify
