"""linear-layout-opt in-process: flags and split/verify-diagnostics logic, without starting
processes (the lit suite and test_driver_errors.py run it as a program)."""

from __future__ import annotations

import pathlib

import pytest

from linear_layout.tools import opt

BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"


def run(capsys, tmp_path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    code = opt.main([str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_split_input_file_keeps_line_numbers(capsys, tmp_path):
    text = f"func.func @a() {{\n  return\n}}\n// -----\nfunc.func @b(%x: tensor<4x4xf32, {BLOCKED}>) {{\n  return\n}}\n"
    code, out, err = run(capsys, tmp_path, text, "--split-input-file")
    assert code == 1 and out == ""
    assert err.startswith(f"{tmp_path / 'input.mlir'}:5:1: error: #ttg.blocked has rank 1")


def test_verify_diagnostics_relative_and_absolute_lines(capsys, tmp_path):
    bad = f"func.func @b(%x: tensor<4x4xf32, {BLOCKED}>) {{\n  return\n}}\n"
    text = ("// expected-error@+1 {{has rank 1}}\n" + bad + "// -----\n" + bad +
            "// expected-error@-3 {{has rank 1}}\n// -----\n// expected-error@13 {{has rank 1}}\n\n" + bad)
    code, _out, err = run(capsys, tmp_path, text, "--split-input-file", "--verify-diagnostics")
    assert (code, err) == (0, "")


def test_verify_diagnostics_reports_unmet_and_unexpected(capsys, tmp_path):
    text = "// expected-error@+1 {{never}}\nfunc.func @a() {\n  return\n}\n"
    code, _out, err = run(capsys, tmp_path, text, "--verify-diagnostics")
    assert code == 1
    assert ':2: error: expected error "never" was not produced' in err


def test_list_passes_and_version(capsys):
    assert opt.main(["--list-passes"]) == 0
    assert "ll-verify" in capsys.readouterr().out
    assert opt.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("linear-layout-opt ")


@pytest.mark.parametrize("location_kind", ["name", "fused", "callsite"])
def test_diagnostic_positions_inside_other_locations(capsys, tmp_path, location_kind):
    loc = {"name": 'loc("n"("f.mlir":7:3))', "fused": 'loc(fused["f.mlir":7:3, "g":1:1])',
           "callsite": 'loc(callsite("f.mlir":7:3 at "g":1:1))'}[location_kind]
    text = f"func.func @b(%x: tensor<4x4xf32, {BLOCKED}>) {{\n  return\n}} {loc}\n"
    code, _out, err = run(capsys, tmp_path, text)
    assert code == 1 and ":7:3: error:" in err


EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "transpose.mlir"


def test_emit_ptx_compiles_the_lowered_example(capsys):
    code = opt.main([str(EXAMPLE), "-p", "builtin.module(ll-lower)", "--emit-ptx", "--ptx-chip=sm_80"])
    out = capsys.readouterr().out
    assert code == 0
    assert ".target sm_80" in out and ".entry transpose" in out
    assert "shfl.sync.idx.b32" in out  # the example's conversion is a warp-shuffle exchange


@pytest.mark.parametrize("args, message", [
    (["--emit-ptx"], "--emit-ptx: the module has no gpu.module"),
    (["-p", "builtin.module(ll-lower)", "--emit-ptx", "--ptx-chip=90"], "--ptx-chip: unknown NVPTX chip '90'; known chips: sm_20"),
])
def test_emit_ptx_user_errors(capsys, args, message):
    code = opt.main([str(EXAMPLE), *args])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err
