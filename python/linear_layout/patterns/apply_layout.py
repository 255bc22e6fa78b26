"""Emit ``arith`` code that applies a :class:`LinearLayout` to integer SSA values.

This is the index math of every lowering: given hardware indices (``register``, ``lane``,
``warp``, ``block`` as SSA integers or Python ints) it computes the tensor coordinates, exactly in
the manner of Triton's ``applyLinearLayout`` / ``matrixVectorProd``:

1. Constant inputs are folded: ``layout.apply`` on the constant part gives a constant per output.
2. The non-constant inputs are packed into one integer ``x`` (the first dimension in the low
   bits), so that the remaining map is a single GF(2) matrix ``M`` with ``out = M x``.
3. ``M x`` is computed one *diagonal* at a time. All matrix entries with ``out bit - in bit ==
   d`` move by the same shift, so they cost one ``(x & mask) << d`` (or ``>> -d``) together.
4. A column whose entries would be scattered over many diagonals can instead be emitted
   *explicitly* as ``select(x & bit == 0, 0, basis)``; a column is made explicit when that is
   cheaper under the op-count model below.
5. Terms whose output bits no other term touches are combined with ``arith.ori``, the rest with
   ``arith.xori``, each in a balanced tree; XOR of disjoint values equals OR, and OR lets LLVM
   fold the combination into bit-field inserts.

Nothing is emitted for an output the non-constant inputs cannot reach: it is the folded constant.
Inputs whose bases are all zero (broadcasts) are not even packed.

Op-count model (per output): a diagonal costs 2 ops (``andi`` + shift; 1 when ``d == 0``), an
explicit column 3 (``andi``, ``cmpi``, ``select``), and every term after the first 1 combining op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from ..core.layout import LinearLayout

__all__ = ["emit_apply_layout", "constant_int_value"]


def constant_int_value(value: ir.Value) -> int | None:
    """The integer a value is known to hold if an ``arith.constant`` defines it, else ``None``."""
    owner = value.owner
    if isinstance(owner, ir.Operation):
        owner = owner.opview
    if isinstance(owner, arith.ConstantOp):
        attr = owner.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return attr.value
    return None


def _diagonal_masks(columns: list[int], num_rows: int) -> dict[int, int]:
    """Shift ``d`` -> mask of input bits ``i`` whose column has output bit ``i + d`` set."""
    masks: dict[int, int] = {}
    for i, column in enumerate(columns):
        for row in range(num_rows):
            if column >> row & 1:
                masks[row - i] = masks.get(row - i, 0) | (1 << i)
    return masks


def _plan_terms(columns: list[int], num_rows: int) -> tuple[dict[int, int], int]:
    """Choose explicit columns greedily while that lowers the op count.

    Returns the diagonal masks over the remaining columns and the mask of explicit columns.
    """
    explicit = 0

    def cost(explicit_mask: int) -> int:
        kept = [0 if explicit_mask >> i & 1 else c for i, c in enumerate(columns)]
        diagonals = _diagonal_masks(kept, num_rows)
        ops = sum(1 if d == 0 else 2 for d in diagonals)
        explicit_count = sum(1 for i, c in enumerate(columns) if explicit_mask >> i & 1 and c)
        terms = len(diagonals) + explicit_count
        return ops + 3 * explicit_count + max(terms - 1, 0)

    best = cost(0)
    improved = True
    while improved:
        improved = False
        for i, column in enumerate(columns):
            if column and not explicit >> i & 1:
                candidate = cost(explicit | (1 << i))
                if candidate < best:
                    best, explicit, improved = candidate, explicit | (1 << i), True
    kept = [0 if explicit >> i & 1 else c for i, c in enumerate(columns)]
    return _diagonal_masks(kept, num_rows), explicit


def _tree_reduce(terms: list[ir.Value], combine) -> ir.Value | None:
    while len(terms) > 1:
        paired = [combine(terms[k], terms[k + 1]) for k in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            paired.append(terms[-1])
        terms = paired
    return terms[0] if terms else None


def _matrix_vector_product(
    columns: list[int], num_rows: int, x: ir.Value, constant, in_range: bool = False
) -> ir.Value | None:
    """``M x`` for the GF(2) matrix with the given packed ``columns``; ``None`` when ``M`` is zero.

    With ``in_range`` (``x`` known to be below ``1 << len(columns)``), a diagonal whose mask
    keeps every bit of ``x`` that survives its shift needs no ``andi``."""
    full = (1 << len(columns)) - 1 if in_range else -1
    diagonals, explicit = _plan_terms(columns, num_rows)
    # Output rows set by exactly one matrix entry: a term confined to them overlaps no other term.
    counts = [0] * num_rows
    for column in columns:
        for row in range(num_rows):
            counts[row] += column >> row & 1
    unique_rows = sum(1 << row for row in range(num_rows) if counts[row] == 1)

    ors: list[ir.Value] = []
    xors: list[ir.Value] = []
    for shift in sorted(diagonals):
        mask = diagonals[shift]
        kept = full & ~((1 << -shift) - 1) if shift < 0 else full
        term = x if mask & kept == kept else arith.andi(x, constant(mask))
        if shift > 0:
            term = arith.shli(term, constant(shift))
        elif shift < 0:
            term = arith.shrui(term, constant(-shift))
        rows = mask << shift if shift >= 0 else mask >> -shift
        (ors if rows & ~unique_rows == 0 else xors).append(term)
    for i, column in enumerate(columns):
        if explicit >> i & 1 and column:
            bit = arith.andi(x, constant(1 << i))
            is_zero = arith.cmpi(arith.CmpIPredicate.eq, bit, constant(0))
            term = arith.select(is_zero, constant(0), constant(column))
            (ors if column & ~unique_rows == 0 else xors).append(term)
    or_part = _tree_reduce(ors, arith.ori)
    xor_part = _tree_reduce(xors, arith.xori)
    if or_part is None or xor_part is None:
        return or_part if xor_part is None else xor_part
    return arith.ori(or_part, xor_part)


def emit_apply_layout(
    layout: LinearLayout,
    indices: Mapping[str, ir.Value | int],
    *,
    int_type: ir.Type | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
    constant: Callable[[int], ir.Value] | None = None,
    packed: Mapping[tuple[tuple[str, int, ir.Value], ...], ir.Value] | None = None,
    in_range: bool = False,
) -> dict[str, ir.Value]:
    """Emit ``layout.apply(indices)`` as ``arith`` ops; return one SSA value per output dimension.

    ``indices`` gives every input dimension of ``layout`` (any order) an integer SSA value or a
    Python int. Values defined by ``arith.constant`` are folded like Python ints.

    Requires: every index is below its dimension's size (bits above it would leak into the next
    packed dimension, as in Triton); all SSA indices share one integer type (``int_type``, by
    default theirs, else ``i32``) wide enough for the packed inputs and every output.
    Postcondition: for all index values, the emitted outputs equal ``layout.apply``.

    ``constant`` (optional) makes the integer constants of type ``int_type`` (a caller's
    kernel-wide cache); by default they are created at the insertion point, once per call.
    ``packed`` (optional) maps ``((dim, log2 size, index value), ...)`` to a value known to equal
    the packing of those indices, low bits first: when the non-constant inputs start with exactly
    those dimensions, sizes and values, that value is used instead of shifting and or-ing them (e.g.
    ``tid == lane | warp << 5`` when ``lane = tid & 31`` and ``warp = tid >> 5`` over a block of
    ``32 * num_warps`` threads).
    ``in_range`` says the caller guarantees the precondition (every index below its dimension's
    size): masks that would only clear bits the packed input cannot have are then left out.
    Without it every diagonal is masked, so an out-of-range last index still wraps.
    """
    if set(indices) != set(layout.get_in_dim_names()):
        raise ValueError(
            f"emit_apply_layout needs exactly the input dimensions {list(layout.get_in_dim_names())}, "
            f"got {sorted(indices)}"
        )
    with loc or ir.Location.unknown(), ip or ir.InsertionPoint.current:
        split = _split_indices(layout, indices)
        int_type = int_type or _default_int_type(indices)
        _check_width(layout, split.symbolic, int_type)
        constant = constant or _constant_maker(int_type)
        folded = layout.apply(split.constant_part)
        if not split.symbolic:
            return {name: constant(value) for name, value in folded.items()}
        x = _pack(layout, split.symbolic, int_type, constant, packed or {})
        matrix = layout.sublayout([name for name, _ in split.symbolic], layout.get_out_dim_names())
        flat = matrix.flatten_ins()
        results = {}
        for name in layout.get_out_dim_names():
            columns = (
                [basis[0] for basis in flat.sublayout(flat.get_in_dim_names(), [name]).bases[0][1]]
                if flat.num_in_dims
                else []
            )
            product = _matrix_vector_product(columns, layout.get_out_dim_size_log2(name), x, constant, in_range)
            if product is None:
                results[name] = constant(folded[name])
            elif folded[name]:
                results[name] = arith.xori(product, constant(folded[name]))
            else:
                results[name] = product
        return results


@dataclass(frozen=True)
class _Indices:
    """The indices of an apply, split: the constant part of every input (0 for a symbolic one)
    and the symbolic inputs that can change an output, in input order."""

    constant_part: dict[str, int]
    symbolic: list[tuple[str, ir.Value]]


def _split_indices(layout: LinearLayout, indices: Mapping[str, ir.Value | int]) -> _Indices:
    constant_part: dict[str, int] = {}
    symbolic: list[tuple[str, ir.Value]] = []
    bases = dict(layout.bases)
    for name in layout.get_in_dim_names():
        index = indices[name]
        known = index if isinstance(index, int) else constant_int_value(index)
        constant_part[name] = 0 if known is None else known
        # An input whose bases are all zero (a broadcast) cannot change any output.
        if known is None and any(any(basis) for basis in bases[name]):
            symbolic.append((name, index))
    return _Indices(constant_part, symbolic)


def _default_int_type(indices: Mapping[str, ir.Value | int]) -> ir.Type:
    typed = [index for index in indices.values() if not isinstance(index, int)]
    return typed[0].type if typed else ir.IntegerType.get_signless(32)


def _check_width(layout: LinearLayout, symbolic: list[tuple[str, ir.Value]], int_type: ir.Type) -> None:
    width = ir.IntegerType(int_type).width
    packed_bits = sum(layout.get_in_dim_size_log2(name) for name, _ in symbolic)
    if packed_bits > width or any(size > 1 << (width - 1) for _, size in layout.out_dims):
        raise ValueError(
            f"emit_apply_layout: {packed_bits} packed input bits or the output sizes "
            f"{dict(layout.out_dims)} do not fit in i{width}"
        )
    for name, value in symbolic:
        if value.type != int_type:
            raise ValueError(f"emit_apply_layout: index '{name}' has type {value.type}, expected {int_type}")


def _constant_maker(int_type: ir.Type) -> Callable[[int], ir.Value]:
    """Constants of `int_type` at the insertion point, once per value."""
    constants: dict[int, ir.Value] = {}

    def constant(value: int) -> ir.Value:
        if value not in constants:
            constants[value] = arith.constant(int_type, value)
        return constants[value]

    return constant


def _pack(
    layout: LinearLayout,
    symbolic: list[tuple[str, ir.Value]],
    int_type: ir.Type,
    constant,
    packed: Mapping[tuple[tuple[str, int, ir.Value], ...], ir.Value],
) -> ir.Value:
    """The symbolic indices packed into one integer, low bits first (a known packing reused)."""
    x = None
    shift = 0
    start = 0
    for dims, value in packed.items():
        prefix = tuple((name, layout.get_in_dim_size_log2(name), index) for name, index in symbolic[: len(dims)])
        if len(dims) > start and prefix == tuple(dims) and value.type == int_type:
            x, shift, start = value, sum(bits for _, bits, _ in dims), len(dims)
    for name, value in symbolic[start:]:
        part = value if shift == 0 else arith.shli(value, constant(shift))
        x = part if x is None else arith.ori(x, part)
        shift += layout.get_in_dim_size_log2(name)
    return x
