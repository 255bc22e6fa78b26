"""``draw_layout``: which thread and register own each tensor element.

Each element is a cell labelled ``T<thread>:<register>`` (``B<block>:`` in front with several
blocks), coloured by one hardware index (``color_by``), with the tooltip
``(i, j) T<thread> r<register> lane <l> warp <w>`` listing every owner, joined by ``; ``, for a
broadcast element (whose cell also carries a corner mark and the label of its first owner).
An element no one holds is white with the tooltip ``(i, j) none``.

**Tiles that keep the layout's structure.** A grid too big to draw cell by cell
(:mod:`linear_layout.draw.grids`) is drawn in the smallest tiles that fit and that each hold
exactly one range of threads times one range of registers (every pair once, one block): one MMA
quad, one thread's vector, one warp's rows -- whatever the layout's own bases make of it. Such a
tile is labelled ``T<t0>-<t1>:<r0>-<r1>`` (a single value written once), so no lane is hidden.
When no tile shape has that structure, the square tiles of the default rule are drawn, labelled
like their first element, and the panel title says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .grids import DEFAULT_LIMITS, Grid, Limits, coordinate_texts, retile, tensor_grids, tile_shapes
from .model import LegendEntry, Panel
from .owners import COLOR_BY, Ownership, as_layout, owner_texts, ownership, thread_elements
from .palette import EMPTY, HIGHLIGHT, index_colour
from .picture import Picture

__all__ = [
    "ElementCells",
    "TileOwners",
    "draw_layout",
    "element_cells",
    "highlight_marks",
    "layout_panels",
    "structural_grid",
]

#: Legend entries listed before the rest are summarised in one line.
MAX_LEGEND = 64


@dataclass(frozen=True)
class ElementCells:
    """Per element (row-major): tooltip and label (empty for an element no cell shows), colour key
    value (-1: unowned) and owner count."""

    titles: tuple[str, ...]
    labels: tuple[str, ...]
    key_values: np.ndarray
    counts: np.ndarray


def _labels(owned: Ownership, first: np.ndarray) -> list[str]:
    parts = owned.split(np.maximum(first, 0))
    prefix = owned.sizes[3] > 1
    return [
        "" if f < 0 else (f"B{b}:" if prefix else "") + f"T{t}:{r}"
        for f, t, r, b in zip(
            first.tolist(), parts["thread"].tolist(), parts["register"].tolist(), parts["block"].tolist()
        )
    ]


def _titles(owned: Ownership, shown: np.ndarray) -> list[str]:
    """The tooltips of the elements ``shown`` (in that order)."""
    texts = owner_texts(owned)
    order = owned.order.tolist()
    coords = coordinate_texts(owned.shape, shown)
    starts, counts = owned.starts[shown].tolist(), owned.counts[shown].tolist()
    titles = []
    for coord, start, count in zip(coords, starts, counts):
        if count == 1:
            titles.append(f"{coord} {texts[order[start]]}")
        elif count == 0:
            titles.append(f"{coord} none")
        else:
            titles.append(coord + " " + "; ".join(texts[h] for h in order[start : start + count]))
    return titles


def _spread(total: int, shown: np.ndarray, values: list[str]) -> tuple[str, ...]:
    if shown.size == total:
        return tuple(values)
    full = [""] * total
    for element, value in zip(shown.tolist(), values):
        full[element] = value
    return tuple(full)


def element_cells(owned: Ownership, color_by: str, shown: np.ndarray | None = None) -> ElementCells:
    """The cell contents of the elements of ``owned``: keys and counts of all, tooltips and labels
    of those ``shown`` (default: all; a tiled picture shows only each tile's first element)."""
    if color_by not in COLOR_BY:
        raise ValueError(f"unknown color_by {color_by!r}; expected one of {', '.join(COLOR_BY)}")
    first = owned.first
    total = first.size
    shown = np.arange(total, dtype=np.int64) if shown is None else np.asarray(shown, dtype=np.int64)
    keys = owned.split(np.maximum(first, 0))[color_by]
    keys = np.where(first < 0, -1, keys)
    titles = _spread(total, shown, _titles(owned, shown))
    labels = _spread(total, shown, _labels(owned, first[shown]))
    return ElementCells(titles, labels, keys, owned.counts.copy())


@dataclass(frozen=True)
class TileOwners:
    """Per tile of a structural tiling: the thread and register ranges (inclusive) it holds."""

    threads: tuple[np.ndarray, np.ndarray]
    registers: tuple[np.ndarray, np.ndarray]

    def labels(self, blocks: np.ndarray | None) -> list[str]:
        """``T<t0>-<t1>:<r0>-<r1>`` per tile (``B<b>:`` in front when ``blocks`` is given)."""

        def span(low: int, high: int) -> str:
            return str(low) if low == high else f"{low}-{high}"

        out = []
        for k, (t0, t1, r0, r1) in enumerate(zip(*(a.tolist() for a in (*self.threads, *self.registers)))):
            prefix = "" if blocks is None else f"B{int(blocks[k])}:"
            out.append(f"{prefix}T{span(t0, t1)}:{span(r0, r1)}")
        return out


def _tile_owners(owned: Ownership, members: np.ndarray) -> TileOwners | None:
    """The ranges of each tile (rows of ``members``), or None unless every tile holds exactly one
    range of threads times one range of registers, each pair once, in one block."""
    first = owned.first[members]
    if (first < 0).any():
        return None
    parts = owned.split(first)
    thread, register, block = parts["thread"], parts["register"], parts["block"]
    if (block != block[:, :1]).any():
        return None
    low_t, high_t = thread.min(axis=1), thread.max(axis=1)
    low_r, high_r = register.min(axis=1), register.max(axis=1)
    if ((high_t - low_t + 1) * (high_r - low_r + 1) != members.shape[1]).any():
        return None
    codes = np.sort(thread * owned.sizes[0] + register, axis=1)
    if (np.diff(codes, axis=1) == 0).any():
        return None
    return TileOwners((low_t, high_t), (low_r, high_r))


def structural_grid(grid: Grid, owned: Ownership, max_cells: int) -> tuple[Grid, TileOwners | None]:
    """``grid`` in the smallest tiles that follow the layout's structure (see the module
    docstring), or unchanged (with None) when it needs no tiles or no tile shape has it."""
    if grid.tile == (1, 1):
        return grid, None
    for tile in tile_shapes(grid, max_cells):
        candidate = retile(grid, tile, owned.shape)
        tiles = _tile_owners(owned, candidate.members())
        if tiles is not None:
            return candidate, tiles
    return grid, None


def _tile_title(grid: Grid, cells: ElementCells, members: np.ndarray, shape: Sequence[int], color_by: str) -> list[str]:
    firsts = coordinate_texts(shape, members[:, 0])
    lasts = coordinate_texts(shape, members[:, -1])
    distinct = [len(set(row)) for row in cells.key_values[members].tolist()]
    return [
        f"tile {a}..{b}: {cells.titles[int(m)]}; {k} {color_by} value{'s' if k != 1 else ''}"
        for a, b, m, k in zip(firsts, lasts, members[:, 0].tolist(), distinct)
    ]


def _panel(
    grid: Grid,
    cells: ElementCells,
    owned: Ownership,
    color_by: str,
    marks: np.ndarray | None,
    tiles: TileOwners | None = None,
) -> Panel:
    shape = owned.shape
    index = grid.elements.reshape(-1)
    keys = cells.key_values[index].tolist()
    if grid.tile == (1, 1):
        titles = [cells.titles[i] for i in index.tolist()]
        cell_marks = [0] * index.size if marks is None else marks[index].tolist()
    else:
        members = grid.members()
        titles = _tile_title(grid, cells, members, shape, color_by)
        cell_marks = [0] * index.size if marks is None else marks[members].max(axis=1).tolist()
    labels = [cells.labels[i] for i in index.tolist()]
    title = grid.title
    if tiles is not None:
        blocks = owned.split(owned.first[index])["block"] if owned.sizes[3] > 1 else None
        labels = tiles.labels(blocks)
        title += f" ({grid.tile[0]}x{grid.tile[1]} tiles: one thread range x one register range each)"
    elif grid.tile != (1, 1):
        title += f" ({grid.tile[0]}x{grid.tile[1]} tiles, labelled by their first element)"
    return Panel(
        title=title.strip(),
        rows=grid.rows,
        cols=grid.cols,
        fills=tuple(EMPTY if k < 0 else index_colour(k) for k in keys),
        labels=tuple(labels),
        keys=tuple("." if k < 0 else str(k) for k in keys),
        titles=tuple(titles),
        marks=tuple(int(m) for m in cell_marks),
        duplicates=tuple(cells.counts[index].tolist()),
        row_names=grid.row_names,
    )


def legend_for(key_values: np.ndarray, color_by: str) -> tuple[tuple[LegendEntry, ...], tuple[str, ...]]:
    """Legend entries for the colour keys present, and a note when they are too many to list."""
    present = sorted(set(key_values.tolist()) - {-1})
    entries = tuple(LegendEntry(index_colour(k), str(k), f"{color_by} {k}") for k in present[:MAX_LEGEND])
    notes = (f"... and {len(present) - MAX_LEGEND} more {color_by} colours",) if len(present) > MAX_LEGEND else ()
    return entries, notes


def layout_panels(
    owned: Ownership,
    color_by: str,
    title: str = "",
    marks: np.ndarray | None = None,
    notes: tuple[str, ...] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[tuple[Panel, ...], ElementCells]:
    """The panels of a distributed layout (one per grid), ``marks`` per element (optional);
    ``title`` names the first panel, ``notes`` go under the last."""
    tiled = [structural_grid(grid, owned, limits.cells) for grid in tensor_grids(owned.shape, limits)]
    shown = np.unique(np.concatenate([grid.elements.reshape(-1) for grid, _ in tiled]))
    cells = element_cells(owned, color_by, shown)
    panels = [_panel(grid, cells, owned, color_by, marks, tiles) for grid, tiles in tiled]
    if title:
        first = panels[0]
        panels[0] = Panel(**{**first.__dict__, "title": f"{title} {first.title}".strip()})
    if notes:
        last = panels[-1]
        panels[-1] = Panel(**{**last.__dict__, "notes": last.notes + notes})
    return tuple(panels), cells


def highlight_marks(
    owned: Ownership, thread: int | None, marks: np.ndarray | None = None
) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """``marks`` (per element) with thread ``thread``'s elements marked :data:`HIGHLIGHT`, and the
    note that says so (``thread=None``: unchanged, no note)."""
    if thread is None:
        return marks, ()
    held = thread_elements(owned, thread)
    out = np.zeros(owned.counts.size, dtype=np.int64) if marks is None else marks.copy()
    out[held] = HIGHLIGHT
    return out, (f"thread {thread} outlined in black: {held.size} element(s)",)


def draw_layout(
    layout_or_encoding: Any,
    shape: Sequence[int] | None = None,
    *,
    color_by: str = "warp",
    limits: Limits = DEFAULT_LIMITS,
    highlight: int | None = None,
) -> Picture:
    """The tensor view of a distributed layout as a :class:`Picture`.

    ``layout_or_encoding``: a LinearLayout with input dims among ``register, lane, warp, block``,
    an encoding (``BlockedLayout(...)``, ...) or its text (``'#ttg.blocked<{...}>'``); ``shape``
    is required for encodings unless the encoding's CTA tile is wanted
    (:func:`~linear_layout.draw.owners.natural_shape`). Rank 1-3 (rank 3 as one grid per index
    of ``dim0``). Cells are coloured by ``color_by`` (warp, lane, thread, register or block);
    ``limits`` bounds the size (:mod:`linear_layout.draw.grids`); ``highlight``: a thread
    (``lane + warp * lanes``) whose elements are outlined in black.

    >>> from linear_layout import LinearLayout
    >>> L = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0]])], ["dim0", "dim1"])
    >>> picture = draw_layout(L, color_by="lane")
    >>> picture.panels[0].titles
    ('(0, 0) T0 r0 lane 0 warp 0', '(0, 1) T0 r1 lane 0 warp 0', '(1, 0) T1 r0 lane 1 warp 0', '(1, 1) T1 r1 lane 1 warp 0')
    """
    layout, name = as_layout(layout_or_encoding, shape)
    owned = ownership(layout)
    marks, highlighted = highlight_marks(owned, highlight)
    panels, cells = layout_panels(owned, color_by, marks=marks, limits=limits)
    legend, notes = legend_for(cells.key_values, color_by)
    duplicates = int((cells.counts > 1).sum())
    unowned = int((cells.counts == 0).sum())
    extra = []
    if duplicates:
        extra.append(f"{duplicates} element(s) held by several threads (broadcast; corner mark, owners in the tooltip)")
    if unowned:
        extra.append(f"{unowned} element(s) held by no thread (white)")
    return Picture(
        title=f"{name} on {'x'.join(map(str, owned.shape))}, coloured by {color_by}",
        panels=panels,
        legend=legend,
        notes=notes + tuple(extra) + highlighted,
    )
