"""The `llvm.inline_asm` strings the SIMT interpreter runs (`simt/dialects/llvm.py`'s
`INLINE_ASM`), each against an independent reference."""

from __future__ import annotations

import numpy as np

from linear_layout.patterns.triton_math import CVT_RZ_F16, SQRT_RN
from linear_layout.simt.dialects.llvm import INLINE_ASM

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
