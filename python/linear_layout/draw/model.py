"""The data of a picture: panels of cells, independent of the output format.

A :class:`Panel` is a grid of ``rows x cols`` cells stored row-major. Every cell has a fill
colour, a short label (drawn inside the cell when it fits), a short key (the terminal's text for
the cell), a tooltip (the SVG ``<title>``, whose format scripts may rely on: see
:mod:`linear_layout.draw`), a highlight mark (0: none, ``k``: outline colour ``k``) and a
duplicate count (``> 1``: a broadcast element held by that many owners). Cells may be wider than
one unit (``cell_units``): a 16-bit element of a shared-memory row is half a bank wide.

Panels and pictures are immutable; every renderer (SVG, terminal, PNG) reads the same panels.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["LegendEntry", "Panel", "wrap_notes"]


def wrap_notes(notes: Iterable[str], width: int) -> list[str]:
    """Notes in lines of at most ``width`` characters (``width`` >= 12): a note keeps its own
    indentation, and its continuation lines are indented four more.

    >>> wrap_notes(["  phase 1: lanes 0-7, 2 wavefront(s)"], 20)
    ['  phase 1: lanes', '      0-7, 2', '      wavefront(s)']
    """
    lines: list[str] = []
    for note in notes:
        indent = note[: len(note) - len(note.lstrip())]
        lines += textwrap.wrap(
            note.strip(), width, initial_indent=indent, subsequent_indent=indent + "    ", break_on_hyphens=False
        ) or [""]
    return lines


@dataclass(frozen=True)
class LegendEntry:
    """One colour of the legend: ``colour`` (``0xRRGGBB``), ``key`` (the cells' text), ``text``."""

    colour: int
    key: str
    text: str


@dataclass(frozen=True)
class Panel:
    """One grid of cells (row-major tuples of length ``rows * cols``).

    ``row_names``: one label per row (left margin); ``col_names``: a header per column, or
    empty; ``notes``: lines printed under the panel; ``cell_units``: the width of a cell in
    units of the picture's cell width (a float: 0.5 for a 16-bit element of a bank row).
    """

    title: str
    rows: int
    cols: int
    fills: tuple[int, ...]
    labels: tuple[str, ...]
    keys: tuple[str, ...]
    titles: tuple[str, ...]
    marks: tuple[int, ...]
    duplicates: tuple[int, ...]
    row_names: tuple[str, ...]
    col_names: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    cell_units: float = 1.0

    def __post_init__(self) -> None:
        cells = self.rows * self.cols
        for name in ("fills", "labels", "keys", "titles", "marks", "duplicates"):
            if len(getattr(self, name)) != cells:
                raise ValueError(
                    f"panel {self.title!r}: {name} has {len(getattr(self, name))} entries, "
                    f"expected {self.rows} x {self.cols}"
                )
        if len(self.row_names) != self.rows:
            raise ValueError(f"panel {self.title!r}: {len(self.row_names)} row names for {self.rows} rows")
        if self.col_names and len(self.col_names) != self.cols:
            raise ValueError(f"panel {self.title!r}: {len(self.col_names)} column names for {self.cols} columns")

    def cell(self, row: int, col: int) -> int:
        """The index of cell ``(row, col)`` in the row-major tuples."""
        return row * self.cols + col
