"""Vector-building helpers of the SIMT lowering: concatenation, register gathers in packed units,
select trees and the 32-bit casts of `gpu.shuffle`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, vector

from ..ir.text import type_kind
from ..ir.walk import ops_where

__all__ = [
    "concat",
    "concat_units",
    "element_bits",
    "element_of",
    "scalarize_extracts",
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
    if isinstance(t, ir.IntegerType | ir.FloatType | ir.IndexType):  # builtin: no text to read
        return t
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


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _constant_element(attribute: ir.Attribute, k: int, element: ir.Type) -> ir.Value | None:
    """Element `k` of a dense vector constant as a scalar `arith.constant` (None for others)."""
    if not isinstance(attribute, ir.DenseElementsAttr):
        return None
    dense = ir.DenseIntElementsAttr(attribute) if isinstance(element, ir.IntegerType | ir.IndexType) else None
    if dense is None and isinstance(element, ir.FloatType):
        dense = ir.DenseFPElementsAttr(attribute)
    if dense is None:
        return None
    item = dense[0] if attribute.is_splat else dense[k]
    if isinstance(element, ir.FloatType):
        return arith.constant(element, ir.FloatAttr.get(element, item))
    return arith.constant(element, ir.IntegerAttr.get(element, item))


def _elementwise(operation: ir.Operation) -> bool:
    """An `arith`/`math` op on same-shaped vectors with one integer (mask, index) vector result and
    no region: it maps over elements."""
    if operation.name.split(".")[0] not in ("arith", "math") or len(operation.results) != 1 or operation.regions:
        return False
    result = operation.results[0].type
    if not isinstance(result, ir.VectorType) or not isinstance(
        ir.VectorType(result).element_type, ir.IntegerType | ir.IndexType
    ):
        return False  # floats stay vectors (f16x2 arithmetic); masks and offsets are integers
    shape = ir.VectorType(result).shape
    return all(isinstance(o.type, ir.VectorType) and ir.VectorType(o.type).shape == shape for o in operation.operands)


def element_of(value: ir.Value, k: int, memo: dict | None = None) -> ir.Value:
    """Element `k` of the 1-D per-thread vector `value` as a scalar, computed on scalars.

    Where `value` comes from a broadcast, a dense constant, a `vector.shuffle` or an
    elementwise `arith`/`math` op, element `k` is rebuilt from the elements of its sources
    (the op cloned on scalars), so that an access's predicate and offset are scalar values
    (an `i1` predicate register, as Triton's) rather than lanes extracted from a `vector<R x i1>`
    that LLVM packs into integers and unpacks with shifts; anything else is one
    `vector.extract`. `memo` (keyed by (value, k)) shares the scalars between calls.

    Postcondition: the result equals `vector.extract(value, [k])`, of the vector's element type.
    Example: element 3 of `arith.cmpi slt, broadcast(n), dense<[0..63]>` is `cmpi slt, n, 3`."""
    memo = {} if memo is None else memo
    key = (value, k)
    if key not in memo:
        memo[key] = _build_element(value, k, memo)
    return memo[key]


def _build_element(value: ir.Value, k: int, memo: dict) -> ir.Value:
    element = ir.VectorType(value.type).element_type
    operation = _owner(value)
    if operation is None:
        return vector.extract(value, [], [k])
    name = operation.name
    if name == "vector.broadcast":
        source = operation.operands[0]
        if not isinstance(source.type, ir.VectorType):
            return source
        if ir.VectorType(source.type).shape == [1]:
            return element_of(source, 0, memo)
    elif name == "arith.constant":
        scalar = _constant_element(operation.attributes["value"], k, element)
        if scalar is not None:
            return scalar
    elif name == "vector.shuffle":
        first, second = operation.operands
        position = list(ir.DenseI64ArrayAttr(operation.attributes["mask"]))[k]
        size = ir.VectorType(first.type).shape[0]
        if ir.VectorType(first.type).rank == 1 and position >= 0:
            return element_of(first, position, memo) if position < size else element_of(second, position - size, memo)
    elif _elementwise(operation):
        operands = [element_of(o, k, memo) for o in operation.operands]
        attributes = {name: operation.attributes[name] for name in operation.attributes}
        same = (name, tuple(operands), tuple(sorted((n, str(a)) for n, a in attributes.items())))
        if same not in memo:  # lanes computing the same scalar share it (a broadcast's lanes)
            memo[same] = ir.Operation.create(name, results=[element], operands=operands, attributes=attributes).result
        return memo[same]
    return vector.extract(value, [], [k])


def _static_extracts(root: ir.Operation) -> list[ir.Operation]:
    """The `vector.extract`s of one element of a 1-D vector at a constant position, in order."""

    def wanted(op: ir.Operation) -> bool:
        if op.name != "vector.extract" or len(op.operands) != 1:
            return False
        source = ir.VectorType(op.operands[0].type)
        return source.rank == 1 and len(list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))) == 1

    return ops_where(root, wanted, ir.WalkOrder.POST_ORDER)


def scalarize_extracts(root: ir.Operation) -> None:
    """Every constant-position `vector.extract` of a 1-D vector under `root` rebuilt on scalars
    (`element_of`), so that masks and integer offsets reach their scalar uses (predicates,
    addresses, `gpu.shuffle` operands) as scalars computed once, not as lanes of packed vectors;
    the vector ops left without uses are dead (`canonicalize` erases them).

    Postcondition: every value is unchanged (each rebuilt scalar equals the lane it replaces)."""
    memos: dict = {}
    for extract in _static_extracts(root):
        (position,) = list(ir.DenseI64ArrayAttr(extract.attributes["static_position"]))
        with ir.InsertionPoint(extract), extract.location:
            scalar = element_of(extract.operands[0], position, memos.setdefault(extract.block, {}))
        if scalar != extract.results[0]:
            extract.results[0].replace_all_uses_with(scalar)
