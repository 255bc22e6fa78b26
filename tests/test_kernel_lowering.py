"""Lowering real Triton kernels (`tt.func` TTGIR from the kernel corpus) with `ll-lower`.

Every op without a lowering is a one-line error at its location, exit status 1 and no output:
the lowering never exits 0 with a Triton op left in place."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from linear_layout.patterns.triton_ops import LOWERED_TRITON_OPS
from linear_layout.tools.opt import main

TTGIR = Path(__file__).parent / "kernel_corpus" / "ttgir"
FILES = sorted(TTGIR.glob("*.ttgir"))

_TRITON_OP = re.compile(r"\b((?:tt|ttg)\.[a-z_.]+)\b")


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_kernel_with_an_op_without_lowering_is_an_error_and_writes_nothing(path, tmp_path, capsys):
    ops = set(_TRITON_OP.findall(path.read_text())) - {"ttg.num", "ttg.target", "ttg.threads"}
    left = sorted(op for op in ops if op not in LOWERED_TRITON_OPS)
    if not left:
        pytest.skip("every op of this kernel has a lowering: the run tests cover it")
    out = tmp_path / "out.mlir"
    assert main([str(path), "-p", "builtin.module(ll-lower)", "-o", str(out)]) == 1
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1, errors
    assert re.match(r"corpus\.py:\d+:\d+: error: '(tt|ttg)\.[a-z_.]+' has no lowering to SIMT form", errors[0])
    named = re.search(r"'([^']+)'", errors[0]).group(1)
    assert named in left and not out.exists()


def test_the_error_is_one_line_without_traceback_from_the_console_script():
    result = subprocess.run(
        [sys.executable, "-m", "linear_layout.tools.opt", str(TTGIR / "softmax.sm90.w8.ttgir"), "-p",
         "builtin.module(ll-lower)"],
        capture_output=True, text=True,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "@softmax_kernel" in result.stderr and "tt.reduce" in result.stderr
