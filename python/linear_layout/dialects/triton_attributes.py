"""The attributes Triton's verifier requires of the Triton ops the lowering reads, as `ll-verify` checks them.

Triton's ODS declares them (`TritonOps.td`: `I32Attr:$axis`, `BoolAttr:$reverse`,
`DenseI32ArrayAttr:$order`, the `I32EnumAttr`s of `TritonAttrDefs.td`, ...) and its parser
refuses an op without one, or with one of another kind; an edited TTGIR that drops or retypes
one is refused here too, before any pass reads it:

    tt.get_program_id, tt.get_num_programs   axis: 0, 1 or 2 (TT_ProgramDim: x, y, z)
    tt.make_range        start, end: i32, 0 <= start < end, end - start a power of two and the
                         result's size (MakeRangeOp::verify)
    tt.expand_dims       axis: i32, at most the operand's rank
    tt.reduce, tt.scan, tt.gather   axis: i32, below the operand's rank; tt.scan: reverse, a bool
    tt.trans             order: array<i32>, a permutation of the operand's dimensions
    tt.atomic_rmw        atomic_rmw_op (1-10), sem (1-4), scope (1-3): TT_AtomicRMWAttr,
                         TT_MemSemanticAttr, TT_MemSyncScopeAttr
    tt.atomic_cas        sem, scope
    tt.clampf            propagateNan: "none" or "all" (TT_PropagateNanAttr, as the reader writes it)
    tt.call              callee: a flat symbol reference

`attribute_problem(op)` returns the first problem's message, or None; `tests/test_fuzz.py`
checks each name against Triton's `.td` files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir

__all__ = ["REQUIRED_ATTRIBUTES", "AttributeKind", "attribute_problem"]


@dataclass(frozen=True)
class AttributeKind:
    """What an attribute must be: ``what`` in words, ``accepts`` the test."""

    what: str
    accepts: Callable[[ir.Attribute], bool]


def _is_i32(attr: ir.Attribute) -> bool:
    return (
        isinstance(attr, ir.IntegerAttr)
        and isinstance(attr.type, ir.IntegerType)
        and attr.type.width == 32
        and not isinstance(attr, ir.BoolAttr)
    )


def _enum(*values: int) -> AttributeKind:
    return AttributeKind(
        f"an i32 of {', '.join(map(str, values))}", lambda attr: _is_i32(attr) and attr.value in values
    )


I32 = AttributeKind("an i32 integer", _is_i32)
BOOL = AttributeKind("a bool (true or false)", lambda attr: isinstance(attr, ir.BoolAttr))
I32_ARRAY = AttributeKind("an array<i32: ...>", lambda attr: isinstance(attr, ir.DenseI32ArrayAttr))
SYMBOL = AttributeKind("a symbol reference (@name)", lambda attr: isinstance(attr, ir.FlatSymbolRefAttr))
PROPAGATE_NAN = AttributeKind(
    '"none" or "all"', lambda attr: isinstance(attr, ir.StringAttr) and attr.value in ("none", "all")
)
_DIM = _enum(0, 1, 2)
_SEM = _enum(1, 2, 3, 4)
_SCOPE = _enum(1, 2, 3)

REQUIRED_ATTRIBUTES: dict[str, dict[str, AttributeKind]] = {
    "tt.get_program_id": {"axis": _DIM},
    "tt.get_num_programs": {"axis": _DIM},
    "tt.make_range": {"start": I32, "end": I32},
    "tt.expand_dims": {"axis": I32},
    "tt.reduce": {"axis": I32},
    "tt.scan": {"axis": I32, "reverse": BOOL},
    "tt.gather": {"axis": I32},
    "tt.trans": {"order": I32_ARRAY},
    "tt.atomic_rmw": {"atomic_rmw_op": _enum(*range(1, 11)), "sem": _SEM, "scope": _SCOPE},
    "tt.atomic_cas": {"sem": _SEM, "scope": _SCOPE},
    "tt.clampf": {"propagateNan": PROPAGATE_NAN},
    "tt.call": {"callee": SYMBOL},
}


def _rank(value: ir.Value) -> int | None:
    return value.type.rank if isinstance(value.type, ir.RankedTensorType) else None


def _make_range(op: ir.Operation) -> str | None:
    start, end = op.attributes["start"].value, op.attributes["end"].value
    if not 0 <= start < end or (end - start) & (end - start - 1):
        return f"needs 0 <= start < end with end - start a power of two (start = {start}, end = {end})"
    result = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(result, ir.RankedTensorType) or list(result.shape) != [end - start]:
        return f"result must be a 1-d tensor of end - start = {end - start} elements"
    return None


def _axis(op: ir.Operation) -> str | None:
    rank = _rank(op.operands[0]) if len(op.operands) else None
    limit = rank + 1 if rank is not None and op.name == "tt.expand_dims" else rank
    axis = op.attributes["axis"].value
    if limit is not None and not 0 <= axis < limit:
        return f"axis = {axis} is not a dimension of its {rank}-d operand"
    return None


def _order(op: ir.Operation) -> str | None:
    rank = _rank(op.operands[0]) if len(op.operands) else None
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    if rank is not None and sorted(order) != list(range(rank)):
        return f"order = {order} is not a permutation of the operand's {rank} dimensions"
    return None


_VALUE_RULES: dict[str, Callable[[ir.Operation], str | None]] = {
    "tt.make_range": _make_range,
    "tt.expand_dims": _axis,
    "tt.reduce": _axis,
    "tt.scan": _axis,
    "tt.gather": _axis,
    "tt.trans": _order,
}


def attribute_problem(op: ir.Operation) -> str | None:
    """The first required attribute of Triton op `op` that is missing, of the wrong kind or out
    of range, as a message naming it (None: all present and valid, or not an op of the table)."""
    required = REQUIRED_ATTRIBUTES.get(op.name)
    if required is None:
        return None
    attributes = op.attributes
    for name, kind in required.items():
        if name not in attributes:
            return f"requires attribute '{name}' ({kind.what}), as Triton's verifier does"
        if not kind.accepts(attributes[name]):
            return f"attribute '{name}' must be {kind.what}, got {attributes[name]}"
    rule = _VALUE_RULES.get(op.name)
    return rule(op) if rule else None
