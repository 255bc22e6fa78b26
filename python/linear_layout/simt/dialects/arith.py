"""The `arith` ops: integer and float arithmetic, comparisons, casts and constants.

Ops: constant (scalar and dense vector), addi subi muli divui divsi remui remsi andi ori xori
shli shrui shrsi maxui minui maxsi minsi cmpi select, index_cast index_castui trunci extui extsi
bitcast, addf subf mulf divf remf maximumf minimumf maxnumf minnumf negf cmpf, sitofp uitofp
fptosi fptoui truncf extf.
"""

from __future__ import annotations

from collections.abc import Callable

import mlir.ir as ir
import numpy as np

from ...ir.upstream import dense_text
from ..elements import Elem, elem_of, result_elem, vector_shape
from ..errors import UndefinedBehaviorError, UnsupportedOp
from ..machine import Machine, bitcast, float_op, handles, per_thread, register


def _constant_array(attr, t: ir.Type) -> np.ndarray:
    """Values of an arith.constant attribute, in storage form, shape = per-thread shape."""
    elem = elem_of(t)
    vshape = vector_shape(t)
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:
            raw = np.full(vshape, _scalar_attr_value(attr.get_splat_value()))
        else:
            try:
                raw = np.array(attr)
            except Exception:  # bf16 and friends have no buffer view: fall back to the text
                raw = _parse_dense_text(attr, elem)
            raw = raw.reshape(vshape)
    else:
        raw = np.array(_scalar_attr_value(attr))
    if elem.is_float:
        return elem.wrap(raw.astype(np.float64))
    return elem.wrap(raw.astype(np.int64).astype(np.uint64))


def _scalar_attr_value(attr):
    if isinstance(attr, ir.BoolAttr):
        return int(attr.value)
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
        return attr.value
    raise UnsupportedOp(f"constant attribute {attr} is not supported")


def _parse_dense_text(attr, elem: Elem) -> np.ndarray:
    """Values of a dense attribute from its text, for types numpy cannot view (bf16)."""
    try:
        dense = dense_text(attr, (lambda bits: float(elem.from_bits(np.array([bits]))[0])) if elem.is_float else None)
    except ValueError as error:
        raise UnsupportedOp(str(error)) from None
    if dense.hex is not None:
        raw = np.frombuffer(dense.hex, dtype=elem.bits_dtype)
        return elem.from_bits(raw).astype(np.float64 if elem.is_float else np.int64)
    return np.array(dense.values, dtype=np.float64 if elem.is_float else np.int64)


@handles("arith.constant")
def _constant(ex, op):
    t = op.results[0].type
    return [per_thread(ex, _constant_array(op.attributes["value"], t), vector_shape(t))]


def _check_shift(ex, amount, width):
    if (ex.active_like(amount) & (amount >= np.uint64(width))).any():
        raise UndefinedBehaviorError(f"shift amount >= bit width {width} (poison)")
    return np.minimum(amount, width - 1)


def _int_binary(compute: Callable[[Elem, np.ndarray, np.ndarray, Machine], np.ndarray]):
    def handler(ex, op):
        a, b = ex.operands(op)
        elem = result_elem(op)
        return [elem.wrap(compute(elem, elem.unsigned(a), elem.unsigned(b), ex))]

    return handler


def _shift_left(e, a, b, ex):
    return a << _check_shift(ex, b, e.width)


def _shift_right_unsigned(e, a, b, ex):
    return a >> _check_shift(ex, b, e.width)


def _shift_right_signed(e, a, b, ex):
    return (e.signed(a) >> _check_shift(ex, b, e.width).astype(np.int64)).astype(np.uint64)


def _nonzero_divisor(ex, b):
    if (ex.active_like(b) & (b == 0)).any():
        raise UndefinedBehaviorError("integer division by zero")
    return np.where(b == 0, 1, b).astype(b.dtype)


def _div_unsigned(e, a, b, ex):
    return a // _nonzero_divisor(ex, b)


def _rem_unsigned(e, a, b, ex):
    return a % _nonzero_divisor(ex, b)


def _div_rem_signed(e, a, b, ex):
    """Truncating signed quotient and remainder, as int64 arrays."""
    a, b = e.signed(a), _nonzero_divisor(ex, e.signed(b))
    minimum = -(1 << (e.width - 1))
    if (ex.active_like(a) & (a == minimum) & (b == -1)).any():
        raise UndefinedBehaviorError("signed division overflow (INT_MIN / -1)")
    b = np.where((a == minimum) & (b == -1), 1, b)
    q = a // b
    q = q + ((a % b != 0) & ((a < 0) != (b < 0)))
    return q, a - q * b


def _signed_minmax(fn):
    return lambda e, a, b, ex: fn(e.signed(a), e.signed(b)).astype(np.uint64)


