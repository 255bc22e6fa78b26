"""The lowering as composable rewrite patterns, the op classes, and our passes in every position.

- A user's pattern and ours in one `RewritePatternSet`, applied by one
  `apply_patterns_and_fold_greedily`, proven by execution (JIT for `ll.apply`, the SIMT
  interpreter for a kernel).
- Every pass of `pass_names()` nested under `func.func(...)` runs on each function; kernels in
  nested and implicit modules are lowered; a failing pass leaves the module unchanged.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import arith, func
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from linear_layout import LinearLayout
from linear_layout.dialects import LayoutOp, ll, load_dialects, ttg
from linear_layout.encodings import BlockedLayout
from linear_layout.ir import format_ll_layout, to_attribute
from linear_layout.passes import PipelineError, build_pass_manager, get_pass, pass_names
from linear_layout.patterns import (
    allocate_shared_memory,
    insert_barriers,
    outline_kernel,
    populate_lower_apply_patterns,
    populate_to_simt_patterns,
)
from linear_layout.patterns.legality import function_launch
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_input

ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
LAYOUT = LinearLayout.from_bases([("register", [[0, 1], [1, 0]]), ("lane", [[0, 2], [2, 0]])], ["row", "col"])


@pytest.fixture
def context():
    with ir.Context() as ctx, ir.Location.unknown():
        load_dialects(ctx)
        yield ctx


# ---------------------------------------------------------------------------- op classes


def test_ops_come_back_as_their_classes(context):
    module = ir.Module.parse(kernel_text(ROW.to_linear_layout([16, 16]), COL.to_linear_layout([16, 16]), "f32", 4,
                                         encodings=(str(ROW), str(COL))))
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)
    assert [type(op).__name__ for op in ops[:3]] == ["LoadOp", "ConvertLayoutOp", "StoreOp"]
    assert isinstance(ops[1], ttg.ConvertLayoutOp) and isinstance(ops[1], LayoutOp)
    assert ops[1].src == ops[0].result and ops[2].value == ops[1].result
    assert ops[0].offsets == [] and ops[0].memref.type == ops[2].memref.type
    assert all(op.verify_rules() is None for op in ops[:3])


def test_builders_take_keyword_only_loc_and_ip(context):
    i32 = ir.IntegerType.get_signless(32)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        function = func.FuncOp("f", ([i32, i32], [i32, i32]))
        entry = function.add_entry_block()
    row, col = ll.apply(LAYOUT, list(entry.arguments), ip=ir.InsertionPoint(entry), loc=ir.Location.name("here"))
    func.ReturnOp([row, col], ip=ir.InsertionPoint(entry))
    apply_op = row.owner.opview
    assert isinstance(apply_op, ll.ApplyOp) and apply_op.layout == LAYOUT
    assert apply_op.coordinates == [row, col] and "here" in str(apply_op.location)
    assert module.operation.verify()
    with pytest.raises(TypeError):
        ll.apply(LAYOUT, list(entry.arguments), None)  # loc and ip are keyword-only


def test_op_rules_are_methods(context):
    f32 = ir.F32Type.get()
    module = ir.Module.create()
    row, col = (ir.RankedTensorType.get([16, 16], f32, to_attribute(e)) for e in (ROW, COL))
    with ir.InsertionPoint(module.body):
        function = func.FuncOp("f", ([row], []))
        entry = function.add_entry_block()
    with ir.InsertionPoint(entry):
        bad = ttg.ConvertLayoutOp(ir.RankedTensorType.get([16, 8], f32, to_attribute(COL)), entry.arguments[0])
        good = ttg.ConvertLayoutOp(col, entry.arguments[0])
        memdesc = ttg.memdesc_type([16, 16], f32, ir.Attribute.parse(
            "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"), mutable=False)
        buffer = ttg.local_alloc(memdesc, entry.arguments[0])
        store = ttg.local_store(entry.arguments[0], buffer)
    assert "must keep shape and element type" in bad.verify_rules()
    assert good.verify_rules() is None
    assert "immutable" in store.verify_rules()


def test_load_dialects_is_idempotent(context):
    assert load_dialects(context) is context
    assert load_dialects() is context


# ---------------------------------------------------------------------------- composition


def _double_to_shift(op, rewriter):
    """A user's pattern: `arith.addi %x, %x` -> `arith.shli %x, 1` (returns True: no match)."""
    lhs, rhs = op.operands
    if lhs != rhs:
        return True
    with ir.InsertionPoint(op), op.location:
        shifted = arith.shli(lhs, arith.constant(lhs.type, 1))
    rewriter.replace_op(op, [shifted])
    return None


