"""A TTGIR module's `ttg.target`: one rule for the chip everything is costed and lowered for.

- a target naming no known chip (`hip:gfx9999`, `cuda:91`, ...) is a one-line user error at the
  attribute's line:col of every tool (linear-layout-opt with any pipeline, linear-layout-report),
  and an error of the passes and of `ll-verify` for the Python API: never lowered as NVIDIA code;
- `ll-explain-conversions` and `linear-layout-report` cost conversions and dots for the pass's
  `chip` option, else the module's `ttg.target` (docs/passes.md, "The chip").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mlir import ir

from linear_layout.core.targets import TargetError, target_chip
from linear_layout.dialects.verifier import verify
from linear_layout.passes.ll_to_simt import lower_to_simt
from linear_layout.tools.opt import main as opt_main
from linear_layout.tools.report import main as report_main
from linear_layout.tools.report import report_ttgir
from linear_layout.ttgir import TtgirError, parse_ttgir, ttgir_context, ttgir_to_mlir

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "tests" / "kernel_corpus" / "ttgir" / "argmax.sm80.w4.ttgir"
MATMUL = ROOT / "examples" / "matmul.ttgir"

BAD_TARGETS = {
    '"hip:gfx9999"': "known AMD chips: gfx908",  # an unknown AMD chip: was lowered as NVIDIA code
    '"cuda:91"': "known NVIDIA targets: cuda:20",
    '"cuda:sm_80"': "known NVIDIA targets",
    '"nvidia"': 'give "cuda:N"',
}


def _with_target(tmp_path: Path, target: str) -> tuple[Path, int, int]:
    """The kernel with `ttg.target = target`, and the attribute's line and column."""
    text = KERNEL.read_text().replace('ttg.target = "cuda:80"', f"ttg.target = {target}")
    line_number, line = next((n, line) for n, line in enumerate(text.splitlines(), 1) if "ttg.target" in line)
    path = tmp_path / "bad.ttgir"
    path.write_text(text)
    return path, line_number, line.index("ttg.target") + 1


@pytest.mark.parametrize("target", BAD_TARGETS)
@pytest.mark.parametrize("pipeline", [None, "builtin.module(ll-to-simt)", "builtin.module(ll-explain-conversions)"])
def test_an_unknown_target_is_an_error_at_the_attribute(tmp_path, capsys, target, pipeline):
    path, line, column = _with_target(tmp_path, target)
    out = tmp_path / "out.ttgir"
    arguments = [str(path), "-o", str(out)] + (["-p", pipeline] if pipeline else [])
    assert opt_main(arguments) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error and not out.exists()
    assert error.startswith(f"{path}:{line}:{column}: error: unknown ttg.target {target.strip(chr(34))!r}"), error
    assert BAD_TARGETS[target] in error


@pytest.mark.parametrize("target", BAD_TARGETS)
def test_the_report_says_the_same_at_the_same_place(tmp_path, capsys, target):
    path, line, column = _with_target(tmp_path, target)
    assert report_main([str(path)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"{path}:{line}:{column}: error: unknown ttg.target"), error
    with pytest.raises(TtgirError, match=rf"^{line}:{column}: unknown ttg.target"):
        parse_ttgir(path.read_text())


def test_the_passes_and_the_verifier_refuse_an_unknown_target_of_a_module_built_in_python():
    text = KERNEL.read_text().replace('ttg.target = "cuda:80"', 'ttg.target = "hip:gfx9999"')
    context = ttgir_context()
    module = ir.Module.parse(ttgir_to_mlir(text), context)  # not through parse_ttgir's check
    before = str(module)
    with context:
        errors = lower_to_simt(module.operation)
    assert [message for _, message in errors] == [str(_target_error("hip:gfx9999"))]
    assert str(module) == before  # nothing lowered, as NVIDIA code or otherwise
    assert [message for _, message in verify(module)] == [str(_target_error("hip:gfx9999"))]


def _target_error(target: str) -> TargetError:
    with pytest.raises(TargetError) as raised:
        target_chip(target)
    return raised.value


def test_known_targets_name_their_chip():
    assert [target_chip(t) for t in ("cuda:80", "cuda:90", "cuda:100", "hip:gfx942", "hip:gfx1250", None)] == [
        "sm_80",
        "sm_90",
        "sm_100",
        "gfx942",
        "gfx1250",
        None,
    ]


def _explained(path: Path, capsys, options: str = "") -> dict[str, str]:
    """op name -> its first ll.explain, after ll-explain-conversions{options}."""
    assert opt_main([str(path), "-p", f"builtin.module(ll-explain-conversions{options})"]) == 0
    found: dict[str, str] = {}
    for line in capsys.readouterr().out.splitlines():
        match = re.search(r"= (\w+\.\w+) .*ll\.explain = \"([^\"]*)\"", line)
        if match:
            found.setdefault(match.group(1), match.group(2))
    return found


def test_explain_and_report_cost_conversions_and_dots_for_the_module_target(capsys, tmp_path):
    # examples/matmul.ttgir: ttg.target = "cuda:80"
    by_target = _explained(MATMUL, capsys)
    assert by_target == _explained(MATMUL, capsys, "{chip=sm_80}")  # the target's chip, as the option says it
    assert "ldmatrix" in by_target["ttg.convert_layout"]  # sm_80 has ldmatrix: the portable plan has none
    portable = tmp_path / "portable.ttgir"
    portable.write_text(MATMUL.read_text().replace('ttg.target = "cuda:80", ', ""))
    assert "ldmatrix" not in _explained(portable, capsys)["ttg.convert_layout"]
    # the option wins over the target (sm_90 also has stmatrix)
    assert _explained(MATMUL, capsys, "{chip=sm_90}")["ttg.convert_layout"] != by_target["ttg.convert_layout"]
    # the dot is annotated, as the report lists it, for the same chip
    report = report_ttgir(MATMUL.read_text())
    assert report.chip == "sm_80"
    dots = [other for other in report.others if other.op == "tt.dot"]
    assert dots and by_target["tt.dot"] == dots[0].detail and "ldmatrix per warp" in dots[0].detail
    # and the report's conversion is the plan explain shows
    (conversion,) = [row for row in report.rows if row.op == "ttg.convert_layout"]
    assert conversion.cost is not None and conversion.cost.strategy == "matrix"
    assert f"{conversion.cost.scratch_bytes} B scratch" in by_target["ttg.convert_layout"]
