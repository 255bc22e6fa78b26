"""The text bridge (`linear_layout.ir.text`): the one module that reads or rewrites printed IR.

Each form of its grammar round-trips through MLIR's parser and printer: `#ll.layout` with any
dimension names (quotes, backslashes, non-ASCII), `#ttg` encodings in Triton's syntax,
`!ttg.memdesc` parameters, retyped dense attributes and alias hoisting.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from linear_layout import LinearLayout
from linear_layout.encodings import NVMMASharedLayout, SharedLinearLayout, SwizzledSharedLayout, parse_encoding
from linear_layout.ir import from_attribute, load_dialects, to_attribute
from linear_layout.ir import text as bridge_text

CONTEXT = ir.Context()
load_dialects(CONTEXT)

NAMES = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(names=st.lists(NAMES, min_size=2, max_size=4, unique=True), data=st.data())
def test_ll_layout_text_round_trips_any_names(names, data):
    in_name, *out_names = names
    sizes = [1 << data.draw(st.integers(0, 3)) for _ in out_names]
    bits = sum(s.bit_length() - 1 for s in sizes)
    columns = [[data.draw(st.integers(0, s - 1)) for s in sizes] for _ in range(data.draw(st.integers(0, bits)))]
    layout = LinearLayout.from_bases([(in_name, columns)], out_names, sizes, require_surjective=False)
    source = bridge_text.format_ll_layout(layout.bases, layout.out_dims)
    attr = ir.Attribute.parse(source, CONTEXT)
    assert bridge_text.attribute_kind(attr) == "ll.layout" and bridge_text.is_layout_attribute(attr)
    in_dims, out_dims = bridge_text.ll_layout_parameters(attr)
    assert [ir.StringAttr(d[0]).value for d in in_dims] == [in_name]
    assert [(ir.StringAttr(d[0]).value, ir.IntegerAttr(d[1]).value) for d in out_dims] == list(zip(out_names, sizes))
    assert from_attribute(attr) == layout
    assert str(ir.Attribute.parse(str(attr), CONTEXT)) == str(attr)


def test_mlir_string_escapes_exactly_what_mlir_cannot_print_verbatim():
    assert bridge_text.mlir_string('a"b\\c') == '"a\\22b\\5Cc"'
    assert bridge_text.mlir_string("é") == '"\\C3\\A9"'
    assert ir.StringAttr(ir.Attribute.parse(bridge_text.mlir_string('x"\\é'), CONTEXT)).value == 'x"\\é'


@pytest.mark.parametrize("encoding", [
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], "
    "warpsPerCTA = [4, 1], order = [1, 0]}>}>",
    "#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>",
])
def test_ttg_encodings_round_trip_through_triton_syntax(encoding):
    value = parse_encoding(encoding)
    mlir_text = bridge_text.triton_to_mlir_text(str(value))
    attr = ir.Attribute.parse(mlir_text, CONTEXT)
    assert parse_encoding(bridge_text.triton_encoding_text(attr)) == value
    assert from_attribute(to_attribute(value, CONTEXT)) == value


@pytest.mark.parametrize("shared", [SwizzledSharedLayout(4, 2, 4, (1, 0)), NVMMASharedLayout(128, 16),
                                    SharedLinearLayout(((0, 1), (1, 0)), (), 16)], ids=str)
@pytest.mark.parametrize("mutable", [True, False])
def test_memdesc_parameters_round_trip(shared, mutable):
    with CONTEXT:
        encoding = to_attribute(shared)
        element = ir.F16Type.get()
        t = ir.Type.parse(bridge_text.memdesc_text([16, 32], element, encoding, mutable))
        assert bridge_text.is_memdesc(t) and bridge_text.type_kind(t) == "ttg.memdesc"
        params = bridge_text.memdesc_parameters(t)
        assert params.shape == (16, 32) and params.mutable == mutable
        assert ir.Type.parse(params.element_type) == element and ir.Attribute.parse(params.encoding) == encoding


def test_memdesc_shape_must_be_a_list_of_integers():
    with CONTEXT:
        t = ir.Type.parse('!ttg.memdesc<[[16, 16]], f16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, '
                          'maxPhase = 1, order = [1, 0]}>, #ttg.shared_memory, "mutable">')
        with pytest.raises(ValueError, match="list of integers"):
            bridge_text.memdesc_parameters(t)
        with pytest.raises(TypeError):
            bridge_text.memdesc_parameters(ir.F32Type.get())


def test_kinds_of_builtin_and_dynamic_types():
    with CONTEXT, ir.Location.unknown():
        assert bridge_text.type_kind(ir.F32Type.get()) == "f32"
        assert not bridge_text.is_memdesc(ir.RankedTensorType.get([4], ir.F32Type.get()))
        assert not bridge_text.is_layout_attribute(ir.Attribute.parse("#ttg.shared_memory"))
    opaque = ir.Context()
    opaque.allow_unregistered_dialects = True
    for text, kind in [("!tt.ptr<f16>", "tt.ptr"), ("!tt.ptr<f32, 3>", "tt.ptr"), ("!foo.bar", "foo.bar")]:
        t = ir.Type.parse(text, opaque)
        assert isinstance(t, ir.OpaqueType) and bridge_text.type_kind(t) == kind == bridge_text.printed_kind(str(t))
    assert str(bridge_text.pointee_type(ir.Type.parse("!tt.ptr<f32, 3>", opaque))) == "f32"


def test_retyped_dense_keeps_the_data():
    with CONTEXT, ir.Location.unknown():
        old = ir.Attribute.parse("dense<[1.5, -2.0]> : tensor<2xf32>")
        new_type = ir.RankedTensorType.get([2], ir.F32Type.get(), ir.Attribute.parse(
            '#ll.layout<[["register", [[1]]]], [["dim0", 2]]>'))
        retyped = bridge_text.retyped_dense(old, new_type)
        assert retyped.type == new_type and str(retyped).startswith("dense<[1.500000e+00, -2.000000e+00]>")


def test_aliases_round_trip_and_leave_strings_alone():
    blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    source = (f'func.func @f(%a: tensor<64x64xf32, {blocked}>, %b: tensor<64xf32, #ttg.slice<{{dim = 1, '
              f'parent = {blocked}}}>>) attributes {{note = "#ttg.blocked<{{in a string}}>"}} {{\n  return\n}}')
    with CONTEXT:
        module = ir.Module.parse(source)
        printed = bridge_text.print_module(module)
        assert printed.startswith("#blocked = #ttg.blocked<") and printed.count("#blocked = ") == 1
        assert '"#ttg.blocked<{in a string}>"' in printed
        assert str(ir.Module.parse(printed)) == str(module)
        assert bridge_text.add_aliases("#blocked = 1\n" + printed).count("#blocked1 = ") == 1


def test_only_a_string_literal_that_holds_an_attribute_counts_as_one():
    """`#ttg.` between two string literals (an op's operands, after its quoted generic name) is
    no string; the same text inside the quotes is."""
    assert not bridge_text._attribute_in_string('"tt.a"(%0) : (tensor<4xf32, #ttg.blocked<{}>>) -> () "tt.b"')
    assert bridge_text._attribute_in_string('"tt.a"() {s = "see #ttg.blocked<{}>"} : () -> ()')
    assert bridge_text._attribute_in_string('"tt.a"() {s = "#ll.layout"} : () -> ()')
    assert not bridge_text._attribute_in_string("no strings, #ttg.blocked<{}>")


def test_the_fast_alias_pass_gives_the_text_of_the_string_aware_one(monkeypatch):
    """Generic-form ops (a quoted name each) with flat and nested encodings: the fast pattern
    (no string in the module holds an attribute) and the string-aware one print alike."""
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
    blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    dot = f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 2}}>"
    source = (f"func.func @f(%a: tensor<16x16xf16, {dot}>, %b: tensor<16x16xf16, {blocked}>) {{\n"
              f'  %0 = "ttg.convert_layout"(%b) : (tensor<16x16xf16, {blocked}>) -> tensor<16x16xf16, {dot}>\n'
              f'  %1 = "ttg.convert_layout"(%0) : (tensor<16x16xf16, {dot}>) -> tensor<16x16xf16, {mma}>\n'
              f"  return\n}}")
    with CONTEXT:
        module = ir.Module.parse(source)
        asm = module.operation.get_asm(assume_verified=True)
    assert '"ttg.convert_layout"' in asm and not bridge_text._attribute_in_string(asm)
    fast = bridge_text.add_aliases(asm)
    monkeypatch.setattr(bridge_text, "_attribute_in_string", lambda _: True)
    assert bridge_text.add_aliases(asm) == fast
    assert fast.count(" = #ttg.nvidia_mma<") == 1 and fast.count(" = #ttg.blocked<") == 1
    assert "#ttg.nvidia_mma<{" not in fast.split("\n", 2)[2]  # only in its alias definition
    with CONTEXT:
        assert str(ir.Module.parse(fast)) == str(module)


POWERS = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=60, deadline=None)
@given(rank=st.integers(1, 3), data=st.data())
def test_the_plain_blocked_reader_agrees_with_the_general_one(rank, data):
    fields = [tuple(data.draw(POWERS) for _ in range(rank)) for _ in range(3)]
    order = tuple(data.draw(st.permutations(range(rank))))
    text = (f"#ttg.blocked<{{sizePerThread = {list(fields[0])}, threadsPerWarp = {list(fields[1])}, "
            f"warpsPerCTA = {list(fields[2])}, order = {list(order)}}}>")
    with CONTEXT:
        attr = ir.Attribute.parse(text)
        assert bridge_text.plain_blocked_fields(attr) == (*fields, order)
        assert from_attribute(attr) == parse_encoding(text)
        with_cga = ir.Attribute.parse(text[:-2] + f", CTAsPerCGA = {[1] * rank}}}>")
        assert bridge_text.plain_blocked_fields(with_cga) is None  # the general reader's case


def test_nested_attributes_get_one_alias_each_and_inline_kinds_stay_inline():
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
    dot = f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 2}}>"
    sliced = f"#ttg.slice<{{dim = 0, parent = #ttg.slice<{{dim = 1, parent = {mma}}}>}}>"
    source = (f"func.func @f(%a: tensor<16x16xf16, {dot}>, %b: tensor<16xf32, {sliced}>, "
              f"%c: tensor<16x16xf32, {mma}>) {{\n  return\n}}")
    with CONTEXT:
        module = ir.Module.parse(source)
        printed = bridge_text.print_module(module)
        assert printed.count(" = #ttg.nvidia_mma<") == 1 and "#ttg.dot_op<" in printed and "#ttg.slice<" in printed
        assert "parent = #mma" in printed and "#ttg.slice<{dim = 0 : i64, parent = #ttg.slice<" in printed
        assert str(ir.Module.parse(printed)) == str(module)


@given(st.text(max_size=20))
def test_decoding_a_printed_string_gives_the_text_back(text):
    assert bridge_text.decode_mlir_string(bridge_text.mlir_string(text)) == text
    with CONTEXT:
        printed = str(ir.StringAttr.get(text))
    assert bridge_text.decode_mlir_string(printed) == text


_SLICE = ("#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
          "warpsPerCTA = [4, 1], order = [1, 0]}>}>")
_BLOCKED_1D = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"


def _chain(count: int) -> str:
    """A module of `count` conversions between a slice and a blocked layout, one carrying a string
    attribute that holds an encoding's text."""
    a, b = f"tensor<64xf32, {_SLICE}>", f"tensor<64xf32, {_BLOCKED_1D}>"
    lines = ['module attributes {"ttg.num-warps" = 4 : i32} {', "  module @nested {",
             "    func.func private @g(memref<4xf32, affine_map<(d0) -> (d0 + 1)>>)", "  }",
             f"  func.func @f(%v0: {a}) -> {a} {{"]
    for i in range(count):
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        note = ' {note = "#ttg.blocked<{x = [1]}>"}' if i == 3 else ""
        lines.append(f'    %v{i + 1} = "ttg.convert_layout"(%v{i}){note} : ({src}) -> {dst}')
    lines += [f"    return %v{count} : {a}", "  }", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("generic", [False, True])
def test_a_large_module_prints_through_a_file_exactly_as_get_asm(generic):
    """The buffered printer (`_print_through_file`) gives `get_asm`'s bytes, on our dialects and
    on a Triton kernel with unregistered ops and locations; `print_module` takes it for a module
    of more than BUFFERED_PRINT_MIN_OPS ops."""
    from linear_layout.ttgir import parse_ttgir

    chain = ir.Module.parse(_chain(2 * bridge_text.BUFFERED_PRINT_MIN_OPS), CONTEXT)
    kernel_context = ir.Context()
    kernel = parse_ttgir(Path(__file__).with_name("ttgir_corpus").joinpath("matmul_f32.sm80.ttgir").read_text(),
                         kernel_context)
    for module in (chain, kernel):
        op = module.operation
        assert bridge_text._more_ops_than(op, bridge_text.BUFFERED_PRINT_MIN_OPS)
        expected = op.get_asm(print_generic_op_form=generic, assume_verified=True)
        assert bridge_text._print_through_file(op, generic) == expected
        assert bridge_text.print_module(module, generic=generic) == bridge_text.add_aliases(expected)


def test_a_module_that_does_not_verify_is_printed_by_get_asm():
    """MLIR's IR printing falls back to the generic form for a module that does not verify, where
    `get_asm(assume_verified=True)` keeps the custom form: such a module is left to `get_asm`."""
    module = ir.Module.parse(_chain(bridge_text.BUFFERED_PRINT_MIN_OPS + 2), CONTEXT)
    function = module.body.operations[1]  # after the nested module
    block = function.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown(CONTEXT):
        ir.Operation.create("func.return", operands=[block.arguments[0], block.arguments[0]])  # wrong arity
    with pytest.raises(ir.MLIRError):
        module.operation.verify()
    assert bridge_text._print_through_file(module.operation, False) is None
    assert module.operation.get_asm(assume_verified=True).startswith("#map = ")  # an alias comes first
    expected = module.operation.get_asm(assume_verified=True)
    assert bridge_text.print_module(module) == bridge_text.add_aliases(expected)