def test_user_pattern_composes_with_lower_apply(context):
    """One RewritePatternSet holds ours and the user's; one greedy application runs both."""
    i32 = ir.IntegerType.get_signless(32)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        function = func.FuncOp("f", ([i32, i32], [i32]))
        function.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        entry = function.add_entry_block()
    with ir.InsertionPoint(entry):
        row, col = ll.apply(LAYOUT, list(entry.arguments))
        doubled = arith.addi(row, row)
        func.ReturnOp([arith.addi(doubled, col)])
    patterns = RewritePatternSet(context)
    populate_lower_apply_patterns(patterns)
    patterns.add("arith.addi", _double_to_shift)
    apply_patterns_and_fold_greedily(module, patterns.freeze())
    text = str(module)
    assert "ll.apply" not in text and "arith.shli" in text
    PassManager.parse("builtin.module(convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
                      ).run(module.operation)
    engine = ExecutionEngine(module)
    for register in range(4):
        for lane in range(4):
            out = ctypes.c_int32(0)
            engine.invoke("f", ctypes.pointer(ctypes.c_int32(register)), ctypes.pointer(ctypes.c_int32(lane)),
                          ctypes.pointer(out))
            coordinates = LAYOUT.apply({"register": register, "lane": lane})
            assert out.value == 2 * coordinates["row"] + coordinates["col"]


def _negate_by_multiplying(op, rewriter):
    """A user's pattern on tensors: `arith.negf %x` -> `arith.mulf %x, -1.0` (splat)."""
    t = op.operands[0].type
    if not isinstance(t, ir.RankedTensorType):
        return True
    with ir.InsertionPoint(op), op.location:
        minus_one = arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(t.element_type, -1.0)))
        product = arith.mulf(op.operands[0], minus_one)
    rewriter.replace_op(op, [product])
    return None


NEGATE = f"""module attributes {{"ttg.num-warps" = 4 : i32}} {{
  func.func @negate(%in: memref<16x16xf32>, %out: memref<16x16xf32>) {{
    %x = "ll.load"(%in) : (memref<16x16xf32>) -> tensor<16x16xf32, {ROW}>
    %y = "ttg.convert_layout"(%x) : (tensor<16x16xf32, {ROW}>) -> tensor<16x16xf32, {COL}>
    %z = arith.negf %y : tensor<16x16xf32, {COL}>
    "ll.store"(%z, %out) : (tensor<16x16xf32, {COL}>, memref<16x16xf32>) -> ()
    return
  }}
}}"""


def test_user_pattern_composes_with_the_simt_lowering(context):
    """The user lowers their op on tensors at a higher benefit; our patterns lower the rest
    (including what the user's pattern created) in the same greedy application."""
    module = ir.Module.parse(NEGATE)
    function = module.body.operations[0]
    launch = function_launch(function)
    kernel = outline_kernel(function, launch)
    allocate_shared_memory(kernel, launch)
    insert_barriers(kernel)
    patterns = RewritePatternSet(context)
    populate_to_simt_patterns(patterns)
    patterns.add("arith.negf", _negate_by_multiplying, benefit=2)
    apply_patterns_and_fold_greedily(module, patterns.freeze())
    build_pass_manager("reconcile-unrealized-casts, canonicalize, cse").run(module.operation)
    text = str(module)
    assert "arith.negf" not in text and "arith.mulf" in text and "tensor<" not in text
    x = random_input([16, 16], "f32", 3)
    y = np.zeros_like(x)
    report = run_kernel(module, [x, y])
    np.testing.assert_array_equal(y, -x)
    assert not report.races and report.barriers >= 1


# ---------------------------------------------------------------------------- passes in every position

APPLY_FUNCTION = f"""  func.func @index(%r: i32, %l: i32) -> (i32, i32) {{
    %a, %b = "ll.apply"(%r, %l) {{layout = {format_ll_layout(LAYOUT)}}} : (i32, i32) -> (i32, i32)
    return %a, %b : i32, i32
  }}"""


def _kernel_function(name: str, encoding_a=ROW, encoding_b=COL) -> str:
    text = kernel_text(encoding_a.to_linear_layout([16, 16]), encoding_b.to_linear_layout([16, 16]), "f32", 4,
                       name=name, encodings=(str(encoding_a), str(encoding_b)))
    return "\n".join(text.splitlines()[1:-1])


