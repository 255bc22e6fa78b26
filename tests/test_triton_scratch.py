"""Triton's scratch for a shared-memory conversion, as Triton itself allocates it: the planner's
model of Triton's choice (``triton_scratch_bytes``) against ``compiled.metadata.shared`` of the
same conversion compiled by Triton 3.9 for sm_90 (a hand-written TTGIR kernel: load, one
``ttg.convert_layout``, store; ``triton.compile(path, target=GPUTarget("cuda", 90, 32))``).

The six conversions whose numbers ``tests/test_conversion_plan.py`` pastes are compiled here, so
the pasted numbers are checked, and so is a fixed, seeded draw of blocked-to-blocked conversions
that go through shared memory."""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("triton")

from linear_layout import plan_conversion
from linear_layout.encodings import BlockedLayout
from linear_layout.planning import triton_scratch_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_codegen

from test_conversion_plan import TRITON_SCRATCH

pytestmark = pytest.mark.triton
DTYPES = {8: "i8", 16: "f16", 32: "f32"}


def triton_shared_bytes(src, dst, shape, bits) -> int:
    """``metadata.shared`` of Triton's compile of a kernel that converts ``src`` to ``dst``."""
    num_warps = src.to_linear_layout(shape).get_in_dim_size("warp")
    text = bench_codegen.triton_kernel(str(src), str(dst), shape, DTYPES[bits], num_warps)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache  # nothing reused from another compile
        compiled = bench_codegen.triton_compile(text, 90)
    assert isinstance(compiled, tuple), compiled
    return compiled[1]


@pytest.mark.parametrize("src,dst,shape,bits,pasted", TRITON_SCRATCH)
def test_the_pasted_scratch_numbers_are_what_triton_allocates(src, dst, shape, bits, pasted):
    assert triton_shared_bytes(src, dst, shape, bits) == pasted == triton_scratch_bytes(src, dst, bits, shape)


def _random_blocked(rng: random.Random, warps_log2: int) -> BlockedLayout:
    spt = [1 << rng.randint(0, 2), 1 << rng.randint(0, 2)]
    lane_bits = rng.randint(0, 5)
    warp_bits = rng.randint(0, warps_log2)
    return BlockedLayout(
        tuple(spt), (1 << lane_bits, 1 << (5 - lane_bits)), (1 << warp_bits, 1 << (warps_log2 - warp_bits)),
        tuple(rng.sample([0, 1], 2)),
    )


def _shared_conversions(count: int, seed: int = 20):
    """``count`` seeded blocked-to-blocked conversions of 4 warps that the planner sends through
    shared memory (the others use no scratch in either)."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        src, dst = _random_blocked(rng, 2), _random_blocked(rng, 2)
        shape = (1 << rng.randint(4, 7), 1 << rng.randint(4, 7))
        bits = rng.choice([8, 16, 32])
        if plan_conversion(src, dst, shape, bits).strategy == "shared":
            found.append((src, dst, shape, bits))
    return found


@pytest.mark.parametrize("src,dst,shape,bits", _shared_conversions(6))
def test_the_scratch_model_is_what_triton_allocates_on_drawn_conversions(src, dst, shape, bits):
    triton = triton_shared_bytes(src, dst, shape, bits)
    assert triton_scratch_bytes(src, dst, bits, shape) == triton, (str(src), str(dst), shape, bits)
    assert plan_conversion(src, dst, shape, bits).scratch_bytes <= triton
