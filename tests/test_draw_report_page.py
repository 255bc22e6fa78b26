"""linear-layout-report --html: the kernel's report table with each row's picture, one self-contained page.

The page is parsed (balanced tags, no external reference), every embedded SVG is rendered with resvg,
and the pictures agree with the report's own numbers (the conversion's wavefronts, each access's
bank_conflicts).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import resvg_py

from linear_layout.tools.report import main, report_ttgir
from test_draw_html import Checker

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "examples" / "matmul.ttgir"


def test_report_html_page(tmp_path, capsys):
    page_path = tmp_path / "report.html"
    assert main([str(KERNEL), "--html", str(page_path)]) == 0
    table = capsys.readouterr().out
    page = page_path.read_text(encoding="utf-8")
    report = report_ttgir(KERNEL.read_text(), kernel=str(KERNEL))

    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == [] and checker.external == []
    assert page.count("<tr><td") == len(report.rows)
    assert table.splitlines()[-1] in page  # the totals line
    # each row: its cells, then its picture's section, or a link to an earlier row's equal picture
    pairs = re.findall(r"<tr>(<td.*?)</tr>\n<tr class=\"detail\">(.*?)</tr>", page, flags=re.S)
    assert len(pairs) == len(report.rows)
    svgs = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    assert len(svgs) == checker.svgs == sum(1 for _, section in pairs if "<svg" in section)
    for svg in svgs:
        png = bytes(resvg_py.svg_to_bytes(svg_string=svg, skip_system_fonts=True))
        assert struct.unpack(">II", png[16:24]) == tuple(map(int, re.match(
            r'<svg [^>]*width="(\d+)" height="(\d+)"', svg).groups()))
    for number, (_, section) in enumerate(pairs, start=1):
        same = re.search(r'the same panels as <a href="#picture-(\d+)">', section)
        assert same is None or int(same.group(1)) < number
    for row, (cells, section) in zip(report.rows, pairs):
        svg = section  # the picture (or a link to equal panels) and, beside it, its own notes
        assert f"<td class=\"num\">{row.mlir_line}</td>" in cells
        cost = row.cost
        if row.op == "ttg.convert_layout" and cost.strategy in ("shared", "packed"):
            assert f"plan: store {cost.store_wavefronts} wavefront(s), load {cost.load_wavefronts}" in svg
        elif row.op != "ttg.convert_layout":
            kind = "load" if row.op == "ttg.local_load" else "store"
            waves = cost.load_wavefronts if kind == "load" else cost.store_wavefronts
            assert f"{kind} total over all warps and instructions: {waves} wavefront(s)" in svg


def test_report_html_cannot_write(tmp_path, capsys):
    assert main([str(KERNEL), "--html", str(tmp_path / "missing" / "report.html")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("linear-layout-report: error: cannot write") and err.count("\n") == 1


def test_corpus_pages_stay_under_a_megabyte(tmp_path):
    """The largest corpus pages (measured over all 72: at most 932 KB): each picture drawn once,
    compact cells sized by one shared stylesheet rule per size."""
    for kernel in ("gather.gfx942", "attention_fwd.gfx942", "matmul_f32.gfx1100", "matmul_i8.sm80"):
        path = tmp_path / f"{kernel}.html"
        assert main([str(ROOT / "tests" / "ttgir_corpus" / f"{kernel}.ttgir"), "--html", str(path)]) == 0
        page = path.read_text(encoding="utf-8")
        assert len(page.encode()) <= 1_000_000, kernel
        svgs = re.findall(r"<svg .*?</svg>", page, flags=re.S)
        assert len(set(svgs)) == len(svgs)  # no picture twice
        assert 'class="cell"' not in page and "width=\"" not in "".join(re.findall(r"<rect x[^>]*>", page))
        sizes = set(re.findall(r'<g class="grid (cell-[\d_]+x[\d_]+)">', page))
        assert sizes and all(f"g.{size} > rect {{" in page for size in sizes)
