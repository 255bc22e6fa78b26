"""The layout builders Triton keeps in ``LayoutUtils.h``: standard tensor layouts, fitting a layout
to a shape, and the order of dimension names.

* :func:`identity_standard_nd` and :func:`product_1d` build a tensor tile from one-dimensional
  pieces (Triton's ``identityStandardND`` and its ``identity1D(...) * identity1D(...)`` chains);
* :func:`ensure_layout_not_larger_than` / :func:`ensure_layout_not_smaller_than` broadcast or repeat
  a layout to a tensor shape (``ensureLayoutNotLargerThan`` / ``ensureLayoutNotSmallerThan``);
* :func:`zeros_like` (``zerosLike``), :func:`standard_out_dim_names` (``standardOutDimNames``) and
  :func:`supremum`, the order of the dimensions of a product.

Each is also importable from ``linear_layout.core.layout`` and ``linear_layout``, as before.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ._packing import UNITS, BoundedCache, field_moves_mover, units
from ._packing import supremum as _supremum
from .arguments import (
    require_bool,
    require_int,
    require_ints,
    require_name,
    require_names,
    require_sequence,
    type_name,
)
from .layout import LinearLayout, _check_names, _join_dims, _log2_exact, _short
from .limits import check_materialised

__all__ = [
    "standard_out_dim_names",
    "identity_standard_nd",
    "product_1d",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "zeros_like",
    "supremum",
]

# The plans of `ensure_layout_not_*` and of the size inference after shrinking, cached by the
# dimension signature like the plans of `*` (core/_packing.py).
_GROW_PLANS: BoundedCache[tuple, tuple] = BoundedCache()
_SHRINK_PLANS: BoundedCache[tuple, tuple] = BoundedCache()
_INFER_PLANS: BoundedCache[tuple, Any] = BoundedCache()


def standard_out_dim_names(rank: int) -> tuple[str, ...]:
    """``("dim0", ..., "dim{rank-1}")``: the output names of every tensor layout.

    >>> standard_out_dim_names(3)
    ('dim0', 'dim1', 'dim2')
    """
    if type(rank) is int and 0 <= rank < len(_STANDARD_NAMES):
        return _STANDARD_NAMES[rank]
    rank = require_int(rank, "standard_out_dim_names", "rank", minimum=0)
    check_materialised(rank, "standard_out_dim_names", MAX_STANDARD_RANK)  # names are built one by one
    return tuple(f"dim{i}" for i in range(rank))


#: The most standard names one call builds (a tensor of more dimensions than this holds more than
#: 2**40 elements unless nearly all are 1; the limit keeps a huge ``rank`` from hanging).
MAX_STANDARD_RANK = 1 << 16
_STANDARD_NAMES = tuple(tuple(f"dim{i}" for i in range(rank)) for rank in range(17))


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """An ``in_dim`` that walks ``shape`` in ``order`` (``order[0]`` is the fastest dimension).

    Formula: the product of ``identity_1d(shape[order[i]], in_dim, dim{order[i]})`` over ``i``.
    As in Triton, the outputs stay in ``order`` (minor first), which is what
    :func:`ensure_layout_not_smaller_than` expects; callers transpose to ``dim0, dim1, ...``.
    Requires: ``order`` is a permutation of ``range(len(shape))``; sizes are powers of two.
    Postcondition: invertible, with outputs listed in ``order``.

    >>> L = identity_standard_nd("lane", [2, 4], [1, 0])
    >>> L.bases, L.out_dims
    ((('lane', ((1, 0), (2, 0), (0, 1))),), (('dim1', 4), ('dim0', 2)))
    """
    in_dim = require_name(in_dim, "identity_standard_nd", "in_dim")
    shape = require_ints(shape, "identity_standard_nd", "shape")
    order = require_ints(order, "identity_standard_nd", "order")
    if sorted(order) != list(range(len(shape))):
        raise ValueError(f"order {list(order)} is not a permutation of 0..{len(shape) - 1}")
    # The product, written out: dimension order[i] takes the next log2(shape[order[i]]) output
    # bits, and the input's bases are the unit vectors of those bits in turn.
    names = standard_out_dim_names(len(shape))
    outs = []
    width = 0
    for dim in order:
        size = shape[dim]
        if type(size) is not int or size < 1 or size & (size - 1):
            size = 1 << _log2_exact(size, f"identity_standard_nd size of dimension {dim}")
        outs.append((names[dim], size))
        width += size.bit_length() - 1
    layout = LinearLayout._make(((in_dim, width),), tuple(outs), units(width))
    layout._cache_rank = width
    return layout


def product_1d(factors: Iterable[Sequence[Any]]) -> LinearLayout:
    """The product ``f0 * f1 * ...`` of one-dimensional layouts, built in one pass.

    A factor ``(size, in_dim, out_dim)`` is ``LinearLayout.identity_1d(size, in_dim, out_dim)``; with a
    fourth entry, ``(size, in_dim, out_dim, stride)`` is ``strided_1d(size, stride, in_dim, out_dim)``,
    and stride 0 is ``zeros_1d(size, in_dim, out_dim)`` (a broadcast). Triton's
    ``LinearLayoutConversions.cpp`` writes most tiles as such a chain,
    ``identity1D(...) * identity1D(...) * ...``; folding it with ``*`` builds (and repacks) every
    intermediate layout, while here each factor only appends its bases to ``in_dim`` just above the
    bits ``out_dim`` already has, and the columns are packed once at the end.

    Formula: a factor with ``n = log2(size)`` and ``s = log2(stride)`` appends to ``in_dim`` the unit
    columns of bits ``w + s, ..., w + s + n - 1`` of ``out_dim``, where ``w`` is the number of bits
    ``out_dim`` has so far, which becomes ``w + s + n``; stride 0 appends ``n`` zero columns and
    leaves ``w``. Dimensions are listed in the order they first appear, as ``*`` lists them.
    Requires: sizes are 0 (the factor is ``empty()``) or powers of two; strides are 0 or powers of
    two; names are strings.
    Postcondition: equal to ``functools.reduce(operator.mul, factor layouts, LinearLayout.empty())``,
    with its rank (the number of non-zero columns, all distinct unit vectors) already known.

    >>> product_1d([(2, "register", "dim1"), (4, "lane", "dim1"), (2, "lane", "dim0"), (2, "warp", "dim1", 0)]).bases
    (('register', ((1, 0),)), ('lane', ((2, 0), (4, 0), (0, 1))), ('warp', ((0, 0),)))
    """
    widths: dict[str, int] = {}  # out_dim -> its bits so far
    segments: dict[str, list[tuple[str, int, int]]] = {}  # in_dim -> (out_dim, first bit or -1: zeros, count)
    for factor in require_sequence(factors, "product_1d", "factors", "(size, in_dim, out_dim[, stride]) factors"):
        k = len(factor) if type(factor) is tuple else 0
        size = factor[0] if k else None
        if type(size) is int and size > 0 and not size & (size - 1) and (k == 3 or (k == 4 and factor[3] == 0)):
            # the common factors, identity_1d and zeros_1d, without the general checks
            n, in_dim, out_dim, shift = size.bit_length() - 1, factor[1], factor[2], 3 - k
        else:
            n, in_dim, out_dim, shift = _factor_bits(factor)
            if n < 0:  # size 0: the factor is the empty layout
                continue
        width = widths.get(out_dim, 0)
        own = segments.get(in_dim)
        if own is None:
            own = segments[in_dim] = []
        if shift >= 0:
            if n:
                own.append((out_dim, width + shift, n))
            width += shift + n
        elif n:
            own.append((out_dim, -1, n))
        widths[out_dim] = width  # a factor of size 1 only lists its dims
    return _pack_segments(segments, widths)


def _factor_bits(factor: Sequence[Any]) -> tuple[int, str, str, int]:
    """``(log2 size, in_dim, out_dim, log2 stride)`` of a :func:`product_1d` factor: size 0 gives
    ``log2 size = -1``, stride 0 gives ``log2 stride = -1``."""
    plain = type(factor) is tuple or (isinstance(factor, Sequence) and not isinstance(factor, str))
    if not plain or len(factor) not in (3, 4):
        raise TypeError(f"product_1d: a factor must be (size, in_dim, out_dim[, stride]), got {_short(factor)}")
    size, in_dim, out_dim = factor[0], factor[1], factor[2]
    stride = factor[3] if len(factor) == 4 else 1
    if type(in_dim) is not str or type(out_dim) is not str:
        _check_names((in_dim,), "input dimension"), _check_names((out_dim,), "output dimension")
    n = size.bit_length() - 1 if type(size) is int and size > 0 and not size & (size - 1) else None
    if n is None:
        n = -1 if size == 0 and not isinstance(size, bool) else _log2_exact(size, "product_1d size")
    if stride == 1:
        return n, in_dim, out_dim, 0
    return (
        n,
        in_dim,
        out_dim,
        -1 if stride == 0 and not isinstance(stride, bool) else _log2_exact(stride, "product_1d stride"),
    )


def _pack_segments(segments: Mapping[str, list[tuple[str, int, int]]], widths: Mapping[str, int]) -> LinearLayout:
    """The layout of :func:`product_1d`'s segments -- per input dimension, runs of ``count`` unit
    columns from bit ``first`` of an output dimension up (``first`` -1: zero columns) -- with the
    output dimensions packed in ``widths``' order."""
    for name in (*segments, *widths):
        if type(name) is not str:
            _check_names((name,), "dimension")
    offsets = {}
    outs = []
    total = 0
    for name, width in widths.items():
        offsets[name] = total
        outs.append((name, 1 << width))
        total += width
    ins = []
    cols: list[int] = []
    for in_dim, own in segments.items():
        count = len(cols)
        for out_dim, first, n in own:
            if first < 0:
                cols.extend([0] * n)
                continue
            first += offsets[out_dim]
            cols.extend(UNITS[-1][first : first + n] if first + n < 64 else [1 << k for k in range(first, first + n)])
        ins.append((in_dim, len(cols) - count))
    layout = LinearLayout._make(tuple(ins), tuple(outs), tuple(cols))
    layout._cache_rank = len(cols) - cols.count(0)  # distinct unit columns and zeros
    return layout


