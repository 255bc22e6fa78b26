"""SVG output: panels side by side (wrapping after ``columns`` panels), a legend and notes.

Each cell is one ``<rect class="cell">`` (1 pixel narrower and lower than its slot: the white
gaps are the grid lines) whose ``<title>`` child is the cell's tooltip (browsers
show it on hover); labels are separate ``<text>`` elements that ignore the pointer. The page is
plain SVG 1.1: no scripts, no external fonts or images, so the SVG renderer and any browser
draw it identically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from .model import LegendEntry, Panel
from .palette import GRID, TEXT, hex_colour, mark_colour

__all__ = ["CELL_HEIGHT", "CELL_WIDTH", "Geometry", "panel_geometry", "render_svg"]

#: Pixel size of one cell unit.
CELL_WIDTH = 40
CELL_HEIGHT = 16
FONT = 9
CHAR_WIDTH = 5.6  # average advance of a 9px monospace glyph
MARGIN = 12
TITLE_HEIGHT = 18
NOTE_HEIGHT = 14
HEADER_HEIGHT = 12
#: White space between cells (cheaper to render than a stroke around each).
GAP = 1
TITLE_CHAR_WIDTH = 7.4  # 12px bold monospace


@dataclass(frozen=True)
class Geometry:
    """Where a panel's grid lies: its top-left corner, cell size and the panel's outer size."""

    grid_x: float
    grid_y: float
    cell_width: float
    cell_height: float
    width: float
    height: float


def panel_geometry(panel: Panel, x: float, y: float) -> Geometry:
    """The geometry of ``panel`` drawn with its top-left corner at ``(x, y)``."""
    name_width = max((len(n) for n in panel.row_names), default=0) * CHAR_WIDTH + 6
    cell_width = CELL_WIDTH * panel.cell_units
    header = HEADER_HEIGHT if panel.col_names else 0
    grid_x = x + name_width
    grid_y = y + TITLE_HEIGHT + header
    width = name_width + panel.cols * cell_width
    width = max(width, len(panel.title) * CHAR_WIDTH, max((len(n) * CHAR_WIDTH for n in panel.notes), default=0))
    height = TITLE_HEIGHT + header + panel.rows * CELL_HEIGHT + len(panel.notes) * NOTE_HEIGHT + 4
    return Geometry(grid_x, grid_y, cell_width, CELL_HEIGHT, width, height)


def _fits(label: str, cell_width: float) -> bool:
    return bool(label) and len(label) * CHAR_WIDTH <= cell_width - 2


def _cells(panel: Panel, geo: Geometry) -> list[str]:
    """The cells' rects (with titles), then their labels and highlight outlines."""
    out: list[str] = []
    labels: list[str] = []
    outlines: list[str] = []
    cw, ch = geo.cell_width, geo.cell_height
    text_fill = hex_colour(TEXT)
    for index in range(panel.rows * panel.cols):
        row, col = divmod(index, panel.cols)
        x = geo.grid_x + col * cw
        y = geo.grid_y + row * ch
        out.append(
            f'<rect class="cell" x="{x:g}" y="{y:g}" width="{cw - GAP:g}" height="{ch - GAP:g}" '
            f'fill="{hex_colour(panel.fills[index])}"><title>{escape(panel.titles[index])}</title></rect>'
        )
        label = panel.labels[index]
        if _fits(label, cw):
            labels.append(f'<text x="{x + cw / 2:g}" y="{y + ch - 4.5:g}" fill="{text_fill}">{escape(label)}</text>')
        if panel.duplicates[index] > 1:
            labels.append(f'<path class="dup" d="M{x + cw - 6:g},{y:g}h6v6z" fill="{text_fill}"/>')
        if panel.marks[index]:
            outlines.append(
                f'<rect class="mark" x="{x + 1:g}" y="{y + 1:g}" width="{cw - 2:g}" height="{ch - 2:g}" '
                f'fill="none" stroke="{hex_colour(mark_colour(panel.marks[index]))}" stroke-width="2"/>'
            )
    return (
        out
        + ['<g class="labels" text-anchor="middle" pointer-events="none" font-size="8">']
        + labels
        + ["</g>"]
        + outlines
    )


