"""Where everything of a picture lies, in pixels: one layout step shared by every raster and
vector output (SVG, PNG, TikZ), so they agree to the pixel.

**Labels are never dropped silently.** A panel's cell is widened (all cells of the panel alike,
so a shared-memory row keeps its bank proportions) until its longest label fits:

    cell width = max(CELL_WIDTH * cell_units, longest label * LABEL_CHAR_WIDTH + LABEL_PAD)

up to :data:`MAX_CELL_WIDTH`. A panel whose labels would need wider cells draws no labels and
says so in a visible note under it (:data:`TOOLTIP_ONLY`): every cell's owner is then in its
tooltip. So every non-empty label is either drawn whole in its cell, or the panel states that
labels are in the tooltips.

The legend wraps to the picture's width, and the picture is at least as wide as its widest
legend item; notes wrap at ``max(picture width, NOTE_COLUMNS characters)``.

>>> from .model import Panel
>>> p = Panel("t", 1, 1, (0,), ("T100:10",), ("0",), ("(0, 0) T100 r10",), (0,), (1,), ("0",))
>>> placed = place_picture("x", (p,), (), (), 1).panels[0]
>>> placed.labels_shown, placed.geometry.cell_width >= len("T100:10") * LABEL_CHAR_WIDTH
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from .model import LegendEntry, Panel, wrap_notes

__all__ = [
    "CELL_HEIGHT",
    "CELL_WIDTH",
    "CHAR_WIDTH",
    "FONT",
    "LABEL_CHAR_WIDTH",
    "LABEL_FONT",
    "TOOLTIP_ONLY",
    "cell_origins",
    "Geometry",
    "Placement",
    "PlacedPanel",
    "Swatch",
    "Text",
    "panel_geometry",
    "place_picture",
]

#: Pixel size of one cell unit.
CELL_WIDTH = 40
CELL_HEIGHT = 16
FONT = 9
LABEL_FONT = 8
CHAR_WIDTH = 5.6  # advance of a 9px monospace glyph (DejaVu Sans Mono: 0.602 em), with a margin
#: Advance of an 8px label glyph (0.602 em, with a margin) and the room left around a label.
LABEL_CHAR_WIDTH = 4.9
LABEL_PAD = 3
#: The widest a cell grows to fit its label (16 characters: a tile's `T992-1023:96-127`); wider
#: labels go to the tooltips.
MAX_CELL_WIDTH = 84
MARGIN = 12
TITLE_HEIGHT = 18
NOTE_HEIGHT = 14
HEADER_HEIGHT = 12
TITLE_CHAR_WIDTH = 7.4  # 12px bold monospace
#: Notes wrap at the picture's width, but never narrower than this many characters.
NOTE_COLUMNS = 100
#: The note under a panel whose labels do not fit even the widest cell.
TOOLTIP_ONLY = "cell labels are too long for the cells: each cell's owner is in its tooltip"


@dataclass(frozen=True)
class Geometry:
    """Where a panel's grid lies: its top-left corner, cell size and the panel's outer size."""

    grid_x: float
    grid_y: float
    cell_width: float
    cell_height: float
    width: float
    height: float


@dataclass(frozen=True)
class Text:
    """One line of text at ``(x, y)`` (baseline), anchored ``start``, ``middle`` or ``end``;
    ``role`` is its SVG class (``note``, ``panel-title``, ...) or empty."""

    x: float
    y: float
    text: str
    anchor: str = "start"
    size: float = FONT
    bold: bool = False
    role: str = ""


@dataclass(frozen=True)
class Swatch:
    """A legend colour square (12 px) with its top-left corner at ``(x, y)``."""

    x: float
    y: float
    colour: int


@dataclass(frozen=True)
class PlacedPanel:
    """A panel, where its grid lies, whether its cell labels are drawn, and its texts (title,
    row and column names, notes)."""

    panel: Panel
    geometry: Geometry
    labels_shown: bool
    texts: tuple[Text, ...]


@dataclass(frozen=True)
class Placement:
    """The whole picture laid out: ``width x height`` pixels, the placed panels, and the texts and
    swatches outside the panels (title, legend, notes)."""

    width: int
    height: int
    panels: tuple[PlacedPanel, ...]
    texts: tuple[Text, ...]
    swatches: tuple[Swatch, ...]


def cell_origins(placed: PlacedPanel) -> Iterator[tuple[int, float, float]]:
    """``(index, x, y)``: each cell of a placed panel (row-major) and its slot's top-left corner."""
    panel, geo = placed.panel, placed.geometry
    for index in range(panel.rows * panel.cols):
        row, col = divmod(index, panel.cols)
        yield index, geo.grid_x + col * geo.cell_width, geo.grid_y + row * geo.cell_height


def _label_width(panel: Panel) -> float:
    longest = max((len(label) for label in panel.labels), default=0)
    return longest * LABEL_CHAR_WIDTH + LABEL_PAD if longest else 0.0


def _cell_width(panel: Panel) -> tuple[float, bool]:
    """The panel's cell width and whether its labels are drawn (see the module docstring)."""
    base = CELL_WIDTH * panel.cell_units
    needed = _label_width(panel)
    if needed <= base:
        return base, True
    if needed <= MAX_CELL_WIDTH:
        return math.ceil(needed), True
    return base, False


