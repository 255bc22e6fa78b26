"""`ll-lower{chip=...}`: shared-memory conversions with ldmatrix/stmatrix, proven by execution.

The lowering emits the single planner's `plan.matrix` (planning/matrix.py) as upstream
`nvvm.stmatrix`/`nvvm.ldmatrix` ops. Each kernel runs in the SIMT interpreter (PTX ISA semantics
of the matrix ops): the output must equal the input bit for bit, with no race, and the measured
wavefronts must equal the plan's and the bandwidth floor. The stock NVVM pipeline compiles the
kernels to PTX for sm_80 and sm_90 with the planned instructions.
"""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest
from mlir import ir

from linear_layout.encodings import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layout.ir import load_dialects
from linear_layout.passes import PipelineError, build_pass_manager
from linear_layout.planning import plan_conversion
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text
from matrix_kernels import random_pair
from test_lowering_ptx import ptx_of

DTYPES = {8: ("i8", np.uint8), 16: ("f16", np.float16), 32: ("f32", np.float32)}
ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
EPILOGUE = (NVMMADistributedLayout((3, 0), (4, 1), (16, 128, 16)), BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0)))


def lower(text: str, chip: str | None) -> str:
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(f"ll-lower{{chip={chip}}}" if chip else "ll-lower", context).run(module.operation)
        return str(module)


