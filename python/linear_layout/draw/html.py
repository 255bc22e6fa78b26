"""One self-contained HTML page: a table whose rows carry pictures (the kernel report's page).

The page needs no network: styles and the one small script are inline, every picture is an
inline SVG, drawn once. It reads at 1,400 px:

* the table holds the text; a row with a picture is followed by a full-width row with a
  ``<details>`` section (``picture``: open it) -- the picture in a box the page's width less a
  side column, and beside it, always in view, the picture's legend and notes (as HTML text: the
  SVG in the page carries only the panels);
* the picture starts fitted to its box (nothing clipped); ``+`` / ``-`` / ``fit`` (or
  Ctrl + wheel) zoom it, dragging or the scroll bars pan it;
* panels equal to an earlier row's are not drawn again: the section links to that row's, and
  shows its own legend and notes;
* hovering a cell shows its ``<title>`` tooltip (the browser's own) and also writes it into the
  status line at the bottom of the window (``#tooltip``), so the text can be read and copied.

:func:`html_page` takes plain rows (:class:`PageRow`), so any tool can build a page:
``linear-layout-report --html`` gives one row per conversion and shared-memory access.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from ..planning import plan_conversion
from .conversion import draw_conversion
from .grids import PAGE_LIMITS
from .owners import as_layout
from .palette import hex_colour
from .picture import Picture
from .svg import cell_size_rules

__all__ = ["CONVERSION_COLUMNS", "PageRow", "conversion_rows", "html_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em 1.5em 3em; color: #1a1a1a; }
h1 { font-size: 1.3em; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #c8c8c8; padding: 4px 8px; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.detail > td { padding: 0 8px 8px; background: #fafafa; }
summary { cursor: pointer; padding: 4px 0; font-weight: 600; }
div.view { display: grid; grid-template-columns: minmax(0, 1fr) minmax(18em, 30em); gap: 12px; }
div.box { overflow: auto; max-height: 80vh; border: 1px solid #c8c8c8; background: #fff; cursor: grab; }
div.box svg { display: block; }
div.box.fit svg { max-width: 100%; height: auto; }
aside { max-height: 80vh; overflow: auto; font-size: 0.85em; }
aside p { margin: 0.2em 0; font-family: monospace; white-space: pre-wrap; }
span.swatch { display: inline-block; width: 0.9em; height: 0.9em; border: 1px solid #9a9a9a;
              vertical-align: -0.1em; margin-right: 0.3em; }
span.key { margin-right: 0.9em; white-space: nowrap; font-family: monospace; }
div.tools button { font: inherit; margin: 0 4px 4px 0; min-width: 2.2em; }
p.note { margin: 0.3em 0; font-family: monospace; }
#tooltip { position: fixed; left: 0; right: 0; bottom: 0; padding: 4px 1.5em; background: #222; color: #fff;
           font-family: monospace; min-height: 1.2em; }
"""

_SCRIPT = """
document.addEventListener("mouseover", function (event) {
  var cell = event.target.closest ? event.target.closest("g.grid > rect") : null;
  if (!cell) { return; }
  var title = cell.querySelector("title");
  document.getElementById("tooltip").textContent = title ? title.textContent : "";
});
function zoom(box, factor) {
  var svg = box.querySelector("svg");
  var width = factor ? svg.getBoundingClientRect().width * factor : 0;
  box.classList.toggle("fit", !factor);
  svg.style.width = factor ? width + "px" : "";
  svg.style.height = factor ? (width * svg.height.baseVal.value / svg.width.baseVal.value) + "px" : "";
}
document.addEventListener("click", function (event) {
  var button = event.target.closest ? event.target.closest("button[data-zoom]") : null;
  if (!button) { return; }
  zoom(button.closest("div.picture").querySelector("div.box"), parseFloat(button.dataset.zoom));
});
document.addEventListener("wheel", function (event) {
  var box = event.target.closest ? event.target.closest("div.box") : null;
  if (!box || !event.ctrlKey) { return; }
  event.preventDefault();
  zoom(box, event.deltaY < 0 ? 1.25 : 0.8);
}, { passive: false });
var drag = null;
document.addEventListener("mousedown", function (event) {
  var box = event.target.closest ? event.target.closest("div.box") : null;
  if (box) { drag = { box: box, x: event.clientX, y: event.clientY }; }
});
document.addEventListener("mousemove", function (event) {
  if (!drag) { return; }
  drag.box.scrollLeft -= event.clientX - drag.x; drag.box.scrollTop -= event.clientY - drag.y;
  drag.x = event.clientX; drag.y = event.clientY;
});
document.addEventListener("mouseup", function () { drag = null; });
"""


@dataclass(frozen=True)
class PageRow:
    """One table row: its text cells (one per column) and an optional picture, drawn in a
    full-width section under the row."""

    cells: tuple[str, ...]
    picture: Picture | None = None


