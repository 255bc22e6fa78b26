"""Shared-memory lowering (ll-to-simt), proven by execution in the SIMT interpreter.

Every case is a kernel `ll.load` (layout A) -> `ttg.convert_layout` (to B) -> `ll.store` (or
`ttg.local_alloc`/`local_store`/`local_load` through an explicit shared encoding), lowered with
`ll-lower` and run for every thread of the block. Each must

- reproduce its input bit for bit (every element, every thread);
- report no race (the interpreter raises on one);
- measure, per side, exactly the wavefronts `conversion.plan_conversion` predicts (or, for the
  local ops, `conversion.bank_conflicts`), and exactly the planned number of barriers.

The random part covers 1 to 8 warps, blocked<->blocked transposes, blocked<->mma, mma->dot_op,
slices, broadcast on either side, f32/f16/i8 and shapes from 16 to 128x128 (bounded so that the
suite stays fast); fixed cases go up to 256x256.
"""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest

from linear_layout.core.launch import pad_to_launch
from linear_layout.encodings import (
    BlockedLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    NVMMASharedLayout,
    SharedLinearLayout,
    SliceLayout,
    SwizzledSharedLayout,
)
from linear_layout.patterns.shared_memory import warp_synchronous
from linear_layout.planning import bank_conflicts, plan_conversion
from linear_layout.simt import run_kernel
from lowering_cases import assert_placed_as_the_encoding_says, kernel_text, random_case, random_input
from test_lowering import lower

BITS = {"f32": 32, "f16": 16, "i8": 8}


def _pad(layout, num_warps):
    """The layout as ll-to-simt sees it: lanes/warps padded with broadcast bases to the launch."""
    return pad_to_launch(layout, 32, num_warps)


def execute(src, dst, dtype: str, num_warps: int, encodings=None, seed: int = 0):
    """Lower and run one conversion kernel; check it; return its plan."""
    src, dst = _pad(src, num_warps), _pad(dst, num_warps)
    plan = plan_conversion(src, dst, bitwidth=BITS[dtype])
    context, module, error = lower(kernel_text(src, dst, dtype, num_warps, encodings=encodings))
    assert error is None, error
    shape = [s for _, s in src.out_dims]
    x = random_input(shape, dtype, seed)
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])  # raises RaceError on a race
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), f"{plan.strategy} conversion lost data"
    assert not report.races
    if plan.strategy.uses_shared_memory:
        shared = plan.shared
        measured = collections.Counter()
        for access in report.shared_accesses:
            measured[access.kind] += access.wavefronts
        assert measured["store"] == shared.store.wavefronts, (measured, shared.store.wavefronts)
        assert measured["load"] == shared.load.wavefronts, (measured, shared.load.wavefronts)
        assert report.barriers == shared.barriers
        # inside each warp (always with one warp) the barriers are warp barriers, as Triton's
        warp_only = warp_synchronous(src, dst)
        assert report.warp_barriers == (shared.barriers if warp_only else 0)
        assert ("nvvm.bar.warp.sync" if warp_only else "gpu.barrier") in str(module)
    return plan


# ---------------------------------------------------------------------------- random layouts


def _shared_seeds(count: int):
    seeds, seed = [], 0
    while len(seeds) < count:
        src, dst, dtype, num_warps, _ = random_case(seed)
        if plan_conversion(_pad(src, num_warps), _pad(dst, num_warps), bitwidth=BITS[dtype]).strategy.uses_shared_memory:
            seeds.append(seed)
        seed += 1
    return seeds


SHARED_SEEDS = _shared_seeds(120)


@pytest.mark.parametrize("chunk", range(4))
def test_random_linear_layouts_through_shared_memory(chunk):
    """120 random linear-layout pairs that need shared memory (ranks 1-3, swizzled, broadcast)."""
    for seed in SHARED_SEEDS[chunk::4]:
        src, dst, dtype, num_warps, _ = random_case(seed)
        plan = execute(src, dst, dtype, num_warps, seed=seed)
        assert plan.strategy.uses_shared_memory


# ---------------------------------------------------------------------------- random encodings


def _split(rng, total_log2: int, parts: int) -> list[int]:
    out = [0] * parts
    for _ in range(total_log2):
        out[rng.randrange(parts)] += 1
    return [1 << v for v in out]