_INT_BINARY = {
    "arith.addi": lambda e, a, b, ex: a + b,
    "arith.subi": lambda e, a, b, ex: a - b,
    "arith.muli": lambda e, a, b, ex: a * b,
    "arith.andi": lambda e, a, b, ex: a & b,
    "arith.ori": lambda e, a, b, ex: a | b,
    "arith.xori": lambda e, a, b, ex: a ^ b,
    "arith.shli": _shift_left,
    "arith.shrui": _shift_right_unsigned,
    "arith.shrsi": _shift_right_signed,
    "arith.divui": _div_unsigned,
    "arith.remui": _rem_unsigned,
    "arith.divsi": lambda e, a, b, ex: _div_rem_signed(e, a, b, ex)[0].astype(np.uint64),
    "arith.remsi": lambda e, a, b, ex: _div_rem_signed(e, a, b, ex)[1].astype(np.uint64),
    "arith.maxui": lambda e, a, b, ex: np.maximum(a, b),
    "arith.minui": lambda e, a, b, ex: np.minimum(a, b),
    "arith.maxsi": _signed_minmax(np.maximum),
    "arith.minsi": _signed_minmax(np.minimum),
}

_CMPI = {  # arith::CmpIPredicate
    0: lambda e, a, b: a == b,
    1: lambda e, a, b: a != b,
    2: lambda e, a, b: e.signed(a) < e.signed(b),
    3: lambda e, a, b: e.signed(a) <= e.signed(b),
    4: lambda e, a, b: e.signed(a) > e.signed(b),
    5: lambda e, a, b: e.signed(a) >= e.signed(b),
    6: lambda e, a, b: a < b,
    7: lambda e, a, b: a <= b,
    8: lambda e, a, b: a > b,
    9: lambda e, a, b: a >= b,
}


@handles("arith.cmpi")
def _cmpi(ex, op):
    a, b = ex.operands(op)
    elem = elem_of(op.operands[0].type)
    predicate = op.attributes["predicate"].value
    return [_CMPI[predicate](elem, elem.unsigned(a), elem.unsigned(b)).astype(np.uint8)]


def _unordered(a, b):
    return np.isnan(a) | np.isnan(b)


_CMPF = {  # arith::CmpFPredicate
    0: lambda a, b: np.zeros(np.broadcast_shapes(a.shape, b.shape), bool),
    1: lambda a, b: a == b,
    2: lambda a, b: a > b,
    3: lambda a, b: a >= b,
    4: lambda a, b: a < b,
    5: lambda a, b: a <= b,
    6: lambda a, b: (a != b) & ~_unordered(a, b),
    7: lambda a, b: ~_unordered(a, b),
    8: lambda a, b: (a == b) | _unordered(a, b),
    9: lambda a, b: (a > b) | _unordered(a, b),
    10: lambda a, b: (a >= b) | _unordered(a, b),
    11: lambda a, b: (a < b) | _unordered(a, b),
    12: lambda a, b: (a <= b) | _unordered(a, b),
    13: lambda a, b: a != b,
    14: _unordered,
    15: lambda a, b: np.ones(np.broadcast_shapes(a.shape, b.shape), bool),
}


@handles("arith.cmpf")
def _cmpf(ex, op):
    a, b = ex.operands(op)
    return [_CMPF[op.attributes["predicate"].value](a, b).astype(np.uint8)]


@handles("arith.select")
def _select(ex, op):
    cond, a, b = ex.operands(op)
    cond = cond.reshape(cond.shape + (1,) * (a.ndim - cond.ndim)) != 0
    return [np.where(cond, a, b)]


def _int_cast(signed_source: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        source, target = elem_of(op.operands[0].type), result_elem(op)
        widened = source.signed(x).astype(np.uint64) if signed_source else source.unsigned(x)
        return [target.wrap(widened)]

    return handler


def _int_to_float(signed_source: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        source = elem_of(op.operands[0].type)
        values = source.signed(x) if signed_source else source.unsigned(x)
        return [result_elem(op).wrap(values.astype(np.float64))]

    return handler


def _float_to_int(signed_target: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        target = result_elem(op)
        if signed_target:
            low, high = -(2 ** (target.width - 1)), 2 ** (target.width - 1) - 1
        else:
            low, high = 0, 2**target.width - 1
        values = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
        # The limits are powers of two, hence exact in float64 even for 64-bit targets.
        limit = 2.0 ** (target.width - 1 if signed_target else target.width)
        in_range = (values >= (-limit if signed_target else 0.0)) & (values < limit)
        converted = np.where(in_range, values, 0).astype(np.int64 if signed_target else np.uint64)
        converted = converted.astype(np.uint64)
        saturated = np.where(values > 0, np.uint64(high & (2**64 - 1)), np.uint64(low & (2**64 - 1)))
        return [target.wrap(np.where(in_range, converted, saturated))]

    return handler


@handles("arith.truncf", "arith.extf")
def _float_cast(ex, op):
    (x,) = ex.operands(op)
    return [result_elem(op).wrap(x)]


_FLOAT_OPS = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "arith.negf": np.negative,
}


for _name, _compute in _INT_BINARY.items():
    register(_name, _int_binary(_compute))
for _name, _float in _FLOAT_OPS.items():
    register(_name, float_op(_float))
for _name, _signed in (
    ("arith.index_cast", True),
    ("arith.index_castui", False),
    ("arith.extsi", True),
    ("arith.extui", False),
    ("arith.trunci", False),
):
    register(_name, _int_cast(signed_source=_signed))
register("arith.sitofp", _int_to_float(signed_source=True))
register("arith.uitofp", _int_to_float(signed_source=False))
register("arith.fptosi", _float_to_int(signed_target=True))
register("arith.fptoui", _float_to_int(signed_target=False))
register("arith.bitcast", bitcast)