def panel_geometry(panel: Panel, x: float, y: float) -> Geometry:
    """The geometry of ``panel`` drawn with its top-left corner at ``(x, y)``."""
    return _panel_layout(panel, x, y)[0]


def _panel_notes(panel: Panel, labels_shown: bool) -> tuple[str, ...]:
    return panel.notes + (() if labels_shown or not any(panel.labels) else (TOOLTIP_ONLY,))


def _panel_layout(panel: Panel, x: float, y: float) -> tuple[Geometry, bool, tuple[str, ...]]:
    cell_width, labels_shown = _cell_width(panel)
    notes = _panel_notes(panel, labels_shown)
    name_width = math.ceil(max((len(n) for n in panel.row_names), default=0) * CHAR_WIDTH) + 6
    header = HEADER_HEIGHT if panel.col_names else 0
    grid_x = x + name_width
    grid_y = y + TITLE_HEIGHT + header
    width = name_width + panel.cols * cell_width
    width = max(width, len(panel.title) * CHAR_WIDTH, max((len(n) * CHAR_WIDTH for n in notes), default=0))
    height = TITLE_HEIGHT + header + panel.rows * CELL_HEIGHT + len(notes) * NOTE_HEIGHT + 4
    return Geometry(grid_x, grid_y, cell_width, CELL_HEIGHT, width, height), labels_shown, notes


def _fits(label: str, cell_width: float) -> bool:
    return bool(label) and len(label) * CHAR_WIDTH <= cell_width - 2


def _place_panel(panel: Panel, x: float, y: float) -> PlacedPanel:
    geo, labels_shown, notes = _panel_layout(panel, x, y)
    texts = [Text(x, y + 12, panel.title, bold=True, role="panel-title")] if panel.title else []
    texts += [
        Text(geo.grid_x - 4, geo.grid_y + row * geo.cell_height + geo.cell_height - 4.5, name, anchor="end")
        for row, name in enumerate(panel.row_names)
    ]
    texts += [
        Text(geo.grid_x + (col + 0.5) * geo.cell_width, geo.grid_y - 3, name, anchor="middle")
        for col, name in enumerate(panel.col_names)
        if _fits(name, geo.cell_width + 2)
    ]
    note_y = geo.grid_y + panel.rows * geo.cell_height + NOTE_HEIGHT
    texts += [Text(x, note_y + k * NOTE_HEIGHT, note, role="note") for k, note in enumerate(notes)]
    return PlacedPanel(panel, geo, labels_shown, tuple(texts))


def _legend_item_width(entry: LegendEntry) -> float:
    return 16 + len(f"{entry.key} = {entry.text}") * CHAR_WIDTH + 12


def _place_legend(legend: tuple[LegendEntry, ...], x: float, y: float, width: float):
    """Legend swatches and texts wrapped to ``width``; returns them and the height used."""
    texts: list[Text] = []
    swatches: list[Swatch] = []
    cx, cy = x, y
    for entry in legend:
        item_width = _legend_item_width(entry)
        if cx > x and cx + item_width > x + width:
            cx, cy = x, cy + NOTE_HEIGHT + 2
        swatches.append(Swatch(cx, cy, entry.colour))
        texts.append(Text(cx + 16, cy + 10, f"{entry.key} = {entry.text}"))
        cx += item_width
    return texts, swatches, (cy - y + NOTE_HEIGHT + 4) if legend else 0.0


def _wrapped(notes: tuple[str, ...], width: float) -> list[str]:
    return wrap_notes(notes, max(NOTE_COLUMNS, int((width - 2 * MARGIN) / CHAR_WIDTH)))


def place_picture(
    title: str, panels: tuple[Panel, ...], legend: tuple[LegendEntry, ...], notes: tuple[str, ...], columns: int
) -> Placement:
    """Lay out a picture: panels side by side (wrapping after ``columns``), then the legend and
    the notes (see the module docstring).

    Postcondition: every text and swatch lies inside ``width`` (text widths estimated with
    :data:`CHAR_WIDTH`)."""
    placed: list[PlacedPanel] = []
    y: float = MARGIN + TITLE_HEIGHT
    total_width = 2 * MARGIN + len(title) * TITLE_CHAR_WIDTH
    per_row = max(1, columns)
    for start in range(0, len(panels), per_row):
        x: float = MARGIN
        row_height = 0.0
        for panel in panels[start : start + per_row]:
            placed.append(_place_panel(panel, x, y))
            x += math.ceil(placed[-1].geometry.width) + 2 * MARGIN
            row_height = max(row_height, placed[-1].geometry.height)
        total_width = max(total_width, x)
        y += row_height + MARGIN
    total_width = max([total_width] + [2 * MARGIN + _legend_item_width(entry) for entry in legend])
    texts = [Text(MARGIN, MARGIN + 8, title, size=12, bold=True, role="title")]
    legend_texts, swatches, legend_height = _place_legend(legend, MARGIN, y, total_width - 2 * MARGIN)
    texts += legend_texts
    y += legend_height
    lines = _wrapped(notes, total_width)
    for k, line in enumerate(lines):
        texts.append(Text(MARGIN, y + (k + 1) * NOTE_HEIGHT, line, role="note"))
        total_width = max(total_width, MARGIN * 2 + len(line) * CHAR_WIDTH)
    y += len(lines) * NOTE_HEIGHT + MARGIN
    return Placement(math.ceil(total_width), math.ceil(y), tuple(placed), tuple(texts), tuple(swatches))
