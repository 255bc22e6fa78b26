"""The `ttg` dialect's ops in the style of `mlir.dialects.arith`: an `OpView` class per op with
typed accessors and its verifier rules, and snake_case builders (result type first) with
keyword-only `loc`/`ip`.

    from linear_layout.dialects import ttg
    y = ttg.convert_layout(result_type, x)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir

from ..core.layout import LinearLayout
from ..ir.bridge import MemDesc
from ..ir.text import memdesc_parameters, memdesc_text
from ._base import LayoutOp, operand_at, register_dialect, register_operation, result_at
from .types import memdesc_or_problem, same_shape_and_element

__all__ = [
    "ConvertLayoutOp",
    "LocalAllocOp",
    "LocalView",
    "LocalLoadOp",
    "LocalStoreOp",
    "convert_layout",
    "local_access_view",
    "local_alloc",
    "local_load",
    "local_store",
    "memdesc_type",
]

_Dialect = register_dialect("ttg")


def _shape_and_element(t: ir.Type) -> tuple[list[int], ir.Type]:
    return list(t.shape), t.element_type


def _of_memdesc(memdesc: MemDesc) -> tuple[list[int], ir.Type]:
    return list(memdesc.shape), memdesc.element_type


class _OneToOne(LayoutOp):
    """An op from one operand `src` to one result."""

    def __init__(self, result: ir.Type, src: ir.Value, *, loc=None, ip=None) -> None:
        super().__init__(self._create([result], [src], loc=loc, ip=ip))

    src = operand_at(0)
    result = result_at(0)


@register_operation(_Dialect)
class ConvertLayoutOp(_OneToOne):
    """`ttg.convert_layout`: the same tensor in another layout."""

    OPERATION_NAME = "ttg.convert_layout"

    def verify_rules(self) -> str | None:
        return same_shape_and_element(
            _shape_and_element(self.src.type), _shape_and_element(self.result.type), "the source", "the result"
        )


@register_operation(_Dialect)
class LocalAllocOp(LayoutOp):
    """`ttg.local_alloc`: a shared-memory buffer, optionally initialised from a tensor."""

    OPERATION_NAME = "ttg.local_alloc"

    def __init__(self, result: ir.Type, src: ir.Value | None = None, *, loc=None, ip=None) -> None:
        super().__init__(self._create([result], [] if src is None else [src], loc=loc, ip=ip))

    @property
    def src(self) -> ir.Value | None:
        return self.operation.operands[0] if len(self.operation.operands) else None

    result = result_at(0)

    def verify_rules(self) -> str | None:
        if self.src is None:
            return None
        memdesc, problem = memdesc_or_problem(self.result.type)
        if memdesc is None:
            return problem
        return same_shape_and_element(
            _shape_and_element(self.src.type), _of_memdesc(memdesc), "the source", "the buffer"
        )


@register_operation(_Dialect)
class LocalLoadOp(_OneToOne):
    """`ttg.local_load`: a whole shared-memory buffer as a distributed tensor."""

    OPERATION_NAME = "ttg.local_load"

    def verify_rules(self) -> str | None:
        memdesc, problem = memdesc_or_problem(self.src.type)
        if memdesc is None:
            return problem
        return same_shape_and_element(
            _of_memdesc(memdesc), _shape_and_element(self.result.type), "the buffer", "the result"
        )


@register_operation(_Dialect)
class LocalStoreOp(LayoutOp):
    """`ttg.local_store`: writes a distributed tensor into a mutable shared-memory buffer."""

    OPERATION_NAME = "ttg.local_store"

    def __init__(self, src: ir.Value, dst: ir.Value, *, loc=None, ip=None) -> None:
        super().__init__(self._create([], [src, dst], loc=loc, ip=ip))

    src = operand_at(0)
    dst = operand_at(1)

    def verify_rules(self) -> str | None:
        memdesc, problem = memdesc_or_problem(self.dst.type)
        if memdesc is None:
            return problem
        if not memdesc.mutable:
            return 'cannot store into an immutable buffer (its !ttg.memdesc is "immutable")'
        return same_shape_and_element(
            _shape_and_element(self.src.type), _of_memdesc(memdesc), "the value", "the buffer"
        )


def memdesc_type(
    shape: Sequence[int],
    element_type: ir.Type,
    encoding: ir.Attribute,
    *,
    mutable: bool = True,
    context: ir.Context | None = None,
) -> ir.Type:
    """`!ttg.memdesc<shape, element_type, encoding, #ttg.shared_memory, "mutable"|"immutable">`."""
    return ir.Type.parse(memdesc_text(shape, element_type, encoding, mutable), context or element_type.context)


def local_memdesc_type(op: ir.Operation) -> ir.Type:
    """The memdesc type a ``ttg.local_load``/``local_alloc``/``local_store`` accesses."""
    if op.name == "ttg.local_load":
        return op.operands[0].type
    if op.name == "ttg.local_alloc":
        return op.results[0].type
    return op.operands[1].type


@dataclass(frozen=True)
class LocalView:
    """What a shared-memory access reaches: its tensor's `shape` in the buffer `allocation` (a
    bigger one for a `ttg.memdesc_subslice` view, at `origin`; else the same shape at 0)."""

    shape: tuple[int, ...]
    allocation: tuple[int, ...]
    origin: tuple[int, ...]

    def in_allocation(self, layout: LinearLayout) -> LinearLayout:
        """`layout` (over `shape`) as a layout of the allocation's coordinates (the same bases).
        An aligned subslice at `origin` reads element `x` at `S^-1(origin) ^ S^-1(x)` of the
        allocation's shared layout `S`: that constant XORs every address, which permutes the
        banks of each phase, so the view costs what this layout costs over `S`."""
        for name, size in zip(layout.get_out_dim_names(), self.allocation):
            layout = layout.resize_out_dim(name, size)
        return layout


def local_access_view(op: ir.Operation) -> LocalView:
    """The view a `ttg.local_load`/`local_store`/`local_alloc` accesses. The origin of a subslice
    is the offsets of the `ttg.memdesc_subslice` that makes it; ValueError when no such op
    defines the view (a loop argument) or when the origin is not a multiple of the view's shape
    in every dimension (its addresses would not be linear in the element)."""
    parameters = memdesc_parameters(local_memdesc_type(op))
    shape, allocation = parameters.shape, parameters.allocation
    if allocation == shape:
        return LocalView(shape, allocation, (0,) * len(shape))
    owner = op.operands[0 if op.name == "ttg.local_load" else 1].owner
    defining = owner if isinstance(owner, ir.Operation) else getattr(owner, "operation", None)
    if not isinstance(defining, ir.Operation) or defining.name != "ttg.memdesc_subslice":
        raise ValueError("a subslice view whose offsets are not known here (not a ttg.memdesc_subslice)")
    origin = tuple(ir.DenseI32ArrayAttr(defining.attributes["offsets"]))
    if any(o % n for o, n in zip(origin, shape)):
        raise ValueError(f"a subslice at offsets {list(origin)}, not a multiple of its shape {list(shape)}")
    return LocalView(shape, allocation, origin)


def convert_layout(result: ir.Type, src: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return ConvertLayoutOp(result, src, loc=loc, ip=ip).result


def local_alloc(result: ir.Type, src: ir.Value | None = None, *, loc=None, ip=None) -> ir.Value:
    return LocalAllocOp(result, src, loc=loc, ip=ip).result


def local_load(result: ir.Type, src: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return LocalLoadOp(result, src, loc=loc, ip=ip).result


def local_store(src: ir.Value, dst: ir.Value, *, loc=None, ip=None) -> LocalStoreOp:
    return LocalStoreOp(src, dst, loc=loc, ip=ip)
