"""Pipelines: where each pass may run, and atomicity per pipeline.

- `ll-to-simt` (and `ll-lower`, which contains it) writes the kernels into a `gpu.module` of the
  module, so it is a `builtin.module` pass: nested in `func.func(...)` it would change IR outside its
  anchor, which upstream nested pass managers forbid. Nesting it there is a one-line pipeline error.
- A pipeline that fails leaves the module as it was before its first pass, through the Python entry
  point (`build_pass_manager(...).run`) and through the driver (exit 1, nothing written).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from mlir import ir

from linear_layout.ir import load_dialects
from linear_layout.passes import PipelineError, PipelinePassManager, build_pass_manager, get_pass

BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
# A kernel ll-lower lowers: load a tile, store it back.
KERNEL = f"""module attributes {{"ttg.num-warps" = 1 : i32}} {{
  func.func @copy(%src: memref<32xf32>, %dst: memref<32xf32>) {{
    %x = "ll.load"(%src) : (memref<32xf32>) -> tensor<32xf32, {BLOCKED}>
    "ll.store"(%x, %dst) : (tensor<32xf32, {BLOCKED}>, memref<32xf32>) -> ()
    return
  }}
}}
"""
# ll-linearize-encodings and canonicalize succeed on it; ll-to-simt then refuses it (a kernel returns nothing).
FAILS_IN_TO_SIMT = f"""module attributes {{"ttg.num-warps" = 1 : i32}} {{
  func.func @f(%x: tensor<32xf16, {BLOCKED}>) -> i32 {{
    %a = arith.constant 1 : i32
    %b = arith.constant 2 : i32
    %c = arith.addi %a, %b : i32
    return %c : i32
  }}
}}
"""
NESTED_ERROR = (
    "pass 'll-to-simt' runs on 'builtin.module' (it changes the IR outside a smaller op), so it cannot be "
    "nested in 'func.func(...)'; write it at the level of a builtin.module, e.g. 'builtin.module(ll-to-simt)'"
)


@pytest.fixture
def context():
    context = ir.Context()
    load_dialects(context)
    with context, ir.Location.unknown():
        yield context


def run_opt(*args: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", *args], input=text,
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- where a pass may run


@pytest.mark.parametrize("pipeline, prefix", [
    ("func.func(ll-to-simt)", ""),
    ("builtin.module(func.func(ll-to-simt{chip=sm_90}))", ""),
    ("func.func(ll-lower)", "in pipeline 'll-lower': "),
    ("builtin.module(func.func(cse, ll-lower{chip=sm_80}))", "in pipeline 'll-lower': "),
])
def test_module_pass_nested_in_a_function_is_a_pipeline_error(context, pipeline, prefix):
    with pytest.raises(PipelineError) as info:
        build_pass_manager(pipeline, context)
    assert str(info.value) == prefix + NESTED_ERROR


@pytest.mark.parametrize("pipeline", ["func.func(ll-to-simt)", "func.func(ll-lower)"])
def test_driver_says_where_ll_to_simt_runs(pipeline):
    result = run_opt("-p", pipeline, text=KERNEL)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [f"linear-layout-opt: error: {result.stderr.split('error: ', 1)[1].strip()}"]
    assert NESTED_ERROR in result.stderr


def test_module_pass_runs_on_a_nested_module_and_touches_nothing_outside(context):
    """`builtin.module(builtin.module(ll-lower))`: the inner module gets the gpu.module, the outer
    module's own function stays as it was."""
    inner = KERNEL.replace("module attributes", "module @inner attributes", 1)
    outer = ir.Module.parse(f"module {{\n{inner}\nfunc.func @outside() {{\n  return\n}}\n}}")
    build_pass_manager("builtin.module(builtin.module(ll-lower))", context).run(outer.operation)
    top = [op.operation.name for op in outer.body.operations]
    assert top == ["builtin.module", "func.func"]
    nested = [op.operation.name for op in outer.body.operations[0].regions[0].blocks[0].operations]
    assert nested == ["gpu.module"]


def test_module_pass_run_directly_on_a_function_is_refused(context):
    module = ir.Module.parse(KERNEL)
    function = module.body.operations[0]
    before = str(module)
    errors = []
    handler = context.attach_diagnostic_handler(lambda d: errors.append(d.message) or True)
    try:
        assert get_pass("ll-to-simt")().run(function.operation) is False
    finally:
        handler.detach()
    assert errors == ["pass 'll-to-simt' runs on 'builtin.module', not on 'func.func'"]
    assert str(module) == before


