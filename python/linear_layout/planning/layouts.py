"""Layouts as the planner reads them: hardware input dimensions, flattened columns (pure).

Every planning module works on distributed layouts with exactly the inputs
``(register, lane, warp, block)`` (:data:`~linear_layout.core.hardware.HW_DIMS`) and on the
*flattened* image of each basis: the output coordinates packed into one integer, ``dim0`` in the
lowest bits (:meth:`LinearLayout.flatten_outs`). This module does that conversion once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..core.gf2 import log2
from ..core.hardware import HW_DIMS
from ..core.layout import LinearLayout

__all__ = [
    "Encoded",
    "LayoutLike",
    "PlannerError",
    "SideColumns",
    "as_hardware_layout",
    "flat_columns",
    "side_columns",
    "unflatten",
]


@runtime_checkable
class Encoded(Protocol):
    """What the planner needs of an encoding (``linear_layout.encodings``): its layout for a shape."""

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout: ...


#: A layout the planner accepts: a LinearLayout, or an encoding together with a shape.
LayoutLike = LinearLayout | Encoded


class PlannerError(ValueError):
    """The planner cannot plan this input: the layouts do not describe one tensor on one launch,
    or a shared layout cannot serve the access asked for. A user error, reported in one line."""


def as_hardware_layout(
    layout: object, shape: Sequence[int] | None, what: str, in_dims: Sequence[str] = HW_DIMS
) -> LinearLayout:
    """``layout`` (a LinearLayout or an encoding with ``to_linear_layout``) with exactly the
    input dimensions ``in_dims``, in that order (missing ones have size 1).

    Raises :class:`PlannerError` for an input dimension outside ``in_dims`` and ``TypeError``
    for something that is not a layout."""
    if isinstance(layout, LinearLayout):
        linear = layout
    else:
        if not isinstance(layout, Encoded):
            raise TypeError(
                f"{what} must be a LinearLayout or a linear_layout.encodings layout, got {type(layout).__name__}"
            )
        if shape is None:
            raise PlannerError(f"{what}: an encoding needs a shape")
        linear = layout.to_linear_layout(shape)
    extra = [n for n in linear.get_in_dim_names() if n not in in_dims]
    if extra:
        raise PlannerError(f"{what}: input dimensions {extra} are not among {list(in_dims)}")
    if tuple(linear.get_in_dim_names()) == tuple(in_dims):
        return linear
    bases = dict(linear.bases)
    return LinearLayout.from_bases(
        [(d, bases.get(d, ())) for d in in_dims],
        list(linear.get_out_dim_names()),
        [s for _, s in linear.out_dims],
        require_surjective=False,
    )


def flat_columns(layout: LinearLayout) -> dict[str, list[int]]:
    """Per input dimension, the flattened image (``dim0`` lowest) of each basis."""
    flat = layout.flatten_outs()
    return {name: [b[0] if b else 0 for b in bases] for name, bases in flat.bases}


def unflatten(vector: int, out_dims: Sequence[tuple[str, int]]) -> list[int]:
    """The coordinates of a flattened image ``vector`` (inverse of the flattening)."""
    coords = []
    for _, size in out_dims:
        coords.append(vector & (size - 1))
        vector >>= log2(size)
    return coords


@dataclass(frozen=True)
class SideColumns:
    """One side of a conversion: the flattened images of its register, lane and warp bases and
    its free-variable masks (:meth:`LinearLayout.get_free_variable_masks`)."""

    registers: tuple[int, ...]
    lanes: tuple[int, ...]
    warps: tuple[int, ...]
    free_register: int
    free_lane: int
    free_warp: int
    free_block: int

    def active_registers(self) -> list[int]:
        """Registers that are not broadcast copies of others."""
        return _active(self.registers, self.free_register)

    def active_threads(self) -> list[int]:
        """Lanes then warps that hold distinct data (free ones are broadcast copies)."""
        return _active(self.lanes, self.free_lane) + _active(self.warps, self.free_warp)


def side_columns(layout: LinearLayout) -> SideColumns:
    """The :class:`SideColumns` of a hardware layout."""
    columns = flat_columns(layout)
    free = layout.get_free_variable_masks()
    return SideColumns(
        tuple(columns["register"]),
        tuple(columns["lane"]),
        tuple(columns["warp"]),
        free["register"],
        free["lane"],
        free["warp"],
        free["block"],
    )


def _active(columns: Sequence[int], mask: int) -> list[int]:
    return [c for k, c in enumerate(columns) if not mask >> k & 1]