def rand_blocked(rng, rank: int, num_warps: int):
    spt = [1 << rng.randint(0, 2) for _ in range(rank)]
    tpw = _split(rng, 5, rank)
    wpc = _split(rng, num_warps.bit_length() - 1, rank)
    order = list(range(rank))
    rng.shuffle(order)
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


def rand_mma(rng, num_warps: int):
    return NVMMADistributedLayout((2, 0), tuple(_split(rng, num_warps.bit_length() - 1, 2)), (16, 8))


def rand_pair(rng):
    """(family, src encoding, dst encoding, shape, dtype, num_warps)."""
    num_warps = rng.choice([1, 2, 4, 8])
    dtype = rng.choice(list(BITS))
    family = rng.choice(["transpose", "blocked->mma", "mma->blocked", "mma->dot_op", "slice", "broadcast"])
    if family == "slice":
        n = 1 << rng.randint(4, 10)
        parent_a, parent_b = rand_blocked(rng, 2, num_warps), rand_blocked(rng, 2, num_warps)
        a = SliceLayout(rng.randint(0, 1), parent_a)
        b = rng.choice([SliceLayout(rng.randint(0, 1), parent_b), rand_blocked(rng, 1, num_warps)])
        return family, a, b, (n,), dtype, num_warps
    shape = (1 << rng.randint(4, 7), 1 << rng.randint(4, 7))
    # at most 8192 elements, and within ll-to-simt's register budget (255 32-bit registers per thread)
    while shape[0] * shape[1] > 8192 or shape[0] * shape[1] * BITS[dtype] > 32 * 32 * num_warps * 255:
        shape = (shape[0] // 2, shape[1])
    if family == "transpose":
        a = rand_blocked(rng, 2, num_warps)
        b = BlockedLayout(a.size_per_thread[::-1], a.threads_per_warp[::-1], a.warps_per_cta[::-1], a.order[::-1])
        return family, a, b, shape, dtype, num_warps
    if family in ("blocked->mma", "mma->blocked"):
        a, b = rand_blocked(rng, 2, num_warps), rand_mma(rng, num_warps)
        return (family, a, b, shape, dtype, num_warps) if family == "blocked->mma" else (family, b, a, shape, dtype, num_warps)
    if family == "mma->dot_op":
        parent = rand_mma(rng, num_warps)
        k_width = {"f32": 1, "f16": 2, "i8": 4}[dtype]
        op_index = rng.randint(0, 1)
        return family, parent, DotOperandLayout(op_index, parent, k_width), shape, dtype, num_warps
    # broadcast: tensors smaller than the layouts' tiles (zero lane/warp bases) on either side
    small = (1 << rng.randint(3, 5), 1 << rng.randint(3, 5))
    a, b = rand_blocked(rng, 2, num_warps), rand_blocked(rng, 2, num_warps)
    return family, a, b, small, dtype, num_warps


def _encoding_cases(count: int, seed: int = 7):
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        family, a, b, shape, dtype, num_warps = rand_pair(rng)
        try:
            src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
        except ValueError:
            continue
        if not plan_conversion(_pad(src, num_warps), _pad(dst, num_warps), bitwidth=BITS[dtype]).strategy.uses_shared_memory:
            continue
        if max(layout.get_in_dim_size("register") for layout in (src, dst)) * BITS[dtype] > 32 * 255:
            continue  # past ll-to-simt's register budget (255 32-bit registers per thread)
        cases.append((family, a, b, shape, dtype, num_warps))
    return cases


ENCODING_CASES = _encoding_cases(120)


def test_encoding_cases_cover_the_families():
    families = collections.Counter(c[0] for c in ENCODING_CASES)
    assert set(families) == {"transpose", "blocked->mma", "mma->blocked", "mma->dot_op", "slice", "broadcast"}, families
    assert {c[4] for c in ENCODING_CASES} == set(BITS)
    assert {c[5] for c in ENCODING_CASES} == {1, 2, 4, 8}
    broadcast_src = broadcast_dst = 0
    for _, a, b, shape, _, num_warps in ENCODING_CASES:
        broadcast_src += not _pad(a.to_linear_layout(list(shape)), num_warps).is_injective()
        broadcast_dst += not _pad(b.to_linear_layout(list(shape)), num_warps).is_injective()
    assert broadcast_src >= 10 and broadcast_dst >= 10
    assert len(SHARED_SEEDS) + len(ENCODING_CASES) >= 200


@pytest.mark.parametrize("chunk", range(4))
def test_random_encodings_through_shared_memory(chunk):
    """120 random Triton-encoding pairs (written as #ttg attributes, linearized by ll-lower)."""
    for k, (family, a, b, shape, dtype, num_warps) in enumerate(ENCODING_CASES[chunk::4]):
        src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
        plan = execute(src, dst, dtype, num_warps, encodings=(str(a), str(b)), seed=k)
        assert plan.strategy.uses_shared_memory, (family, str(a), str(b))


# ---------------------------------------------------------------------------- fixed big cases

ROW8 = BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0))
COL8 = BlockedLayout((8, 1), (8, 4), (1, 8), (0, 1))
MMA8 = NVMMADistributedLayout((2, 0), (4, 2), (16, 8))


