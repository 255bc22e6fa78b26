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

from lowering_cases import DTYPE_OF_BITS, ELEMENT_DTYPES, kernel_text, random_input
from test_lowering import lower

CORPUS = Path(__file__).parent / "ttgir_corpus"
FILES = sorted(CORPUS.glob("*.ttgir"))


def _conversion_rows():
    """Every convert_layout row of every corpus file, none filtered out."""
    cases = []
    for path in FILES:
        report = report_ttgir(path.read_text(), kernel=path.name)
        for row in report.rows:
            if row.op == "ttg.convert_layout":
                cases.append(pytest.param(report, row, id=f"{path.stem}:{row.mlir_line}"))
    return cases


CONVERSIONS = _conversion_rows()


def _extracted_dtype(row) -> str:
    """The element type of the extracted kernel: the row's own, pointers as i64 (Triton's
    `!tt.ptr<...>` is a 64-bit address), any other type by its width."""
    if row.element.startswith("!tt.ptr<"):
        return "i64"
    return row.element if row.element in ELEMENT_DTYPES else DTYPE_OF_BITS[row.element_bits]


def test_every_conversion_of_the_corpus_has_a_row():
    for path in FILES:
        text = path.read_text()
        report = report_ttgir(text)
        rows = [r for r in report.rows if r.op == "ttg.convert_layout"]
        assert len(rows) == text.count("ttg.convert_layout"), path.name
        assert all(r.python.startswith("generate.py:") for r in rows), path.name


def test_every_conversion_of_the_corpus_is_executed():
    """The executed set is every convert_layout of the 60 files: all warp sizes (wave64 gfx942
    included) and element types (pointer tensors included)."""
    total = sum(path.read_text().count("ttg.convert_layout") for path in FILES)
    assert len(CONVERSIONS) == total and total >= 40
    reports_and_rows = [case.values for case in CONVERSIONS]
    assert {report.threads_per_warp for report, _ in reports_and_rows} == {32, 64}
    assert any(row.element.startswith("!tt.ptr<") for _, row in reports_and_rows)


@pytest.mark.parametrize("report, row", CONVERSIONS)
def test_predicted_cost_matches_the_interpreter(report: KernelReport, row):
    assert row.cost is not None, row.note
    src, dst = row.layouts
    dtype = _extracted_dtype(row)
    lanes = report.threads_per_warp
    context, module, error = lower(kernel_text(src, dst, dtype, report.num_warps, threads_per_warp=lanes))
    assert error is None, error
    x = random_input(list(row.shape), dtype, seed=row.mlir_line)
    y = np.zeros_like(x)
    with context:
        measured = run_kernel(module, [x, y], threads_per_warp=lanes)
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


def test_wave64_accesses_are_modelled_with_the_lds_bank_model():
    """gfx942 (64-lane wavefronts): every local_load/local_store/local_alloc has a bank-model cost,
    and none of the kernel's rows says it is not modelled."""
    for name in ("matmul_f32.gfx942.ttgir", "matmul_f16.gfx942.ttgir", "attention_fwd.gfx942.ttgir"):
        report = report_ttgir((CORPUS / name).read_text())
        accesses = [r for r in report.rows if r.op != "ttg.convert_layout"]
        assert report.threads_per_warp == 64 and accesses, name
        assert all(r.cost is not None and not r.note for r in report.rows), name
        assert all(r.cost.floor > 0 and r.cost.wavefronts >= r.cost.floor for r in accesses), name
        assert "not modelled" not in format_text(report)


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
