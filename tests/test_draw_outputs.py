"""What users notice in the outputs: a no-op conversion is one panel with a line that says why,
the legend and the notes stay inside the picture, notebooks get one representation (SVG), and
the PNG is the SVG's picture (same size, same cell colours) painted without an SVG renderer."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from linear_layout import LinearLayout, plan_conversion
from linear_layout import encodings as E
from linear_layout.draw import draw_conversion, draw_layout
from linear_layout.draw.model import Panel
from linear_layout.draw.placement import CHAR_WIDTH, place_picture
from test_draw import decode_png

SVG = "{http://www.w3.org/2000/svg}"
BLOCKED = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))


def test_a_noop_conversion_is_one_panel_and_says_why():
    layout = E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0))
    assert plan_conversion(layout, layout, (16, 16), 16).strategy == "noop"
    picture = draw_conversion(layout, layout, (16, 16), 16)
    assert len(picture.panels) == 1 and picture.panels[0].title == "source = destination"
    assert any(n.startswith("no-op: both layouts put every element in the same register") for n in picture.notes)
    assert not any("round" in n for n in picture.notes)


@pytest.mark.parametrize("lanes, warps", [([[0, 1], [0, 2]], [[1, 0], [2, 0]]), ([], [[0, 1], [1, 0]])])
def test_the_legend_and_notes_never_overflow_the_picture(lanes, warps):
    # a tiny layout of 4 warps: the legend ("3 = warp 3") is wider than the grid and the title
    layout = LinearLayout.from_bases([("lane", lanes), ("warp", warps)], ["dim0", "dim1"])
    picture = draw_layout(layout)
    svg = picture.svg()
    root = ET.fromstring(svg)
    width = float(root.get("width"))
    texts = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") is None and t.text]
    assert any(t.text == "3 = warp 3" for t in texts)
    for text in texts:
        size = float(text.get("font-size") or 9) / 9
        assert float(text.get("x")) + len(text.text) * CHAR_WIDTH * size <= width, text.text
    for swatch in root.iter(f"{SVG}rect"):
        if swatch.get("class") == "swatch":
            assert float(swatch.get("x")) + 12 <= width


def test_long_notes_wrap_in_the_svg():
    note = "word " * 80
    panel = Panel("p", 1, 1, (0,), ("a",), ("0",), ("t",), (0,), (1,), ("0",))
    layout = place_picture("t", (panel,), (), (note,), 1)
    lines = [t.text for t in layout.texts if t.role == "note"]  # 100 columns: 20, then 19 words a line
    assert len(lines) == 5 and " ".join(w for line in lines for w in line.split()) == note.strip()
    assert all(len(line) * CHAR_WIDTH <= layout.width for line in lines)


def test_notebooks_get_one_representation_svg():
    layout = BLOCKED.to_linear_layout((32, 32))
    assert layout._repr_svg_().startswith("<svg") and layout._repr_html_() is None
    assert BLOCKED._repr_html_() is None
    assert plan_conversion(BLOCKED, BLOCKED, (32, 32), 16)._repr_html_() is None


def test_png_is_the_svgs_picture():
    picture = draw_conversion(BLOCKED, E.BlockedLayout((4, 1), (4, 8), (1, 4), (0, 1)), (8, 32), 16)
    image = decode_png(picture.png())
    root = ET.fromstring(picture.svg())
    assert image.shape[:2] == (int(root.get("height")), int(root.get("width")))
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("class") in ("cell", "swatch")]
    for rect in cells:
        x, y = float(rect.get("x")), float(rect.get("y"))
        fill = rect.get("fill")
        # the cell's centre column just under its top edge: no label glyph there
        pixel = tuple(int(v) for v in image[int(np.ceil(y)) + 4 if rect.get("class") == "swatch" else int(y) + 3,
                                            int(x) + 3, :3])
        if rect.get("class") == "cell" and image[int(y) + 3, int(x) + 3, 0] != int(fill[1:3], 16):
            # an outlined (highlighted) cell: the outline is 2 px inside the cell
            pixel = tuple(int(v) for v in image[int(y) + 4, int(x) + 4, :3])
        assert pixel == tuple(int(fill[k:k + 2], 16) for k in (1, 3, 5)), (rect.get("class"), x, y)
    assert decode_png(picture.png(zoom=0.5)).shape[:2] == (round(image.shape[0] / 2), round(image.shape[1] / 2))