def test_function_passes_still_nest(context):
    """The passes that change nothing outside their op still run nested."""
    module = ir.Module.parse(KERNEL)
    build_pass_manager("func.func(ll-verify, ll-linearize-encodings, ll-lower-apply, ll-explain-conversions)",
                       context).run(module.operation)
    assert "#ttg.linear" in str(module) and "#ttg.blocked" not in str(module)


# ---------------------------------------------------------------- atomic per pipeline: the Python entry point


@pytest.mark.parametrize("pipeline", [
    "ll-lower",  # ll-linearize-encodings rewrites, ll-to-simt fails
    "ll-linearize-encodings, canonicalize, ll-to-simt",  # an upstream pass rewrites in between
    "builtin.module(canonicalize, func.func(ll-linearize-encodings), ll-to-simt, cse)",
])
def test_failing_pipeline_leaves_the_module_unchanged(context, pipeline):
    module = ir.Module.parse(FAILS_IN_TO_SIMT)
    before = str(module)
    pm = build_pass_manager(pipeline, context)
    assert isinstance(pm, PipelinePassManager)
    with pytest.raises(ir.MLIRError, match="'f': a kernel cannot return values"):
        pm.run(module.operation)
    assert str(module) == before
    assert module.operation.verify()
    # ... and the module still works: the first passes alone succeed on it and change it.
    build_pass_manager("ll-linearize-encodings, canonicalize", context).run(module.operation)
    assert str(module) != before and "arith.constant 3" in str(module)


@pytest.mark.parametrize("text", [KERNEL, FAILS_IN_TO_SIMT])
def test_snapshot_stays_out_of_the_module_under_an_insertion_point(context, text):
    """The copy taken before the run is detached: an active InsertionPoint (the caller's) must not
    put it into the module the pipeline runs on."""
    module = ir.Module.parse(text)
    before = str(module)
    with ir.InsertionPoint(module.body):
        pm = build_pass_manager("ll-verify, ll-lower", context)
        if text is KERNEL:
            pm.run(module.operation)
            assert [op.operation.name for op in module.body.operations] == ["gpu.module"]
            return
        with pytest.raises(ir.MLIRError) as info:
            pm.run(module.operation)
    assert len(info.value.error_diagnostics) == 1  # the function once, not its copy too
    assert str(module) == before


def test_a_pipeline_run_on_a_function_is_refused_by_upstream(context):
    module = ir.Module.parse(KERNEL)
    before = str(module)
    with pytest.raises(ir.MLIRError, match=r"can't run 'builtin\.module' pass manager on 'func\.func' op"):
        build_pass_manager("ll-lower", context).run(module.body.operations[0])
    assert str(module) == before


def test_module_attributes_are_restored(context):
    module = ir.Module.parse(FAILS_IN_TO_SIMT)
    pm = build_pass_manager("ll-lower", context)
    with pytest.raises(ir.MLIRError):
        pm.run(module)
    assert str(module.operation.attributes["ttg.num-warps"]) == "1 : i32"
    assert "gpu.container_module" not in module.operation.attributes


def test_successful_pipeline_changes_the_module_in_place(context):
    module = ir.Module.parse(KERNEL)
    build_pass_manager("ll-lower", context).run(module.operation)
    assert [op.operation.name for op in module.body.operations] == ["gpu.module"]
    assert "gpu.container_module" in module.operation.attributes


# ---------------------------------------------------------------- atomic per pipeline: the driver


@pytest.mark.parametrize("extra", [[], ["--split-input-file"], ["--mlir-print-op-generic"]])
def test_driver_failing_pipeline_writes_nothing(tmp_path, extra):
    out = tmp_path / "out.mlir"
    result = run_opt("-p", "builtin.module(ll-lower)", "-o", str(out), *extra, text=FAILS_IN_TO_SIMT)
    assert result.returncode == 1
    assert result.stdout == "" and not out.exists()
    assert len(result.stderr.splitlines()) == 1 and "<stdin>:2:3: error: 'f': a kernel cannot return values" in result.stderr


def test_driver_split_input_writes_nothing_when_one_chunk_fails(tmp_path):
    out = tmp_path / "out.mlir"
    result = run_opt("--split-input-file", "-p", "ll-lower", "-o", str(out),
                     text=KERNEL + "// -----\n" + FAILS_IN_TO_SIMT)
    assert result.returncode == 1 and not out.exists()
    assert result.stderr.count("error:") == 1 and ":10:3: error: 'f'" in result.stderr
