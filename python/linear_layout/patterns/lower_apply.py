"""`ll.apply` -> `arith` index math, as a rewrite pattern (`populate_lower_apply_patterns`).

The math is Triton's `applyLinearLayout` (`emit_apply_layout`): constant indices fold at compile
time, the others are packed into one integer, one masked shift per basis diagonal, disjoint
terms joined by `arith.ori` and the rest by `arith.xori`, in balanced trees. An output the
symbolic indices cannot reach becomes its folded constant.

Indices of type `index` (or of mixed widths) are cast to one integer type first, the narrowest
of i32/i64 that holds the packed indices and every output; the results are cast back to the
op's result types.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith
from mlir.rewrite import RewritePatternSet

from ..core.layout import LinearLayout
from ..dialects.ll import ApplyOp
from .apply_layout import emit_apply_layout
from .kernel import Launch, LoweringError, PatternRun
from .simt_pattern import SimtPattern

__all__ = ["APPLY", "ApplyLowering", "apply_lowering", "cast_integer", "emit_apply_op", "populate_lower_apply_patterns"]


@dataclass(frozen=True)
class ApplyLowering:
    """How one `ll.apply` is lowered: its layout and the integer type the math runs in."""

    layout: LinearLayout
    int_type: ir.Type


def _width(t: ir.Type) -> int:
    return 64 if isinstance(t, ir.IndexType) else ir.IntegerType(t).width


def _needed_bits(layout: LinearLayout) -> tuple[int, int]:
    """(packed input bits, bits the math needs: the packed inputs and every output + 1)."""
    packed = sum(layout.get_in_dim_size_log2(n) for n in layout.get_in_dim_names())
    outputs = [layout.get_out_dim_size_log2(n) + 1 for n in layout.get_out_dim_names()]
    return packed, max([packed, *outputs])


def apply_lowering(op: ApplyOp) -> ApplyLowering:
    """How `op` is lowered; ValueError (the message names the op) when it cannot be."""
    problem = op.verify_rules()
    if problem:
        raise ValueError(f"'ll.apply' op {problem}")
    layout = op.layout
    packed, needed = _needed_bits(layout)
    types = [v.type for v in op.indices] + [r.type for r in op.coordinates]
    integer_types = [t for t in types if isinstance(t, ir.IntegerType)]
    if integer_types and all(t == integer_types[0] for t in types) and _width(integer_types[0]) >= needed:
        return ApplyLowering(layout, integer_types[0])
    if needed > 64:
        raise ValueError(f"'ll.apply' op: the layout's {packed} input bits do not fit in 64-bit index math")
    return ApplyLowering(layout, ir.IntegerType.get_signless(32 if needed <= 32 else 64))


def cast_integer(value: ir.Value, to: ir.Type) -> ir.Value:
    """`value` (an integer or index) as integer type `to`: zero-extended, truncated or index-cast."""
    source = value.type
    if source == to:
        return value
    if isinstance(source, ir.IndexType) or isinstance(to, ir.IndexType):
        return arith.index_castui(to, value)
    if _width(source) < _width(to):
        return arith.extui(to, value)
    return arith.trunci(to, value)


def emit_apply_op(op: ApplyOp, lowering: ApplyLowering, indices: list[ir.Value]) -> list[ir.Value]:
    """The coordinates of `op` computed from `indices` (its operands, or their replacements),
    at the current insertion point, in the types of its results."""
    cast = {
        name: cast_integer(value, lowering.int_type) for name, value in zip(lowering.layout.get_in_dim_names(), indices)
    }
    coordinates = emit_apply_layout(lowering.layout, cast, int_type=lowering.int_type)
    return [
        cast_integer(coordinates[name], result.type)
        for name, result in zip(lowering.layout.get_out_dim_names(), op.coordinates)
    ]


def _check_apply(op: ApplyOp, launch: Launch) -> ApplyLowering:
    try:
        return apply_lowering(op)
    except ValueError as error:
        raise LoweringError(str(error)) from None


def _emit_apply(op: ApplyOp, launch: Launch, lowering: ApplyLowering) -> list[ir.Value]:
    return emit_apply_op(op, lowering, op.indices)


#: `ll.apply` -> arith, anywhere (it needs no kernel); one of the SIMT patterns too.
APPLY = SimtPattern((ApplyOp,), _check_apply, _emit_apply, in_kernel=False)


def populate_lower_apply_patterns(patterns: RewritePatternSet, *, benefit: int = 1) -> PatternRun:
    """Add the pattern lowering `ll.apply` to `arith` index math. An `ll.apply` that breaks a
    rule (see `ApplyOp.verify_rules`) does not match; `ll-verify` reports it. Returns the
    `PatternRun` the pattern closes over (its `failures`)."""
    run = PatternRun()
    APPLY.add_to(patterns, run, benefit)
    return run
