"""``linear-layout-report kernel.ttgir --html report.html``: the report table with pictures.

One self-contained page (:func:`linear_layout.draw.html_page`: inline styles, one small script,
inline SVG, no network): the report's table, each row with the picture of its op beside it -- a
conversion as :func:`~linear_layout.draw.draw_conversion` draws it, a shared-memory access as the
buffer with one warp's access highlighted, both within ``PAGE_LIMITS`` (tiles above 64 cells
along an axis, the first 32 bank rows) -- and the totals line under the table. A row whose
layouts the package does not model (an unknown encoding) has no picture.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..draw import PageRow, html_page
from ..draw.grids import PAGE_LIMITS
from ..encodings import collect_aliases
from .kernel_line import kernel_picture, line_at

__all__ = ["report_page"]


def report_page(
    kernel: str,
    ttgir: str,
    columns: Sequence[str],
    rows: Sequence[tuple[int, tuple[str, ...]]],
    notes: Sequence[str] = (),
) -> str:
    """The page for the TTGIR ``ttgir``: ``rows`` are ``(kernel line, table cells)``, ``columns``
    the table's header, ``notes`` lines under it (the totals)."""
    lines = ttgir.splitlines()
    aliases = collect_aliases(ttgir)
    page_rows = []
    for number, cells in rows:
        try:
            picture = kernel_picture(line_at(lines, number, aliases), limits=PAGE_LIMITS)
        except ValueError:
            picture = None
        page_rows.append(PageRow(tuple(cells), picture))
    return html_page(f"linear-layout-report {kernel}", columns, page_rows, notes)
