"""Triton's layout inference for tt.reshape, tt.join and tt.split, differentially: each case is a
small TTGIR module; Triton 3.9's parser (which verifies every op, inferred encodings included)
accepts it or not, and we accept exactly when Triton does, naming the rule otherwise.

Triton's verdicts come from one child process for all cases (`triton_printer`)."""

from __future__ import annotations

import re
from pathlib import Path

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


# ---------------------------------------------------------------- tt.reshape, systematically

#: Sources of 512 elements (4 warps): row-major, column-major, a 2-wide dimension (shape_ops'),
#: one row per warp, and a broadcast block.
RESHAPE_SOURCES = [
    ("16x32", B2),
    ("16x32", B2_COLS),
    ("256x2", _blocked([2, 2], [32, 1], [4, 1], [1, 0])),
    ("4x128", _blocked([1, 4], [1, 32], [4, 1], [1, 0])),
    ("8x64", _blocked([2, 2], [4, 8], [2, 2], [1, 0])),
]


def _linear_1d(register, lane, warp) -> str:
    def bases(values):
        return "[" + ", ".join(f"[{v}]" for v in values) + "]"

    return f"#ttg.linear<{{register = {bases(register)}, lane = {bases(lane)}, warp = {bases(warp)}, block = []}}>"


#: Results of 512 elements: blocked with 1 to 16 elements per thread (the larger ones broadcast),
#: and linear layouts with the bits dealt out in other orders (registers strided, lanes swapped).
RESHAPE_RESULTS = [_blocked([s], [32], [4], [0]) for s in (1, 2, 4, 8, 16)] + [
    _linear_1d([2, 1], [4, 8, 16, 32, 64], [128, 256]),
    _linear_1d([64, 128], [1, 2, 4, 8, 16], [32, 256]),
    _linear_1d([1, 256], [2, 4, 8, 16, 32], [64, 128]),
    _linear_1d([1, 2, 0], [4, 8, 16, 32, 64], [128, 256]),
]

RESHAPE_CASES = {
    f"reshape {shape} {i}-{j}{flag}": _module(
        [_t(shape, source)], f"%0 = tt.reshape %a0{flag} : {_t(shape, source)} -> {_t('512', result)}"
    )
    for i, (shape, source) in enumerate(RESHAPE_SOURCES)
    for j, result in enumerate(RESHAPE_RESULTS)
    for flag in ("", " allow_reorder", " efficient_layout")
}
RESHAPE_CASES.update({  # and back to two dimensions
    f"reshape 512 {j} to 16x32 {i}{flag}": _module(
        [_t("512", source)], f"%0 = tt.reshape %a0{flag} : {_t('512', source)} -> {_t('16x32', result)}"
    )
    for j, source in enumerate(RESHAPE_RESULTS[:4])
    for i, (_shape, result) in enumerate(RESHAPE_SOURCES[:2])
    for flag in ("", " allow_reorder")
})


@pytest.fixture(scope="module")
def reshape_verdicts() -> dict[str, tuple[str | None, str]]:
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    from triton_printer import triton_prints

    names = sorted(RESHAPE_CASES)
    return dict(zip(names, triton_prints([RESHAPE_CASES[name] for name in names])))


def test_reshape_we_accept_exactly_what_triton_accepts(reshape_verdicts):
    """Every source x result x flag: Triton's ReshapeOp::verify (allow_reorder keeps any written
    encoding that is not an expensive view; otherwise the row-major reshape, compared as linear
    layouts) accepts exactly when ll-verify does, and our message names the rule."""
    disagreements = []
    for name, (printed, triton_errors) in reshape_verdicts.items():
        ours = _our_errors(RESHAPE_CASES[name])
        if (not ours) != (printed is not None):
            disagreements.append((name, ours[:1], triton_errors[:200]))
        elif ours and "inferReshapeOpEncoding" not in ours[0]:
            disagreements.append((name, ours[:1], "the message does not name the rule"))
    assert disagreements == []