def _module(*functions: str, warps: int = 4) -> str:
    return f'module attributes {{"ttg.num-warps" = {warps} : i32}} {{\n' + "\n".join(functions) + "\n}"


def _run(text: str, pipeline: str):
    """(module text after, error or None); the module must be unchanged on error."""
    with ir.Context() as ctx:
        load_dialects(ctx)
        module = ir.Module.parse(text)
        before = str(module)
        try:
            build_pass_manager(pipeline, ctx).run(module.operation)
        except ir.MLIRError as error:
            assert str(module) == before, "a failed pass changed the module"
            return before, "; ".join(d.message for d in error.error_diagnostics)
        return str(module), None


#: For every pass: (module text, what its output must contain, what it must not).
NESTED = {
    "ll-verify": (_module(_kernel_function("k"), warps=8), None, None),
    "ll-lower-apply": (_module(APPLY_FUNCTION), "arith.", "ll.apply"),
    "ll-linearize-encodings": (_module(_kernel_function("k")), "#ttg.linear", "#ttg.blocked"),
    "ll-to-simt": (_module(_kernel_function("k")), "gpu.func @k", "func.func"),
    "ll-lower": (_module(_kernel_function("k")), "gpu.func @k", "func.func"),
    "ll-explain-conversions": (_module(_kernel_function("k")), "ll.explain", None),
}


def test_every_pass_is_covered():
    assert set(NESTED) == set(pass_names())


#: They write the kernels into a gpu.module of the module, outside any function: builtin.module passes.
MODULE_PASSES = ("ll-to-simt", "ll-lower")


@pytest.mark.parametrize("name", sorted(NESTED))
def test_pass_nested_under_func_func_runs_on_each_function(name):
    text, present, absent = NESTED[name]
    _, top_error = _run(text, f"builtin.module({name})")
    if name in MODULE_PASSES:  # nested, they would change IR outside their anchor: a pipeline error
        assert top_error is None, top_error
        with ir.Context() as ctx, pytest.raises(PipelineError, match=r"cannot be nested in 'func\.func"):
            build_pass_manager(f"builtin.module(func.func({name}))", ctx)
        return
    nested, nested_error = _run(text, f"builtin.module(func.func({name}))")
    if name == "ll-verify":  # 4-warp layouts in an 8-warp kernel: both positions must say so
        assert top_error and nested_error and "ttg.num-warps = 8" in nested_error
        return
    assert top_error is None and nested_error is None, (top_error, nested_error)
    assert present in nested and (absent is None or absent not in nested), nested
    assert nested != text


def test_nested_pass_sees_every_function_and_fails_as_a_whole():
    bad = APPLY_FUNCTION.replace("@index(%r: i32, %l: i32)", "@bad(%l: i32)").replace(
        '    %a, %b = "ll.apply"', '    %r = arith.constant 4096 : i32\n    %a, %b = "ll.apply"')
    after, error = _run(_module(APPLY_FUNCTION, bad), "builtin.module(func.func(ll-lower-apply))")
    assert error is not None and "4096" in error  # and _run checked that @index was not lowered either
    other = APPLY_FUNCTION.replace("@index", "@other")
    after, error = _run(_module(APPLY_FUNCTION, other), "builtin.module(func.func(ll-lower-apply))")
    assert error is None and "ll.apply" not in after and "@index" in after and "@other" in after


def test_options_of_nested_passes(context):
    text = _module(_kernel_function("k"), warps=8)
    _, error = _run(text, "builtin.module(func.func(ll-verify{check-launch=false}))")
    assert error is None
    assert get_pass("ll-lower").PIPELINE.startswith("ll-linearize-encodings")


@pytest.mark.parametrize("wrap", ["nested", "implicit"])
def test_kernels_in_nested_and_implicit_modules_are_lowered(wrap):
    if wrap == "nested":
        text = "module {\n" + _module(_kernel_function("inner")) + "\n}"
    else:  # two top-level ops: MLIR wraps them in an implicit module
        text = _module(_kernel_function("first")) + "\n" + _module(_kernel_function("second"))
    after, error = _run(text, "ll-lower")
    assert error is None, error
    assert "func.func" not in after and after.count("gpu.func @") == (1 if wrap == "nested" else 2)
    assert after.count("gpu.container_module") == (1 if wrap == "nested" else 2)


