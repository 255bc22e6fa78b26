"""`tt.ptr_to_int` and `tt.int_to_ptr` (the kernel corpus's `pointer_int` runs them against Triton's
interpreter, `test_kernel_lowering.py`): an integer turned into a pointer must come from exactly
one pointer argument's `tt.ptr_to_int`; anything else is a one-line error at the op, exit status 1
and no output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linear_layout.tools.opt import main

KERNEL = Path(__file__).parent / "kernel_corpus" / "ttgir" / "pointer_int.sm80.w4.ttgir"
NEIGHBOURS = re.compile(r"%neighbours = arith\.xori %addresses_8, %cst ")


def _edited(replacement: str, tmp_path: Path) -> Path:
    text = KERNEL.read_text()
    assert NEIGHBOURS.search(text), "the corpus kernel computes the address it turns into a pointer"
    path = tmp_path / "edited.ttgir"
    path.write_text(NEIGHBOURS.sub(replacement, text, count=1))
    return path


@pytest.mark.parametrize(
    "replacement, origins",
    [
        # from no pointer: a constant
        ("%neighbours = arith.xori %cst, %cst ", 0),
        # from two pointer arguments: x's addresses and diff's
        ("%from_diff = tt.ptr_to_int %1 : tensor<256x!tt.ptr<i64>, #blocked> -> tensor<256xi64, #blocked>\n"
         "    %neighbours = arith.xori %addresses_8, %from_diff ", 2),
    ],
)
def test_an_integer_from_other_than_one_pointer_argument_is_a_one_line_error(replacement, origins, tmp_path, capsys):
    out = tmp_path / "out.mlir"
    status = main([str(_edited(replacement, tmp_path)), "-p", "builtin.module(ll-lower)", "-o", str(out)])
    errors = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and not out.exists()
    assert len(errors) == 1 and re.match(r"corpus\.py:\d+:\d+: error: ", errors[0]), errors
    assert f"derives from {origins} pointer arguments, not exactly one" in errors[0]


def test_the_unedited_kernel_lowers(tmp_path):
    out = tmp_path / "out.mlir"
    assert main([str(KERNEL), "-p", "builtin.module(ll-lower)", "-o", str(out)]) == 0
    assert "memref.extract_aligned_pointer_as_index" in out.read_text()
