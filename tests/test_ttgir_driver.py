"""linear-layout-opt on real TTGIR: verify, explain, write TTGIR that Triton compiles unchanged."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from linear_layout.tools.opt import main
from linear_layout.tools.report import report_ttgir
from ttgir_compile import COMPILES, assembly

CORPUS = Path(__file__).parent / "ttgir_corpus"
# One kernel per kind of target (wave32 and wave64 AMD included); the round trip (test_ttgir.py)
# covers every file.
EXPLAINED = ["matmul_f16.sm80", "attention_fwd.sm90", "reductions.gfx1100", "reductions.gfx942", "transpose.sm90",
             "matmul_f32.sm80"]  # a pipelined matmul: its async copies are annotated too


@pytest.mark.parametrize("stem", EXPLAINED)
def test_explained_kernel_is_annotated_and_compiles_unchanged(stem, tmp_path):
    pytest.importorskip("triton", reason="triton compiles the annotated TTGIR")
    source = CORPUS / f"{stem}.ttgir"
    original = COMPILES.submit(source.read_text(), stem)  # compiles while the pass runs
    out = tmp_path / "explained.ttgir"
    assert main([str(source), "-p", "builtin.module(ll-explain-conversions)", "-o", str(out)]) == 0
    text = out.read_text()
    conversions = [line for line in text.splitlines() if "ttg.convert_layout" in line]
    assert conversions and all("ll.explain" in line for line in conversions)
    copies = [line for line in text.splitlines() if "ttg.async_copy_global_to_local" in line]
    assert all("ll.explain = \"store " in line for line in copies)
    assert assembly(text, stem) == original.result()


def test_generic_output_is_mlir(capsys):
    assert main([str(CORPUS / "softmax.sm90.ttgir"), "--mlir-print-op-generic"]) == 0
    assert '"tt.func"()' in capsys.readouterr().out


def test_ttgir_flag_reads_stdin_as_ttgir(tmp_path):
    text = (CORPUS / "softmax.sm90.ttgir").read_text()
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", "--ttgir"], input=text,
                            capture_output=True, text=True)
    assert result.returncode == 0 and "tt.func public @softmax_kernel" in result.stdout


@pytest.mark.parametrize("bad, expected", [
    ("module {\n  tt.func @k() {\n    tt.frob\n  }\n}\n", ":3:5: error: unknown operation 'tt.frob'"),
    ("module {\n  tt.func @k() {\n", "error: unexpected end of input"),
    ("#b = #ttg.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\n"
     "module attributes {\"ttg.num-warps\" = 4 : i32, \"ttg.threads-per-warp\" = 32 : i32} {\n"
     "  tt.func @k() {\n    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #b>\n"
     "    tt.return\n  }\n}\n", ":1:1: error: alias #b: invalid encoding #ttg.blocked: size_per_thread must contain only "
     "powers of two, got [3] (first used at 4:77)"),
])
def test_malformed_ttgir_exit_code_one_and_no_traceback(tmp_path, bad, expected):
    path = tmp_path / "bad.ttgir"
    path.write_text(bad)
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert expected in result.stderr, result.stderr


def test_verifier_errors_point_at_the_python_source(tmp_path):
    text = (CORPUS / "matmul_f16.sm80.ttgir").read_text()
    expand = next(line for line in text.splitlines() if "tt.expand_dims" in line and "{axis = 1 : i32}" in line)
    wrong = expand.replace("{axis = 1 : i32}", "{axis = 0 : i32}")
    path = tmp_path / "wrong.ttgir"
    path.write_text(text.replace(expand, wrong))
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = result.stderr.strip().splitlines()
    assert any(e.startswith("generate.py:") and "inferExpandDimsOpEncoding" in e for e in errors), errors


def test_a_bad_alias_is_reported_once_at_its_definition(tmp_path):
    text = (CORPUS / "matmul_f16.sm80.ttgir").read_text()
    blocked = next(line for line in text.splitlines() if line.startswith("#blocked = "))
    wrong = blocked.replace("warpsPerCTA = [1, 4]", "warpsPerCTA = [2, 4]")
    assert wrong != blocked
    path = tmp_path / "wrong.ttgir"
    path.write_text(text.replace(blocked, wrong))
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [error] = result.stderr.strip().splitlines()
    first_use = next(n for n, row in enumerate(text.splitlines(), 1) if n > 1 and "#blocked>" in row)
    assert error.startswith(f"{path}:1:1: error: alias #blocked: ") and "ttg.num-warps = 4" in error, error
    assert f"(first used at {first_use}:" in error, error


def _explained_costs(line: str) -> tuple[int, list[tuple[int, int]]]:
    """What an ll.explain annotation says that the report also gives: the shuffles per thread
    (in-warp or packed), and the (wavefronts, ideal) of each shared-memory side."""
    shuffles = re.findall(r"shuffle: (\d+) shuffles|packed: (\d+) shuffle", line)
    pairs = re.findall(r"\((\d+) wavefronts, ideal (\d+)\)", line)
    return sum(int(a or b) for a, b in shuffles), [(int(w), int(i)) for w, i in pairs]


def _matrix_waves(line: str) -> list[int]:
    """The [store, load] wavefronts of a matrix plan's annotation: `N x stmatrix... (W wavefronts)`
    or `store ... (W wavefronts)`, and `N x ldmatrix... (W wavefronts)` or `load ... (W wavefronts)`."""
    found = []
    for side, matrix in (("store", "stmatrix"), ("load", "ldmatrix")):
        match = re.search(rf"(?:{matrix}[.\w]*|{side} [^(;]*) \((\d+) wavefronts\)", line)
        found.append(int(match.group(1)) if match else -1)
    return found


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.ttgir")), ids=lambda p: p.stem)
def test_every_conversion_and_access_is_explained(path, tmp_path):
    """Every convert_layout/local_load/local_store/async_copy_global_to_local is annotated, with
    the report's costs (64-lane gfx942 kernels, ttg.memdesc_subslice reads and the async copies of
    pipelined matmuls included)."""
    out = tmp_path / "explained.ttgir"
    assert main([str(path), "-p", "builtin.module(ll-explain-conversions)", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    ops = ("ttg.convert_layout", "ttg.local_load", "ttg.local_store", "ttg.async_copy_global_to_local")
    annotated = [line for line in lines if any(f" {op} " in line for op in ops)]
    assert annotated == [line for line in annotated if "ll.explain" in line]
    assert len(annotated) == sum(path.read_text().count(f" {op} ") for op in ops)
    for row in report_ttgir(path.read_text()).rows:
        line, cost = lines[row.mlir_line - 1], row.cost
        assert row.op in line and cost is not None and "not modelled" not in line, line
        shuffles, sides = _explained_costs(line)
        if row.op != "ttg.convert_layout":
            assert sides == [(cost.wavefronts, cost.ideal)], line
            continue
        assert shuffles == cost.shuffles, line
        if cost.strategy == "matrix":  # a chip's ldmatrix/stmatrix plan (the module's ttg.target) says no ideal
            assert _matrix_waves(line) == [cost.store_wavefronts, cost.load_wavefronts], line
            continue
        waves = [cost.store_wavefronts, cost.load_wavefronts] if cost.strategy in ("shared", "packed") else []
        assert [w for w, _ in sides] == waves and sum(i for _, i in sides) == cost.ideal, line


@pytest.mark.parametrize("stem", ["matmul_pingpong.gfx942", "attention_fwd.sm90", "misc_ops.gfx942",
                                  "warp_specialize.sm100", "gluon_amd_convert.gfx1250", "gluon_tdm.gfx1250",
                                  "gluon_nvidia_tma.sm100", "gluon_tmem.sm103", "dot_scaled.sm100", "split.sm90"])
def test_opt_writes_a_ttgir_file_back_byte_for_byte(stem, tmp_path):
    """rocdl ops as Triton prints them, scf.for arguments named by their locations, aliases in
    MLIR's order: `linear-layout-opt k.ttgir -o out.ttgir` (with its ll-verify) changes nothing."""
    out = tmp_path / "out.ttgir"
    assert main([str(CORPUS / f"{stem}.ttgir"), "-o", str(out)]) == 0
    assert out.read_text() == (CORPUS / f"{stem}.ttgir").read_text()


@pytest.mark.parametrize(("stem", "op"), [("warp_specialize.sm100", "ttg_unregistered.warp_specialize"),
                                          ("gluon_amd_convert.gfx1250", "ttg_unregistered.fp4_to_fp"),
                                          ("tcgen05_matmul.sm100", "ttng.tc_gen5_mma")])
def test_ops_without_a_lowering_are_named_by_ll_lower(stem, op, tmp_path, capsys):
    """Ops the table reads but nothing lowers (tensor memory, warp specialization, ops IRDL's ttg
    does not declare) are one error of ll-lower that names them, never a silent pass."""
    out = tmp_path / "out.ttgir"
    assert main([str(CORPUS / f"{stem}.ttgir"), "-p", "builtin.module(ll-lower)", "-o", str(out)]) == 1
    message = capsys.readouterr().err
    assert "has no lowering to SIMT form" in message and op in message and "Traceback" not in message
