"""linear-layout-report on the TTGIR corpus.

The prediction of every convert_layout row is checked by execution: the row's two layouts are
extracted into a standalone load -> convert_layout -> store kernel, lowered with `ll-lower` and
run for every thread by the SIMT interpreter, which must copy the tensor exactly and measure the
row's shuffles, barriers and store/load wavefronts.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linear_layout.simt import run_kernel
from linear_layout.tools.report import KernelReport, format_json, format_text, main, report_ttgir

from lowering_cases import kernel_text, random_input
from test_lowering import lower

CORPUS = Path(__file__).parent / "ttgir_corpus"
WARP32 = sorted(f for f in CORPUS.glob("*.ttgir") if ".gfx942." not in f.name)
DTYPES = {32: "f32", 16: "f16", 8: "i8"}


def _conversion_rows():
    cases = []
    for path in WARP32:
        report = report_ttgir(path.read_text(), kernel=path.name)
        for row in report.rows:
            if row.op == "ttg.convert_layout" and row.cost is not None and row.element_bits in DTYPES:
                cases.append(pytest.param(report, row, id=f"{path.stem}:{row.mlir_line}"))
    return cases


CONVERSIONS = _conversion_rows()


def test_every_conversion_of_the_corpus_has_a_row():
    for path in sorted(CORPUS.glob("*.ttgir")):
        text = path.read_text()
        report = report_ttgir(text)
        rows = [r for r in report.rows if r.op == "ttg.convert_layout"]
        assert len(rows) == text.count("ttg.convert_layout"), path.name
        assert all(r.python.startswith("generate.py:") for r in rows), path.name
    assert len(CONVERSIONS) >= 20


@pytest.mark.parametrize("report, row", CONVERSIONS)
def test_predicted_cost_matches_the_interpreter(report: KernelReport, row):
    src, dst = row.layouts
    dtype = DTYPES[row.element_bits]
    context, module, error = lower(kernel_text(src, dst, dtype, report.num_warps))
    assert error is None, error
    x = random_input(list(row.shape), dtype, seed=row.mlir_line)
    y = np.zeros_like(x)
    with context:
        measured = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "the extracted conversion lost data"
    assert not measured.races
    cost = row.cost
    assert measured.shuffles == cost.shuffles * report.num_warps
    if cost.strategy in ("shared", "matrix"):
        waves = collections.Counter()
        for access in measured.shared_accesses:
            waves[access.kind] += access.wavefronts
        assert (waves["store"], waves["load"]) == (cost.store_wavefronts, cost.load_wavefronts)
        assert measured.ideal_wavefronts == cost.ideal
        assert measured.floor_wavefronts == cost.floor
        assert measured.barriers == cost.barriers
    else:
        assert measured.wavefronts == 0 and cost.wavefronts == 0


def test_local_accesses_are_reported_with_bank_conflicts():
    report = report_ttgir((CORPUS / "attention_fwd.sm80.ttgir").read_text())
    accesses = [r for r in report.rows if r.op != "ttg.convert_layout"]
    assert {r.op for r in accesses} == {"ttg.local_alloc", "ttg.local_load"}
    assert all(r.cost is not None and r.cost.floor > 0 and r.cost.wavefronts >= r.cost.floor for r in accesses)
    assert all(r.src.startswith("#") and r.dst.startswith("#") for r in accesses)


def test_text_has_a_row_per_entry_and_totals():
    report = report_ttgir((CORPUS / "attention_fwd.sm90.ttgir").read_text())
    text = format_text(report)
    lines = text.splitlines()
    assert len(lines) == len(report.rows) + 2 and lines[-1].startswith("total: ")
    assert "#mma -> #blocked" in text


def test_json_round_trips_the_data():
    report = report_ttgir((CORPUS / "matmul_f16.sm80.ttgir").read_text(), kernel="k")
    data = json.loads(format_json(report))
    assert data["totals"] == report.totals()
    assert [r["mlir_line"] for r in data["rows"]] == [r.mlir_line for r in report.rows]


def test_wave64_kernels_plan_conversions_and_say_what_is_not_modelled():
    report = report_ttgir((CORPUS / "reductions.gfx942.ttgir").read_text())
    assert report.rows and all(r.cost is not None and "64-lane plan" in r.note for r in report.rows)
    report = report_ttgir((CORPUS / "matmul_f32.gfx942.ttgir").read_text())
    accesses = [r for r in report.rows if r.op != "ttg.convert_layout"]
    assert accesses and all(r.cost is None and "32-lane" in r.note for r in accesses)


def test_console_script(capsys):
    assert main([str(CORPUS / "transpose.sm80.ttgir"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["conversions"] == 1


@pytest.mark.parametrize("text, expected", [
    ("module {\n  tt.func @k() {\n    tt.frob\n  }\n}\n", ":3:5: error: unknown operation 'tt.frob'"),
    ("module {\n  tt.func @k() {\n", "unexpected end of input"),
])
def test_malformed_input_is_one_line_exit_one(tmp_path, text, expected):
    path = tmp_path / "bad.ttgir"
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.report", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr, result.stderr


@pytest.mark.parametrize("doc", ["README.md", "docs/triton-kernels.md"])
def test_docs_show_the_current_report_of_the_bundled_kernel(doc):
    root = Path(__file__).resolve().parents[1]
    text = (root / doc).read_text()
    shown = text.split("linear-layout-report examples/matmul.ttgir\n```\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == format_text(report_ttgir((root / "examples" / "matmul.ttgir").read_text()))


def test_report_of_a_module_alone_uses_its_printed_ttgir():
    from linear_layout.tools.report import build_report
    from linear_layout.ttgir import parse_ttgir, print_ttgir

    text = (CORPUS / "attention_fwd.sm90.ttgir").read_text()
    module = parse_ttgir(text)
    with module.context:
        alone = build_report(module)
        written = print_ttgir(module).splitlines()
    assert [r.cost for r in alone.rows] == [r.cost for r in report_ttgir(text).rows]
    assert all(" = ttg." in written[r.mlir_line - 1] or "ttg." in written[r.mlir_line - 1] for r in alone.rows)
    assert all(r.op in written[r.mlir_line - 1] for r in alone.rows)
