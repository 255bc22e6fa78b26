"""The packed sub-32-bit exchange (planning/packed.py), planned and proven by execution.

Without a chip (no ldmatrix/stmatrix), an 8/16-bit shared-memory conversion whose ordinary plan
has a side narrower than a 32-bit word swaps registers with lanes (2x2 register transposes over
`gpu.shuffle`) until both sides hold a common word, then exchanges whole words. Here:

- the algebra: `swap` is an exchange of input coordinates (checked element by element against
  the layout's table), the word is a register of both swapped sides and avoids their threads;
- the issue's three kernels reach the floor without a chip, within Triton's scratch;
- hypothesis: random 8/16-bit conversions that take the packed path, simulated with numpy
  (stores, barriers, loads of the swapped layouts): exact, conflict-free, wavefronts = floor
  unless `planning/floor.py` explains why;
- seeded: random lowered kernels that take the packed path run in the SIMT interpreter: exact
  output, no race, measured wavefronts and bytes = the plan's (= the floor, or explained);
- the lowered kernels compile through the stock `gpu-lower-to-nvvm-pipeline` for sm_80 and sm_90.
"""

from __future__ import annotations

import collections
import functools
import re

import numpy as np
import pytest
from hypothesis import assume, given

from linear_layout.encodings import BlockedLayout, NVMMADistributedLayout
from linear_layout.planning import Rejection, Strategy, plan_conversion, triton_scratch_bytes
from linear_layout.planning.floor import floor_of
from linear_layout.planning.layouts import as_hardware_layout, flat_columns
from linear_layout.planning.packed import Swap, plan_packed, swap, word_options
from linear_layout.planning.plan import NOTHING_TO_PACK
from linear_layout.planning.shared import plan_shared
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_case, random_input
from test_conversion_plan import _elements, _simulate, conversions
from test_lowering import lower
from test_lowering_ptx import ptx_of
from test_shared_lowering import _pad

BITS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8}
EPILOGUE = (NVMMADistributedLayout((3, 0), (4, 1), (16, 128, 16)), BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0)))
ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
ISSUE_KERNELS = [(*EPILOGUE, (128, 128)), (ROW, COL, (64, 64)), (ROW, COL, (128, 128))]
SUB_WORD = "-byte accesses move"


def _sub_word(reasons) -> bool:
    return any(SUB_WORD in r for r in reasons)


# ---------------------------------------------------------------------------- the algebra


def _swapped_table(layout, steps):
    """elements[r, lane, warp] of `layout` with register bit i and lane bit j exchanged, by numpy."""
    table = _elements(layout)
    registers, lanes, _ = table.shape
    r, lane = np.meshgrid(np.arange(registers), np.arange(lanes), indexing="ij")
    source_r, source_lane = r.copy(), lane.copy()
    for step in steps:
        bit_r, bit_l = r >> step.register & 1, lane >> step.lane & 1
        source_r = source_r & ~(1 << step.register) | bit_l << step.register
        source_lane = source_lane & ~(1 << step.lane) | bit_r << step.lane
    return table[source_r, source_lane, :]


@pytest.mark.parametrize("steps", [[Swap(0, 0)], [Swap(1, 4)], [Swap(0, 3), Swap(1, 4)], [Swap(2, 2)]])
def test_swap_exchanges_a_register_and_a_lane(steps):
    layout = as_hardware_layout(ROW, (64, 64), "src")
    swapped = swap(layout, steps)
    assert np.array_equal(_elements(swapped), _swapped_table(layout, steps))
    assert swap(swapped, steps[::-1]) == layout  # its own inverse
    columns, new = flat_columns(layout), flat_columns(swapped)
    for step in steps:
        assert new["register"][step.register] == columns["lane"][step.lane]
        assert new["lane"][step.lane] == columns["register"][step.register]
    assert swapped.is_surjective() and new["warp"] == columns["warp"]


def test_word_options_are_registers_and_swappable_lanes():
    layout = as_hardware_layout(ROW, (64, 64), "src")
    options = word_options(layout)
    columns = flat_columns(layout)
    registers = {o.direction for o in options if o.lane is None}
    assert registers == {c for c in columns["register"] if c}
    swapped = {(o.register, o.lane): o.direction for o in options if o.lane is not None}
    assert len(swapped) == len(columns["register"]) * len(columns["lane"])
    assert all(direction == columns["lane"][j] for (_, j), direction in swapped.items())


