"""`ll-explain-conversions`: annotate every `ttg.convert_layout` with how `ll-to-simt` will lower it.

Each conversion gets a string attribute `ll.explain` holding the plan's summary: the strategy of
the decision tree (no-op, register permutation, warp shuffles, shared memory) and its cost --
shuffles and selects, or scratch bytes, repetitions, barriers, access widths, predicted
wavefronts against the ideal, and index operations. The IR is otherwise unchanged, so the pass
can run before `ll-lower` to see what the lowering is about to do:

    linear-layout-opt -p 'builtin.module(ll-explain-conversions)' kernel.mlir
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..dialects.ttg import ConvertLayoutOp
from ..ir.bridge import layout_of
from ..planning import plan_conversion
from ..patterns.vectors import element_bits
from . import Pass

ATTRIBUTE = "ll.explain"


def _conversions(op: ir.Operation) -> list[ConvertLayoutOp]:
    found = []

    def visit(child: ir.Operation) -> ir.WalkResult:
        if child.name == ConvertLayoutOp.OPERATION_NAME:
            found.append(child.opview)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _summary(op: ConvertLayoutOp) -> str:
    """The plan's summary; ValueError when there is no plan."""
    src_type, dst_type = op.src.type, op.result.type
    try:
        bits = element_bits(src_type.element_type)
        return plan_conversion(layout_of(src_type), layout_of(dst_type), bitwidth=bits).summary()
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot explain the conversion of {src_type} to {dst_type}: {error}") from None


@dataclasses.dataclass(frozen=True)
class LLExplainConversions(Pass):
    argument = "ll-explain-conversions"
    summary = "Annotate each ttg.convert_layout with its lowering strategy and predicted cost (ll.explain)"

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        errors = []
        for conversion in _conversions(op):
            try:
                _summary(conversion)
            except ValueError as error:
                errors.append((conversion.location, str(error)))
        return errors

    def apply(self, op: ir.Operation) -> None:
        for conversion in _conversions(op):
            conversion.operation.attributes[ATTRIBUTE] = ir.StringAttr.get(_summary(conversion), context=op.context)


PASS = LLExplainConversions
