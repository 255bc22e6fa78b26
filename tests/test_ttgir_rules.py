"""Triton's layout inference for tt.reshape, tt.join and tt.split, differentially: each case is a
small TTGIR module; Triton 3.9's parser (which verifies every op, inferred encodings included)
accepts it or not, and we accept exactly when Triton does, naming the rule otherwise.

Triton's verdicts come from one child process for all cases (`triton_printer`)."""

from __future__ import annotations

import re

import pytest
from mlir import ir

from linear_layout.dialects.triton_regions import region_problem
from linear_layout.ttgir import FORMATS, ttgir_context
from linear_layout.ttgir.formats import mlir_name
from test_ttgir_edits import _our_errors


def _blocked(spt, tpw, wpc, order):
    return (
        f"#ttg.blocked<{{sizePerThread = {list(spt)}, threadsPerWarp = {list(tpw)}, "
        f"warpsPerCTA = {list(wpc)}, order = {list(order)}}}>"
    )


def _module(arguments: list[str], body: str) -> str:
    signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arguments))
    return (
        'module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32, "ttg.num-ctas" = 1 : i32} {\n'
        f"  tt.func @k({signature}) {{\n    {body}\n    tt.return\n  }}\n}}\n"
    )


B2 = _blocked([1, 4], [4, 8], [4, 1], [1, 0])  # 16x32
B2_COLS = _blocked([4, 1], [8, 4], [1, 4], [0, 1])
B3_JOIN = _blocked([1, 4, 2], [4, 8, 1], [4, 1, 1], [2, 1, 0])  # B2 joined
B3_JOIN_WRONG = _blocked([1, 4, 2], [4, 8, 1], [4, 1, 1], [1, 2, 0])
B1 = _blocked([4], [32], [4], [0])  # 512
B1_8 = _blocked([8], [32], [4], [0])


def _t(shape: str, encoding: str) -> str:
    return f"tensor<{shape}xf32, {encoding}>"


# name: (module, the rule our message names when Triton refuses it)
CASES = {
    "reshape row-major": (_module([_t("16x32", B2)], f"%0 = tt.reshape %a0 : {_t('16x32', B2)} -> {_t('512', B1)}"),
                          "inferReshapeOpEncoding"),
    "reshape to its inferred layout": (
        _module([_t("4x128", _blocked([1, 4], [1, 32], [4, 1], [1, 0]))],
                f"%0 = tt.reshape %a0 : {_t('4x128', _blocked([1, 4], [1, 32], [4, 1], [1, 0]))} -> {_t('512', B1)}"),
        "inferReshapeOpEncoding",
    ),
    "reshape to another layout": (
        _module([_t("4x128", _blocked([1, 4], [1, 32], [4, 1], [1, 0]))],
                f"%0 = tt.reshape %a0 : {_t('4x128', _blocked([1, 4], [1, 32], [4, 1], [1, 0]))} -> {_t('512', B1_8)}"),
        "inferReshapeOpEncoding",
    ),
    "reshape allowed to reorder": (
        _module([_t("16x32", B2)], f"%0 = tt.reshape %a0 allow_reorder : {_t('16x32', B2)} -> {_t('512', B1_8)}"),
        "inferReshapeOpEncoding",
    ),
    "join": (_module([_t("16x32", B2)], f"%0 = tt.join %a0, %a0 : {_t('16x32', B2)} -> {_t('16x32x2', B3_JOIN)}"),
             "inferDefaultJoinOpEncoding"),
    "join with the new dimension not minor": (
        _module([_t("16x32", B2)], f"%0 = tt.join %a0, %a0 : {_t('16x32', B2)} -> {_t('16x32x2', B3_JOIN_WRONG)}"),
        "inferDefaultJoinOpEncoding",
    ),
    "join of column-major operands": (
        _module([_t("16x32", B2_COLS)],
                f"%0 = tt.join %a0, %a0 : {_t('16x32', B2_COLS)} -> {_t('16x32x2', B3_JOIN)}"),
        "inferDefaultJoinOpEncoding",
    ),
    "join with the new dimension across lanes": (
        _module([_t("16x32", B2)],
                f"%0 = tt.join %a0, %a0 : {_t('16x32', B2)} -> "
                f"{_t('16x32x2', _blocked([1, 4, 1], [4, 4, 2], [4, 1, 1], [2, 1, 0]))}"),
        "inferDefaultJoinOpEncoding",
    ),
    "reshape with efficient_layout": (
        _module([_t("16x32", B2)], f"%0 = tt.reshape %a0 efficient_layout : {_t('16x32', B2)} -> {_t('512', B1_8)}"),
        "inferReshapeOpEncoding",
    ),
    "split of a last dimension in a later register": (
        _module([_t("16x32x2", B3_JOIN_WRONG)],
                f"%0, %1 = tt.split %a0 : {_t('16x32x2', B3_JOIN_WRONG)} -> {_t('16x32', B2)}"),
        "inferSplitOpEncoding",
    ),
    "split": (_module([_t("16x32x2", B3_JOIN)], f"%0, %1 = tt.split %a0 : {_t('16x32x2', B3_JOIN)} -> {_t('16x32', B2)}"),
              "inferSplitOpEncoding"),
    "split to another layout": (
        _module([_t("16x32x2", B3_JOIN)], f"%0, %1 = tt.split %a0 : {_t('16x32x2', B3_JOIN)} -> {_t('16x32', B2_COLS)}"),
        "inferSplitOpEncoding",
    ),
    "split of a last dimension across threads": (
        _module([_t("16x32x2", _blocked([1, 4, 1], [4, 4, 2], [4, 1, 1], [2, 1, 0]))],
                f"%0, %1 = tt.split %a0 : {_t('16x32x2', _blocked([1, 4, 1], [4, 4, 2], [4, 1, 1], [2, 1, 0]))} "
                f"-> {_t('16x32', B2)}"),
        "inferSplitOpEncoding",
    ),
}


