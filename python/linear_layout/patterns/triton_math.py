"""SIMT patterns of Triton's own elementwise ops: `tt.clampf`, `tt.precise_divf`,
`tt.precise_sqrt`, `tt.mulhiui`, `tt.fp_to_fp`, `tt.bitcast`, `tt.ptr_to_int` and `tt.int_to_ptr`, rebuilt as upstream `arith`/`math` ops on the
per-thread vectors (or on scalars), each with the semantics of Triton's interpreter:

- `tt.clampf x, lo, hi, propagateNan = none` -> `minnumf(maxnumf(x, lo), hi)` (NaN operands are
  ignored: Triton's `fmin(fmax(...))`); `propagateNan = all` -> `minimumf(maximumf(x, lo), hi)`
  (a NaN propagates: Triton's `clip`);
- `tt.precise_divf` -> `arith.divf` (`div.rn`), `tt.precise_sqrt` -> one `sqrt.rn.f32` per
  register in `llvm.inline_asm`, as Triton's (`math.sqrt` and `llvm.intr.sqrt` become libdevice's
  `__nv_sqrtf`, which is approximate); f32 only; for an AMD chip (`gfx942`), `math.sqrt` (LLVM's
  AMDGPU back end rounds `llvm.sqrt.f32` correctly);
- `tt.mulhiui a, b` (iN) -> the high half of the 2N-bit product: `trunci(shrui(muli(extui a,
  extui b), N))` (NVPTX selects this as one `mul.hi.u32`);
- `tt.fp_to_fp` between f16, bf16, f32 and f64: an upcast is `arith.extf` (exact); a downcast is
  `arith.truncf` (to nearest even: `rtne`), and for `rtz` from f32 to f16 one `cvt.rz.f16.f32` per
  register in `llvm.inline_asm`, as Triton's (not for an AMD chip), for other `rtz` downcasts the nearest value moved
  one step toward zero (its bits minus one) where it rounded away from zero (the stock pipeline
  drops `truncf`'s `roundingmode`). With f8E4M3FN or f8E5M2 on either side (and f16, bf16 or f32
  on the other): integer and f32 ops on the code bits through f32, since the stock pipeline
  cannot lower `extf`/`truncf` of fp8 (`_to_fp8`: `rtne` or `rtz`, saturating as PTX's
  `cvt.rn.satfinite`; `_from_fp8`: exact);
- `tt.bitcast` of integers and floats -> `arith.bitcast` (pointers: a `LoweringError`);
- `tt.ptr_to_int p` -> the byte address `base + p * size` as the integer type (a pointer is an
  element offset `p` from the argument it derives from, whose address `base` is
  `memref.extract_aligned_pointer_as_index`; `size`: the pointee's bytes); `tt.int_to_ptr a` ->
  the offset `(a - base) / size`, where the argument is the one of the `tt.ptr_to_int` that `a`
  is computed from (`annotate_accesses`; an integer from several or no pointer argument is a
  `LoweringError`).

    >>> # %c = tt.clampf %x, %lo, %hi, propagateNan = none : tensor<256xf32, #blocked>
    >>> # becomes  %m = arith.maxnumf %x', %lo' : vector<2xf32>; %c' = arith.minnumf %m, %hi'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, math, memref, vector

from ..core.targets import is_amdgpu_chip
from .axis_info import pointee_bytes
from .common import cast_to
from .kernel import Launch, LoweringError, vector_type
from .simt_pattern import SimtPattern
from .triton_kernel import pointer_memory

__all__ = ["BITCAST", "CLAMPF", "EX2_APPROX", "FP_TO_FP", "MULHIUI", "POINTER_CASTS", "PRECISE", "exp_approx"]

#: The widths `tt.fp_to_fp` lowers between.
_FLOAT_TYPES = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)


@dataclass(frozen=True)
class Fp8Format:
    """An 8-bit float: 1 sign bit, `exponent` bits with bias `bias`, `mantissa` bits; `has_inf`:
    the all-ones exponent holds infinities and NaNs (E5M2) rather than only NaN at the top code (E4M3FN).
    `max_code`: the largest finite magnitude's code; `nan_code`: the NaN written (PTX's `cvt`)."""

    exponent: int
    mantissa: int
    bias: int
    has_inf: bool
    max_code: int
    nan_code: int = 0x7F


#: Triton's fp8 types the lowering converts (both to and from f16, bf16 and f32).
_FP8 = {
    ir.Float8E4M3FNType: Fp8Format(exponent=4, mantissa=3, bias=7, has_inf=False, max_code=0x7E),  # 448
    ir.Float8E5M2Type: Fp8Format(exponent=5, mantissa=2, bias=15, has_inf=True, max_code=0x7B),  # 57344
}
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
    if not _is_ptx(launch):  # LLVM's AMDGPU back end rounds llvm.sqrt.f32 correctly
        return _rebuilt(op, launch, math.sqrt)
    return _rebuilt(op, launch, _sqrt_rn)


#: The PTX of an IEEE-rounded f32 square root, and its constraints (`simt/dialects/llvm.py` runs it).
SQRT_RN = ("sqrt.rn.f32 $0, $1;", "=f,f")


def _f32_asm(x: ir.Value, asm: tuple[str, str]) -> ir.Value:
    """The one-operand f32 instruction `asm` (string, constraints) on each element of `x` (a
    scalar or a vector of f32)."""
    f32 = ir.F32Type.get()
    if not isinstance(x.type, ir.VectorType):
        return llvm.inline_asm(f32, [x], *asm)
    results = [llvm.inline_asm(f32, [vector.extract(x, [], [k])], *asm) for k in range(x.type.shape[0])]
    return vector.from_elements(x.type, results)


def _sqrt_rn(x: ir.Value) -> ir.Value:
    """`sqrt.rn.f32` on each element of `x` (a scalar or a vector)."""
    return _f32_asm(x, SQRT_RN)


#: The PTX of Triton's f32 `math.exp` (`ExpOpConversionApprox`): `ex2.approx.f32` of
#: `x * log2(e)`; `simt/dialects/llvm.py` runs it as the correctly rounded `2 ** y`, where the
#: hardware's is within 2 ulp (PTX ISA: maximum relative error 2^-22 for `ex2.approx.f32`).
EX2_APPROX = ("ex2.approx.f32 $0, $1;", "=f,f")
#: log2(e) rounded to f32 (0x3FB8AA3B), the factor Triton multiplies by.
LOG2_E = 1.4426950408889634


def exp_approx(x: ir.Value) -> ir.Value:
    """Triton's f32 exponential of each element of `x` (a scalar or a vector of f32): one
    `mul.f32` by log2(e) and one `ex2.approx.f32`, where `math.exp` is libdevice's `__nv_expf`
    (some 8 instructions).

    Formula: exp(x) = 2 ** fl(x * fl(log2 e)); the product's rounding moves the result by up to
    |x * log2 e| * 2^-24 relatively (about |x| ulp: 1 ulp for |x| < 1, 8 for |x| near 8).
    Requires: `x` of f32 or a vector of f32.
    Example: `exp_approx(%v)` on `vector<4xf32>` is `arith.mulf %v, 1.44269502` and four
    `llvm.inline_asm "ex2.approx.f32 $0, $1;"`."""
    f32 = ir.F32Type.get()
    factor = ir.FloatAttr.get(f32, LOG2_E)
    if isinstance(x.type, ir.VectorType):
        log2e = arith.constant(x.type, ir.DenseElementsAttr.get_splat(x.type, factor))
    else:
        log2e = arith.constant(f32, factor)
    return _f32_asm(arith.mulf(x, log2e), EX2_APPROX)


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
    if _fp8_format(element) is not None:
        return 8
    if not isinstance(element, _FLOAT_TYPES):
        raise LoweringError(f"'tt.fp_to_fp' on {element} is not lowered (only f16, bf16, f32, f64, f8E4M3FN, f8E5M2)")
    return ir.FloatType(element).width


def _fp8_format(element: ir.Type) -> Fp8Format | None:
    return next((fmt for kind, fmt in _FP8.items() if isinstance(element, kind)), None)


def _check_fp_to_fp(op: ir.OpView, launch: Launch) -> str | None:
    """The arith rounding mode of the downcast (None: the default or an upcast)."""
    _check_shapes(op, launch)
    source = _float_width(op.operation.operands[0].type)
    result = _float_width(op.operation.results[0].type)
    rounding = _rounding(op)
    if result < source and rounding not in _ROUNDING:
        raise LoweringError(f"'tt.fp_to_fp' with rounding {rounding} is not lowered (only rtne and rtz)")
    if 64 in (source, result) and 8 in (source, result):
        raise LoweringError("'tt.fp_to_fp' between f64 and fp8 is not lowered (only f16, bf16 and f32 with fp8)")
    return rounding if result < source else None


def _emit_fp_to_fp(op: ir.OpView, launch: Launch, mode: str | None) -> list[ir.Value]:
    result_type = _lowered_type(op.operation.results[0].type, launch)
    source = _element(op.operation.operands[0].type)
    result = _element(result_type)
    if _fp8_format(source) is not None or _fp8_format(result) is not None:
        return _rebuilt(op, launch, lambda x: _fp8_convert(x, result_type, mode))
    if ir.FloatType(result).width > ir.FloatType(source).width or source == result:
        return _rebuilt(op, launch, lambda x: arith.extf(result_type, x) if source != result else x)
    if ir.FloatType(result).width == ir.FloatType(source).width:  # f16 <-> bf16: through f32, as Triton's
        return _rebuilt(op, launch, lambda x: _through_f32(x, result_type))
    if mode == "rtz" and isinstance(source, ir.F32Type) and isinstance(result, ir.F16Type) and _is_ptx(launch):
        return _rebuilt(op, launch, _cvt_rz_f16)
    if mode == "rtz":
        return _rebuilt(op, launch, lambda x: _toward_zero(x, result_type))
    return _rebuilt(op, launch, lambda x: arith.truncf(result_type, x))


def _is_ptx(launch: Launch) -> bool:
    """Whether the lowering may emit PTX inline assembly (any target but an AMD chip)."""
    return not is_amdgpu_chip(launch.chip)


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


# ---------------------------------------------------------------------------- fp8 in integer ops
# The stock pipeline cannot lower `arith.extf`/`truncf` with an fp8 side (LLVM has no fp8 type:
# they fail at the translation to LLVM IR), so the conversions are integer and f32 arithmetic on
# the code bits, `arith.bitcast` between the fp8 type and i8 (an i8 in LLVM).


def _fp8_convert(x: ir.Value, result_type: ir.Type, mode: str | None) -> ir.Value:
    """`x` (fp8, f16, bf16 or f32) as `result_type`'s element, through f32 (exact for every fp8
    value and every f16/bf16 one, so there is one rounding, to the fp8 result)."""
    f32 = _like(result_type, ir.F32Type.get())
    source, result = _element(x.type), _element(result_type)
    source_fp8 = _fp8_format(source)
    if source_fp8 is not None:
        wide = _from_fp8(x, source_fp8, f32)
    else:
        wide = x if isinstance(source, ir.F32Type) else arith.extf(f32, x)
    result_fp8 = _fp8_format(result)
    if result_fp8 is not None:
        return _to_fp8(wide, result_fp8, result_type, toward_zero=mode == "rtz")
    return wide if isinstance(result, ir.F32Type) else arith.truncf(result_type, wide)  # exact: an fp8 value


def _constant(t: ir.Type, value: float | int) -> ir.Value:
    """A constant of type `t` (a scalar or a vector splat), float or integer by `t`'s element."""
    element = _element(t)
    scalar = (
        ir.IntegerAttr.get(element, int(value))
        if isinstance(element, ir.IntegerType)
        else ir.FloatAttr.get(element, value)
    )
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, scalar) if isinstance(t, ir.VectorType) else scalar)


