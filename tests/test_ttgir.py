"""TTGIR reading and writing: the round trip proven by Triton, and malformed input.

Every corpus file (tests/ttgir_corpus, written by its generate.py from real kernels) is read with
`parse_ttgir`, written back with `print_ttgir`, and both texts are compiled by Triton 3.9 on the
CPU; the PTX/AMDGCN must be byte-identical. Each file is its own test; every compile runs in its
own empty Triton cache, in worker processes side by side (`ttgir_compile.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mlir import ir

from linear_layout.encodings import SharedLinearLayout
from linear_layout.ir import from_attribute, load_dialects, memdesc_of
from linear_layout.ttgir import FORMATS, TtgirError, parse_ttgir, print_ttgir
from linear_layout.ttgir.formats import TRITON_DIALECTS
from test_ttgir_ops import AMD_SNIPPETS, CLUSTER_SNIPPETS, SNIPPETS, SNIPPETS_OF
from triton_printer import triton_prints
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
    "warp_specialize without default": ("module {\n  tt.func @k() {\n    ttg.warp_specialize()\n"
                                        "    partition0() num_warps(4) {\n      ttg.warp_return\n    } : () -> ()\n"
                                        "    tt.return\n  }\n}\n", "expected 'default'"),
    "partition without num_warps": ("module {\n  tt.func @k() {\n    ttg.warp_specialize()\n    default {\n"
                                    "      ttg.warp_yield\n    }\n    partition0() {\n      ttg.warp_return\n"
                                    "    } : () -> ()\n    tt.return\n  }\n}\n", "expected 'num_warps'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_ttgir_is_one_line_error_with_location(case):
    text, expected = MALFORMED[case]
    with pytest.raises(TtgirError) as info:
        parse_ttgir(text)
    message = str(info.value)
    assert "\n" not in message and expected in message
    assert info.value.line >= 1, message


@pytest.mark.parametrize("text, line, column", [
    ("`module {}", 1, 1),
    ("module {\n  tt.func @k() {\n    tt.return ~\n  }\n}\n", 3, 15),
    ("module {\n}\n;", 3, 1),
])
def test_a_character_no_token_matches_is_an_error_at_its_line_and_column(text, line, column):
    """Also right after the last token and at the very start of the file (the tokenizer walks its
    matches one after another and stops at the first gap)."""
    with pytest.raises(TtgirError) as info:
        parse_ttgir(text)
    assert "unexpected character" in str(info.value)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


def test_corpus_has_no_machine_paths():
    for path in FILES:
        text = path.read_text()
        assert "/site-packages/" not in text and "/home/" not in text and "/work/" not in text, path.name


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_round_trip_is_byte_exact(path):
    text = path.read_text()
    assert print_ttgir(parse_ttgir(text)) == text


# Ops of other dialects, as Triton 3.9 prints them (gfx942 ping-pong matmuls, math, ub), and ops
# that no MLIR knows: reading carries their text, so it never depends on MLIR 22's parsers.
FOREIGN = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
#loc = loc("k.py":1:1)
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k(%arg0: !tt.ptr<f32> loc("k.py":1:1)) attributes {noinline = false} {
    %0 = rocdl.workitem.id.x : i32 loc(#loc)
    rocdl.sched.barrier none loc(#loc)
    rocdl.s.setprio 1 loc(#loc)
    %1 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, #blocked> loc(#loc)
    %2 = tt.load %1 : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc)
    %3 = math.exp %2 : tensor<256xf32, #blocked> loc(#loc)
    %4 = math.frobnicate %3, %0 {mode = "fast \\"x\\""} : tensor<256xf32, #blocked>, i32 loc(#loc)
    %5 = ub.poison : tensor<256xf32, #blocked> loc(#loc)
    %6 = "llvm.made_up"(%4, %5) <{kind = #llvm.nope<1>}> : (tensor<256xf32, #blocked>, tensor<256xf32, #blocked>) -> tensor<256xf32, #blocked> loc(#loc)
    tt.store %1, %6 : tensor<256x!tt.ptr<f32>, #blocked> loc(#loc)
    rocdl.s.setprio 0 loc(#loc)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
"""


def test_mlir_22_rejects_what_triton_prints():
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        with pytest.raises(ir.MLIRError, match=r"rocdl\.sched\.barrier"):
            ir.Module.parse("rocdl.sched.barrier none")