def execute(lowered: str, shape, bitwidth: int, seed: int = 0):
    _, np_type = DTYPES[bitwidth]
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, shape, dtype=np.uint8) if bitwidth == 8 else rng.standard_normal(shape).astype(np_type)
    y = np.zeros_like(x)
    with ir.Context() as context:
        load_dialects(context)
        report = run_kernel(ir.Module.parse(lowered), [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "the conversion lost data"
    assert not report.races
    return report


def ptx(lowered: str, chip: str) -> str:
    return ptx_of(lowered, chip)


MMA_V2 = NVMMADistributedLayout((2, 0), (2, 2), (16, 8))
STMATRIX_T = "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"


@pytest.mark.parametrize("src, dst, shape, chip, counts", [
    (*EPILOGUE, (128, 128), "sm_90", {STMATRIX_T: 16, "ld.shared.v4": 16}),
    (ROW, COL, (64, 64), "sm_90", {STMATRIX_T: 4, "ld.shared.v4": 4}),
    (ROW, COL, (64, 64), "sm_80", {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": 4, "st.shared.v4": 4}),
    (ROW, COL, (128, 128), "sm_90", {STMATRIX_T: 16, "ld.shared.v4": 16}),
    (MMA_V2, DotOperandLayout(1, MMA_V2, 2), (128, 64), "sm_90",
     {"stmatrix.sync.aligned.m8n8.x4.shared.b16": 8, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": 16}),
])
def test_issue_kernels_reach_the_floor(src, dst, shape, chip, counts):
    text = kernel_text(src.to_linear_layout(list(shape)), dst.to_linear_layout(list(shape)), "f16", 4,
                       encodings=(str(src), str(dst)))
    plan = plan_conversion(src, dst, shape, 16, chip=chip)
    lowered = lower(text, chip)
    report = execute(lowered, shape, 16)
    assert report.wavefronts == report.floor_wavefronts == plan.matrix.wavefronts == plan.matrix.floor
    assert report.barriers == plan.barriers
    code = ptx(lowered, chip)
    assert {name: code.count(name) for name in counts} == counts
    assert len(re.findall(r"(?:ld|st)\.shared|(?:ld|st)matrix", code)) == sum(counts.values())  # no other
    # Portable (the default): no matrix instruction; above the floor (2-byte accesses) or more
    # shared instructions.
    portable = lower(text, None)
    assert "nvvm." not in portable
    shared = plan_conversion(src, dst, shape, 16).shared
    more = (execute(portable, shape, 16).wavefronts > report.floor_wavefronts,
            len(shared.store.instructions) + len(shared.load.instructions) > plan.matrix.shared_instructions)
    assert any(more)


def test_random_conversions_through_ll_lower():
    """Random 8/16/32-bit conversions: wherever the planner picks a matrix plan, the lowered kernel
    runs exactly and at the floor; elsewhere it runs as before."""
    kinds = collections.Counter()
    for seed in range(150):
        src, dst, warps = random_pair(seed)
        bitwidth = (8, 16, 16, 32)[seed % 4]
        chip = "sm_80" if seed % 5 == 0 else "sm_90"
        plan = plan_conversion(src, dst, None, bitwidth, chip=chip)
        lowered = lower(kernel_text(src, dst, DTYPES[bitwidth][0], warps), chip)
        report = execute(lowered, [s for _, s in src.out_dims], bitwidth, seed)
        if plan.matrix is None:
            kinds["other"] += 1
            assert "nvvm.ldmatrix" not in lowered and "nvvm.stmatrix" not in lowered
            continue
        assert report.wavefronts == report.floor_wavefronts == plan.matrix.wavefronts, seed
        assert report.barriers == plan.barriers, seed
        kinds[(bitwidth, plan.matrix.matrix.instruction)] += 1
    assert sum(n for k, n in kinds.items() if k != "other") >= 40, kinds
    assert {k[1] for k in kinds if k != "other"} == {"ldmatrix", "stmatrix"}, kinds


def test_chip_option_errors():
    context = ir.Context()
    for pipeline, message in [("ll-lower{chip=sm_999}", "bad value 'sm_999' for option 'chip' of pass 'll-lower'"),
                              ("ll-to-simt{chip=gfx9999}", "bad value 'gfx9999' for option 'chip' of pass 'll-to-simt'")]:
        with pytest.raises(PipelineError, match=re.escape(message)):
            build_pass_manager(pipeline, context)


def test_broadcast_destination_through_ll_lower():
    # mma v2 -> blocked [1,16] 64x64 i8: the destination's lanes repeat data. Triton: 4 stmatrix +
    # 2 ld.shared.v4 (6 shared instructions); ours: 2 stmatrix.x4 + 4 ld.shared.v4, as planned
    # (above the floor: a load phase's repeated lanes move no new bytes).
    src, dst = MMA_V2, BlockedLayout((1, 16), (4, 8), (4, 1), (1, 0))
    text = kernel_text(src.to_linear_layout([64, 64]), dst.to_linear_layout([64, 64]), "i8", 4,
                       encodings=(str(src), str(dst)))
    plan = plan_conversion(src, dst, (64, 64), 8, chip="sm_90")
    lowered = lower(text, "sm_90")
    report = execute(lowered, (64, 64), 8)
    assert (report.wavefronts, report.floor_wavefronts) == (plan.matrix.wavefronts, plan.matrix.floor) == (96, 64)
    code = ptx(lowered, "sm_90")
    assert code.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == 2 and code.count("ld.shared.v4") == 4


def _codegen_cases():
    """bench_codegen's dot operand <-> blocked kernels and its 8x64 broadcast-dst kernel (issue 20)."""
    import lowering_snapshot

    codegen = lowering_snapshot._benchmark("bench_codegen")
    chosen = [case for case in codegen.suite() if "(" in case[0].split()[0]]  # dot operand <-> blocked
    chosen += [case for case in codegen.suite() if case[0] == "broadcast-dst 8x64 f16 w4"]
    return codegen, chosen


CODEGEN, DOT_CASES = _codegen_cases()


@pytest.mark.parametrize("case", DOT_CASES, ids=[case[0] for case in DOT_CASES])
def test_dot_operand_conversions_match_triton_matrix_instructions(case):
    """Dot operands whose warps (or registers, or the storing side's lanes) repeat data: the
    storing side stores once (a predicate on the warp/lane index), the loading side copies
    broadcast registers. Run exactly in the interpreter, as planned, with no more shared-memory
    instructions than Triton 3.9's PTX, which uses ldmatrix/stmatrix for each of them."""
    _, a, b, shape, dtype, warps = case
    bitwidth = CODEGEN.BITS[dtype]
    src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
    plan = plan_conversion(src, dst, None, bitwidth, chip="sm_90")
    assert plan.matrix is not None
    lowered = lower(CODEGEN.kernel_text(src, dst, dtype, warps, encodings=(str(a), str(b))), "sm_90")
    report = execute(lowered, shape, bitwidth)
    assert report.wavefronts == plan.matrix.wavefronts
    ours = CODEGEN.stats(ptx(lowered, "sm_90"))
    assert ours["mat"] > 0
    compiled = CODEGEN.triton_compile(CODEGEN.triton_kernel(a, b, shape, dtype, warps), 90)
    assert isinstance(compiled, tuple), compiled
    theirs = CODEGEN.stats(compiled[0])
    assert theirs["mat"] > 0  # Triton uses matrix instructions here
    assert ours["shared"] <= theirs["shared"], (ours, theirs)
