"""The IR layer in-process: dialect loading, the attribute bridge and its cache, builders,
the verifier as a pass, and pipelines built from Python."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mlir import ir
from mlir.passmanager import PassManager

from linear_layout import LinearLayout
from linear_layout.dialects import verify
from linear_layout.encodings import parse_encoding
from linear_layout.ir import (
    cache_info,
    dialect_file,
    format_ll_layout,
    from_attribute,
    layout_of,
    load_dialects,
    memdesc_of,
    print_module,
    to_attribute,
)
from linear_layout.ir.bridge import memdesc_parameters, per_type
from linear_layout.passes import PipelineError, build_pass_manager, get_pass, pass_names
from strategies import layouts

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


@pytest.fixture
def context():
    with ir.Context() as ctx, ir.Location.unknown():
        load_dialects(ctx)
        yield ctx


def test_load_dialects_is_idempotent_per_context():
    first, second = ir.Context(), ir.Context()
    for ctx in (first, second, first, second):
        load_dialects(ctx)
    assert ir.Attribute.parse("#ttg.shared_memory", first) is not None
    with second:
        assert load_dialects() is second


def test_load_dialects_tolerates_a_context_loaded_elsewhere():
    from mlir.dialects import irdl

    ctx = ir.Context()
    irdl.load_dialects(ir.Module.parse(dialect_file("ttg").read_text(), ctx))
    load_dialects(ctx)  # must not load ttg a second time (that aborts)
    assert str(ir.Attribute.parse("#ll.layout<[], []>", ctx)) == "#ll.layout<[], []>"  # ll was loaded
    assert ir.Attribute.parse("#ttg.shared_memory", ctx) is not None


def test_dialect_files_exist():
    for name in ("ttg", "ll"):
        assert dialect_file(name).read_text().startswith("//")
    with pytest.raises(ValueError):
        dialect_file("tt")


# One context for all examples: creating one per example would dominate the run time.
SHARED_CONTEXT = ir.Context()
load_dialects(SHARED_CONTEXT)


@given(layouts())
def test_ll_layout_round_trips_exactly(layout):
    with SHARED_CONTEXT:
        attr = to_attribute(layout)
        assert from_attribute(attr) == layout
        assert str(attr) == format_ll_layout(layout)
        # and through text: dimension order survives printing and parsing
        reparsed = ir.Attribute.parse(str(attr))
        assert from_attribute(reparsed) == layout
        assert [n for n, _ in from_attribute(reparsed).bases] == [n for n, _ in layout.bases]
        assert from_attribute(reparsed).out_dims == layout.out_dims


@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3, unique=True))
def test_ll_layout_dimension_names_are_arbitrary(names):
    layout = LinearLayout.from_bases([(name, [[1]]) for name in names][:1] + [(n, []) for n in names[1:]],
                                     ["out"], [2])
    with SHARED_CONTEXT:
        assert from_attribute(ir.Attribute.parse(str(to_attribute(layout)))) == layout


def test_ttg_attribute_round_trip(context):
    from linear_layout.encodings import parse_encoding

    encoding = parse_encoding(BLOCKED)
    attr = to_attribute(encoding)
    assert from_attribute(attr) == encoding
    shared = parse_encoding("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>")
    assert from_attribute(to_attribute(shared)) == shared


def test_cache_hits_per_attribute(context):
    attr = ir.Attribute.parse(BLOCKED)
    before = cache_info()
    for _ in range(5):
        from_attribute(ir.Attribute.parse(BLOCKED))  # same uniqued attribute, new Python object
    after = cache_info()
    assert after["misses"] - before["misses"] <= 1
    assert after["hits"] - before["hits"] >= 4
    assert from_attribute(attr) is from_attribute(attr)


def test_cache_does_not_keep_contexts_alive():
    ctx = ir.Context()
    load_dialects(ctx)
    from_attribute(ir.Attribute.parse(BLOCKED, ctx))
    live = ir.Context._get_live_count()
    del ctx
    gc.collect()
    assert ir.Context._get_live_count() == live - 1


def test_a_fresh_context_reuses_the_values_decoded_in_another():
    """Decoded values are cached by the attribute's text for the whole process: a module read in
    a new context does not decode (and validate) its encodings again; a broken rule fails again,
    with the same message."""
    bad = '#ll.layout<[["register", [[1]]]], [["dim0", 3]]>'
    values, messages = [], []
    for _ in range(2):
        with ir.Context() as ctx:
            load_dialects(ctx)
            values.append(from_attribute(ir.Attribute.parse(BLOCKED)))
            with pytest.raises(ValueError, match="power of two") as error:
                from_attribute(ir.Attribute.parse(bad))
            messages.append(str(error.value))
    assert values[0] is values[1] and values[0] == parse_encoding(BLOCKED)
    assert messages[0] == messages[1]


def test_per_type_derives_once_per_type_and_forgets_failures(context):
    calls: list[str] = []

    def rank_of(t: ir.Type) -> int:
        calls.append(str(t))
        if ir.RankedTensorType(t).rank == 0:
            raise ValueError("a scalar tensor")
        return ir.RankedTensorType(t).rank

    for _ in range(3):  # a new Python object each time, one uniqued type
        assert per_type(rank_of, ir.Type.parse("tensor<4x8xf32>")) == 2
    assert calls == ["tensor<4x8xf32>"]
    assert per_type(rank_of, ir.Type.parse("tensor<4xf32>")) == 1  # another type, derived anew
    for _ in range(2):  # a failure is raised again, and derived again
        with pytest.raises(ValueError, match="a scalar tensor"):
            per_type(rank_of, ir.Type.parse("tensor<f32>"))
    assert calls == ["tensor<4x8xf32>", "tensor<4xf32>", "tensor<f32>", "tensor<f32>"]
    with ir.Context() as other:  # another context: its own types, its own cache
        assert per_type(rank_of, ir.Type.parse("tensor<4x8xf32>", other)) == 2
    assert len(calls) == 5


def test_memdesc_parameters_are_read_once_per_type(context):
    text = (
        '!ttg.memdesc<[2, 8, 16], f16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, '
        '#ttg.shared_memory, "mutable">'
    )
    first = memdesc_parameters(ir.Type.parse(text))
    assert first.shape == (2, 8, 16) and first.element_type == "f16" and first.mutable
    assert memdesc_parameters(ir.Type.parse(text)) is first
    with pytest.raises(TypeError, match=r"not a !ttg\.memdesc"):
        memdesc_parameters(ir.Type.parse("tensor<4xf32>"))


def test_invalid_and_foreign_attributes(context):
    with pytest.raises(ValueError, match="power of two"):
        from_attribute(ir.Attribute.parse('#ll.layout<[["register", [[1]]]], [["dim0", 3]]>'))
    with pytest.raises(ValueError, match="power of two"):  # cached failures fail again
        from_attribute(ir.Attribute.parse('#ll.layout<[["register", [[1]]]], [["dim0", 3]]>'))
    with pytest.raises(TypeError, match="not a layout attribute"):
        from_attribute(ir.Attribute.parse("[1, 2]"))
    with pytest.raises(TypeError):
        to_attribute("blocked")


def test_layout_of_and_memdesc_of(context):
    tensor = ir.Type.parse(f"tensor<64x64xf32, {BLOCKED}>")
    layout = layout_of(tensor)
    assert from_attribute(tensor) == from_attribute(tensor.encoding)
    assert layout.out_dims == (("dim0", 64), ("dim1", 64))
    with pytest.raises(TypeError):
        layout_of(ir.Type.parse("tensor<4xf32>"))
    memdesc = memdesc_of(ir.Type.parse(
        '!ttg.memdesc<[8, 16], f16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, '
        '#ttg.shared_memory, "immutable">'))
    assert memdesc.shape == (8, 16) and str(memdesc.element_type) == "f16" and not memdesc.mutable


def test_verify_reports_locations(context):
    module = ir.Module.parse(
        'module attributes {"ttg.num-warps" = 8 : i32} {\n'
        f"  func.func @f(%a: tensor<64x64xf32, {BLOCKED}>) {{\n    return\n  }}\n}}")
    [(location, message)] = verify(module)
    assert (location.start_line, location.start_col) == (2, 3)
    assert "ttg.num-warps = 8" in message
    assert verify(module, check_launch=False) == []


def test_verify_names_the_encoding_kind_only_in_messages(context):
    # A tensor's encoding is decoded without printing its kind first: a non-layout encoding is
    # no error, and each kind of problem still names the encoding's kind.
    def messages(encoding, shape="64x64", warps=4):
        return [message for _, message in verify(ir.Module.parse(
            f'module attributes {{"ttg.num-warps" = {warps} : i32}} {{\n'
            f"  func.func @f(%a: tensor<{shape}xf32, {encoding}>) {{\n    return\n  }}\n}}"))]

    assert messages('"not a layout"') == []
    assert messages(BLOCKED) == []
    assert messages(BLOCKED, warps=8) == [
        "#ttg.blocked spreads the tensor over 4 warps, but the kernel has ttg.num-warps = 8"]
    [message] = messages(BLOCKED, shape="64")  # MLIR prints the fields sorted
    assert message.startswith("#ttg.blocked has rank 2 but tensor<64xf32, #ttg.blocked<{order = [1, 0]")
    assert message.endswith("> has rank 1")
    bad = BLOCKED.replace("order = [1, 0]", "order = [1, 1]")
    [message] = messages(bad)
    assert message.startswith("invalid encoding #ttg.blocked: ") and "order" in message
    shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
    [message] = messages(shared)
    assert message.startswith("a tensor needs a distributed encoding, got the shared-memory #ttg.swizzled_shared on "
                              "tensor<64x64xf32, #ttg.swizzled_shared<")


def test_ll_verify_pass_fails_and_leaves_module_unchanged(context):
    text = f'module attributes {{"ttg.num-warps" = 8 : i32}} {{\n  func.func @f(%a: tensor<64x64xf32, {BLOCKED}>) {{\n    return\n  }}\n}}'
    module = ir.Module.parse(text)
    before = str(module)
    with pytest.raises(ir.MLIRError) as failure:
        build_pass_manager("builtin.module(ll-verify)").run(module.operation)
    assert "ttg.num-warps" in failure.value.error_diagnostics[0].message
    assert str(module) == before
    build_pass_manager("builtin.module(func.func(ll-verify{check-launch=false}))").run(module.operation)
    assert str(module) == before  # the option turned the launch check off, and verifying changes nothing


def test_pass_object_added_by_itself(context):
    module = ir.Module.parse(f"func.func @f(%a: tensor<64x64xf32, {BLOCKED}>) {{\n  return\n}}")
    pm = PassManager("builtin.module")
    get_pass("ll-verify")(check_launch=False).add_to(pm)
    pm.add("canonicalize")
    before = str(module)
    pm.run(module.operation)
    assert str(module) == before
    # The pass object really runs, with its option: the launch check it turned off fails by default.
    eight = ir.Module.parse(
        f'module attributes {{"ttg.num-warps" = 8 : i32}} {{\n  func.func @f(%a: tensor<64x64xf32, {BLOCKED}>) {{\n'
        "    return\n  }\n}"
    )
    pm.run(eight.operation)
    checking = PassManager("builtin.module")
    get_pass("ll-verify")().add_to(checking)
    with pytest.raises(ir.MLIRError, match=r"ttg\.num-warps"):
        checking.run(eight.operation)


@pytest.mark.parametrize("pipeline, message", [
    ("builtin.module(nope)", "unknown pass 'nope'"),
    ("ll-verify{max-errors=lots}", "bad value 'lots' for option 'max-errors'"),
    ("ll-verify{nope=1}", "unknown option 'nope'"),
    ("cse{nope=1}", "no such option nope"),
    ("func.func(cse", "expected ')'"),
    ("cse)", "unexpected ')'"),
    ("func.func{x=1}(ll-verify)", "takes no options"),
])
def test_bad_pipelines(context, pipeline, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(")", r"\)")) as failure:
        build_pass_manager(pipeline)
    assert "\n" not in str(failure.value)


def test_registry_is_lazy_and_complete():
    assert "ll-verify" in pass_names()
    cls = get_pass("ll-verify")
    assert cls.argument == "ll-verify"
    assert [name for name, _, _ in cls.options()] == ["check-launch", "max-errors"]


def test_print_module_aliases_parse_back(context):
    module = ir.Module.parse(
        f'func.func @f(%a: tensor<64x64xf32, {BLOCKED}>, %b: tensor<64xf32, #ttg.slice<{{dim = 1, parent = {BLOCKED}}}>>) '
        'attributes {note = "#ttg.blocked<{looks like one}>"} {\n  return\n}')
    text = print_module(module)
    assert text.startswith("#blocked = #ttg.blocked<")
    assert "#ttg.slice<{dim = 1 : i64, parent = #blocked}>" in text
    assert 'note = "#ttg.blocked<{looks like one}>"' in text  # strings are left alone
    assert str(ir.Module.parse(text)) == str(module)


def _blocked(warps: int) -> str:
    return (f"#ttg.blocked<{{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [{warps}, 1], "
            "order = [1, 0]}>")


def _function(name: str, warps: int) -> str:
    tensor = f"tensor<64x64xf32, {_blocked(warps)}>"
    return f"  func.func @{name}(%a: {tensor}) -> {tensor} {{\n    return %a : {tensor}\n  }}\n"


@pytest.mark.parametrize("outer, inner", [(4, 8), (8, 4)])
def test_verify_reads_the_launch_facts_of_the_nearest_enclosing_op(context, outer, inner):
    """A module nested in another brings other launch facts; the ops after it are its parent's
    again. Checked per signature, so the same op text is right in one place and wrong in the other."""
    def module(first: int, nested: int, last: int) -> str:
        return (f'module attributes {{"ttg.num-warps" = {outer} : i32}} {{\n' + _function("a", first)
                + f'  module @m attributes {{"ttg.num-warps" = {inner} : i32}} {{\n' + _function("b", nested)
                + "  }\n" + _function("c", last) + "}\n")

    assert verify(ir.Module.parse(module(outer, inner, outer))) == []
    errors = verify(ir.Module.parse(module(inner, outer, inner)))
    assert [location.start_line for location, _ in errors] == [2, 6, 10]
    assert [f"ttg.num-warps = {expected}" in message for (_, message), expected in zip(errors, (outer, inner, outer))] \
        == [True] * 3


def test_a_pipeline_that_only_reads_takes_no_snapshot(context):
    """`ll-verify` alone changes nothing, so the atomic pass manager copies nothing; a pipeline
    with a pass that may change the IR keeps the snapshot (and its rollback)."""
    assert build_pass_manager("builtin.module(ll-verify)").read_only
    assert build_pass_manager("builtin.module(func.func(ll-verify{check-launch=false}))").read_only
    assert not build_pass_manager("builtin.module(ll-verify, canonicalize)").read_only
    assert not build_pass_manager("ll-lower").read_only
    later = build_pass_manager("builtin.module(ll-verify)")
    later.add("canonicalize")  # a pass added afterwards may change the IR: atomic again
    assert not later.read_only


def test_wrapping_an_unregistered_triton_op_imports_nothing_each_time(context, monkeypatch):
    """The bindings import a dialect's Python module whenever they wrap one of its ops and retry a
    failed import every time; Triton's unregistered dialects get an empty module found once."""
    import sys

    context.allow_unregistered_dialects = True
    module = ir.Module.parse('"tt.frobnicate"() : () -> ()\n"ttng.frobnicate"() : () -> ()\n"nvg.x"() : () -> ()')
    ops = list(module.body.operations)
    first = [op.operation.opview for op in ops]  # the first wrap may look the module up
    assert [type(view) for view in first] == [ir.OpView] * 3  # no op class: generic views
    searched: list[str] = []

    class Spy:
        def find_spec(self, name, path=None, target=None):
            searched.append(name)

    monkeypatch.setattr(sys, "meta_path", [Spy(), *sys.meta_path])
    for _ in range(3):
        for op in ops:
            assert type(op.operation.opview) is ir.OpView
    assert searched == []
