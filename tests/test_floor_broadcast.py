"""Broadcast destinations cannot reach the bandwidth floor through shared memory: the lane floor.

When destination lanes repeat data (a zero lane basis: lanes L and L ^ 2**k hold the same
elements), every lane must still receive its own copy. The proof has two steps, each checked here:

1. **A wavefront hands at most 128 bytes to lanes** (the bank model of the interpreter, for any
   addresses): an ``ld.shared`` of w >= 4 bytes per lane is served in phases of 128 / w lanes,
   each at least one wavefront, whatever the addresses (lanes that share an address still occupy
   their slot). Checked with hypothesis on arbitrary (not only linear) addresses, with repeats,
   for every width and 1 or 4 warps: measured wavefronts * 128 >= bytes received by lanes. So any
   scratch layout, with any sequence of loads, needs at least ``ceil(lane bytes / 128)``
   wavefronts to give each lane its data: the *lane floor*. (``ldmatrix`` gives 4 bytes to each of
   32 lanes per matrix, one phase: 128 bytes too; its rows are distinct, so it cannot give two
   lanes the same data at all.)
2. **The lane bytes of a broadcast destination exceed its distinct bytes** by the broadcast
   factor: computed from the destination layout alone (threads x distinct registers x element
   bytes), not from any plan. For the suite's kernels above the floor (the epilogue v2 64x64 i8
   and the two broadcast-dst kernels of benchmarks/bench_codegen.py), lane floor > floor, and the
   planned and measured load wavefronts equal the lane floor: the plans are the best any
   shared-memory exchange can do, and ``floor_of`` says why they are above the floor.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from linear_layout.core.hardware import WAVEFRONT_BYTES
from linear_layout.encodings import BlockedLayout, NVMMADistributedLayout
from linear_layout.ir import load_dialects
from linear_layout.passes import build_pass_manager
from linear_layout.planning import plan_conversion
from linear_layout.planning.floor import floor_of, floor_wavefronts
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_input

SMEM = "#gpu.address_space<workgroup>"


def _load_kernel(width: int, warps: int) -> str:
    """Every thread loads `width` bytes (f32 vector) of a 4 KiB workgroup buffer at the element
    offset it reads from `%addr` (an arbitrary address per thread), and writes them out."""
    n = width // 4
    threads = 32 * warps
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%addr: memref<{threads}xi32>, %out: memref<{threads}x{n}xf32>)
        workgroup(%smem : memref<1024xf32, {SMEM}>)
        kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %a = memref.load %addr[%tid] : memref<{threads}xi32>
      %i = arith.index_cast %a : i32 to index
      %v = vector.load %smem[%i] {{alignment = {width} : i64}} : memref<1024xf32, {SMEM}>, vector<{n}xf32>
      vector.store %v, %out[%tid, %c0] : memref<{threads}x{n}xf32>, vector<{n}xf32>
      gpu.return
    }}
  }}
}}
"""


