"""64-lane warps (AMD CDNA3, gfx942 wave64): the lowering, the interpreter and the LDS bank model.

- `ll-lower` builds `lane = tid & 63`, `warp = tid >> 6` and shuffles of width 64, and plans with
  64 lanes; random conversions are lowered, run for every thread by the SIMT interpreter, and
  must copy the tensor exactly with the predicted shuffles, barriers and wavefronts.
- The LDS bank model (`core.hardware.phase_lane_basis`, docs/triton-kernels.md): 32 banks of 4
  bytes, 128 bytes per cycle; a 64-lane access is served half a wavefront at a time for 4-byte
  and narrower accesses, a quarter for 8-byte ones, 8 consecutive lanes for a 16-byte write, and
  for a 16-byte read (ds_read_b128) the lane groups of ROCm's LDS bank-conflict guide.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from linear_layout import LinearLayout, bank_conflicts, plan_conversion
from linear_layout.core.hardware import lane_phases, phase_lane_basis
from linear_layout.ir.bridge import format_ll_layout
from linear_layout.simt import run_kernel
from lowering_cases import assert_placed_as_the_encoding_says, kernel_text, random_case, random_input
from test_lowering import lower

BITS = {"f32": 32, "f16": 16, "i8": 8}


def _groups(width: int, kind: str) -> list[list[int]]:
    phases = lane_phases(width, 64, kind)
    return [[lane for lane in range(64) if phases[lane] == p] for p in range(max(phases) + 1)]


def _quad(a: int, b: int) -> list[int]:
    return sorted([a, a + 1, a + 2, a + 3, b, b + 1, b + 2, b + 3])


def test_b128_reads_are_served_in_the_rocm_lane_groups():
    expected = [_quad(0, 20), _quad(4, 16), _quad(8, 28), _quad(12, 24)]
    expected += [[lane + 32 for lane in group] for group in expected]
    assert _groups(16, "load") == expected
    assert phase_lane_basis(16, 64, "load") == (1, 2, 4 ^ 16)


@pytest.mark.parametrize(
    "width, kind, lanes",
    [(16, "store", 8), (8, "load", 16), (8, "store", 16), (4, "load", 32), (2, "store", 32), (1, "load", 32)],
)
def test_other_accesses_are_served_in_consecutive_lanes(width, kind, lanes):
    assert _groups(width, kind) == [list(range(k, k + lanes)) for k in range(0, 64, lanes)]


def test_32_lane_phases_are_unchanged():
    assert lane_phases(16, 32, "load") == tuple(lane // 8 for lane in range(32))
    assert lane_phases(4, 32, "store") == (0,) * 32


# A 64-lane f32 read of 4 registers (16 bytes) per lane, lane i at element offsets whose lanes
# 1, 2 and 4 ^ 16 (one ds_read_b128 phase) reach words 4, 8 and 16 ^ 48 = 32: words 0 and 32
# share bank 0, so each phase costs 2 wavefronts (8 phases: 16), where 8 consecutive lanes
# (lane offsets 4, 8, 16) would cost 1.
READER = LinearLayout.from_bases(
    [("register", [[1], [2]]), ("lane", [[4], [8], [16], [64], [48], [128]]), ("warp", [])], ["dim0"], [256]
)
IDENTITY = LinearLayout.from_bases([("offset", [[1 << k] for k in range(8)])], ["dim0"], [256])


def test_b128_read_conflict_is_predicted_by_the_lane_groups():
    read = bank_conflicts(READER, IDENTITY, 32, [256], kind="load")
    assert (read.instruction_bytes, read.wavefronts, read.ideal_wavefronts, read.phase_cost) == (16, 16, 8, 2)
    write = bank_conflicts(READER, IDENTITY, 32, [256], kind="store")
    assert (write.instruction_bytes, write.wavefronts, write.ideal_wavefronts) == (16, 8, 8)


def _local_kernel(layout: LinearLayout, shared: LinearLayout) -> str:
    a, memory = format_ll_layout(layout), format_ll_layout(shared)
    tensor = f"tensor<256xf32, {a}>"
    memdesc = f'!ttg.memdesc<[256], f32, {memory}, #ttg.shared_memory, "mutable">'
    return f"""module attributes {{"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 64 : i32}} {{
  func.func @k(%in: memref<256xf32>, %out: memref<256xf32>) {{
    %x = "ll.load"(%in) : (memref<256xf32>) -> {tensor}
    %m = "ttg.local_alloc"(%x) : ({tensor}) -> {memdesc}
    %y = "ttg.local_load"(%m) : ({memdesc}) -> {tensor}
    "ll.store"(%y, %out) : ({tensor}, memref<256xf32>) -> ()
    return
  }}
}}"""


def test_b128_read_conflict_is_measured_by_the_interpreter():
    context, module, error = lower(_local_kernel(READER, IDENTITY))
    assert error is None, error
    x = random_input([256], "f32", seed=1)
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])  # 64 lanes: the module's ttg.threads-per-warp
    np.testing.assert_array_equal(x, y)
    assert_placed_as_the_encoding_says(report, IDENTITY, (256,), x)
    assert report.threads_per_warp == 64
    waves = collections.Counter()
    widths = set()
    for access in report.shared_accesses:
        waves[access.kind] += access.wavefronts
        widths.add(access.instruction_bytes)
    assert widths == {16} and (waves["store"], waves["load"]) == (8, 16)


def _run_wave64(seed: int):
    src, dst, dtype, num_warps, _ = random_case(seed, threads_per_warp=64)
    plan = plan_conversion(src, dst, bitwidth=BITS[dtype], threads_per_warp=64)
    context, module, error = lower(kernel_text(src, dst, dtype, num_warps, threads_per_warp=64))
    assert error is None, f"seed {seed}: {error}"
    shape = [s for _, s in src.out_dims]
    x = random_input(shape, dtype, seed)
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y], threads_per_warp=64)
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), f"seed {seed}: {plan.strategy} lost data"
    assert not report.races, f"seed {seed}"
    packed = plan.packed.shuffles if plan.packed is not None else 0
    assert report.shuffles == (plan.shuffles + packed) * num_warps
    if plan.shared is not None:
        waves = collections.Counter()
        for access in report.shared_accesses:
            waves[access.kind] += access.wavefronts
        assert (waves["store"], waves["load"]) == (plan.shared.store.wavefronts, plan.shared.load.wavefronts), seed
        assert report.barriers == plan.shared.barriers, seed
    return plan


def test_random_wave64_conversions_run_as_planned():
    strategies = collections.Counter()
    load_widths = set()
    for seed in range(40):
        plan = _run_wave64(seed)
        strategies["shared" if plan.strategy.uses_shared_memory else plan.strategy] += 1
        if plan.shared is not None:
            load_widths.add(plan.shared.load.instruction_bytes)
    assert strategies["shuffle"] and strategies["shared"] and strategies["register"] + strategies["noop"], strategies
    assert 16 in load_widths, load_widths  # some loads are ds_read_b128, served in the lane groups


def test_the_planner_swizzles_for_the_b128_read_groups():
    """Seed 162: a 64-lane f32 conversion whose loads are 16 bytes wide. A swizzle chosen for 8
    consecutive lanes per phase loads at 64 wavefronts against an ideal of 32 there; planned for
    the lane groups (planning/swizzle.py asks core.hardware.phase_lane_basis), it loads at the
    ideal, as the interpreter measures."""
    load = _run_wave64(162).shared.load
    assert load.instruction_bytes == 16 and load.wavefronts == load.ideal_wavefronts == 32