def _to_fp8(x: ir.Value, fmt: Fp8Format, result_type: ir.Type, toward_zero: bool) -> ir.Value:
    """The f32 `x` rounded to fp8 `fmt` (to nearest even, or toward zero), saturating to the largest
    finite value as PTX's `cvt.rn.satfinite` (infinities too); NaN -> `fmt.nan_code`.

    Normals round on the f32 bits: `(bits + 2**(s-1) - 1 + bit s) >> s` (s = 23 - mantissa bits;
    a carry moves into the exponent), minus the bias difference; below the smallest normal the
    magnitude scaled by `2**(bias - 1 + mantissa)` is the code, rounded to an integer by adding and
    subtracting `2**23` (or truncated).
    """
    i32 = _like(x.type, ir.IntegerType.get_signless(32))
    shift = 23 - fmt.mantissa
    bits = arith.bitcast(i32, x)
    sign = arith.andi(arith.shrui(bits, _constant(i32, 24)), _constant(i32, 0x80))
    magnitude_bits = arith.andi(bits, _constant(i32, 0x7FFFFFFF))
    rounded = magnitude_bits
    if not toward_zero:
        odd = arith.andi(arith.shrui(magnitude_bits, _constant(i32, shift)), _constant(i32, 1))
        rounded = arith.addi(magnitude_bits, arith.addi(_constant(i32, (1 << (shift - 1)) - 1), odd))
    normal = arith.subi(arith.shrui(rounded, _constant(i32, shift)), _constant(i32, (127 - fmt.bias) << fmt.mantissa))
    scaled = arith.mulf(arith.bitcast(x.type, magnitude_bits), _constant(x.type, 2.0 ** (fmt.bias - 1 + fmt.mantissa)))
    scaled = arith.minnumf(scaled, _constant(x.type, 2.0 ** (fmt.mantissa + 1)))  # normals, inf, NaN: in range, unused
    if not toward_zero:
        scaled = arith.subf(arith.addf(scaled, _constant(x.type, 2.0**23)), _constant(x.type, 2.0**23))
    subnormal = arith.fptoui(i32, scaled)
    is_normal = arith.cmpi(arith.CmpIPredicate.uge, magnitude_bits, _constant(i32, (128 - fmt.bias) << 23))
    code = arith.select(is_normal, normal, subnormal)
    code = arith.minui(code, _constant(i32, fmt.max_code))
    is_nan = arith.cmpi(arith.CmpIPredicate.ugt, magnitude_bits, _constant(i32, 0x7F800000))
    code = arith.ori(arith.select(is_nan, _constant(i32, fmt.nan_code), code), sign)
    return arith.bitcast(result_type, arith.trunci(_like(x.type, ir.IntegerType.get_signless(8)), code))