def _panel(panel: Panel, geo: Geometry, x: float, y: float) -> list[str]:
    parts = [
        f'<g class="panel"><text class="panel-title" x="{x:g}" y="{y + 12:g}" font-weight="bold">'
        f"{escape(panel.title)}</text>"
    ]
    for row, name in enumerate(panel.row_names):
        parts.append(
            f'<text x="{geo.grid_x - 4:g}" y="{geo.grid_y + row * geo.cell_height + geo.cell_height - 4.5:g}" '
            f'text-anchor="end">{escape(name)}</text>'
        )
    for col, name in enumerate(panel.col_names):
        if _fits(name, geo.cell_width + 2):
            parts.append(
                f'<text x="{geo.grid_x + (col + 0.5) * geo.cell_width:g}" y="{geo.grid_y - 3:g}" '
                f'text-anchor="middle">{escape(name)}</text>'
            )
    parts.append('<g class="grid">')
    parts += _cells(panel, geo)
    parts.append("</g>")
    note_y = geo.grid_y + panel.rows * geo.cell_height + NOTE_HEIGHT
    for k, note in enumerate(panel.notes):
        parts.append(f'<text class="note" x="{x:g}" y="{note_y + k * NOTE_HEIGHT:g}">{escape(note)}</text>')
    parts.append("</g>")
    return parts


def _legend(legend: tuple[LegendEntry, ...], x: float, y: float, width: float) -> tuple[list[str], float]:
    """Legend swatches, wrapped to ``width``; returns the parts and the height used."""
    parts: list[str] = []
    cx, cy = x, y
    for entry in legend:
        text = f"{entry.key} = {entry.text}"
        item_width = 16 + len(text) * CHAR_WIDTH + 12
        if cx > x and cx + item_width > x + width:
            cx, cy = x, cy + NOTE_HEIGHT + 2
        parts.append(
            f'<rect class="swatch" x="{cx:g}" y="{cy:g}" width="12" height="12" '
            f'fill="{hex_colour(entry.colour)}" stroke="{hex_colour(GRID)}"/>'
            f'<text x="{cx + 16:g}" y="{cy + 10:g}">{escape(text)}</text>'
        )
        cx += item_width
    return parts, (cy - y + NOTE_HEIGHT + 4) if legend else 0.0


def render_svg(
    title: str, panels: tuple[Panel, ...], legend: tuple[LegendEntry, ...], notes: tuple[str, ...], columns: int
) -> str:
    """The whole picture as an SVG document."""
    body: list[str] = []
    y: float = MARGIN + TITLE_HEIGHT
    total_width = 2 * MARGIN + len(title) * TITLE_CHAR_WIDTH
    per_row = max(1, columns)
    for start in range(0, len(panels), per_row):
        x: float = MARGIN
        row_height = 0.0
        for panel in panels[start : start + per_row]:
            geo = panel_geometry(panel, x, y)
            body += _panel(panel, geo, x, y)
            x += geo.width + 2 * MARGIN
            row_height = max(row_height, geo.height)
        total_width = max(total_width, x)
        y += row_height + MARGIN
    legend_parts, legend_height = _legend(legend, MARGIN, y, max(total_width - 2 * MARGIN, 400))
    body += legend_parts
    y += legend_height
    for k, note in enumerate(notes):
        body.append(f'<text class="note" x="{MARGIN}" y="{y + (k + 1) * NOTE_HEIGHT:g}">{escape(note)}</text>')
        total_width = max(total_width, MARGIN * 2 + len(note) * CHAR_WIDTH)
    y += len(notes) * NOTE_HEIGHT + MARGIN
    width, height = math.ceil(total_width), math.ceil(y)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, monospace" font-size="{FONT}">'
        f'<rect width="100%" height="100%" fill="#ffffff"/>'
        f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="12" font-weight="bold">{escape(title)}</text>'
    )
    return head + "".join(body) + "</svg>\n"
