r"""Text pictures of layouts, byte-identical to Triton's ``get_distributed_view`` / ``get_shared_view``.

A layout can be drawn from either end of the map.

*Tensor point of view* (``use_hw_point_of_view=False``): the tensor is printed as nested
brackets, numpy style, one innermost row per line; each element shows who holds it.

*Hardware point of view* (``use_hw_point_of_view=True``): the hardware slots are listed in order;
each shows the tensor coordinate it holds.

Distributed layouts
===================
Inputs ``register, lane, warp, block``. A holder is written ``T<thread>:<register>``, prefixed by
``B<block>:`` when there are several blocks; ``thread = lane + warp * lanes`` counts lanes across
the warps of one block. Several holders of one element (a broadcast) are joined by ``|``; an
element no one holds is left blank. Example, 2 registers and 2 lanes over a 2x2 tensor::

    register: (0, 1)      lane: (1, 0)      (warp, block: size 1)

    tensor view               hardware view
    [[T0:0, T0:1]             Warp0:
    [ T1:0, T1:1]]            (0,0), (1,0)      <- register 0 of lanes 0, 1
                              (0,1), (1,1)      <- register 1 of lanes 0, 1

Shared layouts
==============
Inputs ``offset, block``. The hardware view lists ``Offset: o -> (coords)`` under each
``Block: b:``. The tensor view is *not* the inverse map: Triton prints the same list of
coordinates, written ``(i:j)``, laid out in the tensor's shape in (block, offset) order -- cell
``n`` holds the coordinate that offset ``n`` (of the flattened blocks) stores. With
``offset: (1, 0), (0, 1)`` (offset 1 stores element (1, 0)) over a 2x2 tensor::

    tensor view               hardware view
    [[(0:0),(1:0)]            Block: 0:
    [ (0:1),(1:1)]]           Offset: 0 -> (0,0)
                              Offset: 1 -> (1,0)
                              Offset: 2 -> (0,1)
                              Offset: 3 -> (1,1)

Formatting details that Triton has and we reproduce: each coordinate is right-aligned to the
width of its dimension's *size* (not size - 1), and a holder label is left-padded by the digits it
lacks relative to the block count, the thread count and the register count, so columns line up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from .hardware import HW_DIMS, SHARED_DIMS
from .limits import MAX_PICTURE, check_materialised

__all__ = ["distributed_view", "shared_view"]


class ViewableLayout(Protocol):
    """What a view reads from a layout (:class:`~linear_layout.core.layout.LinearLayout` has it).

    The views depend on this protocol, not on the layout module, so that ``layout`` can import
    ``views`` at the top level without an import cycle."""

    @property
    def out_dims(self) -> tuple[tuple[str, int], ...]: ...

    @property
    def num_out_dims(self) -> int: ...

    def get_in_dim_names(self) -> tuple[str, ...]: ...

    def get_in_dim_size(self, name: str) -> int: ...

    def get_total_out_dim_size(self) -> int: ...

    def get_total_in_dim_size(self) -> int: ...

    def transpose_ins(self, new_order: Sequence[str]) -> Any: ...

    def apply(self, ins: Mapping[str, Any]) -> dict[str, Any]: ...


_VIEW_METHODS = (
    "out_dims",
    "num_out_dims",
    "get_in_dim_names",
    "get_in_dim_size",
    "get_total_out_dim_size",
    "get_total_in_dim_size",
    "transpose_ins",
    "apply",
)


def distributed_view(layout: ViewableLayout, use_hw_point_of_view: bool) -> str:
    """Triton's ``getDistributedLayoutStr``: who holds each element, or what each thread holds.

    Requires: the input dimensions are exactly ``register, lane, warp, block`` (any order) and
    there is at least one output dimension. Otherwise raises ValueError (Triton aborts).
    """
    _check_dims(layout, HW_DIMS, "distributed")
    _check_view_size(layout, "a distributed view")
    num_registers, num_lanes, num_warps, num_blocks = (layout.get_in_dim_size(name) for name in HW_DIMS)
    shape = [size for _, size in layout.out_dims]
    # Row n of the table is the input with register fastest, then lane, warp, block: the order
    # in which Triton visits the hardware, which fixes the order of holders within a cell.
    coords = layout.transpose_ins(HW_DIMS).tabulate()

    if use_hw_point_of_view:
        points = [_coordinate_text(row, shape, ",") for row in coords.tolist()]
        lines = []
        row = 0
        for block in range(num_blocks):
            if num_blocks > 1:
                lines.append(f"Block{block}:\n")
            for warp in range(num_warps):
                lines.append(f"Warp{warp}:\n")
                # One line per register, lanes across: point (lane, register) sits at row
                # register + lane * num_registers within this warp.
                warp_points = points[row : row + num_lanes * num_registers]
                for register in range(num_registers):
                    lines.append(", ".join(warp_points[register::num_registers]) + "\n")
                row += num_lanes * num_registers
        return "".join(lines)

    num_threads = num_warps * num_lanes
    block_prefix = [f"B{b}:" if num_blocks > 1 else "" for b in range(num_blocks)]
    holders: list[list[str]] = [[] for _ in range(layout.get_total_out_dim_size())]
    for row, flat in enumerate(_row_major_index(coords, shape).tolist()):
        register = row % num_registers
        thread = row // num_registers % num_threads
        block = row // (num_registers * num_threads)
        # Triton pads the whole label by the digits each part lacks, then writes it unpadded.
        padding = (
            _missing_digits(block, num_blocks)
            + _missing_digits(thread, num_threads)
            + _missing_digits(register, num_registers)
        )
        holders[flat].append(f"{' ' * padding}{block_prefix[block]}T{thread}:{register}")
    return _tensor_picture(["|".join(h) for h in holders], shape, ", ")


def shared_view(layout: ViewableLayout, use_hw_point_of_view: bool) -> str:
    """Triton's ``getSharedLayoutStr``: the coordinate stored at each (block, offset).

    Each block is given ``tensor size / block count`` offsets (none if there are more blocks
    than elements); offsets past the ``offset`` dimension wrap, since the layout ignores
    input bits above a dimension's size.

    Requires: the input dimensions are exactly ``offset, block`` (any order) and there is at
    least one output dimension. Otherwise raises ValueError (Triton aborts).
    """
    _check_dims(layout, SHARED_DIMS, "shared")
    _check_view_size(layout, "a shared view")
    shape = [size for _, size in layout.out_dims]
    tensor_size = layout.get_total_out_dim_size()
    num_blocks = layout.get_in_dim_size("block")
    offsets_per_block = tensor_size // num_blocks
    # Apply only at the enumerated points: the offset dimension may be far larger than needed.
    # Offsets past the ``offset`` dimension wrap (Triton masks them in ``apply``; ours refuses them).
    offset = np.tile(np.arange(offsets_per_block, dtype=np.int64), num_blocks) & (layout.get_in_dim_size("offset") - 1)
    block = np.repeat(np.arange(num_blocks, dtype=np.int64), offsets_per_block)
    outputs = layout.apply({"offset": offset, "block": block})
    coords = np.stack([outputs[name] for name, _ in layout.out_dims], axis=1).tolist()

    if use_hw_point_of_view:
        lines = []
        for b in range(num_blocks):
            lines.append(f"Block: {b}:\n")
            for o in range(offsets_per_block):
                point = _coordinate_text(coords[b * offsets_per_block + o], shape, ",")
                lines.append(f"Offset: {o} -> {point}\n")
        return "".join(lines)

    cells = [_coordinate_text(row, shape, ":") for row in coords]
    cells += [""] * (tensor_size - len(cells))
    return _tensor_picture(cells, shape, ",")


def _check_view_size(layout: ViewableLayout, what: str) -> None:
    """A text view lists every element and every hardware point: at most ``MAX_PICTURE`` of each
    (a :class:`~linear_layout.core.limits.LimitError`, a ValueError, before anything is built)."""
    count = max(layout.get_total_in_dim_size(), layout.get_total_out_dim_size())
    check_materialised(count, what, MAX_PICTURE)


def _check_dims(layout: ViewableLayout, in_dims: Sequence[str], kind: str) -> None:
    if not all(hasattr(layout, name) for name in _VIEW_METHODS):
        raise ValueError(f"expected a LinearLayout, got {type(layout).__name__}")
    names = layout.get_in_dim_names()
    if sorted(names) != sorted(in_dims):
        raise ValueError(
            f"a {kind} view needs exactly the input dimensions [{', '.join(in_dims)}], "
            f"but the layout has [{', '.join(names)}]"
        )
    if not layout.num_out_dims:
        raise ValueError(f"a {kind} view needs at least one output dimension")


def _missing_digits(value: int, limit: int) -> int:
    """How many digits ``value`` has fewer than ``limit``."""
    return len(str(limit)) - len(str(value))


def _coordinate_text(point: Sequence[int], shape: Sequence[int], separator: str) -> str:
    """``(i,j)``: each coordinate right-aligned to the width of its dimension's size."""
    return "(" + separator.join(str(c).rjust(len(str(size))) for c, size in zip(point, shape)) + ")"


def _row_major_index(coords: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Flat index of each row of ``coords`` in a row-major tensor of ``shape``."""
    flat = np.zeros(len(coords), dtype=np.int64)
    for k, size in enumerate(shape):
        flat = flat * size + coords[:, k]
    return flat


def _tensor_picture(cells: Sequence[str], shape: Sequence[int], separator: str) -> str:
    """Print ``cells`` (row-major) as a nested-bracket tensor of ``shape``, one innermost row a line.

    A row opens one bracket per trailing index that is zero at its start, and closes one per
    trailing index that wraps to zero after its end. The brackets come first, then one space
    per bracket not opened, so the cells of all rows start in the same column.
    """
    rank = len(shape)
    row_length = shape[-1]

    def trailing_zero_indices(flat: int) -> int:
        count = 0
        for size in reversed(shape):
            if flat % size:
                break
            flat //= size
            count += 1
        return count

    lines = []
    for start in range(0, len(cells), row_length):
        opened = trailing_zero_indices(start)
        closed = trailing_zero_indices(start + row_length)
        row = separator.join(cells[start : start + row_length])
        lines.append("[" * opened + " " * (rank - opened) + row + "]" * closed + "\n")
    return "".join(lines)
