"""docs/pictures.md: its checked-in pictures and examples are exactly what the code does today.

Every picture the page shows is listed in ``PICTURES`` with the call that draws it. The test fails
when a file in docs/pictures/ differs from a fresh drawing (the message says how to regenerate:
``LINEAR_LAYOUT_REGENERATE_DOCS=1 python -m pytest tests/test_draw_docs.py``), when the page does
not show a picture, when the terminal or TikZ example in the page is not the command's output,
when an option of ``linear-layout-draw`` is not on the page, or when the numbers the page states
(page limits, the widest cell, the tooltip-only note) are not the code's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from linear_layout import encodings as E
from linear_layout.draw import draw_compare, draw_conversion, draw_layout, draw_shared
from linear_layout.draw.grids import PAGE_LIMITS
from linear_layout.draw.placement import MAX_CELL_WIDTH, TOOLTIP_ONLY
from linear_layout.tools.draw import _argument_parser, main

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = DOCS / "pictures.md"
REGENERATE = os.environ.get("LINEAR_LAYOUT_REGENERATE_DOCS") == "1"

BLOCKED = E.BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0))
TRANSPOSED = E.BlockedLayout((4, 1), (4, 8), (1, 2), (0, 1))
ROWS = E.BlockedLayout((1, 1), (8, 4), (1, 1), (1, 0))
COLUMNS = E.BlockedLayout((1, 1), (8, 4), (1, 1), (0, 1))
MMA = E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8))
SLICE = E.SliceLayout(0, E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0)))
SWIZZLED = E.SwizzledSharedLayout(8, 1, 8, (1, 0))

PICTURES = {
    "layout_blocked.svg": lambda: draw_layout(BLOCKED, (16, 16)),
    "layout_mma_lane.svg": lambda: draw_layout(MMA, (32, 16), color_by="lane"),
    "layout_slice_broadcast.svg": lambda: draw_layout(SLICE, (16,)),
    "layout_rank3.svg": lambda: draw_layout(E.BlockedLayout((1, 1, 2), (2, 4, 4), (2, 1, 1), (2, 1, 0)), (4, 4, 8)),
    "layout_tiles_512.svg": lambda: draw_layout(E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (512, 64)),
    "shared_swizzled.svg": lambda: draw_shared(SWIZZLED, (16, 64), bitwidth=16, access=TRANSPOSED, kind="store"),
    "conversion_shared.svg": lambda: draw_conversion(BLOCKED, TRANSPOSED, (16, 16), 16),
    "conversion_shuffle.svg": lambda: draw_conversion(ROWS, COLUMNS, (8, 4), 32),
    "layout_highlight.svg": lambda: draw_layout(MMA, (32, 16), color_by="lane", highlight=37),
    "compare_layouts.svg": lambda: draw_compare(BLOCKED, TRANSPOSED, (16, 16), 16),
}

TIKZ_ARGS = [str(ROWS), "--shape", "8x4"]
TIKZ_LINES = 12
TERMINAL_ARGS = [str(BLOCKED), "--shape", "16x16", "--color-by", "lane", "--no-color", "--width", "80"]


def _compare(path: Path, fresh: str) -> None:
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh, encoding="utf-8")
    assert path.exists(), f"{path.name} is missing; regenerate with LINEAR_LAYOUT_REGENERATE_DOCS=1"
    assert path.read_text(encoding="utf-8") == fresh, \
        f"docs/pictures/{path.name} is stale: regenerate with LINEAR_LAYOUT_REGENERATE_DOCS=1 " \
        "python -m pytest tests/test_draw_docs.py"


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_picture_is_current(name):
    _compare(DOCS / "pictures" / name, PICTURES[name]().svg())


def test_page_shows_every_picture():
    shown = set(re.findall(r"\]\(pictures/([\w.]+)\)", PAGE.read_text(encoding="utf-8")))
    assert shown == set(PICTURES)


def _check_example(marker: str, language: str, output: str, command: str) -> None:
    """The page's ``<!-- marker -->`` block is ``output`` and the page shows ``command``."""
    page = PAGE.read_text(encoding="utf-8")
    block = re.search(rf"<!-- {marker} -->\n```{language}\n(.*?)```", page, flags=re.S)
    assert block, f"docs/pictures.md has no {marker} example block"
    if REGENERATE:
        PAGE.write_text(page[:block.start(1)] + output + page[block.end(1):], encoding="utf-8")
        return
    assert block.group(1) == output, f"the {marker} example is stale: regenerate with LINEAR_LAYOUT_REGENERATE_DOCS=1"
    assert command in page


def test_terminal_example_is_the_commands_output(capsys):
    assert main(TERMINAL_ARGS) == 0
    command = "linear-layout-draw '" + TERMINAL_ARGS[0] + "' " + " ".join(TERMINAL_ARGS[1:])
    _check_example("terminal", "text", capsys.readouterr().out, command)


def test_tikz_example_is_the_commands_output(tmp_path):
    out = tmp_path / "x.tex"
    assert main(TIKZ_ARGS + ["-o", str(out)]) == 0
    head = "\n".join(out.read_text(encoding="utf-8").splitlines()[:TIKZ_LINES]) + "\n"
    command = "linear-layout-draw '" + TIKZ_ARGS[0] + "' " + " ".join(TIKZ_ARGS[1:]) + " -o x.tex"
    _check_example("tikz", "latex", head, command)


def test_every_option_and_stated_number_is_the_codes():
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    options = {o for action in _argument_parser()._actions for o in action.option_strings if o.startswith("--")}
    missing = sorted(o for o in options - {"--help"} if o not in page)
    assert missing == [], f"docs/pictures.md does not mention {missing}"
    assert f"tiles above {PAGE_LIMITS.cells} cells along an axis" in page
    assert f"at most {PAGE_LIMITS.shared_rows} bank rows and {PAGE_LIMITS.shared_cells} elements" in page
    assert f"up to {MAX_CELL_WIDTH} px" in page and f'"{TOOLTIP_ONLY}"' in page
