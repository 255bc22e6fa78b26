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

from ..ir.bridge import layout_of
from ..planning.in_warp import plan_conversion
from ..patterns.to_simt import element_bits
from . import Pass

ATTRIBUTE = "ll.explain"


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


@dataclasses.dataclass
class LLExplainConversions(Pass):
    argument = "ll-explain-conversions"
    summary = "Annotate each ttg.convert_layout with its lowering strategy and predicted cost (ll.explain)"

    def run(self, op: ir.Operation) -> bool:
        explanations = []
        failed = False
        for child in _walk(op):
            if child.name != "ttg.convert_layout":
                continue
            src_type, dst_type = child.operands[0].type, child.results[0].type
            try:
                plan = plan_conversion(layout_of(src_type), layout_of(dst_type), element_bits(src_type.element_type))
            except ValueError as error:
                child.location.emit_error(f"cannot explain the conversion of {src_type} to {dst_type}: {error}")
                failed = True
                continue
            explanations.append((child, plan.summary()))
        if failed:  # leave the module unchanged
            return False
        for child, text in explanations:
            child.attributes[ATTRIBUTE] = ir.StringAttr.get(text, context=op.context)
        return True


PASS = LLExplainConversions
