"""The `llvm.inline_asm` strings the SIMT interpreter runs (`simt/dialects/llvm.py`'s
`INLINE_ASM`), each against an independent reference, and where the lowering emits them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linear_layout.patterns.triton_math import CVT_RZ_F16, EX2_APPROX, SQRT_RN
from linear_layout.simt.dialects.llvm import INLINE_ASM
from linear_layout.tools.kernels import ttgir_to_ptx

#: Every finite non-negative f16, ascending, as float64.
_HALVES = np.unique(np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64))


def _toward_zero(x: float) -> float:
    """The f16 of largest magnitude not above |x|, with x's sign (NaN stays NaN)."""
    if np.isnan(x):
        return np.nan
    magnitude = _HALVES[np.searchsorted(_HALVES, abs(x), side="right") - 1]
    return float(np.copysign(magnitude, x))


def test_cvt_rz_f16_rounds_every_value_toward_zero():
    rng = np.random.default_rng(5)
    edges = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.0, 65520.0, 1e9, -1e9, np.inf, -np.inf, np.nan, 6e-8, 3e-8, 1e-10]
    x = np.concatenate([np.array(edges), rng.standard_normal(4000) * 10.0 ** rng.integers(-8, 6, 4000)])
    x = x.astype(np.float32)
    bits = INLINE_ASM[CVT_RZ_F16](x)
    got = np.asarray(bits, dtype=np.int64).astype(np.uint16).view(np.float16).astype(np.float64)
    want = np.array([_toward_zero(float(v)) for v in x])
    finite = ~np.isinf(x)
    assert np.array_equal(got[finite], want[finite], equal_nan=True)
    assert got[~finite].tolist() == [np.inf, -np.inf]  # infinities are exact, kept


def test_sqrt_rn_is_the_correctly_rounded_root():
    x = np.random.default_rng(6).random(1000).astype(np.float32) * 1000
    want = np.sqrt(x.astype(np.float64)).astype(np.float32)  # double rounding is exact for sqrt
    assert np.array_equal(INLINE_ASM[SQRT_RN](x), want)


def _ulps32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)

    return np.abs(ordered(a) - ordered(b))


def test_ex2_approx_is_within_one_ulp_of_the_power_of_two():
    """The interpreter's `ex2.approx.f32` (the hardware's is within 2 ulp, PTX ISA) against
    float64's 2 ** x rounded once, over the range softmax's exponent reaches and beyond."""
    x = np.concatenate([np.linspace(-140.0, 120.0, 4001), [0.0, -1.0, 1.0, -126.0]]).astype(np.float32)
    want = np.exp2(x.astype(np.float64)).astype(np.float32)
    assert _ulps32(INLINE_ASM[EX2_APPROX](x), want).max() <= 1


@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
def test_f32_exp_is_tritons_ex2_approx(chip):
    """softmax's f32 `math.exp` is Triton's `mul` by log2(e) (0f3FB8AA3B) then one
    `ex2.approx.f32` per element, not libdevice's `__nv_expf` (whose inlined body has an
    `ex2.approx.ftz.f32` among some 8 instructions)."""
    path = Path(__file__).parent / "kernel_corpus" / "ttgir" / f"softmax.{chip.replace('_', '')}.w4.ttgir"
    ptx = ttgir_to_ptx(path.read_text(), chip=chip)
    assert "0f3FB8AA3B" in ptx and "ex2.approx.f32" in ptx
    assert "ex2.approx.ftz" not in ptx
