"""SIMT patterns of Triton's own elementwise ops: `tt.clampf`, `tt.precise_divf`,
`tt.precise_sqrt`, `tt.mulhiui` and `tt.fp_to_fp`, rebuilt as upstream `arith`/`math` ops on the
per-thread vectors (or on scalars), each with the semantics of Triton's interpreter:

- `tt.clampf x, lo, hi, propagateNan = none` -> `minnumf(maxnumf(x, lo), hi)` (NaN operands are
  ignored: Triton's `fmin(fmax(...))`); `propagateNan = all` -> `minimumf(maximumf(x, lo), hi)`
  (a NaN propagates: Triton's `clip`);
- `tt.precise_divf` -> `arith.divf` (`div.rn`), `tt.precise_sqrt` -> one `sqrt.rn.f32` per
  register in `llvm.inline_asm`, as Triton's (`math.sqrt` and `llvm.intr.sqrt` become libdevice's
  `__nv_sqrtf`, which is approximate); f32 only;
- `tt.mulhiui a, b` (iN) -> the high half of the 2N-bit product: `trunci(shrui(muli(extui a,
  extui b), N))` (NVPTX selects this as one `mul.hi.u32`);
- `tt.fp_to_fp` between f16, bf16, f32 and f64 only (the interpreter has no fp8 types): an
  upcast is `arith.extf` (exact); a downcast is `arith.truncf` (to nearest even: `rtne`), and for
  `rtz` from f32 to f16 one `cvt.rz.f16.f32` per register in `llvm.inline_asm`, as Triton's, for
  other `rtz` downcasts the nearest value moved one step toward zero (its bits minus one) where it
  rounded away from zero (the stock pipeline drops `truncf`'s `roundingmode`). An fp8 operand is
  a `LoweringError`.

    >>> # %c = tt.clampf %x, %lo, %hi, propagateNan = none : tensor<256xf32, #blocked>
    >>> # becomes  %m = arith.maxnumf %x', %lo' : vector<2xf32>; %c' = arith.minnumf %m, %hi'
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, llvm, math, vector

from .common import cast_to
from .kernel import Launch, LoweringError, vector_type
from .simt_pattern import SimtPattern

__all__ = ["CLAMPF", "FP_TO_FP", "MULHIUI", "PRECISE"]

#: The widths `tt.fp_to_fp` lowers between (fp8 has no interpreter type).
_FLOAT_TYPES = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)
#: Triton's downcast roundings.
_ROUNDING = ("rtne", "rtz")


def _lowered(value: ir.Value, launch: Launch) -> ir.Value:
    t = value.type
    return cast_to(value, vector_type(t, launch)) if isinstance(t, ir.RankedTensorType) else value


def _lowered_type(t: ir.Type, launch: Launch) -> ir.Type:
    return vector_type(t, launch) if isinstance(t, ir.RankedTensorType) else t


def _check_shapes(op: ir.OpView, launch: Launch) -> None:
    """Every tensor operand and result has a layout that fits the launch (LoweringError else)."""
    for value in list(op.operation.operands) + list(op.operation.results):
        _lowered_type(value.type, launch)


def _rebuilt(op: ir.OpView, launch: Launch, build: Callable[..., ir.Value]) -> list[ir.Value]:
    """`build(*lowered operands)`, cast back to the op's result type."""
    result = build(*[_lowered(v, launch) for v in op.operation.operands])
    return [cast_to(result, op.operation.results[0].type)]


def _element(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.ShapedType) else t


# ---------------------------------------------------------------------------- clampf


def _propagates_nan(op: ir.OpView) -> bool:
    """`propagateNan = all` (Triton prints the enum as its name; 0 is `none`)."""
    attr = op.operation.attributes["propagateNan"]
    return "all" in str(attr).lower() or (isinstance(attr, ir.IntegerAttr) and attr.value != 0)


