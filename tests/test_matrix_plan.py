"""ldmatrix/stmatrix plans (planning/matrix.py): derived with the algebra, proven by execution.

Every plan here is executed by the SIMT interpreter (tests/matrix_kernels.py writes the kernel:
`nvvm.stmatrix`/`nvvm.ldmatrix` on the matrix side, vector `ld/st.shared` on the other): the
output must equal the destination layout's registers exactly, with no race, and the measured
wavefronts and bytes of each side must equal the plan's -- which must equal the floor.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layout.encodings import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layout.planning import plan_conversion, triton_scratch_bytes
from linear_layout.planning.floor import floor_of
from linear_layout.planning.matrix import MatrixSide, chip_capability, matrix_instructions, plan_matrix_conversion
from linear_layout.simt import run_kernel
from matrix_kernels import plan_kernel, random_pair, thread_values

DTYPES = {8: "i8", 16: "f16", 32: "f32"}


def execute(plan, src, dst, bitwidth: int, seed: int = 0, at_floor: bool = True):
    """Run the plan's kernel on a random tensor; check the result and the measured costs."""
    dtype = DTYPES[bitwidth]
    shape = [s for _, s in src.out_dims]
    rng = np.random.default_rng(seed)
    tensor = rng.integers(0, 256, shape, dtype=np.uint8) if bitwidth == 8 else \
        rng.standard_normal(shape).astype(np.float16 if bitwidth == 16 else np.float32)
    inputs = np.ascontiguousarray(thread_values(src, tensor))
    expected = thread_values(dst, tensor)
    out = np.zeros_like(expected)
    report = run_kernel(plan_kernel(plan, src, dst, dtype), [inputs, out])
    assert np.array_equal(out.view(np.uint8), np.ascontiguousarray(expected).view(np.uint8))
    assert not report.races and report.barriers == plan.barriers
    matrix_kind = "store" if plan.matrix.instruction == "stmatrix" else "load"
    for kind, side in ((matrix_kind, plan.matrix), ({"store": "load", "load": "store"}[matrix_kind], plan.other)):
        accesses = [a for a in report.shared_accesses if a.kind == kind]
        assert sum(a.wavefronts for a in accesses) == side.wavefronts
        assert sum(a.bytes for a in accesses) == side.bytes
    assert (report.wavefronts, report.floor_wavefronts) == (plan.wavefronts, plan.floor)
    assert (report.wavefronts == report.floor_wavefronts) == at_floor
    return report


def test_chips():
    assert matrix_instructions(None) == ()
    assert matrix_instructions("sm_75") == ("ldmatrix",)
    assert matrix_instructions("sm_100a") == ("ldmatrix", "stmatrix")
    assert chip_capability("gfx942") == 0 and matrix_instructions("gfx942") == ()  # AMD: no ldmatrix/stmatrix
    for chip in ("gfx9999", "sm_1"):  # chip_capability takes NVIDIA and AMD chips: the message lists both
        with pytest.raises(ValueError, match=rf"unknown chip '{chip}'; known NVIDIA chips: sm_20, .*; "
                                             r"known AMD chips: gfx908, .*, gfx942, "):
            chip_capability(chip)


ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
EPILOGUE = (NVMMADistributedLayout((3, 0), (4, 1), (16, 128, 16)), BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0)))


# The issue's table (Triton 3.9 on sm_90): the epilogue is 16 stmatrix.x4.trans + 16 ld.shared.v4
# per thread, the transposes 4 (16) st.shared.v4 + 4 (16) ldmatrix.x4. Ours: the same counts, at
# the floor (2 x tensor bytes / 128), within Triton's scratch. mma -> dot operand 1 (128x64 f16):
# Triton uses 8 stmatrix.x4 + 16 ldmatrix.x4.trans; so do we (both sides matrix instructions;
# the destination's second warp bit repeats data, so the loads move twice the tensor).
MMA_V2 = NVMMADistributedLayout((2, 0), (2, 2), (16, 8))


@pytest.mark.parametrize("src, dst, shape, chip, name, matrix_count, other_count, floor", [
    (*EPILOGUE, (128, 128), "sm_90", "stmatrix.x4.trans", 16, 16, 512),
    (ROW, COL, (64, 64), "sm_90", "stmatrix.x4.trans", 4, 4, 128),
    (ROW, COL, (64, 64), "sm_80", "ldmatrix.x4.trans", 4, 4, 128),
    (ROW, COL, (128, 128), "sm_90", "stmatrix.x4.trans", 16, 16, 512),
    (MMA_V2, DotOperandLayout(1, MMA_V2, 2), (128, 64), "sm_90", "stmatrix.x4", 8, 16, 128 + 256),
])
def test_issue_kernels(src, dst, shape, chip, name, matrix_count, other_count, floor):
    src_ll, dst_ll = src.to_linear_layout(list(shape)), dst.to_linear_layout(list(shape))
    bound = triton_scratch_bytes(src_ll, dst_ll, 16)
    plan = plan_matrix_conversion(src_ll, dst_ll, 16, chip, max_scratch_bytes=bound)
    assert plan is not None and plan.scratch_bytes <= bound
    assert plan.matrix.name() == name
    assert (len(plan.matrix.instructions), len(plan.other.instructions)) == (matrix_count, other_count)
    assert plan.other.instruction_bytes == 16
    assert plan.floor == plan.wavefronts == floor
    execute(plan, src_ll, dst_ll, 16)


