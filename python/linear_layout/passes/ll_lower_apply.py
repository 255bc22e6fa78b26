"""`ll-lower-apply`: lower every `ll.apply` to `arith` index math (Triton's `applyLinearLayout`),
with the pattern of `linear_layout.patterns.populate_lower_apply_patterns`.

Every op is checked before the first one is rewritten, so a failure leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from ..dialects import ops_of
from ..dialects.ll import ApplyOp
from ..patterns.lower_apply import apply_lowering, populate_lower_apply_patterns
from . import Pass


@dataclasses.dataclass(frozen=True)
class LLLowerApply(Pass):
    argument = "ll-lower-apply"
    summary = "Lower ll.apply to arith xor/and/shift index math (Triton's applyLinearLayout)"

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        errors = []
        with op.context:
            for apply_op in ops_of(op, ApplyOp):
                try:
                    apply_lowering(apply_op)
                except ValueError as error:
                    errors.append((apply_op.location, str(error)))
        return errors

    def apply(self, op: ir.Operation) -> None:
        with op.context:
            patterns = RewritePatternSet(op.context)
            run = populate_lower_apply_patterns(patterns)
            try:
                walk_and_apply_patterns(op, patterns.freeze())
            except RuntimeError as error:
                raise run.original(error) from None


PASS = LLLowerApply
