"""Every kind of bad input to linear-layout-opt gives exactly one line on stderr (with a
location where there is one), exit code 1, no traceback, no abort and no output. Run as real
processes, since an abort or a C++ message on stderr would not show in-process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

INPUTS = Path(__file__).parent / "lit" / "driver" / "Inputs"
VALID = 'func.func @f(%a: tensor<32xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {\n  return\n}\n'

# Triton 3.9 rejects a #ttg.linear that is not a permutation matrix once its zero bases are dropped, and
# aborts on one that is not surjective (tests/test_encodings_validation.py checks the rule against it).
LINEAR = ('func.func @f(%a: tensor<4xf32, #ttg.linear<{{register = {}, lane = [], warp = [], block = []}}>>) '
          '{{\n  return\n}}\n')


def run_opt(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", *args], input=stdin,
                          capture_output=True, timeout=60)


CASES = {
    "malformed attribute": ([str(INPUTS / "malformed-attribute.mlir")], None, "malformed-attribute.mlir:2:"),
    "malformed type": ([], b"func.func @f(%a: tensor<4xf32>>) {\n  return\n}\n", "<stdin>:1:"),
    "unknown operation": ([str(INPUTS / "unknown-op.mlir")], None, "unknown-op.mlir:2:"),
    "invalid encoding": ([], VALID.replace("[32]", "[3]").encode(), "<stdin>:1:1: error: invalid encoding #ttg.blocked"),
    "non-permutation #ttg.linear": (
        [], LINEAR.format("[[1], [3]]").encode(), "<stdin>:1:1: error: invalid encoding #ttg.linear: #ttg.linear "
        "without its zero bases must be a permutation matrix (each basis one distinct power of two in one dim), "
        "but basis [3] is not a single power of two"),
    "non-surjective #ttg.linear": (
        [], LINEAR.format("[[2]]").encode(), "<stdin>:1:1: error: invalid encoding #ttg.linear: #ttg.linear must "
        "be surjective onto its shape [4]"),
    "misspelt encoding name": (
        [], VALID.replace("#ttg.blocked", "#ttg.bloked").encode(),
        "<stdin>:1:38: error: unknown attribute #ttg.bloked (did you mean #ttg.blocked?); the known ttg attributes "
        "are #ttg.blocked, #ttg.slice, #ttg.linear, #ttg.generic_linear,"),
    "misspelt encoding name in an alias": (
        [], b"#b = #ttg.Blocked<{}>\nfunc.func @f(%a: tensor<4xf32, #b>) {\n  return\n}\n",
        "<stdin>:1:11: error: unknown attribute #ttg.Blocked (did you mean #ttg.blocked?)"),
    "misspelt ll attribute": (
        [], b"func.func @f(%a: tensor<4xf32, #ll.lay<{}>>) {\n  return\n}\n",
        "<stdin>:1:36: error: unknown attribute #ll.lay (did you mean #ll.layout?); the known ll attributes are "
        "#ll.layout"),
    "misspelt ttg type": (
        [], b"func.func @f(%a: !ttg.memdsc<4xf32>) {\n  return\n}\n",
        "<stdin>:1:23: error: unknown type !ttg.memdsc (did you mean !ttg.memdesc?); the known ttg types are "
        "!ttg.memdesc, !ttg.memdesc_view, !ttg.async_token"),
    "deep pass pipeline": (["-p", "func.func(" * 300 + "cse" + ")" * 300], VALID.encode(),
                           "nesting deeper than 256 levels (the limit)"),
    "invalid pipeline": (["-p", "builtin.module(cse"], VALID.encode(), "invalid pass pipeline"),
    "unknown pass": (["-p", "no-such-pass"], VALID.encode(), "unknown pass 'no-such-pass'"),
    "bad pass option": (["-p", "canonicalize{max-iterations=x}"], VALID.encode(), "max-iterations"),
    "bad python pass option": (["-p", "ll-verify{check-launch=maybe}"], VALID.encode(), "check-launch"),
    "missing file": ([str(INPUTS / "does-not-exist.mlir")], None, "cannot open input file"),
    "empty input": ([], b"", "<stdin>: error: empty input"),
    "blank input": ([], b"  \n\n", "<stdin>: error: empty input"),
    "binary garbage": ([str(INPUTS / "binary.bin")], None, "binary.bin: error: input is binary data"),
    "non-UTF-8 bytes": ([], b"\xff\xfe\xfd garbage", "not UTF-8"),
    "unknown flag": (["--no-such-flag"], VALID.encode(), "unrecognized arguments"),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_one_line(name):
    args, stdin, expected = CASES[name]
    result = run_opt(*args, stdin=stdin)
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert result.stdout == b""
    assert "Traceback" not in stderr
    assert len(stderr.splitlines()) == 1, stderr
    assert expected in stderr


def test_failing_pass_writes_no_output_file(tmp_path):
    out = tmp_path / "out.mlir"
    result = run_opt("-o", str(out), stdin=VALID.replace("[32]", "[3]").encode())
    assert result.returncode == 1 and not out.exists()


def test_valid_input_round_trips(tmp_path):
    first = run_opt("-p", "builtin.module(ll-verify, canonicalize, func.func(cse))", stdin=VALID.encode())
    assert first.returncode == 0, first.stderr
    second = run_opt(stdin=first.stdout)
    assert second.returncode == 0 and second.stdout == first.stdout