def _cell(text: str) -> str:
    numeric = text.replace(".", "", 1).replace(",", "").isdigit()
    return f'<td class="num">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def _side(picture: Picture) -> str:
    """The legend and the notes of ``picture`` as HTML (shown beside its panels)."""
    keys = "".join(
        f'<span class="key"><span class="swatch" style="background:{hex_colour(e.colour)}"></span>'
        f"{escape(e.key)} = {escape(e.text)}</span> "
        for e in picture.legend
    )
    notes = "".join(f"<p>{escape(n)}</p>" for n in picture.notes)
    return f'<aside><div class="legend">{keys}</div>{notes}</aside>'


def _section(picture: Picture, number: int, width: int, svg: str, first: int | None) -> str:
    """The full-width section of row ``number``: its panels (``svg``) with zoom buttons, or, when
    an earlier row ``first`` drew the same panels, a link to them; beside either, its own legend
    and notes."""
    if first is None:
        tools = "".join(
            f'<button type="button" data-zoom="{factor}">{label}</button>'
            for label, factor in (("+", 1.5), ("-", 0.667), ("fit", 0))
        )
        panels = f'<div class="tools">{tools}</div><div class="view"><div class="box fit">{svg}</div>'
    else:
        same = f'<p class="same">the same panels as <a href="#picture-{first}">row {first}</a>\'s</p>'
        panels = f'<div class="view"><div>{same}</div>'
    return (
        f'<tr class="detail"><td colspan="{width}"><details id="picture-{number}"><summary>picture: '
        f'{escape(picture.title)}</summary><div class="picture">{panels}{_side(picture)}</div></div>'
        "</details></td></tr>"
    )


def _row(row: PageRow, number: int, width: int, drawn: dict[str, int]) -> str:
    """The row, and its picture's section: panels drawn the first time, a link to them after."""
    cells = "".join(_cell(c) for c in row.cells) + "<td></td>" * (width - len(row.cells))
    line = f"<tr>{cells}</tr>"
    if row.picture is None:
        return line
    svg = dataclasses.replace(row.picture, legend=(), notes=()).svg(compact=True)
    first = drawn.setdefault(svg, number)
    return line + "\n" + _section(row.picture, number, width, svg, None if first == number else first)


def html_page(title: str, columns: Sequence[str], rows: Sequence[PageRow], notes: Sequence[str] = ()) -> str:
    """The page: ``title``, a table of ``columns`` (each row's picture in a full-width section
    under it), then ``notes``.

    Raises ValueError when a row has more cells than there are columns.
    """
    for number, row in enumerate(rows, start=1):
        if len(row.cells) > len(columns):
            raise ValueError(f"row {number} has {len(row.cells)} cells for {len(columns)} columns")
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    drawn: dict[str, int] = {}
    body = "\n".join(_row(row, number, len(columns), drawn) for number, row in enumerate(rows, start=1))
    paragraphs = "\n".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    sizes = cell_size_rules([body])
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
        f"<style>{_STYLE}{sizes}\n</style>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n{paragraphs}\n"
        f'<div id="tooltip"></div>\n<script>{_SCRIPT}</script>\n</body>\n</html>\n'
    )


#: Columns of :func:`conversion_rows`.
CONVERSION_COLUMNS = (
    "conversion",
    "shape",
    "bits",
    "strategy",
    "scratch B",
    "barriers",
    "store wavefronts",
    "load wavefronts",
    "shuffles",
)


def conversion_rows(conversions: Sequence[tuple[str, object, object, Sequence[int], int]]) -> tuple[PageRow, ...]:
    """Rows for ``(name, src, dst, shape, bitwidth)`` conversions (layouts, encodings or encoding
    text; drawn within :data:`~linear_layout.draw.grids.PAGE_LIMITS`), planned by ``plan_conversion``
    and drawn by :func:`~linear_layout.draw.draw_conversion` (columns :data:`CONVERSION_COLUMNS`)."""
    rows = []
    for name, src, dst, shape, bitwidth in conversions:
        src_layout, _ = as_layout(src, shape)
        dst_layout, _ = as_layout(dst, shape)
        picture = draw_conversion(src_layout, dst_layout, bitwidth=bitwidth, limits=PAGE_LIMITS)
        plan = plan_conversion(src_layout, dst_layout, bitwidth=bitwidth)
        rows.append(
            PageRow(
                (
                    name,
                    "x".join(map(str, shape)),
                    str(bitwidth),
                    plan.strategy,
                    str(plan.scratch_bytes),
                    str(plan.barriers),
                    str(plan.store_wavefronts),
                    str(plan.load_wavefronts),
                    str(plan.shuffles),
                ),
                picture,
            )
        )
    return tuple(rows)