def test_ops_of_other_dialects_round_trip_byte_exact_as_text():
    module = parse_ttgir(FOREIGN)
    assert print_ttgir(module) == FOREIGN
    ops = {}

    def visit(op):
        ops.setdefault(op.name, op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    assert {"foreign.rocdl.sched.barrier", "foreign.math.exp", "foreign.llvm.made_up", "foreign.ub.poison"} <= set(ops)
    # the values they use are real operands (def-use edges and types for the passes)
    made_up = ops["foreign.llvm.made_up"]
    assert [operand.owner.name for operand in made_up.operands] == ["foreign.math.frobnicate", "foreign.ub.poison"]
    assert str(made_up.results[0].type).startswith("tensor<256xf32, #ttg.blocked<")


def test_ops_of_other_dialects_keep_their_text_when_values_are_renamed():
    module = parse_ttgir(FOREIGN)
    # a new value in front renumbers every other one; the foreign ops print the new names
    entry = module.body.operations[0].regions[0].blocks[0]
    ir.Operation.create("test.value", results=[ir.IntegerType.get_signless(32, module.context)],
                        loc=ir.Location.file("k.py", 1, 1, module.context),
                        ip=ir.InsertionPoint.at_block_begin(entry))
    renumbered = re.sub(r"%(\d+)", lambda m: f"%{int(m.group(1)) + 1}", FOREIGN)
    head, func, body = renumbered.partition("attributes {noinline = false} {\n")
    expected = head + func + '    %0 = "test.value"() : () -> i32 loc(#loc)\n' + body
    assert print_ttgir(module) == expected


def test_a_foreign_op_with_an_undefined_operand_is_an_error_with_its_line():
    text = FOREIGN.replace("math.exp %2", "math.exp %9")
    with pytest.raises(TtgirError, match="undefined value %9") as info:
        parse_ttgir(text)
    assert (info.value.line, info.value.column) == (10, 5)


def test_every_table_op_is_registered_by_triton():
    pytest.importorskip("triton", reason="Triton's registered operations are the reference")
    from triton_ops import registered_ops

    assert set(FORMATS) <= registered_ops()


# The ops of Triton 3.9's dialects not in the table (issue 20, item 1), each with why. The test below
# fails when Triton registers an op outside the table and this set, and when an op here joins the
# table (then it leaves this set): the gap is measured against Triton's own registry, never hidden.
# Every registered op of tt, ttg, ttng, amdg and nvg is in the table now.
NOT_YET_IN_THE_TABLE: set[str] = set()


def test_the_table_covers_every_op_triton_registers_but_the_named_gaps():
    pytest.importorskip("triton", reason="Triton's registered operations are the reference")
    from triton_ops import TRITON_OP_DIALECTS, registered_ops

    assert set(TRITON_DIALECTS) == set(TRITON_OP_DIALECTS)
    registered = registered_ops()
    assert sorted(registered - set(FORMATS)) == sorted(NOT_YET_IN_THE_TABLE)


def test_every_table_op_with_a_format_round_trips_in_a_compiled_kernel():
    """Each op is read and written back byte-exact (`test_round_trip_is_byte_exact`) in a kernel
    Triton compiled: the ops of the corpus, against the table's."""
    used = set()
    for path in FILES:
        used.update(op.name for op in _ops(path.read_text()))
    untested = {name for name, entry in FORMATS.items() if entry.format is not None} - used
    untested -= set(SNIPPETS) | set(AMD_SNIPPETS) | set(CLUSTER_SNIPPETS) | set(SNIPPETS_OF)  # proven on snippets Triton prints (test_ttgir_ops.py)
    # ops no corpus kernel makes yet (Triton writes them for other kernels or targets)
    assert untested <= {
        "amdg.buffer_atomic_rmw", "tt.call",  # tt.call: tests/kernel_corpus (test_kernel_corpus.py round trip)
        "tt.descriptor_load", "tt.descriptor_store", "tt.int_to_ptr", "tt.ptr_to_int", "ttg.memdesc_reshape",
    }, sorted(untested)


def _ops(text):
    from linear_layout.ttgir.syntax import Op, parse_file

    def walk(items):
        for item in items:
            if isinstance(item, Op):
                yield item
                for region in item.regions:
                    for block in region.blocks:
                        yield from walk(block.ops)

    return walk(parse_file(text).items)


def test_warp_specialize_and_tensor_memory_are_kept_in_mlir():
    """The warp-specialized sm_100 kernel: `ttg.warp_specialize` and its terminators are ops of
    `ttg_unregistered` (IRDL's `ttg` rejects undeclared ops), partitions hold their arguments,
    and a tensor-memory memdesc is the opaque `!ttng.tensor_memdesc`, never the IRDL memdesc."""
    module = parse_ttgir((CORPUS / "warp_specialize.sm100.ttgir").read_text())
    ops: dict[str, ir.Operation] = {}

    def visit(op):
        ops.setdefault(op.name, op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    assert {"ttg_unregistered.warp_specialize", "ttg_unregistered.warp_specialize.partitions",
            "ttg_unregistered.warp_yield", "ttg_unregistered.warp_return"} <= set(ops)
    specialize = ops["ttg_unregistered.warp_specialize"]
    partitions = ops["ttg_unregistered.warp_specialize.partitions"]
    assert str(specialize.attributes["partitionNumWarps"]) == "array<i32: 1, 2>"
    # the captures are operands of the partitions op, each partition's arguments
    assert len(specialize.operands) == 0 and len(partitions.operands) == 11
    assert [len(region.blocks[0].arguments) for region in partitions.regions] == [11, 11]
    allocated = str(ops["ttng.tmem_alloc"].results[0].type)
    assert allocated.startswith("!ttng.tensor_memdesc<1x128x128xf32, #ttng.tensor_memory_encoding<")


def test_every_ttg_op_of_the_table_is_declared_by_the_irdl_dialect_or_read_as_unregistered():
    """IRDL's `ttg` rejects ops it does not declare: each `ttg` op of the table is in
    `dialect/ttg.irdl.mlir` or in `UNDECLARED` (an op of `ttg_unregistered` in MLIR)."""
    from linear_layout.ttgir.formats import UNDECLARED

    irdl = (Path(__file__).parents[1] / "dialect" / "ttg.irdl.mlir").read_text()
    declared = {f"ttg.{name}" for name in re.findall(r"irdl\.operation @(\w+)", irdl)}
    table = {name for name in FORMATS if name.startswith("ttg.")}
    assert table - declared == set(UNDECLARED)


# Encodings Triton prints with a parameter after the dictionary: `#ttg.shared_linear<{...},
# alignment = N>` (Triton 3.9 rejects `alignment` inside the braces), with and without block
# bases, each on a kernel argument (a memdesc in a tt.func signature).
SHARED_LINEAR = [
    ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]}, alignment = 16>", 1),
    ("#ttg.shared_linear<{offset = [[1, 0], [0, 1], [2, 1], [4, 0]], block = [[0, 2]]}, alignment = 128>", 2),
]


