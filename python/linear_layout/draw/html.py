"""One self-contained HTML page: a table whose rows carry pictures (the kernel report's page).

The page needs no network: styles and the one small script are inline, every picture is an
inline SVG. Hovering a cell shows its ``<title>`` tooltip (the browser's own) and also writes it
into the status line at the bottom of the window (``#tooltip``), so the text can be read and
copied. :func:`html_page` takes plain rows (:class:`PageRow`), so any tool can build a page:
``linear-layout-report --html`` gives one row per conversion and shared-memory access.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from collections.abc import Sequence

from ..planning import plan_conversion
from .conversion import draw_conversion
from .grids import PAGE_LIMITS
from .owners import as_layout
from .picture import Picture

__all__ = ["CONVERSION_COLUMNS", "PageRow", "conversion_rows", "html_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1a1a1a; }
h1 { font-size: 1.3em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #c8c8c8; padding: 4px 8px; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.picture { padding: 0; }
div.picture { max-width: 62vw; max-height: 520px; overflow: auto; }
p.note { margin: 0.3em 0; font-family: monospace; }
#tooltip { position: fixed; left: 0; right: 0; bottom: 0; padding: 4px 1.5em; background: #222; color: #fff;
           font-family: monospace; min-height: 1.2em; }
"""

_SCRIPT = """
document.addEventListener("mouseover", function (event) {
  var cell = event.target.closest ? event.target.closest("rect.cell") : null;
  if (!cell) { return; }
  var title = cell.querySelector("title");
  document.getElementById("tooltip").textContent = title ? title.textContent : "";
});
"""


@dataclass(frozen=True)
class PageRow:
    """One table row: its text cells (one per column but the last) and an optional picture."""

    cells: tuple[str, ...]
    picture: Picture | None = None


def _cell(text: str) -> str:
    numeric = text.replace(".", "", 1).replace(",", "").isdigit()
    return f'<td class="num">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def _row(row: PageRow, width: int) -> str:
    cells = "".join(_cell(c) for c in row.cells) + "<td></td>" * (width - len(row.cells))
    picture = f'<div class="picture">{row.picture.svg()}</div>' if row.picture is not None else ""
    return f'<tr>{cells}<td class="picture">{picture}</td></tr>'


def html_page(title: str, columns: Sequence[str], rows: Sequence[PageRow], notes: Sequence[str] = ()) -> str:
    """The page: ``title``, a table of ``columns`` plus a picture column, then ``notes``.

    Raises ValueError when a row has more cells than there are columns.
    """
    for number, row in enumerate(rows, start=1):
        if len(row.cells) > len(columns):
            raise ValueError(f"row {number} has {len(row.cells)} cells for {len(columns)} columns")
    head = "".join(f"<th>{escape(c)}</th>" for c in columns) + "<th>picture</th>"
    body = "\n".join(_row(row, len(columns)) for row in rows)
    paragraphs = "\n".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
        f"<style>{_STYLE}</style>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
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
