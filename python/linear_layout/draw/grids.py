"""How a tensor of rank 1-3 becomes 2-D grids of cells, and how big grids become tiles.

* rank 1: rows of ``min(n, 32)`` consecutive elements (row ``r`` starts at element ``32 r``);
* rank 2: one grid, ``dim0`` down and ``dim1`` across;
* rank 3: small multiples, one ``dim1 x dim2`` grid per index of ``dim0``.

**Tiling rule.** A grid with more than :data:`MAX_CELLS` (128) cells along an axis is drawn in
tiles. By default (this module) they are square, ``t x t`` elements, ``t`` the smallest power of
two that brings both axes to at most 128 cells (a 512 x 512 tensor: 4 x 4 tiles, 128 x 128
cells); :func:`tile_shapes` lists every other tile shape that fits, smallest first, and a
distributed picture picks the first one that follows its layout's structure
(:mod:`linear_layout.draw.layout`). A tile is coloured like its first (top-left) element; its
tooltip reads
``tile (i0, j0)..(i1, j1): <first element's tooltip>; <k> <color_by> value(s)``, where ``k`` is
the number of distinct values of the colour key among the tile's elements (1: the tile is
uniform).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_CELLS",
    "PAGE_LIMITS",
    "RANK1_ROW",
    "Grid",
    "Limits",
    "coordinate_texts",
    "retile",
    "tensor_grids",
    "tile_shapes",
]

#: Cells along one axis of a grid before the grid is drawn in tiles.
MAX_CELLS = 128
#: Elements per row when a rank-1 tensor is drawn.
RANK1_ROW = 32


@dataclass(frozen=True)
class Limits:
    """How big a picture may grow: ``cells`` along an axis of a tensor grid before it is drawn in
    tiles, and ``shared_rows`` bank rows of a shared-memory image before it is cut (a note says
    so), fewer when the rows would hold more than ``shared_cells`` elements (at least one row)."""

    cells: int = MAX_CELLS
    shared_rows: int = 256
    shared_cells: int = 1 << 20


#: The limits of a picture on its own.
DEFAULT_LIMITS = Limits()
#: Lighter pictures for a page that holds many (the report's HTML page): 32 cells along an axis,
#: 16 bank rows of at most 512 elements in all.
PAGE_LIMITS = Limits(cells=32, shared_rows=16, shared_cells=512)


@dataclass(frozen=True)
class Grid:
    """One grid over ``block``, the row-major flat indices of its elements (``block[r, c]`` is
    the element in row ``r``, column ``c``), drawn in tiles of ``tile = (rows, cols)`` elements
    (``(1, 1)``: one cell per element). ``row_names`` label the cell rows by their first row."""

    title: str
    block: np.ndarray
    tile: tuple[int, int]
    row_names: tuple[str, ...]

    @property
    def rows(self) -> int:
        return int(self.block.shape[0]) // self.tile[0]

    @property
    def cols(self) -> int:
        return int(self.block.shape[1]) // self.tile[1]

    @property
    def elements(self) -> np.ndarray:
        """``(rows, cols)``: the flat index of each cell's (first) element."""
        return self.block[:: self.tile[0], :: self.tile[1]]

    def members(self) -> np.ndarray:
        """``(rows * cols, tile elements)``: the flat indices of every element of every cell."""
        tr, tc = self.tile
        return (
            self.block.reshape(self.rows, tr, self.cols, tc)
            .transpose(0, 2, 1, 3)
            .reshape(self.rows * self.cols, tr * tc)
        )


def _tile_factor(rows: int, cols: int, max_cells: int) -> int:
    factor = 1
    while rows // factor > max_cells or cols // factor > max_cells:
        factor *= 2
    return factor


def _grid(title: str, block: np.ndarray, first_coords: Sequence[str], max_cells: int) -> Grid:
    """A grid over the row-major ``block`` of flat indices, tiled when too big."""
    rows, cols = block.shape
    factor = _tile_factor(rows, cols, max_cells)
    tile = (min(factor, rows), min(factor, cols))
    names = tuple(first_coords[r] for r in range(0, rows, tile[0]))
    return Grid(title, block, tile, names)


def tile_shapes(grid: Grid, max_cells: int) -> tuple[tuple[int, int], ...]:
    """Every tile shape ``(rows, cols)`` (powers of two dividing the grid) that brings both axes
    of ``grid`` to at most ``max_cells`` cells, by increasing area, then squarest first.

    >>> grid = tensor_grids((8, 8), Limits(cells=4))[0]
    >>> tile_shapes(grid, 4)[:3]
    ((2, 2), (4, 2), (2, 4))
    """
    rows, cols = grid.block.shape
    shapes = [
        (1 << a, 1 << b)
        for a in range(rows.bit_length())
        for b in range(cols.bit_length())
        if (1 << a) <= rows and (1 << b) <= cols and rows >> a <= max_cells and cols >> b <= max_cells
    ]
    return tuple(sorted(shapes, key=lambda t: (t[0] * t[1], abs(t[0].bit_length() - t[1].bit_length()), -t[0])))


def retile(grid: Grid, tile: tuple[int, int], shape: Sequence[int]) -> Grid:
    """``grid`` drawn in tiles of ``tile`` elements (row names: each tile row's first row)."""
    first_column = grid.block[:: tile[0], 0]
    if len(shape) == 1:
        names = tuple(str(int(e)) for e in first_column.tolist())
    else:
        names = tuple(str(int(i)) for i in np.unravel_index(first_column, tuple(shape))[-2].tolist())
    return Grid(grid.title, grid.block, tile, names)


def tensor_grids(shape: Sequence[int], limits: Limits = DEFAULT_LIMITS) -> tuple[Grid, ...]:
    """The grids that draw a tensor of ``shape`` (rank 1-3), see the module docstring
    (``limits.cells`` replaces the 128 of the tiling rule)."""
    cells = limits.cells
    shape = tuple(int(s) for s in shape)
    total = int(np.prod(shape)) if shape else 1
    flat = np.arange(total, dtype=np.int64)
    if len(shape) == 1:
        cols = min(shape[0], RANK1_ROW)
        block = flat.reshape(-1, cols)
        return (_grid("", block, [str(r * cols) for r in range(block.shape[0])], cells),)
    if len(shape) == 2:
        return (_grid("", flat.reshape(shape), [str(r) for r in range(shape[0])], cells),)
    if len(shape) == 3:
        per = shape[1] * shape[2]
        return tuple(
            _grid(
                f"dim0 = {k}",
                flat[k * per : (k + 1) * per].reshape(shape[1], shape[2]),
                [str(r) for r in range(shape[1])],
                cells,
            )
            for k in range(shape[0])
        )
    raise ValueError(f"pictures draw tensors of rank 1 to 3, got rank {len(shape)} (shape {list(shape)})")


def coordinate_texts(shape: Sequence[int], flat: np.ndarray) -> list[str]:
    """``"(i, j)"`` (``"(i)"`` for rank 1) of each row-major flat index in ``flat``."""
    coords = np.unravel_index(np.asarray(flat, dtype=np.int64), tuple(shape))
    columns = [c.tolist() for c in coords]
    if len(columns) == 1:
        return [f"({i})" for i in columns[0]]
    if len(columns) == 2:
        return [f"({i}, {j})" for i, j in zip(*columns)]
    return ["(" + ", ".join(map(str, point)) + ")" for point in zip(*columns)]
