"""`ll-lower-apply`: lower every `ll.apply` to `arith` index math.

The math is Triton's `applyLinearLayout` (see `linear_layout.transforms.apply_layout`): constant
indices fold at compile time, the others are packed into one integer, one masked shift per basis
diagonal, disjoint terms joined by `arith.ori` and the rest by `arith.xori`, in balanced trees.
An output the symbolic indices cannot reach becomes its folded constant.

Indices of type `index` (or of mixed widths) are cast to one integer type first, the narrowest
of i32/i64 that holds the packed indices and every output; the results are cast back to the
op's result types. Every op is checked before the first one is rewritten, so a failure leaves
the module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith

from ..core.layout import LinearLayout
from ..ir.bridge import from_attribute
from ..patterns.apply_layout import emit_apply_layout
from . import Pass


def _walk(op: ir.Operation, name: str, found: list) -> list:
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name == name:
                    found.append(child)
                _walk(child, name, found)
    return found


def _width(t: ir.Type) -> int:
    if isinstance(t, ir.IndexType):
        return 64
    return ir.IntegerType(t).width


def _plan(op: ir.Operation) -> tuple[LinearLayout, ir.Type]:
    """The layout of an `ll.apply` and the integer type to compute in; ValueError if it cannot be lowered."""
    try:
        layout = from_attribute(op.attributes["layout"])
    except KeyError:
        raise ValueError("'ll.apply' op has no 'layout' attribute") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"'ll.apply' op has an invalid layout: {error}") from None
    if not isinstance(layout, LinearLayout):
        raise ValueError("'ll.apply' op needs an #ll.layout")
    if len(op.operands) != layout.num_in_dims or len(op.results) != layout.num_out_dims:
        raise ValueError(f"'ll.apply' op takes {layout.num_in_dims} indices and returns {layout.num_out_dims} "
                         f"coordinates, got {len(op.operands)} and {len(op.results)}")
    packed = sum(layout.get_in_dim_size_log2(n) for n in layout.get_in_dim_names())
    needed = max([packed] + [layout.get_out_dim_size_log2(n) + 1 for n in layout.get_out_dim_names()])
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    integer_types = [t for t in types if isinstance(t, ir.IntegerType)]
    if integer_types and all(t == integer_types[0] for t in types) and _width(integer_types[0]) >= needed:
        return layout, integer_types[0]
    if needed > 64:
        raise ValueError(f"'ll.apply' op: the layout's {packed} input bits do not fit in 64-bit index math")
    return layout, ir.IntegerType.get_signless(32 if needed <= 32 else 64)


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    source = value.type
    if source == to:
        return value
    if isinstance(source, ir.IndexType) or isinstance(to, ir.IndexType):
        return arith.index_castui(to, value)
    if _width(source) < _width(to):
        return arith.extui(to, value)
    return arith.trunci(to, value)


def lower_apply(op: ir.Operation, layout: LinearLayout, int_type: ir.Type) -> None:
    """Replace one `ll.apply` by its arith index math (emitted right before it)."""
    with op.location, ir.InsertionPoint(op):
        indices = {name: _cast(value, int_type)
                   for name, value in zip(layout.get_in_dim_names(), op.operands)}
        coordinates = emit_apply_layout(layout, indices, int_type=int_type)
        for name, result in zip(layout.get_out_dim_names(), op.results):
            result.replace_all_uses_with(_cast(coordinates[name], result.type))
    op.erase()


@dataclasses.dataclass
class LLLowerApply(Pass):
    argument = "ll-lower-apply"
    summary = "Lower ll.apply to arith xor/and/shift index math (Triton's applyLinearLayout)"

    def run(self, op: ir.Operation) -> bool:
        with op.context:
            return self._run(op)

    def _run(self, op: ir.Operation) -> bool:
        plans, ok = [], True
        for apply_op in _walk(op, "ll.apply", []):
            try:
                plans.append((apply_op, *_plan(apply_op)))
            except ValueError as error:
                apply_op.location.emit_error(str(error))
                ok = False
        if not ok:
            return False
        for apply_op, layout, int_type in plans:
            lower_apply(apply_op, layout, int_type)
        return True


PASS = LLLowerApply