@pytest.mark.parametrize("src, dst, shape", ISSUE_KERNELS)
def test_issue_kernels_reach_the_floor_without_a_chip(src, dst, shape):
    plan = plan_conversion(src, dst, shape, 16)
    packed, shared = plan.packed, plan.shared
    assert plan.strategy == "packed" and packed is not None and plan.matrix is None
    # the narrow exchange it replaces, rejected with its wavefronts above the floor
    assert [r.strategy for r in plan.rejected][-1] == "shared" and "above the floor" in plan.rejected[-1].reason
    report = floor_of(plan)
    assert report.reaches_floor and report.wavefronts == report.floor == 2 * shape[0] * shape[1] * 2 // 128
    assert not floor_of(packed.narrow).reaches_floor  # what the ordinary exchange did
    # both sides move whole words, conflict-free, within Triton's scratch for the original layouts
    assert min(shared.store.instruction_bytes, shared.load.instruction_bytes) >= 4
    assert shared.store.bank_conflicts == shared.load.bank_conflicts == 0
    assert shared.scratch_bytes <= triton_scratch_bytes(plan.src, plan.dst, 16)
    # the word is a register of both swapped layouts, in the first offset bit
    for layout in (packed.src, packed.dst):
        assert set(packed.word) <= set(flat_columns(layout)["register"])
    assert flat_columns(shared.smem)["vector"][: len(packed.word)] == list(packed.word)
    assert packed.src == swap(plan.src, packed.src_steps) and packed.dst == swap(plan.dst, packed.dst_steps)
    assert packed.shuffles > 0


def test_the_transpose_swaps_a_source_row_register_with_a_column_lane():
    """docs/conversions.md's worked example."""
    plan = plan_conversion(ROW, COL, (64, 64), 16)
    assert plan.packed.src_steps == (Swap(1, 3),) and plan.packed.dst_steps == ()
    # register 1 of ROW is (0, 2); lane 3 is (1, 0): the word is the row pair (1, 0)
    assert plan.packed.word == (1,)  # flattened: dim0 in the low bits
    assert plan.shared.num_reps == 4 and plan.shared.scratch_bytes == 2048
    assert plan.packed.shuffles == 8  # 32 f16 registers: half of them, two per 32-bit shuffle


def test_plans_at_the_floor_are_not_packed():
    src = as_hardware_layout(NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), (64, 64), "src")
    dst = as_hardware_layout(BlockedLayout((1, 8), (4, 8), (4, 1), (1, 0)), (64, 64), "dst")
    narrow = plan_shared(src, dst, 16, None)
    assert floor_of(narrow).reaches_floor
    assert plan_packed(src, dst, 16, None, narrow, triton_scratch_bytes(src, dst, 16)) is None
    assert plan_conversion(src, dst, None, 16).packed is None
    assert plan_conversion(ROW, COL, (64, 64), 32).packed is None  # 32-bit words need no packing


def test_swaps_that_cost_more_shuffles_than_they_save_wavefronts_are_refused():
    """random_case(7): a 256-element f16 conversion whose best packed exchange would save 4
    wavefronts for 4 warp shuffles (one 32-bit shuffle per thread, 4 warps): the narrow plan stays."""
    src, dst, dtype, num_warps, _ = random_case(7)
    plan = plan_conversion(_pad(src, num_warps), _pad(dst, num_warps), bitwidth=BITS[dtype])
    assert (dtype, num_warps, plan.strategy, plan.packed) == ("f16", 4, "shared", None)
    assert Rejection(Strategy.PACKED, "its 4 warp shuffles cost as much as the 4 wavefronts they save") in plan.rejected
    assert "packed (its 4 warp shuffles cost as much as the 4 wavefronts they save)" in plan.rejections()
    report = floor_of(plan)
    assert not report.reaches_floor and _sub_word(report.reasons)


def test_with_a_chip_the_matrix_plan_runs_instead():
    plan = plan_conversion(ROW, COL, (64, 64), 16, chip="sm_90")
    assert plan.matrix is not None and plan.packed is None


# ---------------------------------------------------------------------------- random plans (numpy)


def _check_packed_plan(plan):
    """Simulate the shared exchange of the swapped layouts and compare every element."""
    packed, shared = plan.packed, plan.shared
    got, want, lanes, warps, waves = _simulate(plan)
    assert np.array_equal(got, want[:, lanes, warps])
    assert waves == [shared.store.wavefronts, shared.store.ideal_wavefronts, shared.load.wavefronts,
                     shared.load.ideal_wavefronts]
    # the destination's swaps (their own inverse) turn what the loads produce into plan.dst
    assert np.array_equal(_swapped_table(packed.dst, packed.dst_steps[::-1]), _elements(plan.dst))
    assert np.array_equal(_swapped_table(plan.src, packed.src_steps), _elements(packed.src))
    assert min(shared.store.instruction_bytes, shared.load.instruction_bytes) >= 4
    assert shared.scratch_bytes <= triton_scratch_bytes(plan.src, plan.dst, plan.bitwidth)
    report, narrow = floor_of(plan), floor_of(packed.narrow)
    assert report.wavefronts < narrow.wavefronts and _sub_word(narrow.reasons)
    assert plan.strategy == "packed" and not any(r.strategy == "packed" for r in plan.rejected)
    assert report.reaches_floor or not _sub_word(report.reasons), report.reasons
    assert shared.store.bank_conflicts == shared.load.bank_conflicts == 0


def sub_word_conversions():
    """test_conversion_plan's random conversions, 8- and 16-bit ones only."""
    return conversions().filter(lambda case: case[2] in (8, 16))


