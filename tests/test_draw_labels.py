"""No label is dropped silently: at real kernel sizes (128 x 128, 4 and 8 warps) every cell of
every panel shows its owner, drawn whole inside the cell, or the panel states the rule that
replaces it (labels in the tooltips, a visible note).

The SVG is parsed: each cell's label is the ``<text>`` centred on it, and must be the owner its
``<title>`` names (``T<thread>:<register>``, from ``LinearLayout.apply`` through the tooltip the
other tests check). The PNG is painted from the same layout step, so what holds for the SVG's
geometry holds for it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from linear_layout import encodings as E
from linear_layout.draw import draw_conversion, draw_layout
from linear_layout.draw.grids import PAGE_LIMITS
from linear_layout.draw.model import Panel
from linear_layout.draw.placement import LABEL_CHAR_WIDTH, TOOLTIP_ONLY, place_picture
from linear_layout.draw.svg import render_svg

SVG = "{http://www.w3.org/2000/svg}"

LAYOUTS = {
    "blocked 4 warps": E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)),
    "blocked 8 warps": E.BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)),
    "mma 4 warps": E.NVMMADistributedLayout((2, 0), (4, 1), (16, 8)),
    "mma 8 warps": E.NVMMADistributedLayout((2, 0), (8, 1), (16, 8)),
}


def labelled_cells(svg: str) -> list[tuple[str, str | None, float]]:
    """``(tooltip, label drawn at the cell's centre or None, cell width)`` for every cell."""
    root = ET.fromstring(svg)
    labels = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "labels":
            for text in group.iter(f"{SVG}text"):
                labels[(round(float(text.get("x")), 3), round(float(text.get("y")), 3))] = text.text
    out = []
    for rect in root.iter(f"{SVG}rect"):
        if rect.get("class") != "cell":
            continue
        x, y, width, height = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        slot_width, slot_height = width + 1, height + 1  # the rect is one gap narrower than its slot
        centre = (round(x + slot_width / 2, 3), round(y + slot_height - 4.5, 3))
        out.append((rect.find(f"{SVG}title").text, labels.get(centre), slot_width))
    return out


def owner_label(title: str) -> str:
    thread, register = re.match(r"\([\d, ]+\) T(\d+) r(\d+)", title).groups()
    return f"T{thread}:{register}"


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_cell_of_a_128x128_layout_shows_its_owner(name):
    picture = draw_layout(LAYOUTS[name], (128, 128))
    cells = labelled_cells(picture.svg())
    assert len(cells) == 128 * 128
    for title, label, width in cells:
        assert label == owner_label(title), title
        assert len(label) * LABEL_CHAR_WIDTH <= width - 2, (label, width)
    assert TOOLTIP_ONLY not in picture.svg()


def test_every_cell_of_a_128x128_conversion_shows_its_owner():
    picture = draw_conversion(LAYOUTS["mma 8 warps"], LAYOUTS["blocked 8 warps"], (128, 128), 16)
    cells = labelled_cells(picture.svg())
    distributed = [(t, label) for t, label, _ in cells if " T" in t]
    shared = [(t, label) for t, label, _ in cells if " offset " in t]
    assert len(distributed) == 2 * 128 * 128 and shared
    assert all(label == owner_label(title) for title, label in distributed)
    # scratch cells name the element stored there: "(i, j) offset o bank b" -> "i,j"
    assert all(label == title.split(")")[0][1:].replace(" ", "") for title, label in shared)


def test_every_tile_of_a_page_picture_shows_its_owners():
    # the report page's limits tile a 128x128 conversion (tiles of one thread range x one register
    # range): every tile's label is drawn, none goes to the tooltips
    picture = draw_conversion(LAYOUTS["mma 8 warps"], LAYOUTS["blocked 8 warps"], (128, 128), 16, limits=PAGE_LIMITS)
    svg = picture.svg()
    assert TOOLTIP_ONLY not in svg and "one thread range x one register range" in svg
    tiles = [(t, label) for t, label, _ in labelled_cells(svg) if t.startswith("tile ")]
    assert tiles and all(label and re.fullmatch(r"T\d+(-\d+)?:\d+(-\d+)?", label) for _, label in tiles)


def test_labels_too_long_for_any_cell_are_in_the_tooltips_with_a_visible_note():
    long_label = "x" * 40
    panel = Panel("p", 1, 2, (0, 0), (long_label, "short"), ("0", "0"), ("a", "b"), (0, 0), (1, 1), ("0",))
    placed = place_picture("t", (panel,), (), (), 1).panels[0]
    assert not placed.labels_shown
    svg = render_svg("t", (panel,), (), (), 1)
    assert '<text class="note"' in svg and TOOLTIP_ONLY in svg
    assert long_label not in svg and all(label is None for _, label, _ in labelled_cells(svg))