def _check_shape_names(layout: LinearLayout, shape: Mapping[str, int], where: str) -> None:
    """API boundary of ``ensure_layout_not_*``: ``shape`` maps every output name to an integer."""
    if not isinstance(shape, Mapping):
        raise TypeError(
            f"{where}: argument 'shape' must be a mapping from output dimension names to sizes, got {type_name(shape)}"
        )
    for name, size in shape.items():
        require_name(name, where, "shape")
        require_int(size, where, "shape")
    if set(shape) != set(layout.get_out_dim_names()):
        raise ValueError(
            f"shape names {_join_dims(shape)} must be the output dimensions {_join_dims(layout.get_out_dim_names())}"
        )


def ensure_layout_not_larger_than(
    layout: LinearLayout, shape: Mapping[str, int], broadcast_registers: bool = True
) -> LinearLayout:
    """Shrink each output dimension to at most ``shape[d]`` by broadcasting the bases that reach past it.

    As Triton 3.9's ``ensureLayoutNotLargerThan``: every basis coordinate ``>= shape[d]`` is zeroed
    (a threshold, so duplicated bases all go), and the inputs that walked past the tensor now hold
    copies. With ``broadcast_registers=False``, such register bases are dropped instead of zeroed.
    The output sizes are then inferred from the bases (Triton's ``LinearLayout(bases, outDimNames)``).

    Formula: on packed columns, clear the bits ``[log2 shape[d], log2 size[d])`` of each shrunk field.
    Requires: ``shape`` names every output dimension with a power of two; each basis coordinate on a
    shrunk dimension is 0 or a power of two; the result is surjective (Triton asserts it).
    Postcondition: each output size is ``min(old size, shape[d])`` for a surjective layout.

    >>> ensure_layout_not_larger_than(LinearLayout.identity_1d(8, "lane", "dim0"), {"dim0": 2}).bases
    (('lane', ((1,), (0,), (0,))),)
    """
    if type(broadcast_registers) is not bool:
        require_bool(broadcast_registers, "ensure_layout_not_larger_than", "broadcast_registers")
    clear, shrunk = _fit_plan(_SHRINK_PLANS, layout, shape, _bits_past, "ensure_layout_not_larger_than")
    if not clear:
        return layout
    units = True  # every column a unit vector or zero (so are the cleared ones)
    for col in layout._cols:
        if col & (col - 1):
            units = False
            if col & clear:  # a unit column (one bit) has only powers of two
                _check_unit_coordinates(col, shrunk)
    ins, cols = _clear_columns(layout, clear, broadcast_registers)
    result = _with_inferred_sizes(ins, layout._outs, cols)
    if units:  # distinct unit columns are independent: the rank without elimination
        distinct = set(cols)
        distinct.discard(0)
        result._cache_rank = len(distinct)
    if not result.is_surjective():
        raise ValueError(f"ensure_layout_not_larger_than: the result is not surjective:{result}")
    return result