def _memdesc_kernel(encoding: str, ctas: int) -> str:
    memdesc = "!ttg.memdesc<8x4xf16, #shared, #ttg.shared_memory, mutable>"
    return (
        f"#shared = {encoding}\n"
        f'module attributes {{"ttg.num-ctas" = {ctas} : i32, "ttg.num-warps" = 4 : i32, '
        f'"ttg.threads-per-warp" = 32 : i32}} {{\n'
        f"  tt.func public @f(%x: {memdesc}) {{\n    tt.return\n  }}\n}}\n"
    )


def test_shared_linear_alignment_round_trips_byte_exact_as_triton_prints_it():
    printed = triton_prints([_memdesc_kernel(*case) for case in SHARED_LINEAR])
    for (encoding, _ctas), (text, error) in zip(SHARED_LINEAR, printed):
        assert text is not None and f"#shared = {encoding}\n" in text, error  # Triton's printer: alignment outside
        module = parse_ttgir(text)
        assert print_ttgir(module) == text
        func = module.body.operations[0]
        layout = from_attribute(memdesc_of(func.regions[0].blocks[0].arguments[0].type).encoding)
        assert isinstance(layout, SharedLinearLayout) and str(layout) == encoding


@pytest.mark.parametrize(("encoding", "words"), [
    ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]}>", "expected ','"),
    ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], alignment = 16}>",
     "alignment must be specified outside of the linear layout braces"),
])
def test_shared_linear_without_its_alignment_after_the_dictionary_is_refused_as_triton_does(encoding, words):
    """Triton's parser requires `, alignment = N` after the dictionary; so does the reader, at the
    alias (the dialect's own spelling, alignment inside, is not TTGIR)."""
    text = _memdesc_kernel(encoding, 1)
    ((printed, error),) = triton_prints([text])
    assert printed is None and words in error, error
    with pytest.raises(TtgirError, match=r"^1:1: alias #shared: .*alignment"):
        parse_ttgir(text)


def test_the_writer_gives_a_shared_linear_without_alignment_the_default_triton_requires():
    """A module built in the dialect's form without `alignment` (its default is 16) is written
    with `, alignment = 16`, which Triton reads as the same attribute."""
    with ir.Context() as context:
        load_dialects(context)
        context.allow_unregistered_dialects = True
        encoding = "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]}>"
        module = ir.Module.parse(
            f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32}} {{\n'
            f'  "tt.func"() <{{function_type = (!ttg.memdesc<[8, 4], f16, {encoding}, #ttg.shared_memory, "mutable">)'
            f' -> (), sym_name = "f"}}> ({{\n  ^bb0(%x: !ttg.memdesc<[8, 4], f16, {encoding}, #ttg.shared_memory, '
            f'"mutable">):\n    "tt.return"() : () -> ()\n  }}) : () -> ()\n}}\n'
        )
        written = print_ttgir(module)
    assert "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]}, alignment = 16>" in written
    ((printed, error),) = triton_prints([written])
    assert printed is not None, error
    assert print_ttgir(parse_ttgir(written)) == written
