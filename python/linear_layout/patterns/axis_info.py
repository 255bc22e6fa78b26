"""Axis info of a Triton kernel: contiguity, divisibility and constancy per dimension, as Triton's
`lib/Analysis/AxisInfo.cpp` computes them, so that global accesses are as wide as Triton's.

For every integer or pointer value `v` of a `tt.func` (a scalar is a tensor of rank 1) and each
dimension `d`:

- `contiguity[d] = c`: along `d`, `v` is made of runs of `c` consecutive values `x, x+1, ...`
  (pointers: consecutive elements), each run starting at an index that is a multiple of `c`;
- `divisibility[d] = p`: the first value of every such run is a multiple of `p` (a power of two;
  for pointers, in bytes);
- `constancy[d] = k`: along `d`, `v` is made of runs of `k` equal values;
- `constant`: the value, when every element is the same known integer.

The facts are seeded from the `tt.divisibility`, `tt.contiguity` and `tt.constancy` attributes of
the kernel's arguments (and of any op), and propagated through `tt.make_range`, `tt.splat`,
`tt.broadcast`, `tt.expand_dims`, `tt.addptr`, `tt.load` and the `arith` ops by Triton's rules
(each rule below names its Triton visitor), with loops carried to a fixpoint by `join`.
Any other op gets the pessimistic state: 1 everywhere.

`KernelAxisInfo.vector_size(ptr, mask)` is then `LoadStoreOpToLLVM`'s choice of access width:
`min(128 / element bits, contiguity(ptr), mask_alignment(mask))`, where `contiguity` is
`min(alignment, contiguous registers per thread along the layout's order[0])`.

    >>> info = AxisInfo.of_range(0, 256)
    >>> (info.contiguity, info.divisibility, info.constancy)
    ((256,), (4611686018427387904,), (1,))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mlir import ir

from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from ..ir.text import pointee_type

__all__ = [
    "MAX_DIVISOR",
    "OpFacts",
    "AxisInfo",
    "KernelAxisInfo",
    "analyze_axis_info",
    "binary_axis_info",
    "cmp_axis_info",
    "contig_per_thread",
    "highest_pow2_divisor",
    "register_order",
]

#: Triton's kMaxDivisor: `highestPowOf2Divisor<int64_t>(0)`, the divisibility of 0.
MAX_DIVISOR = 1 << 62

_HINTS = ("tt.contiguity", "tt.divisibility", "tt.constancy")


def highest_pow2_divisor(value: int) -> int:
    """The largest power of two dividing `value` (`MAX_DIVISOR` for 0), as Triton's
    `highestPowOf2Divisor`: `value & -value` on the two's complement.

    >>> [highest_pow2_divisor(v) for v in (12, 7, -8)]
    [4, 1, 8]
    """
    if value == 0:
        return MAX_DIVISOR
    return min(value & -value, MAX_DIVISOR)


def _gcd(*values: int) -> int:
    """Triton's `gcd`: 0 stands for "unknown" and is the identity."""
    result = 0
    for value in values:
        result = math.gcd(result, value)
    return result


def _multiply_divisor(lhs: int, rhs: int) -> int:
    return MAX_DIVISOR if lhs > MAX_DIVISOR // max(rhs, 1) else lhs * rhs


#: Ops whose result has their operand's facts (Triton's CastOpAxisInfoVisitor).
_CASTS = frozenset({"arith.extsi", "arith.extui", "arith.trunci", "ttg.convert_layout", "tt.bitcast"})
_CASTS |= {"tt.int_to_ptr", "tt.ptr_to_int"}


