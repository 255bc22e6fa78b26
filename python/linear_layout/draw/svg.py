"""SVG output of a laid-out picture (:mod:`linear_layout.draw.placement`).

Each cell is one ``<rect class="cell">`` (1 pixel narrower and lower than its slot: the white
gaps are the grid lines) whose ``<title>`` child is the cell's tooltip (browsers
show it on hover); labels are separate ``<text>`` elements that ignore the pointer. The page is
plain SVG 1.1: no scripts, no external fonts or images, so the SVG renderer and any browser
draw it identically.

**Compact form** (``compact=True``, for a page that holds many pictures, see
:mod:`linear_layout.draw.html`): cells are ``<rect x y fill>`` without class, width and height;
their grid group carries the class ``cell-<w>x<h>`` and the page's one stylesheet gives the size
(:func:`cell_size_rules`). About a quarter fewer bytes; the SVG needs that stylesheet.
"""

from __future__ import annotations

import re
from html import escape

from .model import LegendEntry, Panel
from .palette import GRID, TEXT, hex_colour, mark_colour
from .placement import FONT, LABEL_FONT, Geometry, PlacedPanel, Text, cell_origins, place_picture

__all__ = ["GAP", "cell_size_class", "cell_size_rules", "render_svg"]

#: White space between cells (cheaper to render than a stroke around each).
GAP = 1
_SIZE_CLASS = re.compile(r'<g class="grid (cell-[\d_]+x[\d_]+)">')


def _text(item: Text) -> str:
    attributes = f'x="{item.x:g}" y="{item.y:g}"'
    if item.role:
        attributes = f'class="{item.role}" ' + attributes
    if item.anchor != "start":
        attributes += f' text-anchor="{item.anchor}"'
    if item.size != FONT:
        attributes += f' font-size="{item.size:g}"'
    if item.bold:
        attributes += ' font-weight="bold"'
    return f"<text {attributes}>{escape(item.text, quote=False)}</text>"


def cell_size_class(geo: Geometry) -> str:
    """The class of a compact grid whose cells are ``geo``'s size (less the gap)."""
    return f"cell-{geo.cell_width - GAP:g}x{geo.cell_height - GAP:g}".replace(".", "_")


def cell_size_rules(svgs: list[str]) -> str:
    """CSS giving the cells of every compact grid in ``svgs`` their size (one rule per size)."""
    rules = []
    for name in sorted({m for svg in svgs for m in _SIZE_CLASS.findall(svg)}):
        width, height = name[len("cell-") :].replace("_", ".").split("x")
        rules.append(f"g.{name} > rect {{ width: {width}px; height: {height}px; }}")
    return "\n".join(rules)


def _cells(placed: PlacedPanel, compact: bool) -> list[str]:
    """The cells' rects (with titles), then their labels and highlight outlines."""
    panel, geo, labels_shown = placed.panel, placed.geometry, placed.labels_shown
    out: list[str] = []
    labels: list[str] = []
    outlines: list[str] = []
    cw, ch = geo.cell_width, geo.cell_height
    text_fill = hex_colour(TEXT)
    for index, x, y in cell_origins(placed):
        size = "" if compact else f'class="cell" width="{cw - GAP:g}" height="{ch - GAP:g}" '
        out.append(
            f'<rect {size}x="{x:g}" y="{y:g}" fill="{hex_colour(panel.fills[index])}">'
            f"<title>{escape(panel.titles[index], quote=False)}</title></rect>"
        )
        label = panel.labels[index]
        if labels_shown and label:
            labels.append(f'<text x="{x + cw / 2:g}" y="{y + ch - 4.5:g}">{escape(label)}</text>')
        if panel.duplicates[index] > 1:
            labels.append(f'<path class="dup" d="M{x + cw - 6:g},{y:g}h6v6z" fill="{text_fill}"/>')
        if panel.marks[index]:
            outlines.append(
                f'<rect class="mark" x="{x + 1:g}" y="{y + 1:g}" width="{cw - 2:g}" height="{ch - 2:g}" '
                f'fill="none" stroke="{hex_colour(mark_colour(panel.marks[index]))}" stroke-width="2"/>'
            )
    grid = f'<g class="grid {cell_size_class(geo)}">' if compact else '<g class="grid">'
    return (
        [grid]
        + out
        + [
            "</g>",
            f'<g class="labels" text-anchor="middle" pointer-events="none" font-size="{LABEL_FONT}" '
            f'fill="{text_fill}">',
        ]
        + labels
        + ["</g>"]
        + outlines
    )


def _panel(placed: PlacedPanel, compact: bool) -> list[str]:
    """The panel's texts, its grid of cells (only cells), its labels and its outlines."""
    return ['<g class="panel">'] + [_text(item) for item in placed.texts] + _cells(placed, compact) + ["</g>"]


def render_svg(
    title: str,
    panels: tuple[Panel, ...],
    legend: tuple[LegendEntry, ...],
    notes: tuple[str, ...],
    columns: int,
    compact: bool = False,
) -> str:
    """The whole picture as an SVG document (``compact``: see the module docstring)."""
    layout = place_picture(title, panels, legend, notes, columns)
    body: list[str] = []
    for placed in layout.panels:
        body += _panel(placed, compact)
    body += [
        f'<rect class="swatch" x="{s.x:g}" y="{s.y:g}" width="12" height="12" '
        f'fill="{hex_colour(s.colour)}" stroke="{hex_colour(GRID)}"/>'
        for s in layout.swatches
    ]
    body += [_text(item) for item in layout.texts]
    width, height = layout.width, layout.height
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, monospace" font-size="{FONT}">'
        f'<rect width="100%" height="100%" fill="#ffffff"/>'
    )
    return head + "".join(body) + "</svg>\n"
