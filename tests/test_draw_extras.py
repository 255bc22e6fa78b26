"""What a layout engineer asks for: ``highlight=`` (``--highlight T``) outlines one thread's
elements in every panel, ``draw_compare`` (``--compare A B``) puts two candidates side by side
with their costs, and ``Picture.tikz()`` (``-o x.tex``) writes the same picture as TikZ."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from linear_layout import encodings as E
from linear_layout import plan_conversion
from linear_layout.draw import draw_compare, draw_conversion, draw_layout
from linear_layout.draw.palette import HIGHLIGHT
from linear_layout.tools.draw import main

SVG = "{http://www.w3.org/2000/svg}"
BLOCKED = E.BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0))
TRANSPOSED = E.BlockedLayout((4, 1), (4, 8), (1, 2), (0, 1))
MMA = E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8))


def thread_cells(encoding, shape, thread) -> set[tuple[int, int]]:
    """The elements thread ``thread`` holds, from the layout itself."""
    layout = encoding.to_linear_layout(shape)
    lanes = layout.get_in_dim_size("lane")
    registers = np.arange(layout.get_in_dim_size("register"))
    out = layout.apply({"register": registers, "lane": np.full_like(registers, thread % lanes),
                        "warp": np.full_like(registers, thread // lanes), "block": np.zeros_like(registers)})
    return set(zip(out["dim0"].tolist(), out["dim1"].tolist()))


def marked(panel, mark=HIGHLIGHT) -> set[tuple[int, int]]:
    return {divmod(k, panel.cols) for k, m in enumerate(panel.marks) if m == mark}


@pytest.mark.parametrize("encoding, shape, thread", [(BLOCKED, (16, 16), 37), (MMA, (32, 32), 70)])
def test_highlight_outlines_exactly_the_threads_elements(encoding, shape, thread):
    picture = draw_layout(encoding, shape, highlight=thread)
    expected = thread_cells(encoding, shape, thread)
    assert marked(picture.panels[0]) == expected
    assert f"thread {thread} outlined in black: {len(expected)} element(s)" in picture.notes
    assert picture.svg().count('stroke="#000000"') == len(expected)


def test_highlight_in_a_conversion_marks_source_and_destination():
    picture = draw_conversion(BLOCKED, TRANSPOSED, (16, 16), 16, highlight=33)
    source, _, _, destination = picture.panels
    assert marked(source) == thread_cells(BLOCKED, (16, 16), 33)
    assert marked(destination) == thread_cells(TRANSPOSED, (16, 16), 33)
    assert any(n.startswith("thread 33 outlined in black") for n in picture.notes)


def test_highlight_of_a_missing_thread_is_a_user_error(capsys):
    with pytest.raises(ValueError, match="thread 64 does not exist; the layout has threads 0-63"):
        draw_layout(BLOCKED, (16, 16), highlight=64)
    assert main([str(BLOCKED), "--shape", "16x16", "--highlight", "64"]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>", "--shape", "16x64",
                 "--highlight", "1"]) == 1
    assert "--highlight applies to distributed layouts" in capsys.readouterr().err


def test_compare_two_layouts_with_the_cost_between_them():
    picture = draw_compare(BLOCKED, TRANSPOSED, (16, 16), 16)
    a, b = picture.panels
    assert a.title == "A" and b.title == "B"
    assert a.titles == draw_layout(BLOCKED, (16, 16)).panels[0].titles
    assert b.titles == draw_layout(TRANSPOSED, (16, 16)).panels[0].titles
    plan = plan_conversion(BLOCKED, TRANSPOSED, (16, 16), 16)
    assert f"cost of converting A to B (16-bit): {plan.summary()}" in picture.notes


def test_compare_two_conversions_from_one_source(capsys, tmp_path):
    src = E.BlockedLayout((1, 1), (4, 8), (2, 1), (1, 0))
    picture = draw_compare(BLOCKED, TRANSPOSED, (16, 16), 16, src=src)
    titles = [p.title for p in picture.panels]
    assert titles[0] == "A: source" and titles[4] == "B: source" and len(titles) == 8
    assert picture.columns == 4  # A's four panels above B's
    for side, dst in (("A", BLOCKED), ("B", TRANSPOSED)):
        assert f"cost {side} (16-bit): {plan_conversion(src, dst, (16, 16), 16).summary()}" in picture.notes
    out = tmp_path / "compare.svg"
    assert main(["--compare", str(BLOCKED), str(TRANSPOSED), "--src", str(src), "--shape", "16x16",
                 "--bitwidth", "16", "-o", str(out)]) == 0
    assert out.read_text() == picture.svg()
    assert main(["--compare", str(BLOCKED), "--shape", "16x16"]) == 1
    assert "expected 2 arguments" in capsys.readouterr().err


def test_tikz_is_the_same_picture(tmp_path):
    picture = draw_conversion(BLOCKED, TRANSPOSED, (8, 16), 16, highlight=3)
    tex = picture.tikz()
    assert tex.count("\\begin{tikzpicture}") == tex.count("\\end{tikzpicture}") == 1
    body = re.sub(r"\\[{}]", "", tex)
    assert body.count("{") == body.count("}")
    colours = dict(re.findall(r"\\definecolor\{(ll\d+)\}\{HTML\}\{([0-9A-F]{6})\}", tex))
    fills = re.findall(r"\\fill\[(ll\d+)\] \(([\d.]+),([\d.]+)\) rectangle \+\+\(([\d.]+),([\d.]+)\);", tex)
    root = ET.fromstring(picture.svg())
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "cell"]
    assert len(fills) == len(cells)
    for (name, x, y, w, h), rect in zip(fills, cells):
        assert (x, y, w, h) == tuple(rect.get(k) for k in ("x", "y", "width", "height"))
        assert "#" + colours[name].lower() == rect.get("fill")
    labels = [t.text for g in root.iter(f"{SVG}g") if g.get("class") == "labels" for t in g.iter(f"{SVG}text")]
    assert labels and all(f"{{{label}}};" in tex for label in labels)
    assert tex.count("000000") == 1 and "\\textless{}" in tex  # the highlight colour; escaped '<'
    out = tmp_path / "p.tex"
    assert main(["--src", str(BLOCKED), "--dst", str(TRANSPOSED), "--shape", "8x16", "--bitwidth", "16",
                 "--highlight", "3", "-o", str(out)]) == 0
    assert out.read_text() == tex
