"""The pass-level reproducer classes of issue 10, each a one-line user error at the op (exit 1, no
traceback), run as processes: element types each lowering supports, the register budget, ll.apply
index ranges and coordinate widths, one-element local_alloc, nested memdesc shapes, and the
multithreaded verifier whose diagnostics once aborted the process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "fuzz_corpus"


def run_opt(pipeline: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", "-p", f"builtin.module({pipeline})"],
                          input=text, capture_output=True, text=True, timeout=120)


def corpus_input(name: str) -> str:
    """The IR of a corpus reproducer (its two header comments stay: they are comments)."""
    return (CORPUS / name).read_text()


def assert_one_line_error(result: subprocess.CompletedProcess, expected: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert expected in result.stderr, result.stderr


@pytest.mark.parametrize("pipeline", ["ll-to-simt", "ll-lower"])
def test_unsupported_element_type_names_the_supported_ones(pipeline):
    result = run_opt(pipeline, corpus_input("internal-f80-ll-to-simt.mlir"))
    assert_one_line_error(result, "element type f80 cannot be lowered (supported: i1, i8, i16, i32, i64, index, "
                                  "f16, bf16, f32, f64, f8E4M3FN, f8E5M2)")


def test_register_budget_refuses_with_the_number():
    result = run_opt("ll-lower", corpus_input("hang-16384x64-f16-one-warp.mlir"))
    assert_one_line_error(result, "needs 16384 32-bit registers per thread, more than the 255 a thread has "
                                  "(Triton would spill it to local memory)")
    assert ":7:13: error:" in result.stderr  # the ll.load (line 5 of the kernel, after the 2 header lines)


_SEED = ('#seed = #ll.layout<[["register", [[4, 0], [8, 0], [16, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], '
         '[0, 16]]], ["warp", [[1, 0], [2, 0]]]], [["dim0", 32], ["dim1", 32]]>\n')


def _apply(reg: str, type_: str = "i32", results: str = "i32, i32") -> str:
    return (_SEED + f"func.func @f(%lane: {type_}, %warp: {type_}) -> ({results}) {{\n"
            f"  %reg = arith.constant {reg} : {type_}\n"
            f"  %row, %col = \"ll.apply\"(%reg, %lane, %warp) {{layout = #seed}} : ({type_}, {type_}, {type_}) "
            f"-> ({results})\n  return %row, %col : {results}\n}}\n")


@pytest.mark.parametrize("reg, type_", [("8", "i32"), ("9", "index"), ("-1", "i32"), ("4294967295", "i64")])
@pytest.mark.parametrize("pipeline", ["ll-verify", "ll-lower-apply"])
def test_apply_constant_index_out_of_range(reg, type_, pipeline):
    result = run_opt(pipeline, _apply(reg, type_, f"{type_}, {type_}"))
    assert_one_line_error(result, f"<stdin>:4:16: error: 'll.apply' op index 'register' is the constant {int(reg)}, "
                                  "out of range for its size 8 (indices must be in range; they do not wrap)")


def test_apply_constant_index_in_range_folds_like_linear_layout_apply():
    result = run_opt("ll-lower-apply", _apply("7"))  # (register=7) -> (4^8^16, 0) = (28, 0), plus lane/warp
    assert result.returncode == 0, result.stderr
    assert "ll.apply" not in result.stdout


def test_apply_coordinate_that_does_not_fit_its_type():
    result = run_opt("ll-lower-apply", corpus_input("wrong-apply-truncated-coordinate.mlir"))
    assert_one_line_error(result, "coordinate 'dim0' (size 8589934592) does not fit its type i32")
    fits = corpus_input("wrong-apply-truncated-coordinate.mlir").replace("i32", "i64")
    assert run_opt("ll-lower-apply", fits).returncode == 0


def test_apply_operand_of_a_non_integer_type():
    text = (_SEED + "func.func @f(%r: f32, %l: f32, %w: f32) -> (f32, f32) {\n"
            "  %row, %col = \"ll.apply\"(%r, %l, %w) {layout = #seed} : (f32, f32, f32) -> (f32, f32)\n"
            "  return %row, %col : f32, f32\n}\n")
    # IRDL's own constraint on ll.apply operands catches it before the op's rules run.
    assert_one_line_error(run_opt("ll-verify", text), "<stdin>:3:16: error: 'f32' does not satisfy the constraint")


def test_one_element_local_alloc_linearizes():
    result = run_opt("ll-linearize-encodings", corpus_input("internal-rank1-size1-local-alloc.mlir"))
    assert result.returncode == 0, result.stderr
    assert '!ttg.memdesc<[1], f16' in result.stdout


WMMA = ('module attributes {{"ttg.num-warps" = 2 : i32, "ttg.threads-per-warp" = 32 : i32}} {{\n'
        '  func.func @f(%a: tensor<32x32xf32, #ttg.amd_wmma<{{version = 2, isTranspose = false, ctaLayout = {{{}}}}}>>) '
        '{{\n    return\n  }}\n}}\n')


def test_a_layout_that_is_not_a_permutation_linearizes_to_generic_linear():
    """A swizzled warp basis (from the WMMA ctaLayout): Triton 3.9's #ttg.generic_linear, not #ttg.linear."""
    result = run_opt("ll-linearize-encodings", WMMA.format("register = [[1, 0]], warp = [[1, 1]]"))
    assert result.returncode == 0, result.stderr
    assert "#ttg.generic_linear<{block = [], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], register = [[1, 0], " \
           "[2, 0], [4, 0], [16, 0]], warp = [[16, 16]]}>" in result.stdout
    again = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt"], input=result.stdout,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout == result.stdout


def test_a_swizzled_register_basis_cannot_be_linearized():
    """No #ttg.linear or #ttg.generic_linear holds a register basis moving along two dims: one error, once."""
    result = run_opt("ll-linearize-encodings", WMMA.format("register = [[1, 1]], warp = [[0, 1]]"))
    assert_one_line_error(result, "<stdin>:2:3: error: cannot linearize tensor<32x32xf32, #ttg.amd_wmma<")
    assert "register basis [16, 16] moves along several dims" in result.stderr


def test_nested_memdesc_shape_is_rejected():
    result = run_opt("ll-verify", corpus_input("wrong-memdesc-nested-shape.mlir"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "the shape of a !ttg.memdesc must be a list of integers, got [[1]]" in result.stderr


def test_diagnostics_from_sibling_modules_do_not_abort():
    """Duplicate symbols in nested modules: MLIR's verifier once reported them from worker threads to
    the Python handler without the GIL (nanobind abort, about one run in six). Run it a few times."""
    text = corpus_input("abort-gil-parallel-verifier-nested-modules.mlir")
    for _ in range(4):
        result = run_opt("ll-verify, ll-explain-conversions", text)
        assert result.returncode == 1, result.stderr
        assert "redefinition of symbol named 'f'" in result.stderr and "nanobind" not in result.stderr