# Lanes of the destination repeat data (a broadcast): Triton uses 4 stmatrix + 2 ld.shared
# (epilogue, i8) and 1 stmatrix + 1 ld.shared (f16); so do we. No plan reaches the floor there:
# every lane needs its own copy, at most 128 bytes to lanes per wavefront (the lane floor,
# proven in tests/test_floor_broadcast.py), and the plan says so.
@pytest.mark.parametrize("src, dst, shape, bitwidth, counts, wavefronts, floor", [
    (MMA_V2, BlockedLayout((1, 16), (4, 8), (4, 1), (1, 0)), (64, 64), 8, (2, 4), 96, 64),
    (BlockedLayout((4, 1), (8, 4), (1, 8), (0, 1)), BlockedLayout((1, 4), (2, 16), (8, 1), (1, 0)), (32, 32), 16,
     (1, 1), 48, 32),
])
def test_broadcast_destinations(src, dst, shape, bitwidth, counts, wavefronts, floor):
    plan = plan_conversion(src, dst, shape, bitwidth, chip="sm_90")
    assert (len(plan.matrix.matrix.instructions), len(plan.matrix.other.instructions)) == counts
    assert (plan.matrix.wavefronts, plan.matrix.floor) == (wavefronts, floor)
    assert floor_of(plan).reasons[0].startswith("load: lanes repeat data (lane basis")
    assert floor_of(plan).load.wavefronts == floor_of(plan).load.lane_floor
    execute(plan.matrix, plan.src, plan.dst, bitwidth, at_floor=False)  # the layouts the plan indexes


def test_no_matrix_plan_without_the_instruction():
    src, dst = (e.to_linear_layout([128, 128]) for e in EPILOGUE)
    assert plan_matrix_conversion(src, dst, 16, None) is None  # portable
    # Without stmatrix, the epilogue has an ldmatrix plan at the floor (8-byte stores), but only
    # with the whole 32 KiB tile in shared memory: none fits Triton's 8 KiB.
    assert plan_matrix_conversion(src, dst, 16, "sm_80").summary().startswith("shared (ldmatrix.x4): 32768 B")
    assert plan_matrix_conversion(src, dst, 16, "sm_80", max_scratch_bytes=triton_scratch_bytes(src, dst, 16)) is None
    # 32-bit data: a word is one element. The f32 epilogue has an ldmatrix plan at the floor
    # (32 ldmatrix.x4 + 64 8-byte stores), but the ordinary plan is as fast with fewer
    # instructions (16-byte accesses on both sides), so the planner keeps the ordinary one.
    f32 = plan_matrix_conversion(src, dst, 32, "sm_90", max_scratch_bytes=16384)
    assert f32.wavefronts == f32.floor and f32.shared_instructions == 96
    assert plan_conversion(src, dst, None, 32, chip="sm_90").matrix is None
    assert plan_matrix_conversion(src, dst, 64, "sm_90") is None  # 64-bit data: ld/st.shared
    broadcast = BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0)).to_linear_layout([64, 16])
    assert plan_matrix_conversion(broadcast, broadcast, 16, "sm_90") is None


def _sweep(seeds, chip):
    kinds = collections.Counter()
    for seed in seeds:
        src, dst, _ = random_pair(seed)
        bitwidth = (8, 16, 16, 32)[seed % 4]
        plan = plan_matrix_conversion(src, dst, bitwidth, chip)
        if plan is None:
            kinds["none"] += 1
            continue
        execute(plan, src, dst, bitwidth, seed)
        kinds[(bitwidth, plan.matrix.instruction, plan.matrix.num, plan.matrix.trans)] += 1
    return kinds


def test_random_conversions_execute_at_the_floor():
    kinds = _sweep(range(150), "sm_90")
    executed = sum(n for k, n in kinds.items() if k != "none")
    assert executed >= 60, kinds
    assert {k[0] for k in kinds if k != "none"} == {8, 16, 32}, kinds  # byte pairs as b16; f32 words
    assert {k[3] for k in kinds if k != "none"} == {False, True}, kinds


def test_random_ldmatrix_conversions_execute_at_the_floor():
    kinds = _sweep(range(150, 260), "sm_80")
    assert {k[1] for k in kinds if k != "none"} == {"ldmatrix"}, kinds
    assert sum(n for k, n in kinds.items() if k != "none") >= 40, kinds


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), chip=st.sampled_from(["sm_75", "sm_90"]))
def test_random_matrix_plans_execute(seed, chip):
    src, dst, _ = random_pair(seed)
    for bitwidth in (8, 16, 32):
        plan = plan_matrix_conversion(src, dst, bitwidth, chip)
        if plan is not None:
            execute(plan, src, dst, bitwidth, seed)


def test_both_sides_matrix_on_a_random_pair():
    # Found by hypothesis: the ldmatrix side of a two-sided plan addresses its own rows (not the
    # stmatrix side's). Seed 22991 draws a pair whose 16-bit plan is stmatrix.x4 + ldmatrix.x4.trans.
    src, dst, _ = random_pair(22991)
    plan = plan_matrix_conversion(src, dst, 16, "sm_90")
    assert isinstance(plan.other, MatrixSide) and plan.summary().startswith("shared (stmatrix.x4 + ldmatrix.x4.trans)")
    execute(plan, src, dst, 16, 22991)
