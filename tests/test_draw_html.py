"""The HTML page: well-formed, self-contained (no network), every embedded SVG renders with resvg.

The same page is opened in a real headless browser by tests/browser/test_report_page.py (its own
command, see docs/pictures.md).
"""

from __future__ import annotations

import re
import struct
from html.parser import HTMLParser

import pytest
import resvg_py

from linear_layout import plan_conversion
from linear_layout.draw import PageRow, conversion_rows, draw_layout, html_page
from linear_layout.draw.grids import PAGE_LIMITS
from linear_layout.draw.html import CONVERSION_COLUMNS
from linear_layout.encodings import parse_encoding

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRANSPOSED = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
ROWS8 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
ROWS4 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
LANES = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
LANES_T = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [0, 1]}>"
VOID = {"meta", "br", "img", "input", "link", "hr"}
SVG_VOID = {"path", "rect"}  # written self-closed (<path/>) or with children (<rect><title>)


class Checker(HTMLParser):
    """Tag balance, external references, scripts and tooltip titles."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.external: list[str] = []
        self.svgs = 0
        self.titles: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "xlink:href") or (value and re.search(r"url\(|https?://", value) and name != "xmlns"):
                self.external.append(f"{tag} {name}={value}")
        if tag == "svg":
            self.svgs += 1
        if tag == "title" and self.stack and self.stack[-1] == "rect":
            self._in_title = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.titles.append(data)


CONVERSIONS = [
    ("transpose", BLOCKED, TRANSPOSED, (32, 32), 16),
    ("rows", ROWS8, ROWS4, (32, 32), 32),
    ("lanes", LANES, LANES_T, (8, 4), 32),
    ("noop", BLOCKED, BLOCKED, (32, 32), 32),
]


@pytest.fixture(scope="module")
def page():
    rows = conversion_rows(CONVERSIONS)
    return html_page("kernel report", CONVERSION_COLUMNS, rows + (PageRow(("text only",)),), ["totals: 4 conversions"])


def test_page_is_well_formed_and_self_contained(page):
    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    assert checker.external == []
    assert checker.svgs == len(CONVERSIONS)
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page
    assert "(0, 0) T0 r0 lane 0 warp 0" in checker.titles


def test_every_embedded_svg_renders(page):
    svgs = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    assert len(svgs) == len(CONVERSIONS)
    for svg in svgs:
        # Shapes only (no font loading and text shaping, which take seconds on big pictures).
        png = bytes(resvg_py.svg_to_bytes(svg_string=svg, skip_system_fonts=True))
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        size = re.match(r'<svg [^>]*width="(\d+)" height="(\d+)"', svg).groups()
        assert (width, height) == tuple(map(int, size))


def test_rows_state_the_plan(page):
    for name, src, dst, shape, bitwidth in CONVERSIONS:
        plan = plan_conversion(parse_encoding(src), parse_encoding(dst), shape, bitwidth)
        row = re.search(rf"<tr><td>{name}</td>(.*?)</tr>", page, flags=re.S).group(1)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[2] == plan.strategy
        assert cells[3:8] == [str(plan.scratch_bytes), str(plan.barriers), str(plan.store_wavefronts),
                              str(plan.load_wavefronts), str(plan.shuffles)]
    strategies = {plan_conversion(parse_encoding(s), parse_encoding(d), shape, bits).strategy
                  for _, s, d, shape, bits in CONVERSIONS}
    assert {"shared", "shuffle", "noop"} <= strategies


def test_escaping_and_row_width():
    page = html_page("<a & b>", ["x"], [PageRow(("<script>",), draw_layout(BLOCKED, (8, 16)))])
    assert "<h1>&lt;a &amp; b&gt;</h1>" in page and "<td>&lt;script&gt;</td>" in page
    with pytest.raises(ValueError, match="row 1 has 2 cells for 1 columns"):
        html_page("t", ["x"], [PageRow(("a", "b"))])


def test_page_pictures_stay_within_the_page_limits():
    big = conversion_rows([("big", BLOCKED, TRANSPOSED, (256, 256), 16)])[0].picture
    source, stored, loaded, destination = big.panels
    for panel in (source, destination):
        # tiles of one thread range x one register range (draw/layout.py), within the page's cells
        assert max(panel.rows, panel.cols) == PAGE_LIMITS.cells and "one thread range" in panel.title
        assert all(re.fullmatch(r"T\d+(-\d+)?:\d+(-\d+)?", label) for label in panel.labels)
    assert source.title.startswith("source (8x16 tiles")  # 8 rows of 4 threads x 4 registers
    assert source.titles[0].startswith("tile (0, 0)..(7, 15): (0, 0) T0 r0 lane 0 warp 0;")
    assert stored.rows == loaded.rows == min(PAGE_LIMITS.shared_rows, PAGE_LIMITS.shared_cells // stored.cols)
    assert any(note.startswith(f"bank rows 0-{stored.rows - 1} of") for note in stored.notes)