def _check_unit_coordinates(col: int, shrunk: Sequence[tuple[str, int, int]]) -> None:
    """Every coordinate of ``col`` on a shrunk field is 0 or a power of two (Triton asserts it)."""
    for name, shift, width in shrunk:
        value = (col >> shift) & ((1 << width) - 1)
        if value & (value - 1):
            raise ValueError(f"basis coordinate {value} on '{name}' is not a power of two")


def _fit_plan(
    plans: BoundedCache[tuple, Any],
    layout: LinearLayout,
    shape: Mapping[str, int],
    make: Callable[[LinearLayout, Mapping[str, int]], Any],
    where: str,
) -> Any:
    """The plan of ``ensure_layout_not_*(layout, shape)``: it depends on the output dimensions and
    the shape only, so it is cached under that signature, like the plans of ``*``.  On a miss (or
    whenever ``shape`` is not simply one hashable size per output) the shape is checked, which
    says what is wrong, and the plan made by ``make``."""
    if not isinstance(layout, LinearLayout):
        raise TypeError(f"{where}: argument 'layout' must be a LinearLayout, got {type_name(layout)}")
    outs = layout._outs
    key = None
    if type(shape) is dict and len(shape) == len(outs):
        try:
            key = (outs, tuple([shape[name] for name, _ in outs]))
            plan = plans.get(key)
        except (KeyError, TypeError):
            key = plan = None
        if plan is not None:
            return plan
    _check_shape_names(layout, shape, where)
    plan = make(layout, shape)
    if key is not None:
        plans.store(key, plan)
    return plan


