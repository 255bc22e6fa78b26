"""The `ll` dialect's ops in the style of `mlir.dialects.arith`: an `OpView` class per op with
typed accessors and its verifier rules, and snake_case builders with keyword-only `loc`/`ip`.

    from linear_layout.dialects import ll
    row, col = ll.apply(layout, [register, lane, warp])     # the coordinate values
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from ..core.layout import LinearLayout
from ..ir.bridge import from_attribute, to_attribute
from ._base import LayoutOp, operand_at, operands_from, register_dialect, register_operation, result_at, results_from
from .types import tile_problem

__all__ = ["ApplyOp", "LoadOp", "StoreOp", "apply", "load", "store"]

_Dialect = register_dialect("ll")


@register_operation(_Dialect)
class ApplyOp(LayoutOp):
    """`ll.apply`: the coordinates (one per output dimension) that `layout` maps `indices` (one
    per input dimension) to."""

    OPERATION_NAME = "ll.apply"

    def __init__(
        self,
        layout: LinearLayout | ir.Attribute,
        indices: Sequence[ir.Value],
        *,
        results: Sequence[ir.Type] | None = None,
        loc=None,
        ip=None,
    ) -> None:
        if not indices:
            raise ValueError("ll.apply needs at least one index")
        if isinstance(layout, LinearLayout):
            num_results = layout.num_out_dims
            layout = to_attribute(layout, indices[0].type.context)
        else:
            num_results = from_attribute(layout).num_out_dims
        if results is None:
            results = [indices[0].type] * num_results
        super().__init__(self._create(results, indices, {"layout": layout}, loc=loc, ip=ip))

    @property
    def layout_attr(self) -> ir.Attribute:
        return self.operation.attributes["layout"]

    @property
    def layout(self) -> LinearLayout:
        """The decoded `#ll.layout` (ValueError if it is invalid, TypeError if it is another attribute)."""
        layout = from_attribute(self.layout_attr)
        if not isinstance(layout, LinearLayout):
            raise TypeError(f"ll.apply needs an #ll.layout, got {self.layout_attr}")
        return layout

    indices = operands_from(0)
    coordinates = results_from(0)

    def verify_rules(self) -> str | None:
        if "layout" not in self.operation.attributes:
            return "has no 'layout' attribute"
        try:
            layout = self.layout
        except TypeError:
            return "needs an #ll.layout"
        except ValueError as error:
            return f"has an invalid layout: {error}"
        if len(self.indices) != layout.num_in_dims:
            return f"takes one index per input dimension {list(layout.get_in_dim_names())}, got {len(self.indices)}"
        if len(self.coordinates) != layout.num_out_dims:
            return (
                f"returns one coordinate per output dimension {list(layout.get_out_dim_names())}, "
                f"got {len(self.coordinates)}"
            )
        return _index_range_problem(layout, self.indices) or _coordinate_width_problem(layout, self.coordinates)


def _bit_width(type_: ir.Type) -> int | None:
    """Bits of an integer or index type (index: 64, as the lowering assumes); None for other types."""
    if isinstance(type_, ir.IndexType):
        return 64
    return type_.width if isinstance(type_, ir.IntegerType) else None


def _constant_value(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name == "arith.constant" and "value" in owner.attributes:
        attribute = owner.attributes["value"]
        if isinstance(attribute, ir.IntegerAttr):
            return attribute.value
    return None


def _index_range_problem(layout: LinearLayout, indices: Sequence[ir.Value]) -> str | None:
    """Indices must be integers in range: a constant outside ``[0, size)`` is an error (inputs do not wrap)."""
    for name, value in zip(layout.get_in_dim_names(), indices):
        size = layout.get_in_dim_size(name)
        if _bit_width(value.type) is None:
            return f"index '{name}' must be an integer or index, got {value.type}"
        constant = _constant_value(value)
        if constant is not None and not 0 <= constant < size:
            return (
                f"index '{name}' is the constant {constant}, out of range for its size {size} "
                "(indices must be in range; they do not wrap)"
            )
    return None


def _coordinate_width_problem(layout: LinearLayout, coordinates: Sequence[ir.Value]) -> str | None:
    """Each coordinate's type must hold every value of its output dimension (no silent truncation)."""
    for (name, size), value in zip(layout.out_dims, coordinates):
        width = _bit_width(value.type)
        if width is None:
            return f"coordinate '{name}' must be an integer or index, got {value.type}"
        if size - 1 >= 1 << width:
            return f"coordinate '{name}' (size {size}) does not fit its type {value.type}"
    return None


class _TileOp(LayoutOp):
    """An op between a distributed tensor (`tensor`) and the tile of `memref` at `offsets` (none,
    or one index per dimension of the memref)."""

    tensor: ir.Value
    memref: ir.Value
    offsets: list[ir.Value]

    def verify_rules(self) -> str | None:
        return tile_problem(self.tensor.type, self.memref.type, len(self.offsets))


@register_operation(_Dialect)
class LoadOp(_TileOp):
    """`ll.load`: the tile of `memref` at `offsets` as a tensor distributed by the result type's
    encoding."""

    OPERATION_NAME = "ll.load"

    def __init__(
        self, result: ir.Type, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None
    ) -> None:
        super().__init__(self._create([result], [memref, *offsets], loc=loc, ip=ip))

    memref = operand_at(0)
    offsets = operands_from(1)
    result = tensor = result_at(0)


@register_operation(_Dialect)
class StoreOp(_TileOp):
    """`ll.store`: writes a distributed tensor (`value`) into the tile of `memref` at `offsets`."""

    OPERATION_NAME = "ll.store"

    def __init__(self, value: ir.Value, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None):
        super().__init__(self._create([], [value, memref, *offsets], loc=loc, ip=ip))

    value = tensor = operand_at(0)
    memref = operand_at(1)
    offsets = operands_from(2)


def apply(layout: LinearLayout | ir.Attribute, indices: Sequence[ir.Value], *, loc=None, ip=None) -> list[ir.Value]:
    """The coordinates (one per output dimension) that `layout` maps `indices` (one per input
    dimension) to; the coordinates have the type of the first index."""
    return ApplyOp(layout, indices, loc=loc, ip=ip).coordinates


def load(result: ir.Type, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None) -> ir.Value:
    return LoadOp(result, memref, offsets, loc=loc, ip=ip).result


def store(value: ir.Value, memref: ir.Value, offsets: Sequence[ir.Value] = (), *, loc=None, ip=None) -> StoreOp:
    return StoreOp(value, memref, offsets, loc=loc, ip=ip)
