"""ll-to-simt and ll-lower, proven by execution in the SIMT interpreter.

Each random case is a kernel `ll.load` (layout A) -> `ttg.convert_layout` (to B) -> `ll.store`;
after `ll-lower` the interpreter runs it for every thread of the block and the output memref
must equal the input bit for bit, whatever the strategy (no-op, register, shuffle or shared
memory); shared-memory cases also measure exactly the planned wavefronts and barriers (see
tests/test_shared_lowering.py for the dedicated suite).
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mlir import ir

from linear_layout import LinearLayout
from linear_layout.ir import load_dialects
from linear_layout.ir.bridge import layout_of
from linear_layout.passes import build_pass_manager
from linear_layout.planning import plan_conversion
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_case, random_input


def lower(text: str, pipeline: str = "ll-lower"):
    """(context, module, error message or None). On error the module must be unchanged."""
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        before = str(module)
        try:
            build_pass_manager(pipeline, context).run(module.operation)
        except ir.MLIRError as error:
            assert str(module) == before, "a failed lowering changed the module"
            return context, module, "; ".join(d.message for d in error.error_diagnostics) or str(error)
    return context, module, None


def run_case(seed: int) -> str:
    src, dst, dtype, num_warps, _mode = random_case(seed)
    plan = plan_conversion(src, dst, bitwidth={"f32": 32, "f16": 16, "i8": 8}[dtype])
    context, module, error = lower(kernel_text(src, dst, dtype, num_warps))
    assert error is None, error
    shape = [s for _, s in src.out_dims]
    x = random_input(shape, dtype, seed)
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), f"seed {seed}: {plan.strategy} conversion lost data"
    assert not report.races
    if plan.strategy.uses_shared_memory:
        shuffles = plan.packed.shuffles * num_warps if plan.packed is not None else 0  # the packed transposes
        assert report.shuffles == shuffles and report.barriers == plan.shared.barriers
        assert sum(a.wavefronts for a in report.shared_accesses if a.kind == "store") == plan.shared.store.wavefronts
        assert sum(a.wavefronts for a in report.shared_accesses if a.kind == "load") == plan.shared.load.wavefronts
    else:
        assert report.shuffles == plan.shuffles * num_warps
    return plan.strategy


@given(seed=st.integers(0, 2**32 - 1))
def test_random_conversions_execute(seed):
    run_case(seed)


def test_random_sweep_covers_every_strategy():
    """A fixed sweep, so that coverage is guaranteed: strategies, warps, types, ranks, broadcasts."""
    kinds = collections.Counter()
    seen = collections.defaultdict(set)
    for seed in range(240):
        src, dst, dtype, num_warps, _ = random_case(seed)
        kind = run_case(seed)
        kinds[kind] += 1
        seen["warps"].add(num_warps)
        seen["dtype"].add(dtype)
        seen["rank"].add(src.num_out_dims)
        seen["broadcast"].add(not src.is_injective() or not dst.is_injective())
    assert kinds["noop"] >= 10 and kinds["register"] >= 10 and kinds["shuffle"] >= 30 and kinds["shared"] >= 10, kinds
    assert seen["warps"] == {1, 2, 4, 8}
    assert seen["dtype"] == {"f32", "f16", "i8"}
    assert seen["rank"] == {1, 2, 3}
    assert seen["broadcast"] == {True, False}


ELEMENTWISE = """
#blocked = #ttg.blocked<{sizePerThread = [2, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 2], order = [1, 0]}>
module attributes {"ttg.num-warps" = 2 : i32} {
  func.func @axpy(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %out: memref<64x64xf32>, %i: index, %j: index) {
    %a = "ll.load"(%x, %i, %j) : (memref<64x64xf32>, index, index) -> tensor<16x32xf32, #blocked>
    %b = "ll.load"(%y, %i, %j) : (memref<64x64xf32>, index, index) -> tensor<16x32xf32, #blocked>
    %c = arith.constant dense<3.0> : tensor<16x32xf32, #blocked>
    %m = arith.mulf %a, %c : tensor<16x32xf32, #blocked>
    %s = arith.addf %m, %b : tensor<16x32xf32, #blocked>
    %e = math.absf %s : tensor<16x32xf32, #blocked>
    "ll.store"(%e, %out, %i, %j) : (tensor<16x32xf32, #blocked>, memref<64x64xf32>, index, index) -> ()
    return
  }
}
"""


def test_elementwise_with_offsets_executes():
    context, module, error = lower(ELEMENTWISE)
    assert error is None, error
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y, out, 16, 8])
    expected = np.zeros_like(x)
    expected[16:32, 8:40] = np.abs(x[16:32, 8:40] * np.float32(3) + y[16:32, 8:40])
    np.testing.assert_array_equal(out, expected)
    # Dynamic offsets: the alignment is not provable, so accesses stay element-aligned.
    assert "alignment = 4" in str(module)
    assert report.shuffles == 0


def test_vectorised_access_is_16_bytes():
    text = ELEMENTWISE.replace(", %i, %j) :", ") :").replace(", index, index) ->", ") ->").replace(
        ", %i: index, %j: index", "").replace("64x64", "16x32")
    context, module, error = lower(text)
    assert error is None, error
    asm = str(module)
    assert asm.count("{alignment = 16 : i64} : memref<16x32xf32>, vector<4xf32>") == 3 * 2  # 2 loads, 1 store, 2 rows
    x, y = np.ones((16, 32), np.float32), np.ones((16, 32), np.float32)
    out = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y, out])
    np.testing.assert_array_equal(out, np.full_like(x, 4.0))
    assert {a.instruction_bytes for a in report.global_accesses} == {16}


def test_failure_leaves_module_unchanged():
    src = LinearLayout.from_bases([("register", [[1]]), ("lane", [[2], [4], [8], [16], [32]]), ("warp", [[64]])],
                                  ["dim0"])
    dst = LinearLayout.from_bases([("register", [[64]]), ("lane", [[2], [4], [8], [16], [32]]), ("warp", [[1]])],
                                  ["dim0"])
    assert plan_conversion(src, dst).strategy == "shared"
    # An op with no SIMT lowering after a shared-memory conversion: nothing is half-lowered.
    text = kernel_text(src, dst, "f32", 2).replace('    "ll.store"', '    %t = "tensor.empty"() : () -> tensor<128xf32>\n    "ll.store"')
    _, _, error = lower(text, "ll-to-simt")
    assert "cannot be lowered to SIMT form" in error
    # Too many warps for the launch, caught by ll-to-simt itself (no ll-verify in this pipeline).
    text = kernel_text(src, src, "f32", 2).replace('"ttg.num-warps" = 2', '"ttg.num-warps" = 1')
    _, _, error = lower(text, "ll-to-simt")
    assert "too many warps for the launch" in error


@pytest.mark.parametrize("encoding, shape", [
    ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", [64, 64]),
    ("#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [0, 1]}>}>", [128]),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>", [64, 32]),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>", [64, 32]),
])
def test_linearize_keeps_meaning(encoding, shape):
    dims = "x".join(map(str, shape))
    text = f"""module attributes {{"ttg.num-warps" = 4 : i32}} {{
  func.func @f(%x: tensor<{dims}xf16, {encoding}>) -> tensor<{dims}xf16, {encoding}> {{
    return %x : tensor<{dims}xf16, {encoding}>
  }}
}}"""
    context, module, error = lower(text, "ll-linearize-encodings")
    assert error is None, error
    with context:
        before = layout_of(ir.RankedTensorType(ir.Type.parse(f"tensor<{dims}xf16, {encoding}>")))
        func = module.body.operations[0]
        after_type = func.regions[0].blocks[0].arguments[0].type
        assert "#ttg.linear" in str(after_type)
        assert layout_of(after_type) == before
