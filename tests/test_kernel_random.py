"""Randomized end-to-end check: corpus kernels compiled by Triton 3.9 at drawn block sizes, warp
counts, chips and lengths (masked tails), lowered, run over the whole grid and compared bit for
bit with Triton's interpreter on the same inputs. Few examples: each one is a Triton compile."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("triton")

sys.path.insert(0, str(Path(__file__).resolve().parent / "kernel_corpus"))

from corpus import case
from generate import CHIPS, compile_kernel
from oracle import run_triton_interpreter

from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel

_SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(name: str, constexprs: dict, args: tuple, grid: tuple[int, ...], chip: str, num_warps: int) -> None:
    kernel = dataclasses.replace(case(name), constexprs=constexprs, make_inputs=lambda rng: _launch(args, grid))
    text, _ = compile_kernel(kernel, CHIPS[chip], num_warps)
    expected = run_triton_interpreter(name, args, grid, constexprs)
    module = lower_ttgir(text)
    mine = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in args]
    report = run_triton_kernel(module, mine, grid)
    for index, array in expected.items():
        np.testing.assert_array_equal(mine[index], array)
    assert not report.races


def _launch(args, grid):
    from corpus import Launch

    return Launch(args, grid, ())


@_SETTINGS
@given(
    block=st.sampled_from([32, 64, 128, 512]),
    n=st.integers(1, 700),
    num_warps=st.sampled_from([1, 2, 4, 8]),
    chip=st.sampled_from(sorted(CHIPS)),
    seed=st.integers(0, 2**16),
)
def test_vector_add(block, n, num_warps, chip, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.integers(-8, 8, n).astype(np.float32) for _ in range(2))
    _check("vadd", {"BLOCK": block}, (x, y, np.zeros(n, np.float32), n), (-(-n // block),), chip, num_warps)


@_SETTINGS
@given(
    block_m=st.sampled_from([1, 4, 16]),
    block_n=st.sampled_from([16, 64, 128]),
    m=st.integers(1, 40),
    n=st.integers(1, 128),
    num_warps=st.sampled_from([1, 2, 4, 8]),
    chip=st.sampled_from(sorted(CHIPS)),
    kernel=st.sampled_from(["row_sum", "argmax", "cumsum"]),
    seed=st.integers(0, 2**16),
)
def test_row_kernels(block_m, block_n, m, n, num_warps, chip, kernel, seed):
    n = min(n, block_n)  # one block spans a row
    rng = np.random.default_rng(seed)
    dtype = np.int32 if kernel == "cumsum" else np.float32
    x = rng.integers(-8, 8, (m, n)).astype(dtype)
    out = np.zeros_like(x) if kernel == "cumsum" else np.zeros(m, np.int32 if kernel == "argmax" else dtype)
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n}
    _check(kernel, constexprs, (x, out, m, n), (-(-m // block_m),), chip, num_warps)


@pytest.mark.parametrize("kernel", ["cumsum", "cumsum_reverse"])
@pytest.mark.parametrize(
    ("block_m", "block_n", "num_warps", "tail"),
    [(1, 1024, 4, 3), (2, 256, 8, 3), (4, 64, 8, 3), (1, 512, 4, 0)],
    ids=["registers-above-warps", "three-warp-bits", "warps-on-both-axes", "registers-below-warps"],
)
def test_scans_with_warp_steps(kernel, block_m, block_n, num_warps, tail):
    """Scans whose axis crosses warps: several warp bits along it, register bits above them, or
    below them (full rows of 512, a multiple of 16: Triton loads 4 per thread), which share
    one block slot per thread (each warp step's block slots and regions)."""
    rng = np.random.default_rng(block_n + num_warps)
    m, n = 2 * block_m + 1, block_n - tail
    x = rng.integers(-8, 8, (m, n)).astype(np.int32)
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n}
    _check(kernel, constexprs, (x, np.zeros_like(x), m, n), (-(-m // block_m),), "sm80", num_warps)


@pytest.mark.parametrize(("block_m", "block_n", "num_warps"), [(8, 128, 4), (4, 8, 2), (2, 256, 1)],
                         ids=["registers-along-axis", "narrow-axis", "one-warp"])
def test_gathers(block_m, block_n, num_warps):
    """Gathers inside a warp (shuffles) where the source's axis is also in registers (a select
    among the shuffled candidates) or narrower than the warp, and through shared memory
    elsewhere, against Triton's interpreter."""
    rng = np.random.default_rng(block_n)
    m = 3 * block_m - 1
    x = rng.integers(-8, 8, (m, block_n)).astype(np.float32)
    idx = rng.integers(0, block_n, (m, block_n)).astype(np.int32)
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n}
    _check("gather", constexprs, (x, idx, np.zeros_like(x), m), (-(-m // block_m),), "sm80", num_warps)


@pytest.mark.parametrize(("block", "bins", "num_warps"), [(64, 16, 4), (512, 128, 2), (32, 256, 8)],
                         ids=["elements-repeated-over-warps", "registers", "bins-over-elements"])
def test_histograms(block, bins, num_warps):
    """Shared-atomic histograms: elements held by several threads counted once, values outside
    the bins (negative and too large) not counted."""
    rng = np.random.default_rng(bins)
    x = rng.integers(-4, bins + 4, 3 * block).astype(np.int32)
    _check("histogram", {"BLOCK": block, "BINS": bins}, (x, np.zeros(bins, np.int32)), (3,), "sm80", num_warps)