@pytest.mark.parametrize("name, a, b, shape, dtype, num_warps", [
    ("transpose 256x256 f16", ROW8, COL8, (256, 256), "f16", 8),
    ("transpose 128x256 i8", ROW8, COL8, (128, 256), "i8", 8),
    ("mma->dot_op 128x128 f16", MMA8, DotOperandLayout(0, MMA8, 2), (128, 128), "f16", 8),
    ("mma->blocked 256x128 f32", MMA8, ROW8, (256, 128), "f32", 8),
])
def test_big_conversions(name, a, b, shape, dtype, num_warps):
    src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
    plan = execute(src, dst, dtype, num_warps, encodings=(str(a), str(b)))
    assert plan.strategy.uses_shared_memory
    assert plan.shared.store.bank_conflicts == 0 and plan.shared.load.bank_conflicts == 0


def test_repetitions_loop_with_one_barrier_per_round():
    """Common register directions become repetitions: store, barrier, load per round, and a
    barrier between rounds; the scratch shrinks by the number of rounds."""
    a, b = BlockedLayout((1, 1), (4, 8), (8, 1), (1, 0)), BlockedLayout((1, 1), (8, 4), (1, 8), (0, 1))
    src, dst = a.to_linear_layout([128, 128]), b.to_linear_layout([128, 128])
    full = plan_conversion(src, dst, bitwidth=32, max_reps=0)
    plan = execute(src, dst, "f32", 8, encodings=(str(a), str(b)))
    assert plan.shared.num_reps == 4
    assert plan.shared.barriers == 2 * plan.shared.num_reps - 1
    assert plan.shared.scratch_bytes * plan.shared.num_reps == full.shared.scratch_bytes


def test_two_conversions_share_the_scratch():
    """Back-to-back conversions reuse one scratch buffer, with a barrier in between (WAR)."""
    a, b = ROW8, COL8
    shape = "64x64"
    text = f"""module attributes {{"ttg.num-warps" = 8 : i32}} {{
  func.func @k(%in: memref<{shape}xf32>, %out: memref<{shape}xf32>) {{
    %x = "ll.load"(%in) : (memref<{shape}xf32>) -> tensor<{shape}xf32, {a}>
    %y = "ttg.convert_layout"(%x) : (tensor<{shape}xf32, {a}>) -> tensor<{shape}xf32, {b}>
    %z = "ttg.convert_layout"(%y) : (tensor<{shape}xf32, {b}>) -> tensor<{shape}xf32, {a}>
    "ll.store"(%z, %out) : (tensor<{shape}xf32, {a}>, memref<{shape}xf32>) -> ()
    return
  }}
}}"""
    context, module, error = lower(text)
    assert error is None, error
    assert str(module).count("workgroup(") == 1
    x = random_input([64, 64], "f32")
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])
    np.testing.assert_array_equal(x, y)
    assert not report.races


# ---------------------------------------------------------------------------- local memory ops