def _smem(shape: str, encoding: str, alloc: str = "") -> str:
    return f"!ttg.memdesc<{shape}xf16, {encoding}, #ttg.shared_memory, mutable{', ' + alloc if alloc else ''}>"


S_ROWS = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
S_COLS = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [0, 1]}>"
S_FLAT = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
S_ROWS_PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
S_COLS_PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"



def _memdesc_op(source: str, op: str, result: str) -> str:
    return _module([], f"%a0 = ttg.local_alloc : () -> {source}\n    %0 = {op} : {source} -> {result}")


_TRANS = "ttg.memdesc_trans %a0 {order = array<i32: 1, 0>}"
CASES.update({
    "memdesc_trans": (_memdesc_op(_smem("32x64", S_ROWS), _TRANS, _smem("64x32", S_COLS)), "inferTransOpEncoding"),
    "memdesc_trans keeping the order": (_memdesc_op(_smem("32x64", S_ROWS), _TRANS, _smem("64x32", S_ROWS)),
                                        "inferTransOpEncoding"),
    "memdesc_reshape": (_memdesc_op(_smem("32x64", S_ROWS_PLAIN), "ttg.memdesc_reshape %a0", _smem("2048", S_FLAT)),
                        "inferReshapeOpEncoding"),
    "memdesc_reshape across the order": (
        _memdesc_op(_smem("32x64", S_COLS_PLAIN), "ttg.memdesc_reshape %a0", _smem("2048", S_FLAT)),
        "inferReshapeOpEncoding",
    ),
    "memdesc_subslice": (_memdesc_op(_smem("32x64", S_ROWS), "ttg.memdesc_subslice %a0[0, 32]",
                                     _smem("32x32", S_ROWS, "32x64")), "memdesc_subslice"),
    "memdesc_subslice of another encoding": (
        _memdesc_op(_smem("32x64", S_ROWS), "ttg.memdesc_subslice %a0[0, 32]", _smem("32x32", S_COLS, "32x64")),
        "memdesc_subslice",
    ),
    "memdesc_subslice out of the buffer": (
        _memdesc_op(_smem("32x64", S_ROWS), "ttg.memdesc_subslice %a0[16, 32]", _smem("32x32", S_ROWS, "32x64")),
        "leaves the buffer",
    ),
})


