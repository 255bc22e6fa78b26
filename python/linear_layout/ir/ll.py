"""Builders for the `ll` operations, in the style of `mlir.dialects.*`: snake_case, keyword-only
`loc` and `ip`. Single-result builders return the `ir.Value`."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from ..core.layout import LinearLayout
from .bridge import from_attribute, to_attribute

__all__ = ["apply", "load", "store"]


def apply(layout: LinearLayout | ir.Attribute, indices: Sequence[ir.Value], *,
          loc=None, ip=None) -> list[ir.Value]:
    """The coordinates (one per output dimension) that `layout` maps `indices` (one per input
    dimension) to; the coordinates have the type of the first index."""
    if isinstance(layout, LinearLayout):
        num_results = layout.num_out_dims
        layout = to_attribute(layout)
    else:
        num_results = from_attribute(layout).num_out_dims
    if not indices:
        raise ValueError("ll.apply needs at least one index")
    result_type = indices[0].type
    op = ir.Operation.create("ll.apply", results=[result_type] * num_results, operands=list(indices),
                             attributes={"layout": layout}, loc=loc, ip=ip)
    return list(op.results)


def load(result: ir.Type, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None) -> ir.Value:
    return ir.Operation.create("ll.load", results=[result], operands=[memref, *offsets], loc=loc, ip=ip).result


def store(value: ir.Value, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None) -> ir.Operation:
    return ir.Operation.create("ll.store", results=[], operands=[value, memref, *offsets], loc=loc, ip=ip)
