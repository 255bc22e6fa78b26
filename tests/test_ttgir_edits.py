"""Edited TTGIR: we accept exactly the edits Triton accepts, and name the rule an edit breaks.

Each case edits the layouts of a kernel Triton compiled (tests/ttgir_corpus); Triton 3.9 compiles
the edited file in a worker process (`ttgir_compile.py`: a refused file raises there), and we read
it (`parse_ttgir`) and run the verifier on it, as `linear-layout-opt` does. An alias whose
encoding is unsound is one error at its definition, whatever the number of its uses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layout.dialects.verifier import verify
from linear_layout.ttgir import TtgirError, parse_ttgir
from ttgir_compile import COMPILES

CORPUS = Path(__file__).parent / "ttgir_corpus"
TRANSPOSE_BLOCKED = "sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>"
TRANSPOSE_BLOCKED1 = "sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]}>"
REDUCED = "tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>"
RANGE = "tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>"

# name: (corpus file, [(old, new)], the rule our message names, or None where Triton accepts)
EDITS = {
    "trans source layout only": (
        "transpose.sm90",
        [(TRANSPOSE_BLOCKED, "sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>")],
        "inferTransOpEncoding",
    ),
    "trans source and result layouts together": (
        "transpose.sm90",
        [
            (TRANSPOSE_BLOCKED, "sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>"),
            (TRANSPOSE_BLOCKED1, "sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [0, 1]}>"),
        ],
        None,
    ),
    "alias with 30 threads per warp": (
        "transpose.sm90",
        [(TRANSPOSE_BLOCKED, "sizePerThread = [1, 1], threadsPerWarp = [1, 30], warpsPerCTA = [2, 2], order = [1, 0]}>")],
        "powers of two",
    ),
    "alias with 16 threads per warp in a 32-thread kernel": (
        "transpose.sm90",
        [(TRANSPOSE_BLOCKED, "sizePerThread = [1, 1], threadsPerWarp = [1, 16], warpsPerCTA = [4, 1], order = [1, 0]}>")],
        "ttg.threads-per-warp = 32",
    ),
    "reduce result not sliced from its source": (
        "reductions.sm90",
        [(f") -> {REDUCED}", ") -> tensor<64xf32, #blocked1>"), (f"%2 : {REDUCED}", "%2 : tensor<64xf32, #blocked1>")],
        "inferReduceOpEncoding",
    ),
    "memdesc_index of a buffer of another shape": (
        "matmul_f32.sm90",
        [("!ttg.memdesc<3x128x32xf32, #shared, #smem, mutable>", "!ttg.memdesc<3x128x64xf32, #shared, #smem, mutable>")],
        "without its leading dimension",
    ),
    "expand_dims of a slice along another dimension": (
        "reductions.sm90",
        [(RANGE, RANGE.replace("dim = 1", "dim = 0"))],
        "inferExpandDimsOpEncoding",
    ),
}


def _edited(case: str) -> tuple[str, str]:
    stem, replacements, _rule = EDITS[case]
    text = (CORPUS / f"{stem}.ttgir").read_text()
    for old, new in replacements:
        assert old in text, (case, old)
        text = text.replace(old, new)
    return stem, text


def _our_errors(text: str) -> list[str]:
    try:
        module = parse_ttgir(text)
    except TtgirError as error:
        return [str(error)]
    return [message for _location, message in verify(module)]


@pytest.fixture(scope="module")
def triton_verdicts() -> dict[str, object]:
    """Every edited file submitted to Triton at once (the compiles run side by side)."""
    pytest.importorskip("triton", reason="Triton is the oracle of what an edit may do")
    return {case: COMPILES.submit(_edited(case)[1], _edited(case)[0]) for case in EDITS}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_we_accept_exactly_what_triton_accepts(case, triton_verdicts):
    _stem, text = _edited(case)
    ours = _our_errors(text)
    try:
        triton_verdicts[case].result()
        triton_accepts = True
    except Exception:  # Triton refused the file (its verifier's error, raised in the worker)
        triton_accepts = False
    assert (not ours) == triton_accepts, (ours, triton_accepts)
    rule = EDITS[case][2]
    assert (rule is None) == triton_accepts
    if rule is not None:
        assert rule in ours[0], ours


def test_a_bad_alias_is_one_error_at_its_definition_with_its_first_use():
    _stem, text = _edited("alias with 30 threads per warp")
    uses = text.count("#blocked>") + text.count("#blocked}")
    assert uses > 10
    with pytest.raises(TtgirError) as info:
        parse_ttgir(text)
    error = info.value
    assert (error.line, error.column) == (1, 1)
    assert "alias #blocked" in str(error) and "first used at" in str(error)
    [(line, _column, note)] = error.notes
    first = next(n for n, row in enumerate(text.splitlines(), 1) if n > 1 and "#blocked" in row.replace("#blocked1", ""))
    assert line == first and "#blocked first used here" in note