def _bits_past(layout: LinearLayout, shape: Mapping[str, int]) -> tuple[int, tuple[tuple[str, int, int], ...]]:
    """The packed-column mask of every coordinate bit at or past ``shape``, and the shrunk fields."""
    clear = 0
    shrunk = []
    shift = 0
    for name, size in layout._outs:
        width = size.bit_length() - 1
        desired = shape[name]
        if type(desired) is not int or desired < 1 or desired & (desired - 1):
            desired = 1 << _log2_exact(desired, f"shape of '{name}'")
        keep = desired.bit_length() - 1
        if keep < width:
            clear |= ((1 << width) - (1 << keep)) << shift
            shrunk.append((name, shift, width))
        shift += width
    return clear, tuple(shrunk)


def _clear_columns(layout: LinearLayout, clear: int, broadcast_registers: bool) -> tuple[tuple, list[int]]:
    """Zero the ``clear`` bits of every column, or drop the register columns that have any."""
    if broadcast_registers or not layout.has_in_dim("register"):  # one pass over all columns
        keep = ~clear
        return layout._ins, [c & keep for c in layout._cols]
    ins = []
    cols: list[int] = []
    start = 0
    for name, count in layout._ins:
        own = layout._cols[start : start + count]
        if name == "register" and not broadcast_registers:
            kept = [c for c in own if not c & clear]
        else:
            kept = [c & ~clear for c in own]
        ins.append((name, len(kept)))
        cols.extend(kept)
        start += count
    return tuple(ins), cols


