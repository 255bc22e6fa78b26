"""`ll-verify`: check every layout encoding against its tensor and every ttg/ll op's rules."""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..ir.verifier import verify
from . import Pass


@dataclasses.dataclass
class LLVerify(Pass):
    argument = "ll-verify"
    summary = "Check layout encodings against tensor shapes, launch sizes and op rules"

    check_launch: bool = dataclasses.field(
        default=True, metadata={"help": "compare lanes/warps/blocks with ttg.threads-per-warp, ttg.num-warps, ttg.num-ctas"})
    max_errors: int = dataclasses.field(default=0, metadata={"help": "stop reporting after this many errors (0: all)"})

    def run(self, op: ir.Operation) -> bool:
        errors = verify(op, check_launch=self.check_launch)
        if self.max_errors:
            errors = errors[:self.max_errors]
        for location, message in errors:
            location.emit_error(message)
        return not errors


PASS = LLVerify