def test_reshape_cases_reach_every_verdict_of_allow_reorder(reshape_verdicts):
    """The cases are differential where it matters: with allow_reorder, Triton keeps some result
    layouts that are not the row-major reshape (a reordering) and refuses others (an expensive
    view); without it, it accepts some and refuses others."""
    accepted = {name for name, (printed, _errors) in reshape_verdicts.items() if printed is not None}
    reorder = {name for name in RESHAPE_CASES if name.endswith("allow_reorder")}
    plain = set(RESHAPE_CASES) - reorder
    assert reorder & accepted and reorder - accepted and plain & accepted and plain - accepted
    # a reordering Triton keeps: accepted with allow_reorder, refused without it
    assert any(name.removesuffix(" allow_reorder") not in accepted for name in reorder & accepted)


SHAPE_OPS = Path(__file__).parent / "kernel_corpus" / "ttgir" / "shape_ops.sm80.w4.ttgir"
_REORDERED = "tt.reshape %s allow_reorder : tensor<256x2xi32, #blocked> -> tensor<512xi32, #blocked3>"
_ITS_SUM = "}) : (tensor<512xi32, #blocked3>) -> i32 loc(#loc59)"


def _shape_ops_edit(encoding: str, flag: str) -> str:
    """shape_ops' `can_reorder` reshape (Triton compiled it with allow_reorder) with its result,
    and the sum that reads it, in `encoding`, written with `flag` (" allow_reorder" or "")."""
    text = SHAPE_OPS.read_text()
    assert text.count(_REORDERED) == 1 and text.count(_ITS_SUM) == 1
    edited = _REORDERED.replace(" allow_reorder", flag).replace("#blocked3>", "#edited>")
    text = text.replace(_REORDERED, edited).replace(_ITS_SUM, _ITS_SUM.replace("#blocked3", "#edited"))
    return f"#edited = {encoding}\n{text}"


SHAPE_OPS_EDITS = {
    f"{j}{flag}": _shape_ops_edit(encoding, flag)
    for j, encoding in enumerate(RESHAPE_RESULTS)
    for flag in (" allow_reorder", "")
}


def test_editing_a_compiled_reshapes_result_we_refuse_exactly_what_triton_refuses():
    """The reshape Triton 3.9 compiled from `tl.reshape(..., can_reorder=True)`, its result
    encoding edited (and allow_reorder kept or dropped): ll-verify refuses the file exactly when
    Triton's parser does, at the reshape, naming the rule."""
    pytest.importorskip("triton", reason="Triton's verifier is the oracle")
    from triton_printer import triton_prints

    names = sorted(SHAPE_OPS_EDITS)
    verdicts = dict(zip(names, triton_prints([SHAPE_OPS_EDITS[name] for name in names])))
    disagreements = []
    for name, (printed, triton_errors) in verdicts.items():
        ours = _our_errors(SHAPE_OPS_EDITS[name])
        if (not ours) != (printed is not None) or (ours and "inferReshapeOpEncoding" not in ours[0]):
            disagreements.append((name, ours[:1], triton_errors[:200]))
    assert disagreements == []
    assert {printed is None for printed, _errors in verdicts.values()} == {True, False}


CORPORA = sorted((Path(__file__).parent / "kernel_corpus" / "ttgir").glob("*.ttgir")) + sorted(
    (Path(__file__).parent / "ttgir_corpus").glob("*.ttgir")
)


def test_every_file_triton_produced_passes_ll_verify():
    """Triton 3.9 produced and accepted every corpus file (the kernel corpus and the TTGIR corpus,
    tt.reshape with and without allow_reorder among them): ll-verify accepts each one."""
    refused = {path.name: errors[:1] for path in CORPORA if (errors := _our_errors(path.read_text()))}
    assert len(CORPORA) > 400 and refused == {}


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