def _from_fp8(x: ir.Value, fmt: Fp8Format, f32: ir.Type) -> ir.Value:
    """The fp8 `x` as f32 (exact): normals rebuilt as f32 bits, subnormals as
    `mantissa * 2**(1 - bias - mantissa bits)`, infinities and NaNs by `fmt`."""
    i32 = _like(f32, ir.IntegerType.get_signless(32))
    code = arith.extui(i32, arith.bitcast(_like(f32, ir.IntegerType.get_signless(8)), x))
    sign = arith.shli(arith.andi(code, _constant(i32, 0x80)), _constant(i32, 24))
    exponent = arith.andi(arith.shrui(code, _constant(i32, fmt.mantissa)), _constant(i32, (1 << fmt.exponent) - 1))
    mantissa = arith.andi(code, _constant(i32, (1 << fmt.mantissa) - 1))
    normal_bits = arith.ori(
        arith.shli(arith.addi(exponent, _constant(i32, 127 - fmt.bias)), _constant(i32, 23)),
        arith.shli(mantissa, _constant(i32, 23 - fmt.mantissa)),
    )
    subnormal = arith.mulf(arith.uitofp(f32, mantissa), _constant(f32, 2.0 ** (1 - fmt.bias - fmt.mantissa)))
    is_subnormal = arith.cmpi(arith.CmpIPredicate.eq, exponent, _constant(i32, 0))
    magnitude = arith.select(is_subnormal, arith.bitcast(i32, subnormal), normal_bits)
    top = _constant(i32, (1 << fmt.exponent) - 1)
    if fmt.has_inf:  # the top exponent: infinity (mantissa 0) or NaN
        special = arith.cmpi(arith.CmpIPredicate.eq, exponent, top)
        infinity_or_nan = arith.ori(_constant(i32, 0x7F800000), arith.shli(mantissa, _constant(i32, 21)))
        magnitude = arith.select(special, infinity_or_nan, magnitude)
    else:  # only the top code is NaN
        special = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(code, _constant(i32, 0x7F)), _constant(i32, 0x7F))
        magnitude = arith.select(special, _constant(i32, 0x7FC00000), magnitude)
    return arith.bitcast(f32, arith.ori(magnitude, sign))


