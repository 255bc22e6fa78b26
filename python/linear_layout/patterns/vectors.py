"""Vector-building helpers of the SIMT lowering: concatenation, register gathers in packed units,
select trees and the 32-bit casts of `gpu.shuffle`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, vector

from ..ir.text import type_kind

__all__ = [
    "concat",
    "concat_units",
    "element_bits",
    "from_units",
    "gather",
    "select_tree",
    "shuffle_casts",
    "to_units",
    "unit",
]

#: The widest unit registers are packed into (one 32-bit lane of a shuffle or register).
MAX_UNIT_BITS = 32


def element_bits(t: ir.Type) -> int:
    """Bits of one element of type `t` (an integer, float or index type; index and Triton's
    `!tt.ptr<...>` are 64-bit). ValueError for a type without a width."""
    width = getattr(t, "width", None)
    if width is not None:
        return width
    if isinstance(t, ir.IndexType) or type_kind(t) == "tt.ptr":
        return 64
    raise ValueError(f"{t} has no element width")


def lowered_element(t: ir.Type) -> ir.Type:
    """The per-thread element of a tensor element type `t`: itself, or `index` for Triton's
    `!tt.ptr<...>` (a pointer is an element offset from its kernel argument, triton_kernel.py)."""
    return ir.IndexType.get() if type_kind(t) == "tt.ptr" else t


def _is_aligned_run(group: list[int], size: int) -> bool:
    return len(group) % size == 0 and all(
        group[k] % size == 0 and group[k : k + size] == list(range(group[k], group[k] + size))
        for k in range(0, len(group), size)
    )


def unit(groups: Sequence[Sequence[int]], element: ir.Type) -> int:
    """The most registers (a power of two, at most 32 bits together) that every group in
    `groups` moves as aligned runs: group[k*u : (k+1)*u] == range(group[k*u], group[k*u] + u)
    with group[k*u] % u == 0. 1 for 32-bit elements and wider, or when no run of 2 fits.

    Sub-32-bit values are moved in such units (`vector.bitcast` to one integer per unit) so that
    i8/f16 registers stay packed from load to store instead of being unpacked and repacked."""
    bits = element_bits(element)
    lists = [list(g) for g in groups]
    best, size = 1, 2
    while size * bits <= MAX_UNIT_BITS and lists and all(_is_aligned_run(g, size) for g in lists):
        best, size = size, size * 2
    return best


def _unit_type(count: int, size: int, element: ir.Type) -> ir.VectorType:
    return ir.VectorType.get([count // size], ir.IntegerType.get_signless(size * element_bits(element)))


def to_units(value: ir.Value, size: int, element: ir.Type) -> ir.Value:
    count = ir.VectorType(value.type).shape[0]
    return vector.bitcast(_unit_type(count, size, element), value)


def from_units(value: ir.Value, size: int, element: ir.Type) -> ir.Value:
    count = ir.VectorType(value.type).shape[0] * size
    return vector.bitcast(ir.VectorType.get([count], element), value)


def concat(pieces: list[ir.Value]) -> ir.Value:
    """One vector of the pieces, in order (a balanced tree of `vector.shuffle`s)."""
    while len(pieces) > 1:
        merged = []
        for k in range(0, len(pieces), 2):
            a, b = pieces[k], pieces[k + 1]
            n = ir.VectorType(a.type).shape[0] + ir.VectorType(b.type).shape[0]
            merged.append(vector.shuffle(a, b, list(range(n))))
        pieces = merged
    return pieces[0]


def concat_units(pieces: list[ir.Value]) -> ir.Value:
    """`concat`, but 1-element pieces are joined with `vector.from_elements` (a shuffle of two
    1-element vectors would canonicalize to `vector.interleave`)."""
    if len(pieces) > 1 and all(ir.VectorType(p.type).shape[0] == 1 for p in pieces):
        element = ir.VectorType(pieces[0].type).element_type
        return vector.from_elements(
            ir.VectorType.get([len(pieces)], element), [vector.extract(p, [], [0]) for p in pieces]
        )
    return concat(pieces)


def gather(value: ir.Value, registers: list[int], element: ir.Type) -> ir.Value:
    """`vector.shuffle(value, value, registers)`, moving aligned runs of registers as units."""
    size = unit([registers], element)
    if size == 1:
        return vector.shuffle(value, value, registers)
    units = to_units(value, size, element)
    return from_units(vector.shuffle(units, units, [r // size for r in registers[::size]]), size, element)


def select_tree(candidates: list[ir.Value], conds: list[ir.Value]) -> ir.Value:
    """candidates[t] chosen by the bits of t (conds[k] is bit k)."""
    for cond in conds:
        candidates = [arith.select(cond, candidates[q + 1], candidates[q]) for q in range(0, len(candidates), 2)]
    return candidates[0]


def _same(value: ir.Value) -> ir.Value:
    return value


def shuffle_casts(element: ir.Type) -> tuple[Callable[[ir.Value], ir.Value], Callable[[ir.Value], ir.Value]]:
    """(to, from) the 32-bit type `gpu.shuffle` moves; ValueError for wider or other types."""
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(element, ir.F32Type) or (isinstance(element, ir.IntegerType) and element.width == 32):
        return _same, _same
    if isinstance(element, ir.IntegerType) and element.width < 32:
        return (lambda v: arith.extui(i32, v)), (lambda v: arith.trunci(element, v))
    if isinstance(element, ir.F16Type | ir.BF16Type):
        i16 = ir.IntegerType.get_signless(16)
        return (
            (lambda v: arith.extui(i32, arith.bitcast(i16, v))),
            (lambda v: arith.bitcast(element, arith.trunci(i16, v))),
        )
    raise ValueError(f"cannot shuffle {element}")