def test_lowered_nested_kernel_executes():
    text = "module {\n" + _module(_kernel_function("inner")) + "\n}"
    with ir.Context() as ctx:
        load_dialects(ctx)
        module = ir.Module.parse(text)
        build_pass_manager("ll-lower", ctx).run(module.operation)
        x = random_input([16, 16], "f32", 5)
        y = np.zeros_like(x)
        inner = module.body.operations[0].operation  # the interpreter looks one module deep
        run_kernel(inner, [x, y])
    np.testing.assert_array_equal(x, y)


def test_the_composition_example_of_docs_passes_runs(context):
    """docs/passes.md shows a user pattern composed with ours: run its code on a module."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "passes.md").read_text()
    [code] = re.findall(r"^```python[ \t]*\n(.*?)^```[ \t]*$", doc, re.S | re.M)
    module = ir.Module.parse(_module(APPLY_FUNCTION.replace(
        "return %a, %b : i32, i32", "%d = arith.addi %a, %a : i32\n    return %d, %b : i32, i32")))
    exec(compile(code, "docs/passes.md", "exec"), {"context": context, "module": module})
    text = str(module)
    assert "ll.apply" not in text and "arith.shli" in text and "arith.addi" not in text


# ---------------------------------------------------------------------------- the registry drives the steps

REGION_KERNEL = """module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @k(%c: i1, %out: memref<4xf32>) {
    scf.if %c {
      %z = arith.constant 0.0 : f32
      %i = arith.constant 0 : index
      memref.store %z, %out[%i] : memref<4xf32>
    }
    return
  }
}"""


def _claiming(monkeypatch, name: str, pattern) -> None:
    """Register `pattern` for op `name` as a module of patterns/ would (the registry is read at import)."""
    from linear_layout.patterns import to_simt

    monkeypatch.setitem(to_simt._REGISTRY, name, pattern)


def test_an_op_with_regions_is_legal_once_a_pattern_claims_it(context, monkeypatch):
    from linear_layout.patterns.legality import check_function
    from linear_layout.patterns.simt_pattern import SimtPattern

    module = ir.Module.parse(REGION_KERNEL)
    function = module.body.operations[0]
    [(_, message)] = check_function(function)
    assert message == "'scf.if' has regions; control flow cannot be lowered to SIMT form yet"
    _claiming(monkeypatch, "scf.if", SimtPattern(("scf.if",), lambda op, launch: None, lambda op, launch, plan: []))
    assert check_function(function) == []


def test_allocation_and_barriers_read_what_a_pattern_declares(context, monkeypatch):
    """A new op with scratch is one pattern: the allocation gives it a buffer (packed by its
    lifetime) and the barrier insertion orders its accesses, with no edit to either analysis."""
    from linear_layout.patterns.allocation import shared_uses
    from linear_layout.patterns.simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern

    f32 = ir.F32Type.get()

    def shared(op, launch, plan):
        return SharedUse(Scratch(f32, 64, pooled=False), (BufferAccess(Access.WRITE),))

    module = ir.Module.parse(REGION_KERNEL.replace("scf.if %c {", "scf.if %c {\n    }\n    scf.if %c {"))
    function = module.body.operations[0]
    _claiming(monkeypatch, "scf.if", SimtPattern(("scf.if",), lambda op, launch: None, lambda op, launch, plan: [],
                                                 shared=shared))
    launch = function_launch(function)
    kernel = outline_kernel(function, launch)
    uses = shared_uses(kernel, launch)
    assert [op.operation.name for op, _ in uses] == ["scf.if", "scf.if"]
    allocate_shared_memory(kernel, launch, uses)
    insert_barriers(kernel, uses)
    text = str(module)
    # one allocation of bytes; each buffer lives during its op only, so both lie at byte 0
    assert "workgroup(%arg2 : memref<256xi8, #gpu.address_space<workgroup>>)" in text
    assert len(re.findall(r"memref.view %arg2\[%c0(?:_\d+)?\]\[\]", text)) == 2 and text.count("to memref<64xf32") == 2
    assert [op.attributes["ll.workgroup_buffer"].value for op, _ in uses] == [0, 1]
    # the second op writes the bytes the first wrote: a write after a write needs a barrier
    assert text.count("gpu.barrier") == 1
    assert text.index("gpu.barrier") > text.index("scf.if")