def _emit_clampf(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    upper, lower = (arith.minimumf, arith.maximumf) if _propagates_nan(op) else (arith.minnumf, arith.maxnumf)
    return _rebuilt(op, launch, lambda x, lo, hi: upper(lower(x, lo), hi))


# ---------------------------------------------------------------------------- precise_divf, precise_sqrt


def _emit_precise(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    if op.operation.name == "tt.precise_divf":
        return _rebuilt(op, launch, arith.divf)
    return _rebuilt(op, launch, _sqrt_rn)


#: The PTX of an IEEE-rounded f32 square root, and its constraints (`simt/dialects/llvm.py` runs it).
SQRT_RN = ("sqrt.rn.f32 $0, $1;", "=f,f")


def _sqrt_rn(x: ir.Value) -> ir.Value:
    """`sqrt.rn.f32` on each element of `x` (a scalar or a vector)."""
    f32 = ir.F32Type.get()
    if not isinstance(x.type, ir.VectorType):
        return llvm.inline_asm(f32, [x], *SQRT_RN)
    roots = [llvm.inline_asm(f32, [vector.extract(x, [], [k])], *SQRT_RN) for k in range(x.type.shape[0])]
    return vector.from_elements(x.type, roots)


def _check_precise(op: ir.OpView, launch: Launch) -> None:
    _check_shapes(op, launch)
    element = _element(op.operation.operands[0].type)
    if op.operation.name == "tt.precise_sqrt" and not isinstance(element, ir.F32Type):
        raise LoweringError(f"'tt.precise_sqrt' on {element} is not lowered (f32 only)")


# ---------------------------------------------------------------------------- mulhiui


def _emit_mulhiui(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """The high half of the double-width unsigned product."""
    result_type = _lowered_type(op.operation.results[0].type, launch)
    width = ir.IntegerType(_element(result_type)).width
    wide_element = ir.IntegerType.get_signless(2 * width)
    wide = _like(result_type, wide_element)

    def high(a: ir.Value, b: ir.Value) -> ir.Value:
        product = arith.muli(arith.extui(wide, a), arith.extui(wide, b))
        shift = arith.constant(wide, _splat(wide, width))
        return arith.trunci(result_type, arith.shrui(product, shift))

    return _rebuilt(op, launch, high)


def _splat(t: ir.Type, value: int) -> ir.Attribute:
    element = _element(t)
    scalar = ir.IntegerAttr.get(element, value)
    return ir.DenseElementsAttr.get_splat(t, scalar) if isinstance(t, ir.VectorType) else scalar


# ---------------------------------------------------------------------------- fp_to_fp


def _rounding(op: ir.OpView) -> str | None:
    """Triton's rounding name of `op` (None when it has none: an upcast)."""
    attr = op.operation.attributes.get("rounding")
    if attr is None:
        return None
    text = str(attr).lower()
    return next((name for name in ("rtne", "rtz") if name in text), text)


def _float_width(t: ir.Type) -> int:
    element = _element(t)
    if not isinstance(element, _FLOAT_TYPES):
        raise LoweringError(f"'tt.fp_to_fp' on {element} is not lowered (only f16, bf16, f32, f64: no fp8)")
    return ir.FloatType(element).width


def _check_fp_to_fp(op: ir.OpView, launch: Launch) -> str | None:
    """The arith rounding mode of the downcast (None: the default or an upcast)."""
    _check_shapes(op, launch)
    source = _float_width(op.operation.operands[0].type)
    result = _float_width(op.operation.results[0].type)
    rounding = _rounding(op)
    if result < source and rounding not in _ROUNDING:
        raise LoweringError(f"'tt.fp_to_fp' with rounding {rounding} is not lowered (only rtne and rtz)")
    return rounding if result < source else None


def _emit_fp_to_fp(op: ir.OpView, launch: Launch, mode: str | None) -> list[ir.Value]:
    result_type = _lowered_type(op.operation.results[0].type, launch)
    source = _element(op.operation.operands[0].type)
    result = _element(result_type)
    if ir.FloatType(result).width > ir.FloatType(source).width or source == result:
        return _rebuilt(op, launch, lambda x: arith.extf(result_type, x) if source != result else x)
    if ir.FloatType(result).width == ir.FloatType(source).width:  # f16 <-> bf16: through f32, as Triton's
        return _rebuilt(op, launch, lambda x: _through_f32(x, result_type))
    if mode == "rtz" and isinstance(source, ir.F32Type) and isinstance(result, ir.F16Type):
        return _rebuilt(op, launch, _cvt_rz_f16)
    if mode == "rtz":
        return _rebuilt(op, launch, lambda x: _toward_zero(x, result_type))
    return _rebuilt(op, launch, lambda x: arith.truncf(result_type, x))


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    """`t` with element type `element` (a scalar type when `t` is one)."""
    return ir.VectorType.get(t.shape, element) if isinstance(t, ir.VectorType) else element


#: The PTX of an f32 -> f16 conversion rounded toward zero (the 16 bits of the half), as
#: Triton's `FpToFpOpConversion`; `simt/dialects/llvm.py` runs it.
CVT_RZ_F16 = ("cvt.rz.f16.f32 $0, $1;", "=h,f")


def _cvt_rz_f16(x: ir.Value) -> ir.Value:
    """`cvt.rz.f16.f32` on each element of `x` (a scalar or a vector of f32)."""
    i16, f16 = ir.IntegerType.get_signless(16), ir.F16Type.get()

    def one(element: ir.Value) -> ir.Value:
        return arith.bitcast(f16, llvm.inline_asm(i16, [element], *CVT_RZ_F16))

    if not isinstance(x.type, ir.VectorType):
        return one(x)
    halves = [one(vector.extract(x, [], [k])) for k in range(x.type.shape[0])]
    return vector.from_elements(ir.VectorType.get(x.type.shape, f16), halves)


def _toward_zero(x: ir.Value, result_type: ir.Type) -> ir.Value:
    """`x` rounded toward zero: the nearest value, with its magnitude bits less one where it is
    larger in magnitude than `x` (an overflow to infinity becomes the largest finite value; NaN
    and exact values are kept)."""
    nearest = arith.truncf(result_type, x)
    bits_type = _like(result_type, ir.IntegerType.get_signless(ir.FloatType(_element(result_type)).width))
    bits = arith.bitcast(bits_type, nearest)
    one = arith.constant(bits_type, _splat(bits_type, 1))
    smaller = arith.bitcast(result_type, arith.subi(bits, one))
    away = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(arith.extf(x.type, nearest)), math.absf(x))
    return arith.select(away, smaller, nearest)


def _through_f32(x: ir.Value, result_type: ir.Type) -> ir.Value:
    return arith.truncf(result_type, arith.extf(_like(result_type, ir.F32Type.get()), x))


def _no_plan(op: ir.OpView, launch: Launch) -> None:
    _check_shapes(op, launch)


CLAMPF = SimtPattern(("tt.clampf",), _no_plan, _emit_clampf)
PRECISE = SimtPattern(("tt.precise_divf", "tt.precise_sqrt"), _check_precise, _emit_precise)
MULHIUI = SimtPattern(("tt.mulhiui",), _no_plan, _emit_mulhiui)
FP_TO_FP = SimtPattern(("tt.fp_to_fp",), _check_fp_to_fp, _emit_fp_to_fp)
