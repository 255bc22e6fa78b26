"""TTGIR reading and writing: the round trip proven by Triton, and malformed input.

Every corpus file (tests/ttgir_corpus, written by its generate.py from real kernels) is read with
`parse_ttgir`, written back with `print_ttgir`, and both texts are compiled by Triton 3.9 on the
CPU; the PTX/AMDGCN must be byte-identical. Each file is its own test; every compile runs in its
own empty Triton cache, in worker processes side by side (`ttgir_compile.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mlir import ir

from linear_layout.ttgir import FORMATS, TtgirError, parse_ttgir, print_ttgir
from linear_layout.ttgir.formats import TRITON_DIALECTS

from ttgir_compile import COMPILES, assembly

CORPUS = Path(__file__).parent / "ttgir_corpus"
FILES = sorted(CORPUS.glob("*.ttgir"))
ROUND_TRIP = "test_round_trip_compiles_to_identical_assembly"


def test_corpus_is_large_enough():
    kernels = {f.name.split(".")[0] for f in FILES}
    targets = {f.name.split(".")[1] for f in FILES}
    assert len(FILES) >= 30 and len(kernels) >= 10 and {"sm80", "sm90", "gfx942"} <= targets


@pytest.fixture(scope="module")
def written_texts(request) -> dict[Path, str | Exception]:
    """`print_ttgir(parse_ttgir(text))` of every file the session runs the round trip on; both
    texts of each file are submitted to Triton at once (the biggest files first), so that the
    worker processes compile them side by side while the tests wait in order."""
    pytest.importorskip("triton", reason="triton is the oracle of the TTGIR round trip")
    selected = {
        item.callspec.params["path"]
        for item in request.session.items
        if getattr(item, "originalname", "") == ROUND_TRIP and hasattr(item, "callspec")
    }
    written: dict[Path, str | Exception] = {}
    for path in sorted(selected, key=lambda p: p.stat().st_size, reverse=True):
        text = path.read_text()
        COMPILES.submit(text, path.stem)
        try:
            written[path] = print_ttgir(parse_ttgir(text))
        except TtgirError as error:  # the file's own test reports it
            written[path] = error
            continue
        COMPILES.submit(written[path], path.stem)
    return written


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_round_trip_compiles_to_identical_assembly(path, written_texts):
    written = written_texts[path]
    if isinstance(written, Exception):
        raise written
    assert assembly(written, path.stem) == assembly(path.read_text(), path.stem)


@pytest.mark.parametrize("path", FILES[:5], ids=[f.stem for f in FILES[:5]])
def test_written_text_reads_back_to_the_same_module(path):
    once = print_ttgir(parse_ttgir(path.read_text()))
    assert print_ttgir(parse_ttgir(once)) == once


def test_every_corpus_op_is_in_the_table_and_kept():
    ops = set()

    def visit(op):
        ops.add(op.name)
        return ir.WalkResult.ADVANCE

    for path in FILES:
        parse_ttgir(path.read_text()).operation.walk(visit)
    triton_ops = {name for name in ops if name.split(".")[0] in TRITON_DIALECTS}
    assert triton_ops <= set(FORMATS)
    assert {"ttg.convert_layout", "ttg.local_load", "ttg.local_store", "tt.dot", "ttng.warp_group_dot",
            "ttg.async_copy_global_to_local", "amdg.buffer_load", "tt.reduce", "tt.scan"} <= triton_ops


def test_operands_attributes_and_locations_are_kept():
    text = (CORPUS / "matmul_f16.sm90.ttgir").read_text()
    module = parse_ttgir(text)
    asm = module.operation.get_asm(enable_debug_info=True)
    assert '"ttg.num-warps" = 4 : i32' in asm
    assert '"tt.load"(' in asm and "ttng.warp_group_dot" in asm
    assert 'loc("generate.py":' in asm
    written = print_ttgir(module)
    assert written.count("ttg.convert_layout") == text.count("ttg.convert_layout")
    assert written.count(" loc(") == text.count(" loc(")


MALFORMED = {
    "truncated": ("tt.func public @k() attributes {noinline = false} {\n  tt.return loc(#loc)\n", "not closed"),
    "unknown op": ("module {\n  tt.func @k() {\n    tt.frobnicate\n    tt.return\n  }\n}\n",
                   "unknown operation 'tt.frobnicate'"),
    "bad type": ("module {\n  tt.func @k(%a: !ttg.memdesc<4xf16>) {\n    tt.return\n  }\n}\n", "memdesc"),
    "bad alias": ("#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], "
                  "order = [0]}>\nmodule {\n  tt.func @k() {\n    %0 = tt.make_range {end = 4 : i32, start = 0 : i32} "
                  ": tensor<4xi32, #nope>\n    tt.return\n  }\n}\n", "nope"),
    "undefined value": ("module {\n  tt.func @k() {\n    %0 = tt.splat %x : i32 -> tensor<4xi32>\n    tt.return\n"
                        "  }\n}\n", "undefined value %x"),
    "bad enum": ("module {\n  tt.func @k() {\n    %0 = tt.get_program_id w : i32\n    tt.return\n  }\n}\n",
                 "unknown axis 'w'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_ttgir_is_one_line_error_with_location(case):
    text, expected = MALFORMED[case]
    with pytest.raises(TtgirError) as info:
        parse_ttgir(text)
    message = str(info.value)
    assert "\n" not in message and expected in message
    assert info.value.line >= 1, message


def test_corpus_has_no_machine_paths():
    for path in FILES:
        text = path.read_text()
        assert "/site-packages/" not in text and "/home/" not in text and "/work/" not in text, path.name