@given(sub_word_conversions())
def test_random_packed_plans_are_exact_and_at_the_floor(case):
    """Every sub-word shared plan is packed (and then exact, at the floor or explained), or its
    reason says why the narrow accesses stay."""
    src, dst, bitwidth = case
    plan = plan_conversion(src, dst, bitwidth=bitwidth)
    assume(plan.strategy in ("shared", "packed"))
    if plan.packed is not None:
        _check_packed_plan(plan)
        return
    (why,) = [r.reason for r in plan.rejected if r.strategy == "packed"]
    if _sub_word(floor_of(plan).reasons):
        assert why != NOTHING_TO_PACK, plan.rejected
    else:
        assert why == NOTHING_TO_PACK, plan.rejected


# ---------------------------------------------------------------------------- execution


@functools.cache
def _packed_seeds(count: int, limit: int = 6000) -> tuple[int, ...]:
    """The first `count` seeds of `random_case` whose (8/16-bit) conversion takes the packed path."""
    seeds: list[int] = []
    for seed in range(limit):
        src, dst, dtype, num_warps, _ = random_case(seed)
        if dtype in ("f16", "i8") and plan_conversion(
            _pad(src, num_warps), _pad(dst, num_warps), bitwidth=BITS[dtype]
        ).packed is not None:
            seeds.append(seed)
            if len(seeds) == count:
                break
    return tuple(seeds)


def _run(src, dst, dtype: str, num_warps: int, seed: int = 0):
    """Lower and run one kernel; check it bit for bit; return (plan, report, lowered text)."""
    src, dst = _pad(src, num_warps), _pad(dst, num_warps)
    plan = plan_conversion(src, dst, bitwidth=BITS[dtype])
    context, module, error = lower(kernel_text(src, dst, dtype, num_warps))
    assert error is None, error
    x = random_input([s for _, s in src.out_dims], dtype, seed)
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])  # raises RaceError on a race
        lowered = str(module)
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "the packed exchange lost data"
    assert not report.races
    return plan, report, lowered


def _check_measured(plan, report):
    measured = collections.Counter()
    for access in report.shared_accesses:
        measured[access.kind] += access.wavefronts
    shared, planned = plan.shared, floor_of(plan)
    assert (measured["store"], measured["load"]) == (shared.store.wavefronts, shared.load.wavefronts)
    assert (report.shared_bytes("store"), report.shared_bytes("load")) == (planned.store.bytes, planned.load.bytes)
    assert report.floor_wavefronts == planned.floor and report.barriers == shared.barriers
    assert report.wavefronts == planned.floor or not _sub_word(planned.reasons), planned.reasons


PACKED_KERNELS = 200  # found among the first few thousand seeds (about one 8/16-bit case in ten)


@pytest.mark.parametrize("index", range(PACKED_KERNELS))
def test_random_packed_kernels_execute_exactly_at_the_planned_wavefronts(index):
    seed = _packed_seeds(PACKED_KERNELS)[index]
    src, dst, dtype, num_warps, _ = random_case(seed)
    plan, report, lowered = _run(src, dst, dtype, num_warps, seed)
    assert plan.packed is not None
    _check_measured(plan, report)
    swaps = len(plan.packed.src_steps) + len(plan.packed.dst_steps)
    assert (lowered.count("gpu.shuffle") > 0) == (swaps > 0)


def test_enough_random_kernels_take_the_packed_path():
    seeds = _packed_seeds(PACKED_KERNELS)
    assert len(seeds) == PACKED_KERNELS
    dtypes = collections.Counter(random_case(seed)[2] for seed in seeds)
    warps = {random_case(seed)[3] for seed in seeds}
    assert dtypes["f16"] >= 20 and dtypes["i8"] >= 20 and warps == {1, 2, 4, 8}, (dtypes, warps)


@pytest.mark.parametrize("src, dst, shape", ISSUE_KERNELS)
def test_issue_kernels_execute_at_the_floor(src, dst, shape):
    layouts = [as_hardware_layout(e, shape, n) for e, n in ((src, "src"), (dst, "dst"))]
    plan, report, lowered = _run(*layouts, "f16", 4)
    assert plan.packed is not None
    _check_measured(plan, report)
    assert report.wavefronts == report.floor_wavefronts == 2 * shape[0] * shape[1] * 2 // 128
    assert report.shuffles > 0 and "gpu.shuffle" in lowered


# ---------------------------------------------------------------------------- the stock pipeline


def _ptx(lowered: str, chip: str) -> str:
    return ptx_of(lowered, chip)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
@pytest.mark.parametrize("src, dst, shape", ISSUE_KERNELS[:2])
def test_packed_kernels_compile_through_the_stock_pipeline(src, dst, shape, chip):
    layouts = [as_hardware_layout(e, shape, n) for e, n in ((src, "src"), (dst, "dst"))]
    _, _, lowered = _run(*layouts, "f16", 4)
    ptx = _ptx(lowered, chip)
    assert "shfl.sync" in ptx
    accesses = re.findall(r"\b(ld|st)\.shared(?:\.v(\d))?\.[bfsu](\d+)", ptx)
    assert {kind for kind, _, _ in accesses} == {"ld", "st"}
    widths = {int(lanes or 1) * int(bits) for _, lanes, bits in accesses}
    assert min(widths) >= 32, accesses  # every shared access is at least one 32-bit word

