"""`ll-lower-apply`: lower every `ll.apply` to `arith` index math (Triton's `applyLinearLayout`),
with the pattern of `linear_layout.patterns.populate_lower_apply_patterns`.

Every op is checked before the first one is rewritten, so a failure leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from ..dialects.ll import ApplyOp
from ..patterns.lower_apply import apply_lowering, populate_lower_apply_patterns
from . import Pass


def _apply_ops(op: ir.Operation) -> list[ApplyOp]:
    found = []

    def visit(child: ir.Operation) -> ir.WalkResult:
        if child.name == ApplyOp.OPERATION_NAME:
            found.append(child.opview)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@dataclasses.dataclass(frozen=True)
class LLLowerApply(Pass):
    argument = "ll-lower-apply"
    summary = "Lower ll.apply to arith xor/and/shift index math (Triton's applyLinearLayout)"

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        errors = []
        with op.context:
            for apply_op in _apply_ops(op):
                try:
                    apply_lowering(apply_op)
                except ValueError as error:
                    errors.append((apply_op.location, str(error)))
        return errors

    def apply(self, op: ir.Operation) -> None:
        with op.context:
            patterns = RewritePatternSet(op.context)
            populate_lower_apply_patterns(patterns)
            walk_and_apply_patterns(op, patterns.freeze())


PASS = LLLowerApply