SHARED_ENCODINGS = [
    SwizzledSharedLayout(4, 1, 8, (1, 0)),
    SwizzledSharedLayout(1, 1, 1, (0, 1)),
    SwizzledSharedLayout(8, 2, 4, (1, 0)),
    NVMMASharedLayout(128, 16),
    NVMMASharedLayout(64, 16, transposed=True),
    NVMMASharedLayout(32, 32),
    NVMMASharedLayout(64, 8),
]


def _local_text(a, b, shared, shape, dtype, num_warps, store=True):
    """ll.load (a) -> local_alloc -> local_load (b) [-> local_store (b) -> local_load (b)] -> ll.store."""
    dims = "x".join(map(str, shape))
    memdesc = f'!ttg.memdesc<[{", ".join(map(str, shape))}], {dtype}, {shared}, #ttg.shared_memory, "mutable">'
    rewrite = f"""
    "ttg.local_store"(%y, %m) : (tensor<{dims}x{dtype}, {b}>, {memdesc}) -> ()
    %z = "ttg.local_load"(%m) : ({memdesc}) -> tensor<{dims}x{dtype}, {b}>""" if store else ""
    result = "%z" if store else "%y"
    return f"""module attributes {{"ttg.num-warps" = {num_warps} : i32}} {{
  func.func @k(%in: memref<{dims}x{dtype}>, %out: memref<{dims}x{dtype}>) {{
    %x = "ll.load"(%in) : (memref<{dims}x{dtype}>) -> tensor<{dims}x{dtype}, {a}>
    %m = "ttg.local_alloc"(%x) : (tensor<{dims}x{dtype}, {a}>) -> {memdesc}
    %y = "ttg.local_load"(%m) : ({memdesc}) -> tensor<{dims}x{dtype}, {b}>{rewrite}
    "ll.store"({result}, %out) : (tensor<{dims}x{dtype}, {b}>, memref<{dims}x{dtype}>) -> ()
    return
  }}
}}"""


@pytest.mark.parametrize("shared", SHARED_ENCODINGS + ["shared_linear"], ids=str)
def test_local_alloc_store_load(shared):
    shape, dtype, num_warps = (64, 64), "f16", 4
    if isinstance(shared, NVMMASharedLayout):
        dtype = {8: "i8", 16: "f16", 32: "f32"}[shared.element_bitwidth]
    if shared == "shared_linear":  # the swizzled layout's bases, written explicitly
        base = SwizzledSharedLayout(2, 2, 4, (1, 0)).to_linear_layout([64, 64])
        offsets = ", ".join(f"[{r}, {c}]" for r, c in dict(base.bases)["offset"])
        shared_text = f"#ttg.shared_linear<{{offset = [{offsets}], alignment = 16}}>"
        shared = SharedLinearLayout(dict(base.bases)["offset"], (), 16)
    else:
        shared_text = str(shared)
    a, b = ROW8.__class__((1, 4), (4, 8), (4, 1), (1, 0)), BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
    x = random_input(list(shape), dtype)
    # local_alloc alone first: the bytes it placed are the ones left in shared memory at the end.
    context, module, error = lower(_local_text(a, b, shared_text, shape, dtype, num_warps, store=False))
    assert error is None, error
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
    assert_placed_as_the_encoding_says(report, shared, shape, x)
    context, module, error = lower(_local_text(a, b, shared_text, shape, dtype, num_warps))
    assert error is None, error
    y = np.zeros_like(x)
    with context:
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
    assert_placed_as_the_encoding_says(report, shared, shape, x)  # where local_store (from b) put them
    assert not report.races
    bits = BITS[dtype]
    expected = [bank_conflicts(a, shared, bits, shape, kind="store").wavefronts,
                bank_conflicts(b, shared, bits, shape, kind="load").wavefronts,
                bank_conflicts(b, shared, bits, shape, kind="store").wavefronts,
                bank_conflicts(b, shared, bits, shape, kind="load").wavefronts]
    measured = collections.defaultdict(int)
    order = []
    for access in report.shared_accesses:
        if (access.location, access.kind) not in measured:
            order.append((access.location, access.kind))
        measured[(access.location, access.kind)] += access.wavefronts
    assert [measured[k] for k in order] == expected
    # store | barrier | load, then barrier before the overwrite (WAR) and before the reload (RAW)
    assert report.barriers == 3