@pytest.fixture(scope="module")
def triton_verdicts() -> dict[str, tuple[str | None, str]]:
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    from triton_printer import triton_prints

    names = sorted(CASES)
    return dict(zip(names, triton_prints([CASES[name][0] for name in names])))


@pytest.mark.parametrize("case", sorted(CASES))
def test_we_accept_exactly_what_triton_accepts(case, triton_verdicts):
    printed, triton_errors = triton_verdicts[case]
    ours = _our_errors(CASES[case][0])
    assert (not ours) == (printed is not None), (ours, triton_errors)
    if ours:
        assert CASES[case][1] in ours[0], ours


def test_both_verdicts_occur():
    """The cases are differential: Triton accepts some and refuses others."""
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    from triton_printer import triton_prints

    verdicts = {printed is not None for printed, _errors in triton_prints([CASES[n][0] for n in sorted(CASES)])}
    assert verdicts == {True, False}



# ---------------------------------------------------------------- region counts


def _empty_regions(count: int) -> str:
    return " (" + ", ".join(["{\n  }"] * count) + ")" if count else ""


def test_region_counts_are_tritons_for_every_op_of_the_table():
    """Every Triton op the TTGIR reader knows, written generically with 0 to 3 empty regions:
    Triton 3.9's verifier refuses the count (`requires zero regions`, `expected 2 regions`)
    exactly when `region_problem` does; each op is one Triton registers."""
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    from triton_printer import triton_prints

    counts = range(4)
    cases = [(name, k) for name in sorted(FORMATS) for k in counts]
    generic = [f'module {{\n  "{name}"(){_empty_regions(k)} : () -> ()\n}}\n' for name, k in cases]
    with ttgir_context() as context, ir.Location.unknown(context):
        for (name, k), (_printed, error) in zip(cases, triton_prints(generic)):
            assert "unregistered" not in error, (name, error)
            ours = region_problem(ir.Operation.create(mlir_name(name), regions=k))
            assert (ours is None) == ("region" not in error), (name, k, ours, error)
            if ours:
                assert re.search(r"requires (zero|one) regions?|expected \d+ regions", error)
                assert re.search(r"requires (zero|one) regions?|expected \d+ regions", ours).group() in error


REGION_CASES = {
    "a region on tt.splat": (
        '    %1 = "tt.splat"(%a0) ({\n    ^bb0(%x: f32):\n      tt.reduce.return %x : f32\n    }) : (f32) -> '
        f"{_t('512', B1)}",
        "'tt.splat' op requires zero regions",
    ),
    "tt.reduce without its combine region": (
        f'    %1 = "tt.reduce"(%a1) <{{axis = 0 : i32}}> : ({_t("512", B1)}) -> f32',
        "'tt.reduce' op requires one region",
    ),
}


@pytest.mark.parametrize("case", sorted(REGION_CASES))
def test_a_triton_op_with_a_region_it_does_not_have_is_an_ll_verify_error_at_its_line(case, tmp_path):
    """Triton refuses the count at the op's line:col; so does `ll-verify` (one line, exit 1), not
    only the op's generic IRDL ttg cousins that MLIR itself checks."""
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    import subprocess
    import sys

    from triton_printer import triton_prints

    body, words = REGION_CASES[case]
    text = _module(["f32", _t("512", B1)], body.strip())
    (printed, triton_error), = triton_prints([text])
    position = re.search(r":(\d+):(\d+)\): error: (.*)", triton_error)
    assert printed is None and position and words in position.group(3), triton_error
    path = tmp_path / "edited.ttgir"
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", str(path), "-p",
                             "builtin.module(ll-verify)"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr  # one line
    assert result.stderr.startswith(f"{path}:{position.group(1)}:{position.group(2)}: error: {words}"), (
        result.stderr, triton_error)
