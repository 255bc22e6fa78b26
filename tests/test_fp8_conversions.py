"""`tt.fp_to_fp` with fp8 on every class of value, through the lowering and our interpreter, against
IEEE conversions (ml_dtypes): ties to even, subnormals, the smallest normal, overflow (saturating
to the largest finite value, as PTX's `cvt.rn.satfinite`), infinities, NaN and both zeros, to
nearest even and toward zero, and all 256 codes of each format back to f32. (The kernel corpus's
`fp8` kernel checks the same lowering against Triton's interpreter on values it converts as IEEE
does: its own rounding adds the cut-off bit, ties away from zero, and clamps the exponent.)"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel

KERNEL = (Path(__file__).parent / "kernel_corpus" / "ttgir" / "fp8.sm90.w4.ttgir").read_text()
FORMATS = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _satfinite(x: np.ndarray, fp8) -> np.ndarray:
    """`x` rounded to nearest even in `fp8`, a magnitude past the largest finite one saturated."""
    largest = float(ml_dtypes.finfo(fp8).max)
    return np.where(np.isnan(x), x, np.clip(x, -largest, largest)).astype(fp8)


def _toward_zero(x: np.ndarray, fp8) -> np.ndarray:
    nearest = _satfinite(x, fp8)
    bits = nearest.view(np.uint8).copy()
    away = np.abs(nearest.astype(np.float32)) > np.abs(x)  # NaN compares false: kept
    bits[away] -= 1  # one step toward zero: the magnitude's code less one
    return bits.view(fp8)


def _inputs() -> np.ndarray:
    """Every fp8 value of both formats, the midpoints between neighbours (ties), a quarter step past
    them, subnormals of both, values past the largest, infinities, NaN and -0."""
    values = [np.arange(256, dtype=np.uint8).view(fp8).astype(np.float32) for fp8 in FORMATS.values()]
    grid = np.unique(np.concatenate(values))
    grid = grid[np.isfinite(grid)]
    middles = (grid[:-1] + grid[1:]) / 2
    quarters = grid[:-1] + (grid[1:] - grid[:-1]) / 4
    extra = np.array([2.0**-10, 2.0**-17, 2.0**-16 * 3, 500.0, 464.0, 1e6, np.inf, -np.inf, np.nan, -0.0, 61440.0])
    return np.concatenate([grid, middles, quarters, -middles, extra]).astype(np.float32)


def _run(text: str, x: np.ndarray) -> list[np.ndarray]:
    n = x.size
    args = [x, np.zeros(n, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.float32), np.zeros(n, np.uint8),
            np.zeros(n, np.uint8), n]
    report = run_triton_kernel(lower_ttgir(text), args, (-(-n // 256),))
    assert not report.races
    return args


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_downcasts_match_ieee_with_saturation(rounding):
    x = _inputs()
    text = KERNEL.replace("rounding = rtne", f"rounding = {rounding}")
    _, e4, e5, _, h5, b4, _ = _run(text, x)
    with np.errstate(over="ignore"):  # 1e6 is infinite in f16
        from_half = x.astype(np.float16).astype(np.float32)
    convert = _satfinite if rounding == "rtne" else _toward_zero
    for got, source, fp8 in ((e4, x, FORMATS["e4m3"]), (e5, x, FORMATS["e5m2"]),
                             (h5, from_half, FORMATS["e5m2"]),
                             (b4, x.astype(ml_dtypes.bfloat16).astype(np.float32), FORMATS["e4m3"])):
        expected = convert(source, fp8)
        nan = np.isnan(expected.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(got.view(fp8).astype(np.float32)), nan)
        np.testing.assert_array_equal(got[~nan], expected.view(np.uint8)[~nan])


def test_upcasts_are_exact_on_every_code():
    """`back` = f8E4M3FN(x) -> f32 + f8E5M2(x) -> f16 -> f32: with x the value of each code of one
    format, its own conversion is exact, so `back` is the sum of the two exact values."""
    for fp8 in FORMATS.values():
        x = np.arange(256, dtype=np.uint8).view(fp8).astype(np.float32)
        x = x[np.isfinite(x)]
        back = _run(KERNEL, x)[3]
        expected = _satfinite(x, FORMATS["e4m3"]).astype(np.float32) + _satfinite(x, FORMATS["e5m2"]).astype(np.float32)
        np.testing.assert_array_equal(back, expected)
