"""The bandwidth floor: planned (planning/floor.py) and measured (the SIMT interpreter).

The floor of a conversion is ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)``. The figures
of the issue's table (measured on sm_90 and derived by hand below) pin the planner's side; the
interpreter's measured bytes must equal the plan's on lowered random kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from linear_layout import LinearLayout
from linear_layout.encodings import BlockedLayout, NVMMADistributedLayout
from linear_layout.ir import load_dialects
from linear_layout.passes import build_pass_manager
from linear_layout.planning import plan_conversion
from linear_layout.planning.floor import access_bytes, floor_of, floor_wavefronts
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_case, random_input

BITS = {"f32": 32, "f16": 16, "i8": 8}


def test_floor_wavefronts_is_a_ceiling_division():
    assert [floor_wavefronts(n) for n in (0, 1, 128, 129, 32768)] == [0, 1, 1, 2, 256]


def test_access_bytes_counts_distinct_elements_per_instruction_and_active_warp():
    # 32 lanes x 4-element rows, distinct per warp; warp 1 duplicates warp 0 (a zero warp basis).
    offsets = LinearLayout.from_bases([("lane", [[4], [8], [16], [32], [64]]), ("warp", [[0]])], ["offset"], [128],
                                      require_surjective=False)
    assert access_bytes(offsets, {"lane": 0, "warp": 0}, 4, 1, 4) == 2 * 128 * 4  # both warps load
    assert access_bytes(offsets, {"lane": 0, "warp": 1}, 4, 3, 4) == 3 * 128 * 4  # the store predicate keeps one
    # Lanes 2k and 2k+1 share their 2-element row (lane basis 1 is inside the row): 16 distinct
    # rows of 2 elements of 2 bytes.
    dup = LinearLayout.from_bases([("lane", [[1], [8], [16], [32], [64]])], ["offset"], [128],
                                  require_surjective=False)
    assert access_bytes(dup, {}, 2, 1, 2) == 16 * 2 * 2
    # A zero lane basis (broadcast): half the lanes repeat the others' elements.
    zero = LinearLayout.from_bases([("lane", [[0], [8], [16], [32], [64]])], ["offset"], [128],
                                   require_surjective=False)
    assert access_bytes(zero, {}, 1, 1, 4) == 16 * 4


# The issue's table: (src, dst, shape) -> (planned wavefronts before matrix instructions, floor).
# Floors by hand: 128x128 f16 is 32 KiB per side = 256 wavefronts; 64x64 f16 is 8 KiB = 64.
EPILOGUE = (NVMMADistributedLayout((3, 0), (4, 1), (16, 128, 16)), BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0)))
ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))


@pytest.mark.parametrize("src, dst, shape, wavefronts, floor, side", [
    (*EPILOGUE, (128, 128), 768, 512, "store"),
    (ROW, COL, (64, 64), 192, 128, "load"),
    (ROW, COL, (128, 128), 768, 512, "load"),
])
def test_issue_table_floor(src, dst, shape, wavefronts, floor, side):
    plan = plan_conversion(src, dst, shape, 16)
    # The ordinary exchange (kept in the plan for comparison) is the issue's; without a chip the
    # planner packs the 16-bit elements into words and reaches the floor (tests/test_packed_exchange.py).
    report = floor_of(plan.packed.narrow)
    assert (report.wavefronts, report.floor, report.bytes) == (wavefronts, floor, 2 * shape[0] * shape[1] * 2)
    assert plan.floor_wavefronts == floor and plan.store_wavefronts + plan.load_wavefronts == floor
    # With the chip, the planner reaches the floor (ldmatrix/stmatrix, tests/test_matrix_plan.py).
    sm90 = plan_conversion(src, dst, shape, 16, chip="sm_90")
    assert sm90.store_wavefronts + sm90.load_wavefronts == sm90.floor_wavefronts == floor
    assert not report.reaches_floor
    # The side with 2-byte accesses is the one above its floor, and the report says why.
    assert report.reasons == (f"{side}: 2-byte accesses move 64 of 128 bytes per wavefront",)
    assert "floor" in report.summary()


def test_floor_is_reached_by_32_bit_conversions():
    report = floor_of(plan_conversion(ROW, COL, (64, 64), 32))
    assert report.reaches_floor and report.wavefronts == report.floor == 2 * 64 * 64 * 4 // 128
    assert report.reasons == ()


def test_non_shared_plans_have_a_zero_floor():
    layout = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    report = floor_of(plan_conversion(layout, layout, (64, 64), 16))
    assert (report.store, report.load, report.floor, report.wavefronts) == (None, None, 0, 0)
    assert report.reaches_floor


def _lower_and_run(src, dst, dtype, num_warps, seed):
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(kernel_text(src, dst, dtype, num_warps))
        build_pass_manager("ll-lower", context).run(module.operation)
        x = random_input([s for _, s in src.out_dims], dtype, seed)
        y = np.zeros_like(x)
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
    return report


def test_measured_bytes_and_floor_equal_the_plan_on_random_kernels():
    checked = 0
    for seed in range(120):
        src, dst, dtype, num_warps, _ = random_case(seed)
        plan = plan_conversion(src, dst, None, BITS[dtype])
        if not plan.strategy.uses_shared_memory:
            continue
        planned = floor_of(plan)
        report = _lower_and_run(src, dst, dtype, num_warps, seed)
        assert report.shared_bytes("store") == planned.store.bytes, seed
        assert report.shared_bytes("load") == planned.load.bytes, seed
        assert report.floor_wavefronts == planned.floor, seed
        assert planned.floor <= planned.ideal_wavefronts <= planned.wavefronts, seed
        assert report.floor_wavefronts <= report.ideal_wavefronts, seed
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("module_name", ["linear_layout.planning.floor", "linear_layout.planning.matrix"])
def test_docstring_examples(module_name):
    import doctest
    import importlib

    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0