def _with_inferred_sizes(ins: tuple, outs: tuple, cols: list[int]) -> LinearLayout:
    """Repack ``cols`` (packed for ``outs``) with each output's size inferred from its largest coordinate."""
    used = functools.reduce(operator.or_, cols, 0)
    target = {}
    new_outs = []
    src = dst = 0
    for name, size in outs:
        top = ((used >> src) & (size - 1)).bit_length()
        target[name] = (dst, 0)
        new_outs.append((name, 1 << top))
        src += size.bit_length() - 1
        dst += top
    new = tuple(new_outs)
    if new == outs:
        return LinearLayout._make(ins, outs, tuple(cols))
    # Coordinates fit their inferred sizes, so the repacker's field masks (the old sizes) keep them
    # whole. The repacker depends on the two packings only: cached like the plans of `*`.
    repack = _INFER_PLANS.get((outs, new))
    if repack is None:
        repack = _INFER_PLANS.store((outs, new), field_moves_mover(outs, target))
    return LinearLayout._make(ins, new, tuple(repack(cols)))


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: Mapping[str, int]) -> LinearLayout:
    """Grow each output dimension to at least ``shape[d]`` by repeating into the first input.

    The repetitions become extra high bases of the first input dimension (``register`` for
    distributed layouts): a thread holds several copies of its pattern.

    Requires: ``shape`` names every output dimension; sizes are powers of two.
    Postcondition: each output size is ``max(old size, shape[d])``.

    >>> ensure_layout_not_smaller_than(LinearLayout.identity_1d(2, "register", "dim0"), {"dim0": 8}).bases
    (('register', ((1,), (2,), (4,))),)
    """
    # The product `layout * identity_1d(desired // actual, first, out)` over the outputs in order,
    # in one pass: each growing field widens by its extra bits, whose unit columns go to the end of
    # the first input dimension. The plan depends on the dimensions and the shape only, like `*`'s.
    outs, repack, grown = _fit_plan(_GROW_PLANS, layout, shape, _plan_growth, "ensure_layout_not_smaller_than")
    if not grown or not layout._ins:
        return layout
    cols = list(repack(layout._cols))
    first, count = layout._ins[0]
    cols[count:count] = grown  # the new columns end the first input dimension
    result = LinearLayout._make(((first, count + len(grown)), *layout._ins[1:]), outs, tuple(cols))
    if layout._cache_rank is not None:  # the new unit columns sit in bits no old column touches
        result._cache_rank = layout._cache_rank + len(grown)
    return result


def _plan_growth(layout: LinearLayout, shape: Mapping[str, int]) -> tuple:
    """The output dimensions, column repacker and new unit columns of ``ensure_layout_not_smaller_than``."""
    target = {}
    outs = []
    grown: list[int] = []
    dst = 0
    for out, actual in layout._outs:
        desired = shape[out]
        if type(desired) is not int or desired < 1 or desired & (desired - 1):
            desired = 1 << _log2_exact(desired, f"shape of '{out}'")
        width = actual.bit_length() - 1
        extra = max(0, desired.bit_length() - 1 - width)
        target[out] = (dst, 0)
        grown.extend(1 << (dst + width + k) for k in range(extra))
        outs.append((out, actual << extra))
        dst += width + extra
    return tuple(outs), layout._repacker(target), tuple(grown)


def zeros_like(layout: LinearLayout) -> LinearLayout:
    """The layout with the same dimensions and sizes whose bases are all zero.

    Requires: nothing.
    Postcondition: ``rank() == 0``; same dimensions and sizes as ``layout``.

    >>> zeros_like(LinearLayout.identity_1d(4, "i", "o")).bases
    (('i', ((0,), (0,))),)
    """
    if not isinstance(layout, LinearLayout):
        raise TypeError(f"zeros_like: argument 'layout' must be a LinearLayout, got {type_name(layout)}")
    return LinearLayout._make(layout._ins, layout._outs, (0,) * len(layout._cols))


def supremum(x: Sequence[str], y: Sequence[str], what: str = "dimensions") -> tuple[str, ...]:
    """The shortest list containing ``x`` and ``y`` as subsequences, preferring ``x`` on ties
    (the public entry of ``core._packing.supremum``, which ``*`` calls: this one checks its arguments).

    Requires: common names appear in the same relative order in both.
    Postcondition: ``x`` and ``y`` are subsequences of the result, which has no duplicates.

    >>> supremum(["a", "b"], ["a", "c"])
    ('a', 'b', 'c')
    """
    x, y = require_names(x, "supremum", "x"), require_names(y, "supremum", "y")
    if not isinstance(what, str):
        raise TypeError(f"supremum: argument 'what' must be a str, got {type_name(what)} {_short(what)}")
    return _supremum(x, y, what)