def _through_f32(x: ir.Value, result_type: ir.Type) -> ir.Value:
    return arith.truncf(result_type, arith.extf(_like(result_type, ir.F32Type.get()), x))


# ---------------------------------------------------------------------------- ptr_to_int, int_to_ptr


def _emit_pointer_cast(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.ptr_to_int`: the byte address `base + offset * size`; `tt.int_to_ptr`: the element
    offset `(address - base) / size`, an exact division (base: the address of the argument the pointer derives from,
    from `annotate_accesses`; size: the pointee's bytes)."""
    operation = op.operation
    source, result = operation.operands[0], operation.results[0]
    to_int = operation.name == "tt.ptr_to_int"
    index_type = _like(_lowered_type(source.type, launch), ir.IndexType.get())
    base = memref.extract_aligned_pointer_as_index(pointer_memory(op))
    if isinstance(index_type, ir.VectorType):
        base = vector.broadcast(index_type, base)
    size = pointee_bytes(source.type if to_int else result.type)
    element_bytes = arith.constant(index_type, _splat(index_type, size))
    value = cast_to(source, index_type) if to_int else arith.index_cast(index_type, _lowered(source, launch))
    if to_int:
        address = arith.addi(base, arith.muli(value, element_bytes))
        return [cast_to(arith.index_cast(_lowered_type(result.type, launch), address), result.type)]
    # exact: an address Triton can access through is `base + k * size` (aligned to its element),
    # so the division is a shift (one `shr.s64`, not the rounding toward zero of a signed `div`)
    return [cast_to(arith.divsi(arith.subi(value, base), element_bytes, is_exact=True), result.type)]


# ---------------------------------------------------------------------------- bitcast


def _check_bitcast(op: ir.OpView, launch: Launch) -> None:
    _check_shapes(op, launch)
    for value in (op.operation.operands[0], op.operation.results[0]):
        element = _element(value.type)
        if not isinstance(element, (ir.IntegerType, ir.FloatType)):
            raise LoweringError(f"'tt.bitcast' of {element} is not lowered (only integers and floats, not pointers)")


def _emit_bitcast(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`arith.bitcast` of the per-thread values (the same bits, element by element)."""
    result_type = _lowered_type(op.operation.results[0].type, launch)
    return _rebuilt(op, launch, lambda x: arith.bitcast(result_type, x))


def _no_plan(op: ir.OpView, launch: Launch) -> None:
    _check_shapes(op, launch)


CLAMPF = SimtPattern(("tt.clampf",), _no_plan, _emit_clampf)
PRECISE = SimtPattern(("tt.precise_divf", "tt.precise_sqrt"), _check_precise, _emit_precise)
MULHIUI = SimtPattern(("tt.mulhiui",), _no_plan, _emit_mulhiui)
BITCAST = SimtPattern(("tt.bitcast",), _check_bitcast, _emit_bitcast)
POINTER_CASTS = SimtPattern(("tt.ptr_to_int", "tt.int_to_ptr"), _no_plan, _emit_pointer_cast)
FP_TO_FP = SimtPattern(("tt.fp_to_fp",), _check_fp_to_fp, _emit_fp_to_fp)
