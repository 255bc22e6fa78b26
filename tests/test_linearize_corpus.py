"""`ll-linearize-encodings` on the kernel corpus: its output passes `ll-verify` (Triton's layout
rules included) and lowers to exactly what the original lowers to, and Triton 3.9 itself parses
and compiles it: the encodings Triton requires as written (`tt.expand_dims`' `#ttg.slice`
operand and its parent, `tt.broadcast`'s one encoding for two shapes, `tt.dot`'s `#ttg.dot_op`
operands) are kept, every other one becomes `#ttg.linear` / `#ttg.shared_linear`."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layout.passes import build_pass_manager
from linear_layout.ttgir import parse_ttgir, print_ttgir
from ttgir_compile import assembly

CORPUS = Path(__file__).parent / "kernel_corpus" / "ttgir"
#: One launch of every kernel (4 warps, sm_80): the corpus's layouts, once each.
FILES = sorted(CORPUS.glob("*.sm80.w4.ttgir"))


def _run(text: str, pipeline: str) -> str:
    """The module after `ll-verify`, `pipeline` and `ll-verify` again (printed generic: no TTGIR
    writer). Every corpus file verifies (Triton produced and accepted it), so a failure of the
    first `ll-verify` fails the test."""
    module = parse_ttgir(text)
    build_pass_manager(f"ll-verify, {pipeline}, ll-verify", module.context).run(module.operation)
    return print_ttgir(module) if "ll-lower" not in pipeline else str(module)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split(".")[0])
def test_the_linear_form_verifies_and_lowers_as_the_original(path):
    original = path.read_text()
    linear = _run(original, "ll-linearize-encodings")
    assert _run(linear, "ll-linearize-encodings") == linear  # idempotent
    assert _run(linear, "ll-lower") == _run(original, "ll-lower")


@pytest.mark.parametrize("stem", ["matmul_f16", "matmul_epilogue", "attention"])
def test_triton_compiles_the_linear_form(stem):
    pytest.importorskip("triton", reason="Triton parses and compiles the linearized TTGIR")
    linear = _run((CORPUS / f"{stem}.sm80.w4.ttgir").read_text(), "ll-linearize-encodings")
    assert "#ttg.slice" in linear  # the expand_dims operands are kept
    assert "#ttg.linear" in linear or "#ttg.shared_linear" in linear  # and the rest is linear
    assert ".entry" in assembly(linear, f"{stem}.sm80")