@st.composite
def _addresses(draw):
    width = draw(st.sampled_from([4, 8, 16]))
    warps = draw(st.sampled_from([1, 4]))
    n = width // 4
    distinct = draw(st.integers(1, 1024 // n))  # few distinct addresses: many lanes repeat data
    pool = draw(st.lists(st.integers(0, 1024 // n - 1), min_size=distinct, max_size=distinct, unique=True))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=32 * warps, max_size=32 * warps))
    return width, warps, np.asarray([pool[p] * n for p in picks], dtype=np.uint32)


@settings(max_examples=60, deadline=None)
@given(_addresses())
def test_a_wavefront_hands_at_most_128_bytes_to_lanes(case):
    width, warps, addresses = case
    with ir.Context() as context:
        load_dialects(context)
        out = np.zeros((32 * warps, width // 4), np.float32)
        report = run_kernel(ir.Module.parse(_load_kernel(width, warps)), [addresses, out], check_uninitialized=False)
    received = 32 * warps * width
    assert report.wavefronts * WAVEFRONT_BYTES >= received
    # ... while the distinct bytes can be far fewer: the floor counts each warp's distinct bytes
    # (a wavefront serves one warp), summed over the warps.
    distinct = sum(len({int(a) for a in addresses[32 * w : 32 * (w + 1)]}) for w in range(warps))
    assert report.floor_wavefronts == floor_wavefronts(distinct * width)


# The suite's kernels above the floor: (src, dst, shape, bitwidth, repeated destination lane basis).
MMA_V2 = NVMMADistributedLayout((2, 0), (2, 2), (16, 8))
BIG = BlockedLayout((1, 4), (2, 16), (8, 1), (1, 0))
OTHER = BlockedLayout((4, 1), (8, 4), (1, 8), (0, 1))
BROADCAST_DESTINATIONS = [
    pytest.param(MMA_V2, BlockedLayout((1, 16), (4, 8), (4, 1), (1, 0)), (64, 64), 8, "sm_90", 2,
                 id="epilogue v2 64x64 i8 w4"),
    pytest.param(OTHER, BIG, (32, 32), 16, "sm_90", 3, id="broadcast-dst 32x32 f16 w8"),
    pytest.param(BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1)), BlockedLayout((1, 4), (2, 16), (4, 1), (1, 0)),
                 (32, 32), 32, "sm_90", 3, id="broadcast-dst 32x32 f32 w4"),
]


def _lane_bytes_of(dst, bitwidth: int) -> tuple[int, int, list[int]]:
    """From the destination layout alone: (bytes its threads must receive, distinct bytes per
    CTA summed over warps, zero lane bases)."""
    bases = dict(dst.flatten_outs().bases)
    registers = [b for b in bases["register"] if b[0]]
    lanes, warps = bases["lane"], bases.get("warp", ())
    per_thread = (1 << len(registers)) * bitwidth // 8
    zero_lanes = [k for k, b in enumerate(lanes) if not b[0]]
    distinct_per_warp = (1 << (len(registers) + len(lanes) - len(zero_lanes))) * bitwidth // 8
    return 32 * (1 << len(warps)) * per_thread, distinct_per_warp * (1 << len(warps)), zero_lanes


def _lowered(src_encoding, dst_encoding, shape, bitwidth: int, chip: str) -> tuple[str, np.ndarray]:
    dtype = {8: "i8", 16: "f16", 32: "f32"}[bitwidth]
    src, dst = (e.to_linear_layout(list(shape)) for e in (src_encoding, dst_encoding))
    warps = 1 << len(dict(src.bases).get("warp", ()))
    text = kernel_text(src, dst, dtype, warps, encodings=(str(src_encoding), str(dst_encoding)))
    with ir.Context() as context:
        load_dialects(context)
        module = ir.Module.parse(text)
        build_pass_manager(f"ll-lower{{chip={chip}}}", context).run(module.operation)
        return str(module), random_input(list(shape), dtype, 5)


@pytest.mark.parametrize("src, dst, shape, bitwidth, chip, zero_lane", BROADCAST_DESTINATIONS)
def test_broadcast_destinations_are_at_the_lane_floor(src, dst, shape, bitwidth, chip, zero_lane):
    plan = plan_conversion(src, dst, shape, bitwidth, chip=chip)
    lane_bytes, distinct, zero_lanes = _lane_bytes_of(plan.dst, bitwidth)
    assert zero_lanes == [zero_lane] and lane_bytes == 2 * distinct  # one repeated lane basis: factor 2
    report = floor_of(plan)
    load = report.load
    # The plan's load side is exactly at the lane floor, derived from the layout alone, which is
    # above the floor of its distinct bytes: no scratch layout can close the gap (step 1).
    assert (load.lane_bytes, load.bytes) == (lane_bytes, distinct)
    assert load.wavefronts == load.lane_floor == floor_wavefronts(lane_bytes) > load.floor == floor_wavefronts(distinct)
    assert report.store.reaches_floor and not report.reaches_floor
    assert report.reasons == (
        f"load: lanes repeat data (lane basis {zero_lane} is zero): every lane needs its own copy and a wavefront "
        f"hands at most 128 bytes to lanes, so {lane_bytes} bytes need {floor_wavefronts(lane_bytes)} wavefronts "
        f"(reached) for {distinct} distinct bytes (floor {floor_wavefronts(distinct)}): no layout of the scratch "
        "reaches the floor",
    )
    # Measured: the lowered kernel moves the data exactly, its loads cost the lane floor.
    lowered, x = _lowered(src, dst, shape, bitwidth, chip)
    y = np.zeros_like(x)
    with ir.Context() as context:
        load_dialects(context)
        measured = run_kernel(ir.Module.parse(lowered), [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)) and not measured.races
    assert measured.wavefronts == report.wavefronts == report.store.floor + load.lane_floor
    assert measured.floor_wavefronts == report.floor