@dataclass(frozen=True)
class AxisInfo:
    """The facts of one value, one entry per dimension (see the module docstring)."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def pessimistic(rank: int) -> AxisInfo:
        """Nothing known: 1 everywhere (Triton's `getPessimisticValueState` for an op result)."""
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def unknown(rank: int) -> AxisInfo:
        """Not yet known (loop-carried values before the fixpoint): `MAX_DIVISOR` everywhere."""
        return AxisInfo((MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank)

    @staticmethod
    def of_constant(value: int, shape: tuple[int, ...] = (1,)) -> AxisInfo:
        """A splat constant of `shape` (a scalar: shape (1,), hence constancy 1, as Triton)."""
        return AxisInfo((1,) * len(shape), (highest_pow2_divisor(value),) * len(shape), tuple(shape), value)

    @staticmethod
    def of_range(start: int, end: int) -> AxisInfo:
        """`tt.make_range {start, end}` (MakeRangeOpAxisInfoVisitor)."""
        return AxisInfo((end - start,), (highest_pow2_divisor(start),), (1,))

    def join(self, other: AxisInfo) -> AxisInfo:
        """What holds of both (`AxisInfo::join`): gcds, divisibility from contiguity."""
        rank = range(self.rank)
        return AxisInfo(
            tuple(_gcd(self.contiguity[d], other.contiguity[d]) for d in rank),
            tuple(_divisibility_from_contiguity(self, other, d) for d in rank),
            tuple(_gcd(self.constancy[d], other.constancy[d]) for d in rank),
            self.constant if self.constant is not None and self.constant == other.constant else None,
        )

    def with_hints(self, hints: Mapping[str, tuple[int, ...]]) -> AxisInfo:
        """The facts overridden by `tt.contiguity`/`tt.divisibility`/`tt.constancy` hints."""
        return AxisInfo(
            hints.get("tt.contiguity", self.contiguity),
            hints.get("tt.divisibility", self.divisibility),
            hints.get("tt.constancy", self.constancy),
            self.constant,
        )


def _divisibility_from_contiguity(lhs: AxisInfo, rhs: AxisInfo, d: int) -> int:
    """Triton's `getDivisibilityFromContiguity` (select, max/min and join)."""
    if lhs.contiguity[d] == rhs.contiguity[d] or MAX_DIVISOR in (lhs.contiguity[d], rhs.contiguity[d]):
        return _gcd(lhs.divisibility[d], rhs.divisibility[d])
    return _gcd(lhs.divisibility[d], rhs.divisibility[d], lhs.contiguity[d], rhs.contiguity[d])


# ---------------------------------------------------------------------------- binary rules

#: A binary rule: (lhs, rhs, dim, op facts) -> (contiguity, divisibility, constancy) of one dim.
_DimRule = Callable[[AxisInfo, AxisInfo, int, "OpFacts"], tuple[int, int, int]]


@dataclass(frozen=True)
class OpFacts:
    """What a rule needs of the op besides its operands' facts."""

    shape: tuple[int, ...]  # the result's shape ((1,) for a scalar)
    tensor: bool  # the result is a ranked tensor
    element_bytes: int  # tt.addptr: the pointee's size in bytes


def _add_sub(subtract: bool, pointer: bool) -> _DimRule:
    """AddSubOpAxisInfoVisitor (arith.addi, arith.subi, tt.addptr)."""

    def rule(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
        if subtract:
            contiguity = _gcd(lhs.contiguity[d], rhs.constancy[d])
        else:
            contiguity = max(_gcd(lhs.constancy[d], rhs.contiguity[d]), _gcd(lhs.contiguity[d], rhs.constancy[d]))
        rhs_divisibility = rhs.divisibility[d]
        if pointer:
            rhs_divisibility = _multiply_divisor(rhs_divisibility, facts.element_bytes)
        return contiguity, _gcd(lhs.divisibility[d], rhs_divisibility), _gcd(lhs.constancy[d], rhs.constancy[d])

    return rule


def _mul(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """MulIOpAxisInfoVisitor."""
    contiguity = max(
        lhs.contiguity[d] if rhs.constant == 1 else 1,
        rhs.contiguity[d] if lhs.constant == 1 else 1,
    )
    lhs_divisibility = 1 if lhs.contiguity[d] > 1 and rhs.constant != 1 else lhs.divisibility[d]
    rhs_divisibility = 1 if rhs.contiguity[d] > 1 and lhs.constant != 1 else rhs.divisibility[d]
    return contiguity, _multiply_divisor(lhs_divisibility, rhs_divisibility), _gcd(lhs.constancy[d], rhs.constancy[d])


def _is_contiguous_dim(info: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return info.contiguity[d] == shape[d]


def _is_constant_dim(info: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return info.constancy[d] == shape[d]


def _div(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """DivOpAxisInfoVisitor (arith.divsi, arith.divui)."""
    contiguity = lhs.contiguity[d] if rhs.constant == 1 else 1
    constancy = _gcd(lhs.constancy[d], rhs.constancy[d])
    if facts.tensor and _is_contiguous_dim(lhs, facts.shape, d) and _is_constant_dim(rhs, facts.shape, d):
        constancy = max(constancy, _gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
    if lhs.constant == 0 or rhs.constant == 1:
        divisibility = lhs.divisibility[d]
    elif rhs.constant is not None and rhs.constant != 0 and _is_pow2(abs(rhs.constant)) and lhs.contiguity[d] == 1:
        divisibility = max(1, lhs.divisibility[d] // abs(rhs.constant))
    else:
        divisibility = 1
    return contiguity, divisibility, constancy


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _rem(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """RemOpAxisInfoVisitor (arith.remsi, arith.remui)."""
    contiguity = 1
    if facts.tensor and _is_contiguous_dim(lhs, facts.shape, d) and _is_constant_dim(rhs, facts.shape, d):
        contiguity = _gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d])
    divisibility = _gcd(lhs.divisibility[d], rhs.divisibility[d]) if rhs.constancy[d] > 1 else 1
    if facts.tensor and rhs.constant == 1:
        constancy = facts.shape[d]
    else:
        constancy = _gcd(lhs.constancy[d], rhs.constancy[d])
    return contiguity, divisibility, constancy


def _logical(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """LogicalOpAxisInfoVisitor (arith.andi, ori, xori): only constancy survives."""
    return 1, 1, _gcd(lhs.constancy[d], rhs.constancy[d])


def _shift_left(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """ShLIOpAxisInfoVisitor."""
    shift = rhs.constant or 0
    contiguity = lhs.contiguity[d] if rhs.constant == 0 else 1
    lhs_divisibility = 1 if lhs.contiguity[d] > 1 and shift else lhs.divisibility[d]
    divisibility = _multiply_divisor(lhs_divisibility, 1 << shift) if 0 <= shift < 63 else 1
    return contiguity, divisibility, _gcd(lhs.constancy[d], rhs.constancy[d])


def _shift_right(lhs: AxisInfo, rhs: AxisInfo, d: int, facts: OpFacts) -> tuple[int, int, int]:
    """ShROpAxisInfoVisitor (arith.shrui, arith.shrsi)."""
    contiguity = lhs.contiguity[d] if rhs.constant == 0 else 1
    if rhs.constant is None or not 0 <= rhs.constant < 63:
        divisibility = 1
    else:
        lhs_divisibility = 1 if lhs.contiguity[d] > 1 and rhs.constant else lhs.divisibility[d]
        divisibility = max(1, lhs_divisibility // (1 << rhs.constant))
    return contiguity, divisibility, _gcd(lhs.constancy[d], rhs.constancy[d])


def _fold(name: str, lhs: int, rhs: int, element_bytes: int) -> int | None:
    """The constant a binary op of two known constants gives (None: Triton keeps none)."""
    if name in ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui") and rhs == 0:
        return None
    folds: dict[str, Callable[[], int]] = {
        "arith.addi": lambda: lhs + rhs,
        "arith.subi": lambda: lhs - rhs,
        "tt.addptr": lambda: lhs + rhs * element_bytes,
        "arith.muli": lambda: lhs * rhs,
        "arith.divsi": lambda: int(lhs / rhs),
        "arith.divui": lambda: lhs // rhs,
        "arith.remsi": lambda: int(math.fmod(lhs, rhs)),
        "arith.remui": lambda: lhs % rhs,
        "arith.andi": lambda: lhs & rhs,
        "arith.ori": lambda: lhs | rhs,
        "arith.xori": lambda: lhs ^ rhs,
        "arith.shli": lambda: lhs << rhs if 0 <= rhs < 64 else 0,
        "arith.shrui": lambda: lhs >> rhs if 0 <= rhs < 64 else 0,
        "arith.shrsi": lambda: lhs >> rhs if 0 <= rhs < 64 else 0,
    }
    return folds[name]() if name in folds else None


_BINARY_RULES: dict[str, _DimRule] = {
    "arith.addi": _add_sub(subtract=False, pointer=False),
    "arith.subi": _add_sub(subtract=True, pointer=False),
    "tt.addptr": _add_sub(subtract=False, pointer=True),
    "arith.muli": _mul,
    "arith.divsi": _div,
    "arith.divui": _div,
    "arith.remsi": _rem,
    "arith.remui": _rem,
    "arith.andi": _logical,
    "arith.ori": _logical,
    "arith.xori": _logical,
    "arith.shli": _shift_left,
    "arith.shrui": _shift_right,
    "arith.shrsi": _shift_right,
}


def binary_axis_info(name: str, lhs: AxisInfo, rhs: AxisInfo, facts: OpFacts) -> AxisInfo:
    """BinaryOpVisitorImpl: a known constant result has contiguity 1 and the divisibility of its
    value; otherwise each dimension follows the op's rule."""
    constant = None
    if lhs.constant is not None and rhs.constant is not None:
        constant = _fold(name, lhs.constant, rhs.constant, facts.element_bytes)
    elif name in ("arith.remsi", "arith.remui") and rhs.constant == 1:
        constant = 0
    if constant is not None:
        rank = range(lhs.rank)
        return AxisInfo(
            (1,) * lhs.rank,
            (highest_pow2_divisor(constant),) * lhs.rank,
            tuple(max(lhs.constancy[d], rhs.constancy[d]) for d in rank),
            constant,
        )
    dims = [_BINARY_RULES[name](lhs, rhs, d, facts) for d in range(lhs.rank)]
    return AxisInfo(tuple(c for c, _, _ in dims), tuple(p for _, p, _ in dims), tuple(k for _, _, k in dims))


# ---------------------------------------------------------------------------- other rules

_CMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _compare(predicate: str, lhs: int, rhs: int) -> bool:
    unsigned = predicate.startswith("u")
    if unsigned:
        lhs, rhs = lhs % (1 << 64), rhs % (1 << 64)
    return {
        "eq": lhs == rhs,
        "ne": lhs != rhs,
        "lt": lhs < rhs,
        "le": lhs <= rhs,
        "gt": lhs > rhs,
        "ge": lhs >= rhs,
    }[predicate.lstrip("su") if predicate not in ("eq", "ne") else predicate]


def cmp_axis_info(predicate: str, lhs: AxisInfo, rhs: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    """CmpOpAxisInfoVisitor (tensor results only): constancy from runs of equal comparisons."""
    kind = predicate if predicate in ("eq", "ne") else predicate[1:]
    constancy, constant = [], None
    for d in range(len(shape)):
        if lhs.constant is not None and rhs.constant is not None:
            constancy.append(lhs.constancy[d])
            constant = int(_compare(predicate, lhs.constant, rhs.constant))
            continue
        hint = _gcd(lhs.constancy[d], rhs.constancy[d])
        if kind in ("gt", "le") and _is_constant_dim(lhs, shape, d):
            hint = max(hint, _gcd(rhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        elif kind in ("lt", "ge") and _is_constant_dim(rhs, shape, d):
            hint = max(hint, _gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        constancy.append(hint)
    return AxisInfo((1,) * len(shape), (1,) * len(shape), tuple(constancy), constant)


def select_axis_info(condition: AxisInfo, lhs: AxisInfo, rhs: AxisInfo, scalar_condition: bool) -> AxisInfo:
    """SelectOpAxisInfoVisitor (arith.select)."""
    if condition.constant is not None:
        return rhs if condition.constant == 0 else lhs
    dims = range(lhs.rank)
    extra = (lambda d: 0) if scalar_condition else (lambda d: condition.constancy[d])
    return AxisInfo(
        tuple(_gcd(lhs.contiguity[d], rhs.contiguity[d], extra(d)) for d in dims),
        tuple(_divisibility_from_contiguity(lhs, rhs, d) for d in dims),
        tuple(_gcd(lhs.constancy[d], rhs.constancy[d], extra(d)) for d in dims),
        lhs.constant if lhs.constant is not None and lhs.constant == rhs.constant else None,
    )


def max_min_axis_info(name: str, lhs: AxisInfo, rhs: AxisInfo) -> AxisInfo:
    """MaxMinOpAxisInfoVisitor (arith.maxsi/maxui/minsi/minui)."""
    if lhs.constant is not None and rhs.constant is not None:
        pick = max if "max" in name else min
        return AxisInfo((1,) * lhs.rank, (1,) * lhs.rank, (1,) * lhs.rank, pick(lhs.constant, rhs.constant))
    dims = range(lhs.rank)
    return AxisInfo(
        tuple(_gcd(lhs.contiguity[d], rhs.contiguity[d]) for d in dims),
        tuple(_divisibility_from_contiguity(lhs, rhs, d) for d in dims),
        tuple(_gcd(lhs.constancy[d], rhs.constancy[d]) for d in dims),
    )


def splat_axis_info(scalar: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    """SplatOpAxisInfoVisitor."""
    return AxisInfo((1,) * len(shape), (scalar.divisibility[0],) * len(shape), tuple(shape), scalar.constant)


def broadcast_axis_info(source: AxisInfo, source_shape: tuple[int, ...], shape: tuple[int, ...]) -> AxisInfo:
    """BroadcastOpAxisInfoVisitor."""
    dims = range(len(shape))
    return AxisInfo(
        tuple(1 if source_shape[d] == 1 else source.contiguity[d] for d in dims),
        source.divisibility,
        tuple(shape[d] if source_shape[d] == 1 else source.constancy[d] for d in dims),
        source.constant,
    )


def expand_dims_axis_info(source: AxisInfo, axis: int) -> AxisInfo:
    """ExpandDimsOpAxisInfoVisitor: the new dimension's divisibility is the gcd of the others'
    (a contiguous dimension counting 1)."""
    if source.constant is not None:
        divisibility = highest_pow2_divisor(source.constant)
    else:
        divisibility = _gcd(*(1 if c > 1 else p for c, p in zip(source.contiguity, source.divisibility)))

    def insert(values: tuple[int, ...], value: int) -> tuple[int, ...]:
        return values[:axis] + (value,) + values[axis:]

    return AxisInfo(
        insert(source.contiguity, 1),
        insert(source.divisibility, divisibility),
        insert(source.constancy, 1),
        source.constant,
    )


def load_axis_info(pointer: AxisInfo, mask: AxisInfo | None) -> AxisInfo:
    """LoadOpAxisInfoVisitor: loaded values are constant where pointers and mask both are."""
    return AxisInfo(
        (1,) * pointer.rank,
        (1,) * pointer.rank,
        tuple(_gcd(pointer.constancy[d], mask.constancy[d] if mask else 0) for d in range(pointer.rank)),
    )


# ---------------------------------------------------------------------------- the IR walk


def _shape(value_type: ir.Type) -> tuple[int, ...]:
    return tuple(value_type.shape) if isinstance(value_type, ir.RankedTensorType) else (1,)


def pointee_bytes(value_type: ir.Type) -> int:
    """Bytes of the element a `!tt.ptr<T>` (or a tensor of them) points to (at least 1)."""
    element = value_type.element_type if isinstance(value_type, ir.RankedTensorType) else value_type
    pointee = pointee_type(element)
    if pointee is None:
        return 1
    width = getattr(pointee, "width", 8)
    return max(1, width // 8)


def _hint_values(attribute: ir.Attribute) -> tuple[int, ...] | None:
    if isinstance(attribute, ir.IntegerAttr):
        return (attribute.value,)
    if isinstance(attribute, ir.DenseIntElementsAttr):
        return tuple(int(v) for v in attribute)
    return None


def _hints(attributes) -> dict[str, tuple[int, ...]]:
    found = {}
    for name in _HINTS:
        if name in attributes:
            values = _hint_values(attributes[name])
            if values is not None:
                found[name] = values
    return found


def _integer_constant(attribute: ir.Attribute) -> int | None:
    """The zero-extended value of an integer constant or splat (None: not an integer)."""
    if isinstance(attribute, ir.BoolAttr):
        return int(attribute.value)
    if isinstance(attribute, ir.IntegerAttr):
        width = 64 if isinstance(attribute.type, ir.IndexType) else attribute.type.width
        return attribute.value % (1 << width)
    if isinstance(attribute, ir.DenseIntElementsAttr) and attribute.is_splat:
        return _integer_constant(attribute.get_splat_value())
    return None


class _Walk:
    """One forward pass over a kernel body (Triton's dataflow solver, for structured control flow)."""

    def __init__(self) -> None:
        self.facts: dict[ir.Value, AxisInfo] = {}

    def of(self, value: ir.Value) -> AxisInfo:
        if value not in self.facts:
            self.facts[value] = AxisInfo.pessimistic(len(_shape(value.type)))
        return self.facts[value]

    def block(self, block: ir.Block) -> None:
        for op in block.operations:
            self.op(op.operation)

    def op(self, op: ir.Operation) -> None:
        name = op.name
        if name == "scf.for":
            self.for_loop(op)
        elif name == "scf.if":
            self.if_op(op)
        else:
            for region in op.regions:  # tt.reduce/tt.scan/scf.while bodies: arguments pessimistic
                for block in region.blocks:
                    self.block(block)
            info = self.rule(op)
            for result in op.results:
                rank = len(_shape(result.type))
                fact = info if info is not None and info.rank == rank else AxisInfo.pessimistic(rank)
                self.facts[result] = fact.with_hints(_hints(op.attributes))

    def rule(self, op: ir.Operation) -> AxisInfo | None:
        name, operands = op.name, list(op.operands)
        if len(op.results) != 1:
            return None
        shape = _shape(op.results[0].type)
        if name == "arith.constant":
            value = _integer_constant(op.attributes["value"])
            return None if value is None else AxisInfo.of_constant(value, shape)
        if name == "tt.make_range":
            return AxisInfo.of_range(op.attributes["start"].value, op.attributes["end"].value)
        if name in _BINARY_RULES:
            facts = OpFacts(shape, isinstance(op.results[0].type, ir.RankedTensorType), pointee_bytes(operands[0].type))
            return binary_axis_info(name, self.of(operands[0]), self.of(operands[1]), facts)
        return self.unary_rule(op, name, operands, shape)

    def unary_rule(self, op: ir.Operation, name: str, operands: list, shape: tuple[int, ...]) -> AxisInfo | None:
        if name in _CASTS:
            return self.of(operands[0])
        if name == "tt.splat":
            return splat_axis_info(self.of(operands[0]), shape)
        if name == "tt.broadcast":
            return broadcast_axis_info(self.of(operands[0]), _shape(operands[0].type), shape)
        if name == "tt.expand_dims":
            return expand_dims_axis_info(self.of(operands[0]), op.attributes["axis"].value)
        if name == "arith.cmpi" and isinstance(op.results[0].type, ir.RankedTensorType):
            predicate = _CMP_PREDICATES[op.attributes["predicate"].value]
            return cmp_axis_info(predicate, self.of(operands[0]), self.of(operands[1]), shape)
        if name == "arith.select":
            scalar = not isinstance(operands[0].type, ir.RankedTensorType)
            return select_axis_info(self.of(operands[0]), self.of(operands[1]), self.of(operands[2]), scalar)
        if name in ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui"):
            return max_min_axis_info(name, self.of(operands[0]), self.of(operands[1]))
        if name == "tt.load":
            mask = operands[1] if len(operands) > 1 else None
            return load_axis_info(self.of(operands[0]), self.of(mask) if mask is not None else None)
        return None

    def for_loop(self, op: ir.Operation, max_rounds: int = 16) -> None:
        """scf.for: the induction variable has divisibility gcd(lb, step); the carried values are
        joined with what the body yields until nothing changes (pessimistic if it never settles)."""
        lower, step, inits = op.operands[0], op.operands[2], list(op.operands[3:])
        body = op.regions[0].blocks[0]
        induction, carried = body.arguments[0], list(body.arguments)[1:]
        self.facts[induction] = AxisInfo(
            (1,), (_gcd(self.of(lower).divisibility[0], self.of(step).divisibility[0]),), (1,)
        )
        state = [self.of(value) for value in inits]
        for _ in range(max_rounds):
            for argument, fact in zip(carried, state):
                self.facts[argument] = fact
            self.block(body)
            yielded = [self.of(value) for value in body.operations[len(body.operations) - 1].operands]
            joined = [old.join(new) for old, new in zip(state, yielded)]
            if joined == state:
                break
            state = joined
        else:
            state = [AxisInfo.pessimistic(fact.rank) for fact in state]
            for argument, fact in zip(carried, state):
                self.facts[argument] = fact
            self.block(body)
        for result, fact in zip(op.results, state):
            self.facts[result] = fact

    def if_op(self, op: ir.Operation) -> None:
        """scf.if: each result is the join of what the two branches yield."""
        yields = []
        for region in op.regions:
            for block in region.blocks:
                self.block(block)
                yields.append([self.of(value) for value in block.operations[len(block.operations) - 1].operands])
        for index, result in enumerate(op.results):
            facts = [branch[index] for branch in yields]
            joined = facts[0]
            for fact in facts[1:]:
                joined = joined.join(fact)
            self.facts[result] = joined


def _argument_facts(kernel: ir.Operation) -> dict[ir.Value, AxisInfo]:
    """The kernel arguments' facts from their `tt.divisibility`/`tt.contiguity`/`tt.constancy`."""
    arguments = list(kernel.regions[0].blocks[0].arguments)
    attributes = kernel.attributes.get("arg_attrs")
    facts = {}
    for index, argument in enumerate(arguments):
        fact = AxisInfo.pessimistic(len(_shape(argument.type)))
        if attributes is not None and index < len(attributes):
            fact = fact.with_hints(_hints(attributes[index]))
        facts[argument] = fact
    return facts


# ---------------------------------------------------------------------------- layouts


def _dim_index(name: str) -> int:
    return int(name[3:]) if name.startswith("dim") and name[3:].isdigit() else 0


def register_order(layout: LinearLayout) -> tuple[int, ...]:
    """Triton's `LinearEncodingAttr::getOrder`: dimensions in the order the register bases first
    move along them, then the rest from the last to the first.

    >>> register_order(LinearLayout.from_bases([("register", [[0, 1], [1, 0]])], ["dim0", "dim1"]))
    (1, 0)
    """
    rank = len(layout.out_dims)
    order: list[int] = []
    for in_dim, bases in layout.bases:
        if in_dim != "register":
            continue
        for basis in bases:
            moving = next((d for d, component in enumerate(basis) if component), None)
            if moving is not None and moving not in order:
                order.append(moving)
    return tuple(order + [d for d in reversed(range(rank)) if d not in order])


def contig_per_thread(layout: LinearLayout) -> tuple[int, ...]:
    """Triton's `LinearEncodingAttr::getContigPerThread`: per dimension, how many elements of one
    thread sit at consecutive indices (the leading register bases 1, 2, 4, ... along it, taken
    in `register_order`)."""
    rank = len(layout.out_dims)
    registers = next((bases for in_dim, bases in layout.bases if in_dim == "register"), ())
    contig = [1] * rank
    position = 0
    for dim in register_order(layout):
        expected = 1
        while position < len(registers) and registers[position] == tuple(
            expected if d == dim else 0 for d in range(rank)
        ):
            contig[dim] *= 2
            expected *= 2
            position += 1
    return tuple(contig)


def _element_bits(tensor_type: ir.RankedTensorType) -> int:
    element = tensor_type.element_type
    if pointee_type(element) is not None:
        return pointee_bytes(element) * 8
    return element.width if hasattr(element, "width") else 32


@dataclass(frozen=True)
class KernelAxisInfo:
    """The facts of every value of one kernel, and the access widths Triton derives from them
    (`ModuleAxisInfoAnalysis` and `LoadStoreOpToLLVM`'s `getVectorSize`)."""

    facts: Mapping[ir.Value, AxisInfo]

    def of(self, value: ir.Value) -> AxisInfo:
        """The facts of `value` (pessimistic for a value the walk did not reach)."""
        return self.facts.get(value) or AxisInfo.pessimistic(len(_shape(value.type)))

    def alignment(self, value: ir.Value) -> int:
        """`getAlignment`: along the layout's order[0], min(contiguity, divisibility in elements)."""
        tensor_type = value.type
        if not isinstance(tensor_type, ir.RankedTensorType):
            return 1
        fast = register_order(layout_of(tensor_type))[0]
        fact = self.of(value)
        divisibility = fact.divisibility[fast]
        if pointee_type(tensor_type.element_type) is not None:
            divisibility = max(divisibility // max(_element_bits(tensor_type) // 8, 1), 1)
        return min(divisibility, fact.contiguity[fast])

    def contiguity(self, value: ir.Value) -> int:
        """`getContiguity`: min(alignment, contiguous registers per thread along order[0])."""
        tensor_type = value.type
        if not isinstance(tensor_type, ir.RankedTensorType):
            return 1
        layout = layout_of(tensor_type)
        return min(self.alignment(value), contig_per_thread(layout)[register_order(layout)[0]])

    def mask_alignment(self, mask: ir.Value) -> int:
        """`getMaskAlignment`: the mask's constancy along its layout's order[0]."""
        if not isinstance(mask.type, ir.RankedTensorType):
            return 1
        return max(self.of(mask).constancy[register_order(layout_of(mask.type))[0]], 1)

    def vector_size(self, pointer: ir.Value, mask: ir.Value | None = None) -> int:
        """Elements per global access of a `tt.load`/`tt.store` through `pointer` (at most 128
        bits), as Triton's `getVectorSize` then `min(vec, getMaskAlignment(mask))`."""
        if not isinstance(pointer.type, ir.RankedTensorType):
            return 1
        vector = min(128 // _element_bits(pointer.type), self.contiguity(pointer))
        if mask is not None:
            vector = min(vector, self.mask_alignment(mask))
        return max(vector, 1)


def analyze_axis_info(kernel: ir.Operation) -> KernelAxisInfo:
    """The axis info of every value of the `tt.func` (or any one-region function) `kernel`.

    Requires: `kernel` has a body. Postcondition: every result and block argument it holds has
    facts, each of the rank of its type (1 for a scalar)."""
    walk = _Walk()
    walk.facts.update(_argument_facts(kernel))
    walk.block(kernel.regions[0].blocks[0])
    return KernelAxisInfo(MappingProxyType(dict(walk.facts)))
