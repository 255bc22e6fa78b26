r"""Linear layouts: linear maps over GF(2) between named, power-of-two index spaces.

The idea
========
A GPU kernel holds a logical tensor spread over hardware: each element lives in some register of
some lane of some warp of some block. A *layout* answers "which element does this hardware slot
hold?"  Triton observed that every layout it needs -- blocked, MMA fragments, slices, XOR
swizzled shared memory, broadcasts -- is a *linear map over GF(2)* once each index is read as a
vector of bits:

    L : (register, lane, warp, block) -> (dim0, dim1, ...)

GF(2) is the field {0, 1} in which addition is XOR and multiplication is AND. Linearity means
``L(x ^ y) = L(x) ^ L(y)`` and ``L(0) = 0``, so ``L`` is known from its values on the unit
inputs. For an input dimension ``d`` of size ``2**n`` those are ``L(d = 1), L(d = 2), ...,
L(d = 2**(n-1))``: the *bases* of ``d``. Applying ``L`` to any input XORs the bases selected by
its set bits::

    L(d = 0b101) = L(d = 1) ^ L(d = 4)

Example (the layout from the project's seed document). With

    lane bases: (1, 1), (2, 2)        warp bases: (0, 1), (0, 2)

we get ``L(lane=3, warp=2) = (1,1) ^ (2,2) ^ (0,2) = (3, 1)``. The map is
``(lane, warp) -> (lane, lane ^ warp)``, four stored vectors defining all sixteen points.

Stacked side by side, the bases form a matrix whose columns are input bits and whose rows are
output bits (first output dimension in the low rows, low bits first); ``apply`` is the
matrix-vector product. Everything else is linear algebra on that matrix:

* **surjective** (every element is held somewhere): rank = number of output bits;
* **injective** (no element is held twice): rank = number of input bits; a zero basis is a
  *broadcast* -- flipping that input bit does not change which element is held;
* ``A.compose(B)`` is ``B o A``, the product ``B @ A``;
* ``A * B`` is the direct product: ``A`` takes the low bits of every shared dimension, ``B`` the
  high bits (the block-diagonal matrix, after interleaving shared dimensions);
* ``A.invert_and_compose(B)`` is ``B^-1 o A``: the ``C`` with ``B(C(x)) = A(x)``. If ``A`` is a
  register layout and ``B`` a shared-memory layout, ``C`` gives the shared-memory offset at which
  each register must be stored. When ``B`` is not injective ``C`` is not unique; we pick the
  solution Triton picks (see :meth:`LinearLayout.invert_and_compose`).

Dimensions are *named* and *ordered*. Order matters: it fixes which bits are minor when several
dimensions are flattened into one (:meth:`LinearLayout.flatten_ins`, :meth:`~LinearLayout.reshape_outs`).

Representation
==============
A :class:`LinearLayout` is an immutable value. Internally each basis is one packed integer (the
matrix column), with output dimension ``k`` occupying the bits just above those of dimensions
``< k``. Column arithmetic is therefore a single XOR of Python ints, with no width cap: layouts
may have any number of input or output bits (Triton stops at 64). ``bases`` unpacks on demand.

This module is pure Python (plus numpy for vectorised application) and never imports ``mlir``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import display
from ._packing import BoundedCache, field_moves_mover, support, units
from ._packing import join_dims as _join_dims
from ._packing import supremum as _supremum
from .arguments import (
    check_index_array,
    index_out_of_range,
    is_sequence,
    require_bool,
    require_int,
    require_ints,
    require_name,
    require_names,
    require_optional_name,
)
from .arguments import (
    short as _short,
)
from .arguments import (
    type_name as _type_name,
)
from .gf2 import EchelonBasis, pivot_columns
from .gf2 import rank as gf2_rank
from .limits import check_materialised
from .views import distributed_view, shared_view

__all__ = [
    "LinearLayout",
    "ColumnAction",
    "standard_out_dim_names",
    "identity_standard_nd",
    "product_1d",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "zeros_like",
    "supremum",
]

Basis = tuple[int, ...]
Bases = tuple[tuple[str, tuple[Basis, ...]], ...]

_first = operator.itemgetter(0)  # the name of a (name, size) dimension pair


def _paired(dims: tuple[tuple[str, int], ...], name: str) -> int | None:
    """The number paired with ``name`` in ``dims`` (a layout's ``(name, size)`` dimensions), or ``None``.
    A plain loop: these lookups sit on the hot path of every builder."""
    for n, value in dims:
        if n == name:
            return value
    return None


def _dim_value(dims: tuple[tuple[str, int], ...], name: str, kind: str) -> int:
    """The number paired with ``name`` in ``dims``; a ValueError naming the ``kind`` ("input" or
    "output") dimensions there are if it is not one of them."""
    value = _paired(dims, name)
    if value is None:
        raise ValueError(
            f"{_short(name)} is not an {kind} dimension of this layout; they are {_join_dims(map(_first, dims))}"
        )
    return value


def _log2_exact(size: int, what: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {_type_name(size)} {_short(size)}")
    size = int(size)
    if size < 1 or size & (size - 1):
        raise ValueError(f"{what} must be a power of two, got {size}")
    return size.bit_length() - 1


def _check_names(names: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(names)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} names must be strings, got {_type_name(name)} {_short(name)}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what} names must be distinct, got {list(names)}")
    return names


def _require_layout(value: object, method: str, argument: str) -> None:
    """API boundary: ``argument`` of ``method`` must be a LinearLayout (a TypeError naming both otherwise)."""
    if not isinstance(value, LinearLayout):
        raise TypeError(f"LinearLayout.{method}: argument '{argument}' must be a LinearLayout, got {_type_name(value)}")


def _require_names(value: object, method: str, argument: str) -> tuple[str, ...]:
    """API boundary: ``argument`` must be a sequence of dimension-name strings (a str, a mapping or a set is not)."""
    return require_names(value, method, argument)


def _require_builder_arguments(where: str, in_dim: object, out_dim: object, **sizes: object) -> None:
    """API boundary of the 1-d builders: two dimension names and integer sizes (TypeErrors naming them)."""
    if type(in_dim) is not str or type(out_dim) is not str:
        require_name(in_dim, where, "in_dim"), require_name(out_dim, where, "out_dim")
    for argument, size in sizes.items():
        if type(size) is not int:
            require_int(size, where, argument)


# ``_cache_apply`` after the first wide index (None before it); the second replaces it with the tables.
_APPLY_ONCE: tuple[Any, ...] = ((),)
_SET_BITS = tuple(tuple(i for i in range(8) if byte >> i & 1) for byte in range(256))  # byte -> its set bits


def _byte_positions(start: int) -> tuple[tuple[int, ...], ...]:
    """Per byte value ``v``, the columns ``start + i`` of its set bits ``i`` (``_SET_BITS`` moved by
    ``start``): ``v``'s tuple is its lowest set bit's column followed by ``v ^ lowest``'s tuple.

    >>> _byte_positions(3)[0b101]
    (3, 5)
    """
    table: list[tuple[int, ...]] = [()]
    for value in range(1, 256):
        lowest = value & -value
        table.append((start + lowest.bit_length() - 1, *table[value ^ lowest]))
    return tuple(table)


# apply's first-call path: ``_BYTE_POSITIONS[start][v]``, the columns a byte ``v`` of the dimension
# whose bases start at column ``start`` selects (a constant table: 32 starts x 256 bytes, ~2 ms at import).
_BYTE_POSITIONS = tuple(map(_byte_positions, range(32)))


def _xor_set_bits(cols: tuple[int, ...], start: int, value: int) -> int:
    """XOR of ``cols[start + i]`` over the set bits ``i`` of ``value >= 0``, a byte at a time."""
    packed = 0
    while value:
        for bit in _SET_BITS[value & 0xFF]:
            packed ^= cols[start + bit]
        value >>= 8
        start += 8
    return packed


def _require_index(value: object, name: str) -> None:
    """API boundary of ``apply``: a key is a dimension name, an input an integer or an integer numpy
    array (never bool or float)."""
    if not isinstance(name, str):
        raise _bad_apply_key(name)
    if isinstance(value, np.ndarray):
        if value.dtype == np.bool_ or not np.issubdtype(value.dtype, np.integer):
            raise TypeError(
                f"LinearLayout.apply: argument 'ins': input '{name}' must be an integer array, got dtype {value.dtype}"
            )
    elif isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"LinearLayout.apply: argument 'ins': input '{name}' must be an integer, "
            f"got {_type_name(value)} {_short(value)}"
        )


def _bad_apply_key(key: object) -> TypeError:
    return TypeError(
        f"LinearLayout.apply: argument 'ins' must have dimension names (str) as keys, got {_type_name(key)} {_short(key)}"
    )


def _require_coordinates(items: Sequence[tuple[object, Sequence[tuple]]]) -> None:
    """API boundary of ``from_bases``: every coordinate of every basis an integer (not bool)."""
    for in_dim, bases in items:
        for basis in bases:
            for value in basis:
                if type(value) is not int and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
                    raise TypeError(
                        f"from_bases: argument 'bases': basis coordinates must be integers, got "
                        f"{_type_name(value)} {_short(value)} in input dimension {_short(in_dim)}"
                    )


def _bases_items(bases: object) -> tuple[tuple[str, tuple], ...]:
    """API boundary of ``from_bases``: a mapping or a sequence of (name, bases) pairs of basis lists."""
    if isinstance(bases, Mapping):
        items = tuple(bases.items())
    elif not is_sequence(bases):
        raise TypeError(
            f"from_bases: argument 'bases' must be a mapping or a sequence of (name, bases) pairs, "
            f"got {_type_name(bases)}"
        )
    else:
        items = tuple(bases)
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"from_bases: argument 'bases' must hold (name, bases) pairs, got {_short(item)}")
        name, in_bases = item
        if not is_sequence(in_bases):
            raise TypeError(
                f"from_bases: the bases of input dimension {_short(name)} must be a sequence of bases, "
                f"got {_type_name(in_bases)}"
            )
        for basis in in_bases:
            if type(basis) is tuple or type(basis) is list:  # the common case, without the ABC check
                continue
            if not is_sequence(basis):
                raise TypeError(
                    f"from_bases: a basis of input dimension {_short(name)} must be a sequence of "
                    f"integers, got {_type_name(basis)} {_short(basis)}"
                )
    return items


def _plain_rows(bases: Any, count: int) -> tuple[list, list] | None:
    """The in-dims and rows of plain ``(str, bases)`` pairs whose bases are ``count``-tuples or
    lists (read, never kept), else ``None``."""
    ins = []
    rows: list = []
    for item in bases:
        if type(item) is not tuple or len(item) != 2 or type(item[0]) is not str or type(item[1]) not in (tuple, list):
            return None
        for row in item[1]:
            if (type(row) is not tuple and type(row) is not list) or len(row) != count:
                return None
        rows.extend(item[1])
        ins.append((item[0], len(item[1])))
    return ins, rows


def _plain_sizes(out_dim_sizes: Any, rows: list, count: int) -> list[int] | None:
    """The output sizes :func:`_from_plain_bases` packs into: given (plain powers of two) or inferred."""
    if out_dim_sizes is None:
        tops = [0] * count
        for row in rows:
            for k, value in enumerate(row):
                if type(value) is not int:
                    return None  # the checked path converts numpy integers and names anything else
                tops[k] |= value
        return [1 << top.bit_length() for top in tops]
    if type(out_dim_sizes) not in (tuple, list) or len(out_dim_sizes) != count:
        return None
    for size in out_dim_sizes:
        if type(size) is not int or size < 1 or size & (size - 1):
            return None
    return list(out_dim_sizes)


def _from_plain_bases(bases: Any, out_dim_names: Any, out_dim_sizes: Any) -> LinearLayout | None:
    """:meth:`LinearLayout.from_bases` for the common, well-formed input -- a list or tuple of
    ``(str, bases)`` pairs whose bases are tuples or lists of non-negative ``int`` inside the sizes,
    and distinct ``str`` names -- packed in one pass; ``None`` for anything else (numpy integers,
    wrong types and values: the checked path converts them or names the problem)."""
    if type(bases) not in (list, tuple) or type(out_dim_names) not in (list, tuple):
        return None
    names: tuple[str, ...] = tuple(out_dim_names)
    count = len(names)
    for name in names:
        if type(name) is not str:
            return None
    found = _plain_rows(bases, count)
    if found is None or len(set(names)) != count:
        return None
    ins, rows = found
    if len({name for name, _ in ins}) != len(ins):
        return None
    sizes = _plain_sizes(out_dim_sizes, rows, count)
    if sizes is None:
        return None
    cols = _packed_rows(rows, sizes)
    if cols is None:
        return None
    return LinearLayout._make(tuple(ins), tuple(zip(names, sizes)), tuple(cols))


def _packed_rows(rows: list, sizes: list[int]) -> list[int] | None:
    """Each row (one coordinate per output) packed into one column, or ``None`` if a coordinate is
    not a plain ``int`` inside its output's size.  Two and three outputs, the common cases (2-D
    and 3-D tensors), without the general loop (3 us instead of 8 us for 20 rows of three)."""
    if len(sizes) == 2:
        low, high = sizes
        for a, b in rows:
            if type(a) is not int or type(b) is not int or not 0 <= a < low or not 0 <= b < high:
                return None
        shift = low.bit_length() - 1
        return [a | b << shift for a, b in rows]
    if len(sizes) == 3:
        low, middle, high = sizes
        for a, b, c in rows:
            if type(a) is not int or type(b) is not int or type(c) is not int:
                return None
            if not 0 <= a < low or not 0 <= b < middle or not 0 <= c < high:
                return None
        middle_at = low.bit_length() - 1
        high_at = middle_at + middle.bit_length() - 1
        return [a | b << middle_at | c << high_at for a, b, c in rows]
    fields = []
    shift = 0
    for size in sizes:
        fields.append((size, shift))
        shift += size.bit_length() - 1
    cols = []
    for row in rows:
        col = 0
        for value, (size, at) in zip(row, fields):
            if type(value) is not int or value < 0 or value >= size:
                return None
            col |= value << at
        cols.append(col)
    return cols


def _plain_dims(dims: Any) -> tuple[tuple[str, int], ...] | None:
    """``dims`` as a tuple if it is a list or tuple of ``(str, power of two)`` tuples with distinct
    names (the common, well-formed input of the reshapes), else ``None``."""
    if type(dims) is not list and type(dims) is not tuple:
        return None
    for pair in dims:
        if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not int:
            return None
        if pair[1] < 1 or pair[1] & (pair[1] - 1):
            return None
    if len(set(map(_first, dims))) != len(dims):
        return None
    return tuple(dims)


def _require_dim_sizes(value: object, method: str, argument: str) -> tuple[tuple[str, int], ...]:
    """API boundary: ``argument`` must be a sequence of (name, size) pairs."""
    if not is_sequence(value):
        raise TypeError(
            f"LinearLayout.{method}: argument '{argument}' must be a sequence of (name, size) pairs, "
            f"got {_type_name(value)}"
        )
    pairs = tuple(value)
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(
                f"LinearLayout.{method}: argument '{argument}' must hold (name, size) pairs, got {_short(pair)}"
            )
        require_name(pair[0], f"LinearLayout.{method}", argument)
        require_int(pair[1], f"LinearLayout.{method}", argument)
    return pairs


def _require_sizes(sizes: object) -> None:
    if not is_sequence(sizes):
        raise TypeError(f"from_bases: argument 'out_dim_sizes' must be a sequence of integers, got {_type_name(sizes)}")
    require_ints(sizes, "from_bases", "out_dim_sizes")


class LinearLayout:
    """A linear map over GF(2) from named input dimensions to named output dimensions.

    Construct with :meth:`from_bases`, :meth:`identity_1d`, :meth:`strided_1d`,
    :meth:`zeros_1d` or :meth:`empty`, and combine with ``*``, :meth:`compose` and
    :meth:`invert_and_compose`. Every method returns a new layout; none mutates its operands.
    """

    __slots__ = ("_ins", "_outs", "_cols", "_cache_bases", "_cache_rank", "_cache_hash", "_cache_apply")
    # Lazily filled per-object caches (None until first needed).
    _cache_bases: Any
    _cache_rank: int | None
    _cache_hash: int | None
    _cache_apply: tuple[Any, ...] | None  # None, _APPLY_ONCE, or _apply_tables() (see _xor_wide)

    _ins: tuple[tuple[str, int], ...]  # (name, number of bases); the size is 2**number.
    _outs: tuple[tuple[str, int], ...]  # (name, size)
    _cols: tuple[int, ...]  # one packed column per input bit, in input-dimension order

    # ------------------------------------------------------------------ construction

    @classmethod
    def _make(
        cls, ins: tuple[tuple[str, int], ...], outs: tuple[tuple[str, int], ...], cols: tuple[int, ...]
    ) -> LinearLayout:
        """Build without validation; callers guarantee the invariants."""
        self = object.__new__(cls)
        self._ins = ins
        self._outs = outs
        self._cols = cols
        self._cache_bases = None
        self._cache_rank = None
        self._cache_hash = None
        self._cache_apply = None
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """``LinearLayout()`` is the empty layout, as in Triton's binding; nothing else is accepted."""
        if args or kwargs:
            raise TypeError(
                "construct a LinearLayout with LinearLayout.from_bases, identity_1d, strided_1d, "
                "zeros_1d or empty; LinearLayout() takes no arguments"
            )
        self._ins, self._outs, self._cols = (), (), ()
        self._cache_bases = self._cache_rank = self._cache_hash = self._cache_apply = None

    @staticmethod
    def from_bases(
        bases: Mapping[str, Sequence[Sequence[int]]] | Sequence[tuple[str, Sequence[Sequence[int]]]],
        out_dim_names: Sequence[str],
        out_dim_sizes: Sequence[int] | None = None,
        require_surjective: bool = True,
    ) -> LinearLayout:
        """Build a layout from its bases.

        ``bases`` maps each input dimension, in order, to its list of bases; basis ``i`` of
        dimension ``d`` is ``L(d = 2**i)`` and has one coordinate per output dimension.

        When ``out_dim_sizes`` is omitted each size is inferred as the smallest power of two
        strictly greater than every coordinate used (so at least 1).

        Requires: distinct names; every basis has ``len(out_dim_names)`` non-negative integer
        coordinates, each below its dimension's size; sizes are powers of two; if
        ``require_surjective``, the bases span the whole output space.
        Postcondition: ``L.bases == bases`` and ``L.out_dims == zip(out_dim_names, sizes)``.

        >>> LinearLayout.from_bases([("lane", [[1, 1], [2, 2]]), ("warp", [[0, 1], [0, 2]])],
        ...                         ["dim0", "dim1"]).apply({"lane": 3, "warp": 2})
        {'dim0': 3, 'dim1': 1}
        """
        if type(require_surjective) is not bool:
            require_bool(require_surjective, "LinearLayout.from_bases", "require_surjective")
        layout = _from_plain_bases(bases, out_dim_names, out_dim_sizes)
        if layout is None:  # not plain tuples of ints: the checks below say what is wrong, or convert
            layout = LinearLayout._from_bases_checked(bases, out_dim_names, out_dim_sizes)
        if require_surjective and not layout.is_surjective():
            raise ValueError(
                "layout must be surjective (every output coordinate reached by some input), "
                f"but its bases span only 2**{layout.rank()} of the 2**"
                f"{layout.get_total_out_dim_size_log2()} outputs:{layout}"
            )
        return layout

    @staticmethod
    def _from_bases_checked(
        bases: Mapping[str, Sequence[Sequence[int]]] | Sequence[tuple[str, Sequence[Sequence[int]]]],
        out_dim_names: Sequence[str],
        out_dim_sizes: Sequence[int] | None,
    ) -> LinearLayout:
        """:meth:`from_bases` on any input: every argument checked and converted (numpy integers, lists)."""
        items = _bases_items(bases)
        _check_names(_require_names([name for name, _ in items], "from_bases", "bases"), "input dimension")
        out_names = _check_names(_require_names(out_dim_names, "from_bases", "out_dim_names"), "output dimension")
        if out_dim_sizes is not None:
            _require_sizes(out_dim_sizes)
        num_outs = len(out_names)
        rows: list[tuple[int, ...]] = []
        ins = []
        converted_items = [(name, [tuple(basis) for basis in in_bases]) for name, in_bases in items]
        _require_coordinates(converted_items)  # a wrong type is a TypeError before any length is a ValueError
        for name, converted in converted_items:
            for basis in converted:
                if len(basis) != num_outs:
                    raise ValueError(
                        f"basis {_short(list(basis))} of input dimension '{name}' has {len(basis)} "
                        f"coordinates, but there are {num_outs} output dimensions {_join_dims(out_names)}"
                    )
            rows.extend(converted)
            ins.append((name, len(converted)))
        # Validate column by column: one pass per output dimension instead of per coordinate.
        by_dim = [list(column) for column in zip(*rows)] if rows else [[] for _ in range(num_outs)]
        for k, column in enumerate(by_dim):
            if column and set(map(type, column)) != {int}:
                by_dim[k] = column = [int(v) for v in column]  # integers: checked above
            if column and min(column) < 0:
                raise ValueError(
                    f"basis coordinates must be non-negative, got {min(column)} for output dimension '{out_names[k]}'"
                )
        if out_dim_sizes is None:
            sizes = [1 << max(column).bit_length() if column else 1 for column in by_dim]
        else:
            sizes = [
                int(s) if isinstance(s, (int, np.integer)) and not isinstance(s, bool) else s for s in out_dim_sizes
            ]
            if len(sizes) != num_outs:
                raise ValueError(f"got {len(sizes)} output dimension sizes for {num_outs} output dimensions")
        cols = [0] * len(rows)
        shift = 0
        for name, size, column in zip(out_names, sizes, by_dim):
            width = _log2_exact(size, f"size of output dimension '{name}'")
            if column and max(column) >= size:
                position = next(p for p, value in enumerate(column) if value >= size)
                raise ValueError(
                    f"basis coordinate {column[position]} of basis {list(rows[position])} is out of "
                    f"range for output dimension '{name}' of size {size}"
                )
            cols = [c | (v << shift) for c, v in zip(cols, column)] if shift else column
            shift += width
        return LinearLayout._make(
            tuple(ins), tuple(zip(out_names, sizes)), tuple(cols) if num_outs else (0,) * len(rows)
        )

    @staticmethod
    def empty() -> LinearLayout:
        """The layout with no dimensions: the unit of ``*``.

        Formula: the map from the one-point space to itself.
        Requires: nothing.
        Postcondition: ``empty() * L == L * empty() == L``.

        >>> LinearLayout.empty() * LinearLayout.identity_1d(4, "i", "o") == LinearLayout.identity_1d(4, "i", "o")
        True
        """
        return _EMPTY

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``L(in_dim = x) = (out_dim = x)`` for ``x < size``. Size 0 gives :meth:`empty`.

        Formula: ``bases[in_dim][i] = (2**i,)``.
        Requires: ``size`` is 0 or a power of two.
        Postcondition: invertible, and its own inverse up to renaming.

        >>> LinearLayout.identity_1d(8, "i", "o").bases
        (('i', ((1,), (2,), (4,))),)
        """
        if type(in_dim) is not str or type(out_dim) is not str or type(size) is not int:
            _require_builder_arguments("LinearLayout.identity_1d", in_dim, out_dim, size=size)
        if size == 0:
            return _EMPTY
        n = _log2_exact(size, "identity_1d size")
        layout = LinearLayout._make(((in_dim, n),), ((out_dim, 1 << n),), units(n))
        layout._cache_rank = n  # distinct unit columns: known without elimination, and carried by `*`
        return layout

    @staticmethod
    def strided_1d(size: int, stride: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``L(in_dim = x) = (out_dim = stride * x)``, into an output of size ``size * stride``.

        Requires: ``size`` and ``stride`` are powers of two (or ``size`` is 0, giving :meth:`empty`).
        Postcondition: not surjective unless ``stride == 1``.

        >>> LinearLayout.strided_1d(4, 2, "i", "o").bases, LinearLayout.strided_1d(4, 2, "i", "o").out_dims
        ((('i', ((2,), (4,))),), (('o', 8),))
        """
        _require_builder_arguments("LinearLayout.strided_1d", in_dim, out_dim, size=size, stride=stride)
        s = _log2_exact(stride, "strided_1d stride")
        if size == 0:
            return _EMPTY
        n = _log2_exact(size, "strided_1d size")
        return LinearLayout._make(((in_dim, n),), ((out_dim, 1 << (n + s)),), tuple(1 << (i + s) for i in range(n)))

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> LinearLayout:
        """``L(in_dim = x) = (out_dim = 0)``: every input broadcasts to element 0.

        Formula: ``bases[in_dim][i] = (0,)``.
        Requires: ``size`` (or 0, giving :meth:`empty`) and ``out_dim_size`` are powers of two.
        Postcondition: rank 0; surjective only when ``out_dim_size == 1``.

        >>> LinearLayout.zeros_1d(4, "i", "o").bases
        (('i', ((0,), (0,))),)
        """
        _require_builder_arguments("LinearLayout.zeros_1d", in_dim, out_dim, size=size, out_dim_size=out_dim_size)
        _log2_exact(out_dim_size, "zeros_1d out_dim_size")
        if size == 0:
            return _EMPTY
        n = _log2_exact(size, "zeros_1d size")
        layout = LinearLayout._make(((in_dim, n),), ((out_dim, int(out_dim_size)),), (0,) * n)
        layout._cache_rank = 0
        return layout

    # ------------------------------------------------------------------ value semantics

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._cols == other._cols and self._ins == other._ins and self._outs == other._outs

    def __hash__(self) -> int:
        if self._cache_hash is None:
            self._cache_hash = hash((self._ins, self._outs, self._cols))
        return self._cache_hash

    def __reduce__(self) -> tuple[Callable[..., LinearLayout], tuple[object, ...]]:
        return (LinearLayout._make, (self._ins, self._outs, self._cols))

    def __str__(self) -> str:
        """Triton's ``LinearLayout::toString``, byte for byte."""
        outs = "[" + ", ".join(f"{name} (size {size})" for name, size in self._outs) + "]"
        if not self._ins:
            return "\n(empty layout)" if not self._outs else f"\n(empty layout with out-dims {outs})"
        lines = ["\n"]
        for name, in_bases in self.bases:
            if not in_bases:
                lines.append(f" - {name} is a size 1 dimension\n")
                continue
            entries = [f"{name}={1 << i} -> ({', '.join(map(str, b))})" for i, b in enumerate(in_bases)]
            lines.append(" - " + "\n   ".join(entries) + "\n")
        lines.append(f"where out dims are: {outs}")
        return "".join(lines)

    def __repr__(self) -> str:
        """Short: the dimensions and sizes only, e.g. ``LinearLayout(register=2, lane=32 -> dim0=64)``;
        ``str()`` lists every basis (Triton's ``toString``)."""
        ins = ", ".join(f"{name}={self.get_in_dim_size(name)}" for name in self.get_in_dim_names())
        outs = ", ".join(f"{name}={size}" for name, size in self._outs)
        return f"LinearLayout({ins} -> {outs})"

    # Jupyter: a picture when linear_layout.draw has registered a renderer (core.display).
    _repr_svg_ = display.repr_svg
    _repr_html_ = display.repr_html

    # ------------------------------------------------------------------ dimension access

    @property
    def bases(self) -> Bases:
        """``((in_dim, (basis, ...)), ...)``; basis ``i`` of ``d`` is ``L(d = 2**i)`` as a tuple."""
        if self._cache_bases is None:
            fields = self._out_fields()
            result = []
            cols = iter(self._cols)
            for name, count in self._ins:
                result.append(
                    (
                        name,
                        tuple(
                            tuple((col >> shift) & mask for shift, mask in fields)
                            for col in (next(cols) for _ in range(count))
                        ),
                    )
                )
            self._cache_bases = tuple(result)
        return self._cache_bases

    @property
    def out_dims(self) -> tuple[tuple[str, int], ...]:
        """``((out_dim, size), ...)`` in order."""
        return self._outs

    @property
    def num_in_dims(self) -> int:
        return len(self._ins)

    @property
    def num_out_dims(self) -> int:
        return len(self._outs)

    # Plain loops and C-level maps below, not generator expressions: these accessors sit on the
    # hot path of every builder, where a generator's frame costs more than the work it does.
    def get_in_dim_names(self) -> tuple[str, ...]:
        return tuple(map(_first, self._ins))

    def get_out_dim_names(self) -> tuple[str, ...]:
        return tuple(map(_first, self._outs))

    def has_in_dim(self, name: str) -> bool:
        if type(name) is not str:
            require_name(name, "LinearLayout.has_in_dim", "name")
        return _paired(self._ins, name) is not None

    def has_out_dim(self, name: str) -> bool:
        if type(name) is not str:
            require_name(name, "LinearLayout.has_out_dim", "name")
        return _paired(self._outs, name) is not None

    def get_in_dim_size_log2(self, name: str) -> int:
        if type(name) is not str:
            require_name(name, "LinearLayout.get_in_dim_size_log2", "name")
        return _dim_value(self._ins, name, "input")

    def get_in_dim_size(self, name: str) -> int:
        if type(name) is not str:
            require_name(name, "LinearLayout.get_in_dim_size", "name")
        return 1 << _dim_value(self._ins, name, "input")

    def get_out_dim_size(self, name: str) -> int:
        if type(name) is not str:
            require_name(name, "LinearLayout.get_out_dim_size", "name")
        return _dim_value(self._outs, name, "output")

    def get_out_dim_size_log2(self, name: str) -> int:
        if type(name) is not str:
            require_name(name, "LinearLayout.get_out_dim_size_log2", "name")
        return _dim_value(self._outs, name, "output").bit_length() - 1

    def get_total_in_dim_size_log2(self) -> int:
        return len(self._cols)

    def get_total_in_dim_size(self) -> int:
        return 1 << len(self._cols)

    def get_total_out_dim_size_log2(self) -> int:
        total = 0
        for _, size in self._outs:
            total += size.bit_length() - 1
        return total

    def get_total_out_dim_size(self) -> int:
        return 1 << self.get_total_out_dim_size_log2()

    def get_out_dim_index(self, name: str) -> int:
        if type(name) is not str:
            require_name(name, "LinearLayout.get_out_dim_index", "name")
        for k, (n, _) in enumerate(self._outs):
            if n == name:
                return k
        raise ValueError(
            f"{_short(name)} is not an output dimension of this layout; they are {_join_dims(self.get_out_dim_names())}"
        )

    def get_basis(self, in_dim: str, pos: int, out_dim: str | None = None) -> Any:
        """``L(in_dim = 2**pos)``: a tuple, or its ``out_dim`` coordinate when that is given."""
        in_dim = require_name(in_dim, "LinearLayout.get_basis", "in_dim")
        pos = require_int(pos, "LinearLayout.get_basis", "pos")
        out_dim = require_optional_name(out_dim, "LinearLayout.get_basis", "out_dim")
        count = self.get_in_dim_size_log2(in_dim)
        if not 0 <= pos < count:
            raise ValueError(f"basis index {pos} is out of range for '{in_dim}', which has {count} bases")
        basis = dict(self.bases)[in_dim][pos]
        return basis if out_dim is None else basis[self.get_out_dim_index(out_dim)]

    def get_matrix_view(self) -> tuple[tuple[int, ...], ...]:
        """The GF(2) matrix as Triton orients it: one row per output bit, one column per input bit.

        Rows run over output dimensions in order, low bits first; columns likewise over inputs.

        >>> LinearLayout.from_bases([("i", [[0, 1], [1, 0]])], ["a", "b"]).get_matrix_view()
        ((0, 1), (1, 0))
        """
        rows = self.get_total_out_dim_size_log2()
        return tuple(tuple((col >> r) & 1 for col in self._cols) for r in range(rows))

    def get_distributed_view(self, use_hw_point_of_view: bool) -> str:
        """Triton's text picture of a distributed layout (``register, lane, warp, block`` inputs).

        With ``use_hw_point_of_view`` the picture lists, per warp, the tensor element each
        (lane, register) holds; otherwise it is the tensor, each element showing the threads and
        registers that hold it. Byte-identical to ``triton.tools.LinearLayout.get_distributed_view``.
        """
        require_bool(use_hw_point_of_view, "LinearLayout.get_distributed_view", "use_hw_point_of_view")
        return distributed_view(self, use_hw_point_of_view)

    def get_shared_view(self, use_hw_point_of_view: bool) -> str:
        """Triton's text picture of a shared layout (``offset, block`` inputs).

        Byte-identical to ``triton.tools.LinearLayout.get_shared_view``.
        """
        require_bool(use_hw_point_of_view, "LinearLayout.get_shared_view", "use_hw_point_of_view")
        return shared_view(self, use_hw_point_of_view)

    # ------------------------------------------------------------------ internal helpers

    def _out_fields(self) -> list[tuple[int, int]]:
        """``(shift, mask)`` of each output dimension inside a packed column."""
        fields = []
        shift = 0
        for _, size in self._outs:
            fields.append((shift, size - 1))
            shift += size.bit_length() - 1
        return fields

    def _out_shift(self) -> dict[str, tuple[int, int]]:
        """Output name -> (shift, width)."""
        result = {}
        shift = 0
        for name, size in self._outs:
            width = size.bit_length() - 1
            result[name] = (shift, width)
            shift += width
        return result

    def _in_start(self, name: str) -> int:
        start = 0
        for n, count in self._ins:
            if n == name:
                return start
            start += count
        raise ValueError(
            f"{_short(name)} is not an input dimension of this layout; they are {_join_dims(self.get_in_dim_names())}"
        )

    def _in_slices(self) -> dict[str, tuple[int, int]]:
        """Input name -> (first column, number of columns)."""
        result = {}
        start = 0
        for name, count in self._ins:
            result[name] = (start, count)
            start += count
        return result

    def _cols_of(self, name: str) -> tuple[int, ...]:
        start, count = self._in_slices()[name]
        return self._cols[start : start + count]

    def _repacker(self, target_fields: Mapping[str, tuple[int, int]]) -> Callable[[Sequence[int]], Any]:
        """A function moving a sequence of our packed columns into another packing.

        ``target_fields`` maps output names to their ``(shift, width)`` in the target; our
        coordinates must fit the target widths. Dimensions missing from it are dropped.
        """
        return field_moves_mover(self._outs, target_fields)

    def _check_same_in_dims(self, dims: Sequence[str], what: str) -> None:
        if sorted(dims) != sorted(self.get_in_dim_names()) or len(set(dims)) != len(dims):
            raise ValueError(
                f"{what}: expected a permutation of the input dimensions "
                f"{_join_dims(self.get_in_dim_names())}, got {_join_dims(dims)}"
            )

    # ------------------------------------------------------------------ predicates

    def rank(self) -> int:
        """Rank of the GF(2) matrix: ``log2`` of the number of distinct outputs."""
        if self._cache_rank is None:
            self._cache_rank = gf2_rank(self._cols)
        return self._cache_rank

    def is_surjective(self) -> bool:
        """Every output is reached: ``rank == total output bits``.

        >>> LinearLayout.strided_1d(4, 2, "i", "o").is_surjective()
        False
        """
        return self.rank() == self.get_total_out_dim_size_log2()

    def is_injective(self) -> bool:
        """No two inputs map to the same output: ``rank == total input bits``.

        >>> LinearLayout.zeros_1d(2, "i", "o").is_injective()
        False
        """
        return self.rank() == len(self._cols)

    def is_invertible(self) -> bool:
        """Surjective and injective, i.e. a square matrix of full rank.

        >>> LinearLayout.identity_1d(4, "i", "o").is_invertible()
        True
        """
        return self.is_surjective() and len(self._cols) == self.get_total_out_dim_size_log2()

    # ------------------------------------------------------------------ application

    def apply(self, ins: Mapping[str, Any]) -> dict[str, Any]:
        """``L(ins)``: XOR of the bases selected by the set bits of each input.

        ``ins`` names every input dimension once (any order). Values are integers, or numpy
        integer arrays of one common shape, in which case every output is an ``int64`` array of
        that shape (vectorised; the output dimensions must then fit in 63 bits). Every input must lie
        in ``[0, size)`` of its dimension: a negative or larger one is a ValueError naming the
        dimension and its size (Triton's ``LinearLayout::apply`` masks such bits off silently; our
        ``ll.apply`` op refuses them too).

        Formula: ``out = XOR_{d, i : bit i of ins[d]} bases[d][i]``.
        Requires: exactly this layout's input dimensions as keys; ``0 <= ins[d] < size(d)``.
        Postcondition: linear, ``apply(x ^ y) == apply(x) ^ apply(y)``; ``apply(0) == 0``; keys in
        output-dimension order.

        >>> L = LinearLayout.from_bases([("lane", [[1, 1], [2, 2]]), ("warp", [[0, 1], [0, 2]])], ["r", "c"])
        >>> L.apply({"lane": 3, "warp": 2})
        {'r': 3, 'c': 1}
        """
        if type(ins) is not dict and not isinstance(ins, Mapping):
            raise TypeError(
                f"LinearLayout.apply: argument 'ins' must be a mapping from input dimension names to "
                f"integers, got {_type_name(ins)}"
            )
        dims = self._ins
        if len(ins) == len(dims):
            packed = 0
            start = 0
            cols = self._cols
            try:
                for name, count in dims:
                    value = ins[name]
                    if type(value) is not int or value >> count:  # also true for a negative value
                        break
                    if value < 256:
                        if value:  # IndexError for a dimension starting past the table
                            for position in _BYTE_POSITIONS[start][value]:
                                packed ^= cols[position]
                    else:
                        packed ^= self._xor_wide(start, value)
                    start += count
                else:
                    result = {}
                    for name, size in self._outs:  # self._unpack(packed), inlined
                        result[name] = packed % size
                        packed //= size
                    return result
            except KeyError:
                pass
            except IndexError:
                return self._apply_past_positions(ins)
        return self._apply_checked(ins)

    def _apply_past_positions(self, ins: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`apply` on plain integers when a dimension starts past ``_BYTE_POSITIONS`` (more
        than 32 input bits): indices below 256 bit by bit, wider ones through :meth:`_xor_wide`."""
        packed = 0
        start = 0
        for name, count in self._ins:
            value = ins.get(name)
            if type(value) is not int or value >> count:
                return self._apply_checked(ins)  # names the wrong key, type or value
            packed ^= self._xor_wide(start, value) if value >> 8 else _xor_set_bits(self._cols, start, value)
            start += count
        return self._unpack(packed)

    def _xor_wide(self, start: int, value: int) -> int:
        """The packed image of ``value >= 256`` in the input dimension whose bases start at column
        ``start``: bit by bit the first time, then one lookup per byte in tables built on the
        second call and kept (``_cache_apply``: per start column, the dimension's byte tables).
        """
        tables = self._cache_apply
        if tables is None:
            self._cache_apply = _APPLY_ONCE
            return _xor_set_bits(self._cols, start, value)
        if tables is _APPLY_ONCE:
            tables = self._cache_apply = self._apply_tables()
        packed = 0
        for table in tables[start] or ():  # every dimension's first column has its tables
            packed ^= table[value & 0xFF]
            value >>= 8
        return packed

    def _unpack(self, packed: int) -> dict[str, int]:
        """A packed output point as ``{out name: coordinate}``, in output-dimension order."""
        result = {}
        for name, size in self._outs:
            result[name] = packed & size - 1
            packed //= size  # sizes are powers of two: a shift past this dimension's bits
        return result

    def _apply_checked(self, ins: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`apply` with every argument check, bit by bit: arrays, numpy integer scalars and the
        errors (a wrong key, type or range raises the TypeError/ValueError that names it)."""
        if self._apply_inputs_are_arrays(ins, frozenset(map(_first, self._ins))):
            return self._apply_arrays(ins)
        packed = 0
        start = 0
        for name, count in self._ins:
            value = operator.index(ins[name])
            if not 0 <= value < 1 << count:
                raise index_out_of_range("LinearLayout.apply", name, value, 1 << count)
            packed ^= _xor_set_bits(self._cols, start, value)
            start += count
        return self._unpack(packed)

    def _apply_inputs_are_arrays(self, ins: Mapping[str, Any], names: frozenset[str]) -> bool:
        """Check the inputs of :meth:`apply`; return whether they are numpy arrays."""
        arrays = False
        for name, value in ins.items():
            if type(value) is not int:  # plain ints need no check
                _require_index(value, name)
                arrays = arrays or isinstance(value, np.ndarray)
        if len(ins) != len(names) or not names.issuperset(ins):
            for key in ins:
                if not isinstance(key, str):
                    raise _bad_apply_key(key)
            raise ValueError(
                f"apply needs exactly the input dimensions {_join_dims(self.get_in_dim_names())}, got {_join_dims(ins)}"
            )
        return arrays

    def _apply_tables(self) -> tuple[tuple[tuple[int, ...], ...] | None, ...]:
        """Indexed by the first column of each input dimension: one 256-entry XOR table per byte of
        the dimension's index (None at the other columns).

        A wide index is then one lookup per byte instead of one XOR per set bit.
        """
        tables: list[tuple[tuple[int, ...], ...] | None] = [None] * (len(self._cols) + 1)
        start = 0
        for _, count in self._ins:
            per_byte = []
            for low in range(0, count, 8):
                table = [0]
                for col in self._cols[start + low : start + min(low + 8, count)]:
                    table += [entry ^ col for entry in table]
                per_byte.append(tuple(table * (256 // len(table))))  # pad to 256: one lookup per byte
            tables[start] = tuple(per_byte)
            start += count
        return tuple(tables)

    def _apply_arrays(self, ins: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if self.get_total_out_dim_size_log2() > 63 and any(size > 1 << 63 for _, size in self._outs):
            raise ValueError("vectorised apply needs every output dimension to fit in 63 bits")
        arrays = {name: np.asarray(value) for name, value in ins.items()}
        for name, count in self._ins:
            check_index_array("LinearLayout.apply", name, arrays[name], 1 << count)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        outs = [np.zeros(shape, dtype=np.int64) for _ in self._outs]
        for name, in_bases in self.bases:
            values = arrays[name].astype(np.int64, copy=False)
            for i, basis in enumerate(in_bases):
                if not any(basis):
                    continue
                selected = ((values >> i) & 1).astype(bool)
                for out, coordinate in zip(outs, basis):
                    if coordinate:
                        out ^= np.where(selected, coordinate, 0)
        return {name: out for (name, _), out in zip(self._outs, outs)}

    def tabulate(self) -> np.ndarray:
        """Outputs for every input at once: an array of shape ``(total in size, num outs)``.

        The dtype is ``int64``, or ``object`` (Python ints) when the outputs need more than 63 bits.

        Row ``x`` holds ``L`` of the input whose flattened index is ``x``: the first input
        dimension occupies the lowest bits of ``x`` (the order of :meth:`flatten_ins`). Built by
        doubling -- rows ``[2**k, 2**(k+1))`` are rows ``[0, 2**k)`` XOR column ``k`` -- so it costs
        one XOR per output element.

        Requires: nothing (memory grows as the total input size).
        Postcondition: ``tabulate()[x, k] == apply(unflatten(x))[out k]`` for all ``x``.

        >>> LinearLayout.from_bases([("i", [[1], [3]])], ["o"]).tabulate()[:, 0].tolist()
        [0, 1, 3, 2]
        """
        check_materialised(1 << len(self._cols), "tabulate")
        fields = self._out_fields()
        if self.get_total_out_dim_size_log2() <= 63:
            return self._tabulate_packed(fields)
        # Output dimensions wider than int64: the same doubling on Python ints (dtype=object).
        table = np.zeros((1, len(self._outs)), dtype=object)
        for _, in_bases in self.bases:
            for basis in in_bases:
                table = np.concatenate([table, table ^ np.array(basis, dtype=object)])
        return table

    def _tabulate_packed(self, fields: list[tuple[int, int]]) -> np.ndarray:
        """:meth:`tabulate` when the packed outputs fit in an ``int64``.

        Doubles a table of packed columns in place, then unpacks the output fields, lowest first,
        shifting the packed table in place between fields: two arrays in all and no temporaries,
        so a first call on a fresh layout costs what a repeated one does.
        """
        packed = np.empty(1 << len(self._cols), dtype=np.int64)
        packed[0] = 0
        for k, col in enumerate(self._cols):
            np.bitwise_xor(packed[: 1 << k], col, out=packed[1 << k : 2 << k])
        if len(fields) == 1 and fields[0][0] == 0:
            np.bitwise_and(packed, fields[0][1], out=packed)
            return packed.reshape(-1, 1)
        table = np.empty((packed.size, len(fields)), dtype=np.int64)
        shifted = 0
        for j, (shift, mask) in enumerate(fields):
            if shift != shifted:
                np.right_shift(packed, shift - shifted, out=packed)
                shifted = shift
            np.bitwise_and(packed, mask, out=table[:, j])
        return table

    # ------------------------------------------------------------------ algebra

    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """Direct product ``self * outer``: ``self`` takes the low bits, ``outer`` the high bits.

        Input and output dimensions are merged (dimensions of ``self`` first, shared ones kept
        in their common relative order). For a dimension ``d`` in both, ``d``'s bases are
        ``self``'s followed by ``outer``'s, and ``outer``'s coordinates on an output ``o`` of
        both are shifted left by ``log2(self.out_size(o))``. Sizes multiply.

        Formula: ``(A * B)(x_lo + 2**n x_hi) = A(x_lo) + B(x_hi) * A.out_sizes``.
        Requires: dimensions common to both appear in the same relative order in each.
        Postcondition: associative; ``empty()`` is the unit; surjective if both are.

        >>> (LinearLayout.identity_1d(2, "i", "o") * LinearLayout.identity_1d(4, "i", "o")).bases
        (('i', ((1,), (2,), (4,))),)
        """
        if not isinstance(outer, LinearLayout):
            return NotImplemented
        key = (self._ins, self._outs, outer._ins, outer._outs)
        plan = _PRODUCT_PLANS.get(key)
        if plan is None:
            if key not in _PRODUCT_SEEN:  # the first product of these dimensions: no plan yet
                _PRODUCT_SEEN.store(key, True)
                return _product_once(self, outer)
            plan = _PRODUCT_PLANS.store(key, _plan_product(self, outer))
        ins, outs, segments = plan
        sources = (self._cols, outer._cols)
        cols: list[int] = []
        for which, start, stop, repack in segments:
            cols.extend(repack(sources[which][start:stop]))
        result = LinearLayout._make(ins, outs, tuple(cols))
        if self._cache_rank is not None and outer._cache_rank is not None:
            # The operands' columns occupy disjoint output bits, so their ranks add.
            result._cache_rank = self._cache_rank + outer._cache_rank
        return result

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer o self``: apply ``self``, then ``outer``.

        Formula: ``(A.compose(B)).bases[d][i] = B(A.bases[d][i])``.
        Requires: ``self``'s output dimensions are ``outer``'s input dimensions (any order), and
        ``self.out_size(d) <= outer.in_size(d)``.
        Postcondition: ``A.compose(B).apply(x) == B.apply(A.apply(x))``; the result has
        ``self``'s inputs and ``outer``'s outputs.

        >>> A = LinearLayout.identity_1d(4, "i", "t")
        >>> B = LinearLayout.from_bases([("t", [[2], [1]])], ["o"])
        >>> A.compose(B).bases
        (('i', ((2,), (1,))),)
        """
        _require_layout(outer, "compose", "outer")
        outer_slices = outer._in_slices()
        if set(self.get_out_dim_names()) != set(outer_slices):
            raise ValueError(
                f"compose: the output dimensions {_join_dims(self.get_out_dim_names())} must be the "
                f"input dimensions of the outer layout {_join_dims(outer.get_in_dim_names())}"
            )
        # Column of `outer` reached by each packed bit of `self`.
        by_bit: list[int] = []
        for name, size in self._outs:
            start, count = outer_slices[name]
            width = size.bit_length() - 1
            if width > count:
                raise ValueError(
                    f"compose: output dimension '{name}' has size {size}, larger than the outer "
                    f"layout's input size {1 << count}"
                )
            by_bit.extend(outer._cols[start : start + width])
        cols = []
        for col in self._cols:
            acc = 0
            while col:
                low = col & -col
                acc ^= by_bit[low.bit_length() - 1]
                col ^= low
            cols.append(acc)
        return LinearLayout._make(self._ins, outer._outs, tuple(cols))

    @staticmethod
    def lstsq(A: LinearLayout, B: LinearLayout) -> LinearLayout:
        """The least ``X`` with ``A o X = B`` (Triton's "minimum-norm" solution).

        ``A`` and ``B`` have the same output dimensions (any order; ``B``'s sizes at most
        ``A``'s). ``X`` maps ``B``'s inputs to ``A``'s inputs. Where ``A`` is not injective the
        solution sets every free variable (non-pivot column of ``A``, scanning ``A``'s input bits
        from the lowest) to zero. Each preimage is then the one with the smallest flattened index
        (not the fewest set bits: with bases 1, 2, 3 the preimage of 3 is 0b011), so broadcast
        copies resolve to the lowest index -- exactly the solution Triton's ``lstsq`` reads off
        the reduced row echelon form.

        Requires: every basis of ``B`` lies in the image of ``A``.
        Postcondition: ``X.compose(A) == B`` up to output-dimension sizes and order.

        >>> A = LinearLayout.from_bases([("s", [[1], [0], [2]])], ["o"])
        >>> LinearLayout.lstsq(A, LinearLayout.identity_1d(4, "r", "o")).bases
        (('r', ((1,), (4,))),)
        """
        _require_layout(A, "lstsq", "A")
        _require_layout(B, "lstsq", "B")
        return _solve(A, B, identity_dims=())

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer^-1 o self``: the ``C`` with ``outer(C(x)) == self(x)``.

        This is how data movement is derived: with ``self`` a register layout and ``outer`` a
        shared-memory layout, ``C(register, lane, warp)`` is the offset to store at.

        Which solution: an input dimension present in both with identical bases (output sizes
        may differ), touching no output bit that another input dimension of either layout
        touches, is mapped by the identity
        (no movement across it, even where it broadcasts); the rest are solved by :meth:`lstsq`, so broadcast
        (duplicated) elements of ``outer`` resolve to the lowest offset -- Triton's choice. Where
        Triton's reduced system has no solution (it asserts), we solve against all of
        ``outer``'s inputs instead.

        Requires: the same output dimensions (any order), ``self.out_size(d) <=
        outer.out_size(d)``, and ``outer`` surjective.
        Postcondition: ``C.compose(outer.transpose_outs(self.get_out_dim_names()))`` equals
        ``self`` up to output sizes; ``C`` has ``self``'s inputs and ``outer``'s inputs as outputs.

        >>> A = LinearLayout.from_bases([("x", [[2], [1], [4]])], ["o"])
        >>> B = LinearLayout.from_bases([("y", [[4], [1], [2]])], ["o"])
        >>> A.invert_and_compose(B).bases
        (('x', ((4,), (2,), (1,))),)
        """
        _require_layout(outer, "invert_and_compose", "outer")
        if not outer.is_surjective():
            raise ValueError(f"invert_and_compose: the outer layout must be surjective, but is not:{outer}")
        identity = []
        out_names = self.get_out_dim_names()
        if set(out_names) == set(outer.get_out_dim_names()):
            self_slices = self._in_slices()
            outer_slices = outer._in_slices()
            if all(size <= outer.get_out_dim_size(name) for name, size in self._outs):
                # Compare coordinates, not sizes (Triton 3.9 ignores output sizes here): repack
                # both into self's output order with outer's (wider or equal) fields.
                common, shift = {}, 0
                for name, _ in self._outs:
                    common[name] = (shift, outer.get_out_dim_size_log2(name))
                    shift += common[name][1]
                self_cols = self._repacker(common)(self._cols)
                outer_cols = outer._repacker(common)(outer._cols)
                for name in outer.get_in_dim_names():
                    if name in self_slices:
                        s0, n0 = self_slices[name]
                        s1, n1 = outer_slices[name]
                        own = self_cols[s0 : s0 + n0]
                        if n0 == n1 and own == outer_cols[s1 : s1 + n1]:
                            touched = support(own)
                            others = support(self_cols[:s0] + self_cols[s0 + n0 :]) | support(
                                outer_cols[:s1] + outer_cols[s1 + n1 :]
                            )
                            if not touched & others:
                                identity.append(name)
        return _solve(outer, self, identity_dims=tuple(identity))

    def pseudoinvert(self) -> LinearLayout:
        """A right inverse ``P`` (``L(P(y)) == y``), taking the smallest preimage (see :meth:`lstsq`).

        Formula: ``identity(out dims).invert_and_compose(self)``.
        Requires: surjective.
        Postcondition: ``P.compose(L)`` is the identity on ``L``'s outputs; ``P == L.invert()`` when
        ``L`` is invertible.

        >>> LinearLayout.from_bases([("i", [[1], [0], [2]])], ["o"]).pseudoinvert().bases
        (('o', ((1,), (4,))),)
        """
        if not self.is_surjective():
            raise ValueError(f"pseudoinvert: the layout must be surjective, but is not:{self}")
        identity = LinearLayout._make(
            tuple((name, size.bit_length() - 1) for name, size in self._outs),
            self._outs,
            tuple(1 << i for i in range(self.get_total_out_dim_size_log2())),
        )
        return identity.invert_and_compose(self)

    def invert(self) -> LinearLayout:
        """The inverse map. Requires: invertible (square and full rank).

        Postcondition: ``L.compose(L.invert())`` is the identity on ``L``'s inputs.

        >>> LinearLayout.from_bases([("i", [[2], [1]])], ["o"]).invert().bases
        (('o', ((2,), (1,))),)
        """
        if not self.is_invertible():
            raise ValueError(
                "invert: the layout must be invertible (surjective and injective), but has rank "
                f"{self.rank()} with {len(self._cols)} input bits and "
                f"{self.get_total_out_dim_size_log2()} output bits:{self}"
            )
        return self.pseudoinvert()

    @staticmethod
    def divide_left(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
        """The ``C`` with ``A == B * C`` (``B`` the minor factor), or ``None`` if there is none.

        ``C`` keeps all of ``A``'s dimensions, in ``A``'s order, with sizes divided by ``B``'s.

        Requires: nothing; an impossible division returns ``None``.
        Postcondition: ``B * C == A`` when ``C`` is not ``None``.

        >>> A = LinearLayout.identity_1d(8, "i", "o")
        >>> LinearLayout.divide_left(A, LinearLayout.identity_1d(2, "i", "o")).bases
        (('i', ((1,), (2,))),)
        """
        return _divide(A, B, "divide_left", b_is_minor=True)

    @staticmethod
    def divide_right(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
        """The ``C`` with ``A == C * B`` (``B`` the major factor), or ``None`` if there is none.

        Formula: each input ``d`` of ``A`` ends with ``B``'s bases of ``d`` scaled by ``C``'s output sizes;
        ``C`` keeps the leading bases, with sizes ``A.out_size / B.out_size``.
        Requires: nothing; an impossible division returns ``None``.
        Postcondition: ``C * B == A`` when ``C`` is not ``None``.

        A broadcast (zero) factor divides on the major side only:

        >>> C, Z = LinearLayout.identity_1d(4, "i", "o"), LinearLayout.zeros_1d(2, "i", "o")
        >>> LinearLayout.divide_right(C * Z, Z) == C, LinearLayout.divide_left(C * Z, Z)
        (True, None)
        """
        return _divide(A, B, "divide_right", b_is_minor=False)

    # ------------------------------------------------------------------ reshaping

    def sublayout(self, in_dims: Sequence[str], out_dims: Sequence[str]) -> LinearLayout:
        """Restrict to some input and output dimensions, keeping this layout's order.

        Requires: both lists are subsets of this layout's dimensions.
        Postcondition: ``sub.apply(x)[o] == L.apply(x + zeros elsewhere)[o]``; not necessarily surjective.

        >>> L = LinearLayout.from_bases([("a", [[1, 1]]), ("b", [[0, 2]])], ["x", "y"], [2, 4], False)
        >>> L.sublayout(["a"], ["y"]).bases
        (('a', ((1,),)),)
        """
        in_set = set(_require_names(in_dims, "LinearLayout.sublayout", "in_dims"))
        out_set = set(_require_names(out_dims, "LinearLayout.sublayout", "out_dims"))
        missing = (in_set - set(self.get_in_dim_names())) | (out_set - set(self.get_out_dim_names()))
        if missing:
            raise ValueError(f"sublayout: {_join_dims(sorted(missing))} are not dimensions of this layout")
        outs = tuple((n, s) for n, s in self._outs if n in out_set)
        target = {}
        shift = 0
        for name, size in outs:
            target[name] = (shift, 0)
            shift += size.bit_length() - 1
        repack = self._repacker(target)
        ins: list[tuple[str, int]] = []
        cols: list[int] = []
        start = 0
        for name, count in self._ins:
            if name in in_set:
                ins.append((name, count))
                cols.extend(repack(self._cols[start : start + count]))
            start += count
        return LinearLayout._make(tuple(ins), outs, tuple(cols))

    def transpose_ins(self, new_order: Sequence[str]) -> LinearLayout:
        """Reorder the input dimensions.

        Requires: a permutation of them.
        Postcondition: ``apply`` is unchanged; flattening order follows the new order.

        >>> LinearLayout.from_bases([("a", [[1]]), ("b", [[2]])], ["o"]).transpose_ins(["b", "a"]).get_in_dim_names()
        ('b', 'a')
        """
        new_order = _require_names(new_order, "LinearLayout.transpose_ins", "new_order")
        self._check_same_in_dims(new_order, "transpose_ins")
        slices = self._in_slices()
        cols: list[int] = []
        for name in new_order:
            start, count = slices[name]
            cols.extend(self._cols[start : start + count])
        return LinearLayout._make(tuple((n, slices[n][1]) for n in new_order), self._outs, tuple(cols))

    def transpose_outs(self, new_order: Sequence[str]) -> LinearLayout:
        """Reorder the output dimensions.

        Requires: a permutation of them.
        Postcondition: ``apply`` gives the same coordinates, keyed in the new order.

        >>> L = LinearLayout.from_bases([("a", [[1, 2]])], ["x", "y"], [2, 4], False)
        >>> L.transpose_outs(["y", "x"]).bases
        (('a', ((2, 1),)),)
        """
        try:
            plan = _TRANSPOSE_PLANS.get((self._outs, tuple(new_order)))
        except TypeError:  # unhashable names: the checks below say what is wrong
            plan = None
        if plan is None:
            plan = self._plan_transpose_outs(new_order)
        outs, repack = plan
        if outs == self._outs:  # the order it already has (layouts are immutable)
            return self
        result = LinearLayout._make(self._ins, outs, tuple(repack(self._cols)))
        result._cache_rank = self._cache_rank  # permuting output bits keeps the rank
        return result

    def _plan_transpose_outs(self, new_order: Sequence[str]) -> tuple:
        """The output dimensions and column repacker of ``transpose_outs(new_order)``, cached by
        (output dimensions, new order) like the plans of ``*``."""
        new_order = _require_names(new_order, "LinearLayout.transpose_outs", "new_order")
        new_order = tuple(new_order)
        if sorted(new_order) != sorted(self.get_out_dim_names()) or len(set(new_order)) != len(new_order):
            raise ValueError(
                f"transpose_outs: expected a permutation of the output dimensions "
                f"{_join_dims(self.get_out_dim_names())}, got {_join_dims(new_order)}"
            )
        sizes = dict(self._outs)
        outs = tuple((n, sizes[n]) for n in new_order)
        target = {}
        shift = 0
        for name, size in outs:
            target[name] = (shift, 0)
            shift += size.bit_length() - 1
        return _TRANSPOSE_PLANS.store((self._outs, new_order), (outs, self._repacker(target)))

    def reshape_ins(self, new_in_dims: Sequence[tuple[str, int]]) -> LinearLayout:
        """Flatten the inputs (first dimension minor) and split them into ``new_in_dims``.

        Formula: the same columns, regrouped: new dimension ``k`` takes the next ``log2(size_k)`` columns.
        Requires: sizes are powers of two with the same total; distinct names.
        Postcondition: ``L.reshape_ins(old dims) == L`` (a round trip).

        >>> LinearLayout.identity_1d(8, "i", "o").reshape_ins([("a", 2), ("b", 4)]).bases
        (('a', ((1,),)), ('b', ((2,), (4,))))
        """
        new_in_dims = tuple(
            (name, _log2_exact(size, f"size of input dimension {_short(name)}"))
            for name, size in _require_dim_sizes(new_in_dims, "reshape_ins", "new_in_dims")
        )
        _check_names([n for n, _ in new_in_dims], "input dimension")
        if sum(n for _, n in new_in_dims) != len(self._cols):
            raise ValueError(
                f"reshape_ins: the new sizes multiply to 2**{sum(n for _, n in new_in_dims)}, "
                f"but the layout has 2**{len(self._cols)} inputs"
            )
        return LinearLayout._make(new_in_dims, self._outs, self._cols)

    def reshape_outs(self, new_out_dims: Sequence[tuple[str, int]]) -> LinearLayout:
        """Flatten the outputs (first dimension minor) and split them into ``new_out_dims``.

        Formula: the flattened coordinate ``sum(out_k * prod(sizes before k))`` is split by the new sizes.
        Requires: sizes are powers of two with the same total; distinct names.
        Postcondition: ``L.reshape_outs(old dims) == L`` (a round trip).

        >>> LinearLayout.identity_1d(8, "i", "o").reshape_outs([("a", 2), ("b", 4)]).bases
        (('i', ((1, 0), (0, 1), (0, 2))),)
        """
        outs = _plain_dims(new_out_dims)
        if outs is None:  # not plain (str, power of two) pairs: check and convert, or say what is wrong
            outs = tuple(
                (name, 1 << _log2_exact(size, f"size of output dimension {_short(name)}"))
                for name, size in _require_dim_sizes(new_out_dims, "reshape_outs", "new_out_dims")
            )
            _check_names([n for n, _ in outs], "output dimension")
        total = 0
        for _, size in outs:
            total += size.bit_length() - 1
        if total != self.get_total_out_dim_size_log2():
            raise ValueError(
                f"reshape_outs: the new sizes multiply to 2**{total}, but the layout has "
                f"2**{self.get_total_out_dim_size_log2()} outputs"
            )
        # The packed column *is* the flattened output, so only the dimension list changes.
        result = LinearLayout._make(self._ins, outs, self._cols)
        result._cache_rank = self._cache_rank  # the same columns
        return result

    def flatten_ins(self) -> LinearLayout:
        """Merge all inputs into the first one (first dimension minor).

        Formula: ``reshape_ins([(first input, total input size)])``.
        Requires: nothing (a layout without inputs is returned as is).
        Postcondition: one input dimension; the same columns in the same order.

        >>> L = LinearLayout.identity_1d(2, "a", "o") * LinearLayout.identity_1d(2, "b", "o")
        >>> L.flatten_ins().bases
        (('a', ((1,), (2,))),)
        """
        if not self._ins:
            return self
        return LinearLayout._make(((self._ins[0][0], len(self._cols)),), self._outs, self._cols)

    def flatten_outs(self) -> LinearLayout:
        """Merge all outputs into the first one (first dimension minor).

        Formula: ``reshape_outs([(first output, total output size)])``.
        Requires: nothing (a layout without outputs is returned as is).
        Postcondition: one output dimension whose coordinate is ``sum(out_k * prod(sizes before k))``.

        >>> LinearLayout.from_bases([("i", [[1, 0], [0, 1]])], ["a", "b"]).flatten_outs().bases
        (('i', ((1,), (2,))),)
        """
        if not self._outs:
            return self
        return LinearLayout._make(self._ins, ((self._outs[0][0], self.get_total_out_dim_size()),), self._cols)

    def concat_ins(self, other: LinearLayout) -> LinearLayout:
        """Place ``other``'s input dimensions after ours.

        Requires: identical output dimensions and sizes; disjoint input dimensions.
        Postcondition: ``L.apply(x | y) == self.apply(x) ^ other.apply(y)``.

        >>> LinearLayout.identity_1d(2, "a", "o").concat_ins(LinearLayout.zeros_1d(2, "b", "o", 2)).bases
        (('a', ((1,),)), ('b', ((0,),)))
        """
        _require_layout(other, "concat_ins", "other")
        if self._outs != other._outs:
            raise ValueError(f"concat_ins: output dimensions differ: {self._outs} vs {other._outs}")
        if set(self.get_in_dim_names()) & set(other.get_in_dim_names()):
            raise ValueError("concat_ins: the layouts must have disjoint input dimensions")
        return LinearLayout._make(self._ins + other._ins, self._outs, self._cols + other._cols)

    def concat_outs(self, other: LinearLayout) -> LinearLayout:
        """Place ``other``'s output dimensions after ours.

        Formula: ``L(x) = (self(x), other(x))``.
        Requires: identical input dimensions and sizes; disjoint output dimensions.
        Postcondition: ``L.sublayout(ins, self's outs) == self`` and likewise for ``other``.

        >>> LinearLayout.identity_1d(2, "i", "a").concat_outs(LinearLayout.identity_1d(2, "i", "b")).bases
        (('i', ((1, 1),)),)
        """
        _require_layout(other, "concat_outs", "other")
        if self._ins != other._ins:
            raise ValueError(f"concat_outs: input dimensions differ: {self._ins} vs {other._ins}")
        if set(self.get_out_dim_names()) & set(other.get_out_dim_names()):
            raise ValueError("concat_outs: the layouts must have disjoint output dimensions")
        shift = self.get_total_out_dim_size_log2()
        cols = tuple(a | (b << shift) for a, b in zip(self._cols, other._cols))
        return LinearLayout._make(self._ins, self._outs + other._outs, cols)

    def squeeze_ins(self, dim: str | None = None) -> LinearLayout:
        """Drop input dimension ``dim`` (Triton's ``squeezeIns``), or every size-1 input if ``dim`` is None.

        Requires: ``dim`` is an input dimension of size 1.
        Postcondition: the same matrix, without the size-1 dimension.

        >>> (LinearLayout.identity_1d(2, "i", "o") * LinearLayout.identity_1d(1, "w", "o")).squeeze_ins().get_in_dim_names()
        ('i',)
        """
        dim = require_optional_name(dim, "LinearLayout.squeeze_ins", "dim")
        if dim is not None and self.get_in_dim_size_log2(dim) != 0:
            raise ValueError(f"squeeze_ins: '{dim}' must have size 1, but has size {self.get_in_dim_size(dim)}")
        keep = (lambda d: d[0] != dim) if dim is not None else (lambda d: d[1])
        return LinearLayout._make(tuple(d for d in self._ins if keep(d)), self._outs, self._cols)

    def squeeze_outs(self, dim: str | None = None) -> LinearLayout:
        """Drop output dimension ``dim`` (Triton's ``squeezeOuts``), or every size-1 output if ``dim`` is None.

        Requires: ``dim`` is an output dimension of size 1.
        Postcondition: the same matrix, without the size-1 dimension.

        >>> (LinearLayout.identity_1d(2, "i", "o") * LinearLayout.identity_1d(1, "i", "p")).squeeze_outs().out_dims
        (('o', 2),)
        """
        dim = require_optional_name(dim, "LinearLayout.squeeze_outs", "dim")
        if dim is not None and self.get_out_dim_size(dim) != 1:
            raise ValueError(f"squeeze_outs: '{dim}' must have size 1, but has size {self.get_out_dim_size(dim)}")
        outs = [d for d in self._outs if d[0] != dim] if dim is not None else [d for d in self._outs if d[1] > 1]
        result = LinearLayout._make(self._ins, tuple(outs), self._cols)
        result._cache_rank = self._cache_rank  # the same columns
        return result

    def resize_in_dim(self, in_dim: str, new_size: int) -> LinearLayout:
        """Grow ``in_dim`` with zero (broadcast) bases, or shrink it by dropping its top bases.

        Formula: ``bases[in_dim] = bases[in_dim][:n] + [0] * (n - len)`` with ``n = log2(new_size)``.
        Requires: ``in_dim`` exists; ``new_size`` is a power of two.
        Postcondition: ``get_in_dim_size(in_dim) == new_size``; the image shrinks or stays.

        >>> LinearLayout.identity_1d(2, "i", "o").resize_in_dim("i", 4).bases
        (('i', ((1,), (0,))),)
        """
        in_dim = require_name(in_dim, "LinearLayout.resize_in_dim", "in_dim")
        n = _log2_exact(
            require_int(new_size, "LinearLayout.resize_in_dim", "new_size"), f"new size of {_short(in_dim)}"
        )
        found = self._in_slices().get(in_dim)
        if found is None:
            raise ValueError(f"resize_in_dim: {_short(in_dim)} is not an input dimension")
        start, count = found
        kept = self._cols[start : start + min(n, count)] + (0,) * max(0, n - count)
        cols = self._cols[:start] + kept + self._cols[start + count :]
        ins = tuple((name, n if name == in_dim else c) for name, c in self._ins)
        return LinearLayout._make(ins, self._outs, cols)

    def resize_out_dim(self, out_dim: str, new_size: int) -> LinearLayout:
        """Change the size of ``out_dim``.

        Shrinking zeroes every coordinate that does not fit (``>= new_size``), as Triton's
        ``resizeOutDim`` does; for the usual power-of-two coordinates this is the projection onto
        the low bits. Growing leaves the bases as they are (the result is then not surjective).

        Requires: ``out_dim`` exists; ``new_size`` is a power of two.
        Postcondition: ``get_out_dim_size(out_dim) == new_size``.

        >>> LinearLayout.identity_1d(4, "i", "o").resize_out_dim("o", 2).bases
        (('i', ((1,), (0,))),)
        """
        out_dim = require_name(out_dim, "LinearLayout.resize_out_dim", "out_dim")
        _log2_exact(require_int(new_size, "LinearLayout.resize_out_dim", "new_size"), f"new size of {_short(out_dim)}")
        index = self.get_out_dim_index(out_dim)
        outs = tuple((n, int(new_size) if k == index else s) for k, (n, s) in enumerate(self._outs))
        limit = int(new_size)
        bases = [
            (name, [tuple(0 if k == index and v >= limit else v for k, v in enumerate(b)) for b in bs])
            for name, bs in self.bases
        ]
        return LinearLayout.from_bases(bases, [n for n, _ in outs], [s for _, s in outs], require_surjective=False)

    def rename_in_dim(self, old: str, new: str) -> LinearLayout:
        """Rename one input dimension.

        Requires: ``old`` exists and ``new`` is not taken.
        Postcondition: the same matrix; only the name changes.

        >>> LinearLayout.identity_1d(2, "i", "o").rename_in_dim("i", "lane").get_in_dim_names()
        ('lane',)
        """
        old = require_name(old, "LinearLayout.rename_in_dim", "old")
        new = require_name(new, "LinearLayout.rename_in_dim", "new")
        if not self.has_in_dim(old):
            raise ValueError(f"rename_in_dim: {_short(old)} is not an input dimension")
        if old != new and self.has_in_dim(new):
            raise ValueError(f"rename_in_dim: '{new}' is already an input dimension")
        return LinearLayout._make(tuple((new if n == old else n, c) for n, c in self._ins), self._outs, self._cols)

    def remove_zero_bases_along_dim(self, dim: str) -> LinearLayout:
        """Drop the zero (broadcast) bases of input ``dim``, keeping output sizes.

        Formula: ``bases[dim] = [b for b in bases[dim] if b != 0]``.
        Requires: ``dim`` is an input dimension.
        Postcondition: same image; ``dim`` has no zero basis.

        >>> LinearLayout.from_bases([("r", [[1], [0], [2]])], ["o"]).remove_zero_bases_along_dim("r").bases
        (('r', ((1,), (2,))),)
        """
        dim = require_name(dim, "LinearLayout.remove_zero_bases_along_dim", "dim")
        found = self._in_slices().get(dim)
        if found is None:
            raise ValueError(f"remove_zero_bases_along_dim: {_short(dim)} is not an input dimension")
        start, count = found
        kept = tuple(filter(None, self._cols[start : start + count]))
        if len(kept) == count:  # no zero basis to drop (layouts are immutable)
            return self
        ins = tuple([(n, len(kept) if n == dim else c) for n, c in self._ins])
        result = LinearLayout._make(ins, self._outs, self._cols[:start] + kept + self._cols[start + count :])
        result._cache_rank = self._cache_rank  # zero columns add nothing to the rank
        return result

    def quotient(self, dims: Sequence[str]) -> LinearLayout | None:
        """Remove ``dims`` from inputs and outputs if the layout is trivial over them, else ``None``.

        Formula: ``sublayout(other inputs, other outputs)``.
        Requires: nothing; a layout that is not trivial over ``dims`` gives ``None``.
        Postcondition: ``quotient(dims) * identity over dims`` equals the layout up to dimension order.

        >>> (LinearLayout.identity_1d(4, "r", "r") * LinearLayout.identity_1d(2, "w", "w")).quotient(["w"]).bases
        (('r', ((1,), (2,))),)
        """
        dims = _require_names(dims, "LinearLayout.quotient", "dims")
        if not self.is_trivial_over(dims):
            return None
        return self.sublayout(
            [n for n in self.get_in_dim_names() if n not in dims],
            [n for n in self.get_out_dim_names() if n not in dims],
        )

    # ------------------------------------------------------------------ structure queries

    def sublayout_is_zero(self, in_dims: Sequence[str], out_dims: Sequence[str]) -> bool:
        """Whether inputs ``in_dims`` never affect outputs ``out_dims``.

        Formula: every basis of ``sublayout(in_dims, out_dims)`` is zero.
        Requires: both lists name dimensions of this layout.
        Postcondition: true for empty lists.

        >>> LinearLayout.from_bases([("a", [[1, 0]]), ("b", [[0, 1]])], ["x", "y"]).sublayout_is_zero(["a"], ["y"])
        True
        """
        in_dims = _require_names(in_dims, "LinearLayout.sublayout_is_zero", "in_dims")
        out_dims = _require_names(out_dims, "LinearLayout.sublayout_is_zero", "out_dims")
        return not any(self.sublayout(in_dims, out_dims)._cols)

    def square_sublayout_is_identity(self, dims: Sequence[str]) -> bool:
        """Whether ``dims`` (each both an input and an output) map to themselves by the identity."""
        dims = _require_names(dims, "LinearLayout.square_sublayout_is_identity", "dims")
        if not dims:
            return True
        sub = self.sublayout(dims, dims)
        if any(self.get_in_dim_size(d) != self.get_out_dim_size(d) for d in dims):
            return False
        return sub.flatten_ins().flatten_outs()._cols == tuple(1 << i for i in range(len(sub._cols)))

    def is_trivial_over(self, dims: Sequence[str]) -> bool:
        """Whether ``dims`` pass through untouched: identity on themselves, decoupled from the rest.

        Formula: the ``dims x dims`` block is the identity and the blocks between ``dims`` and the
        other dimensions are zero.
        Requires: nothing; an unknown dimension makes the answer ``False``.
        Postcondition: when true, :meth:`quotient` removes ``dims`` without losing information.

        >>> (LinearLayout.identity_1d(4, "r", "r") * LinearLayout.identity_1d(2, "w", "w")).is_trivial_over(["w"])
        True
        """
        dims = _require_names(dims, "LinearLayout.is_trivial_over", "dims")
        ins, outs = self.get_in_dim_names(), self.get_out_dim_names()
        if any(d not in ins and d not in outs for d in dims):
            return False
        if any(d not in ins or d not in outs for d in dims):
            return False
        rest_in = [d for d in ins if d not in dims]
        rest_out = [d for d in outs if d not in dims]
        return (
            self.square_sublayout_is_identity(dims)
            and self.sublayout_is_zero(rest_in, dims)
            and self.sublayout_is_zero(dims, rest_out)
        )

    def equal_ignoring_out_dim_sizes(self, other: LinearLayout) -> bool:
        """Same dimensions in the same order and the same basis values; sizes may differ.

        Requires: nothing.
        Postcondition: implied by ``==``.

        >>> a = LinearLayout.identity_1d(2, "i", "o")
        >>> a.equal_ignoring_out_dim_sizes(a.resize_out_dim("o", 4)), a == a.resize_out_dim("o", 4)
        (True, False)
        """
        _require_layout(other, "equal_ignoring_out_dim_sizes", "other")
        return (
            self.get_out_dim_names() == other.get_out_dim_names()
            and self._ins == other._ins
            and self.bases == other.bases
        )

    def get_free_variable_masks(self) -> dict[str, int]:
        """Per input dimension, the mask of its bits that are free variables.

        Scanning input bits from the lowest, a bit is *basic* when its basis is independent of
        all earlier ones, *free* otherwise. Flipping a free bit can be undone by flipping earlier
        basic bits, so free bits are the ones that only duplicate data.

        Formula: the non-pivot columns of the reduced row echelon form of the matrix.
        Requires: nothing.
        Postcondition: the number of basic bits is ``rank()``; all masks are 0 iff ``is_injective()``.

        >>> L = (LinearLayout.identity_1d(2, "a", "o") * LinearLayout.zeros_1d(4, "a", "z")
        ...      * LinearLayout.identity_1d(4, "a", "p") * LinearLayout.zeros_1d(2, "a", "q"))
        >>> bin(L.get_free_variable_masks()["a"])
        '0b100110'
        """
        pivots = pivot_columns(self._cols)
        result = {}
        start = 0
        for name, count in self._ins:
            result[name] = ~(pivots >> start) & ((1 << count) - 1)
            start += count
        return result

    def get_num_consecutive_in_out(self) -> int:
        """How many consecutive values of the first input map to consecutive values of the first output.

        Formula: the largest ``2**k`` such that bases ``0..k-1`` of the first input are the unit
        steps ``1, 2, ..., 2**(k-1)`` along the first output (zero elsewhere), and no other basis
        touches the low ``k`` bits of the first output. Used to vectorise memory accesses.
        Requires: nothing (1 for a layout without inputs or outputs).
        Postcondition: a power of two; registers ``[j*2**k, (j+1)*2**k)`` hold ``2**k`` consecutive
        elements of the first output.

        >>> LinearLayout.from_bases([("r", [[1], [2], [4], [10]])], ["o"]).get_num_consecutive_in_out()
        2
        """
        if not self._ins or not self._outs:
            return 1
        first_count = self._ins[0][1]
        width = self._outs[0][1].bit_length() - 1
        consecutive = 0
        # `1 << consecutive` is a unit step along the first output only while it fits in its width;
        # past that it would be a packed bit of the next output dimension.
        while consecutive < min(first_count, width) and self._cols[consecutive] == 1 << consecutive:
            consecutive += 1
        first_out_mask = (1 << width) - 1
        other_bits = 0
        for col in self._cols[consecutive:]:
            other_bits |= col & first_out_mask
        trailing = (other_bits & -other_bits).bit_length() - 1 if other_bits else consecutive
        return 1 << min(consecutive, trailing)

    def contiguous_elems_along_output_dim(self, in_dim: str, out_dim: str) -> int:
        """How many elements along ``out_dim`` (from 0) sit at consecutive indices ``0, 1, ...`` of ``in_dim``.

        Formula: ``2**k`` for the largest ``k`` such that the smallest preimage (:meth:`lstsq`) of
        ``out_dim = 2**i`` is ``in_dim = 2**i`` for every ``i < k``.
        Requires: the layout is surjective; ``in_dim`` and ``out_dim`` are its dimensions.
        Postcondition: a power of two, at most ``min(in size, out size)``.

        >>> LinearLayout.from_bases([("r", [[1, 0], [0, 1], [2, 0]])], ["x", "y"]).contiguous_elems_along_output_dim("r", "x")
        2
        """
        in_dim = require_name(in_dim, "LinearLayout.contiguous_elems_along_output_dim", "in_dim")
        out_dim = require_name(out_dim, "LinearLayout.contiguous_elems_along_output_dim", "out_dim")
        in_start = self._in_start(in_dim)
        self.get_out_dim_index(out_dim)  # a ValueError naming the output dimensions if it is not one
        inverse = self.pseudoinvert()
        shift, width = self._out_shift()[out_dim]
        k = 0
        while k < width and inverse._cols[shift + k] == 1 << (in_start + k):
            k += 1
        return 1 << k


_EMPTY = LinearLayout._make((), (), ())
_EMPTY._cache_rank = 0


# `*` and `transpose_outs` depend on their operands' dimensions only through a "plan": where each
# column goes. Programs use few distinct shapes, so plans are cached by the dimension signature.
# The first product of a signature is computed directly (`_product_once`, no plan to build); the
# plan is built from the second one on. `_PRODUCT_SEEN` remembers the signatures seen once.
_PRODUCT_PLANS: BoundedCache[tuple, tuple] = BoundedCache()
_PRODUCT_SEEN: BoundedCache[tuple, bool] = BoundedCache()
_TRANSPOSE_PLANS: BoundedCache[tuple, tuple] = BoundedCache()


def _product_once(inner: LinearLayout, outer: LinearLayout) -> LinearLayout:
    """``inner * outer`` without a plan: each operand's columns repacked into the product's output
    fields, input dimension by input dimension (the merged order lists each operand's inputs in
    its own order, so both are walked in step). Equal to the planned product.

    The moves of both operands come from one walk over the merged output dimensions (each
    operand's fields lie in the merged order too, so its source shift is a running sum); each
    operand's columns are repacked in one call, then interleaved by input dimension."""
    if len(outer._ins) == 1 and len(outer._outs) == 1:
        return _times_1d(inner, outer)
    inner_moves: list[tuple[int, int, int]] = []
    outer_moves: list[tuple[int, int, int]] = []
    outs = []
    shift = inner_at = outer_at = 0
    for name, low, high in _merged(inner._outs, outer._outs, 1, "output dimensions"):
        width = low.bit_length() - 1
        if width:
            _add_move(inner_moves, inner_at, width, shift)
            inner_at += width
            shift += width
        width = high.bit_length() - 1
        if width:
            _add_move(outer_moves, outer_at, width, shift)
            outer_at += width
            shift += width
        outs.append((name, low * high))
    inner_cols = _raised(inner._cols, inner_moves)
    outer_cols = _raised(outer._cols, outer_moves)
    ins = []
    cols: list[int] = []
    inner_at = outer_at = 0
    for name, low, high in _merged(inner._ins, outer._ins, 0, "input dimensions"):
        if low:
            cols += inner_cols[inner_at : inner_at + low]
            inner_at += low
        if high:
            cols += outer_cols[outer_at : outer_at + high]
            outer_at += high
        ins.append((name, low + high))
    result = LinearLayout._make(tuple(ins), tuple(outs), tuple(cols))
    if inner._cache_rank is not None and outer._cache_rank is not None:
        result._cache_rank = inner._cache_rank + outer._cache_rank  # disjoint output bits: ranks add
    return result


def _times_1d(inner: LinearLayout, outer: LinearLayout) -> LinearLayout:
    """``inner * outer`` for an ``outer`` of one input and one output dimension (``identity_1d``,
    ``zeros_1d``, ``strided_1d``: the usual right operand). ``outer``'s output field lands at the
    top of the same field of ``inner`` (or after all of them), moving the fields above it up;
    its columns follow ``inner``'s of the same input dimension (or come last).

    >>> a = LinearLayout.identity_1d(4, "i", "x") * LinearLayout.identity_1d(2, "j", "y")
    >>> _times_1d(a, LinearLayout.identity_1d(2, "i", "x")).bases
    (('i', ((1, 0), (2, 0), (4, 0))), ('j', ((0, 1),)))
    """
    ((in_name, count),) = outer._ins
    ((out_name, size),) = outer._outs
    width = size.bit_length() - 1
    outs = list(inner._outs)
    position = 0
    moves_up = False  # whether inner fields lie above the one that grows
    for index, (name, inner_size) in enumerate(outs):
        position += inner_size.bit_length() - 1
        if name == out_name:
            outs[index] = (name, inner_size * size)
            moves_up = any(later > 1 for _, later in outs[index + 1 :])
            break
    else:
        outs.append((out_name, size))
    inner_cols: Sequence[int] = inner._cols
    if width and moves_up:
        above, factor = -1 << position, (1 << width) - 1  # the bits above move up by `width`
        inner_cols = [c + (c & above) * factor for c in inner_cols]
    outer_cols = [c << position for c in outer._cols]
    ins = list(inner._ins)
    at = 0
    for index, (name, inner_count) in enumerate(ins):
        at += inner_count
        if name == in_name:
            ins[index] = (name, inner_count + count)
            cols = (*inner_cols[:at], *outer_cols, *inner_cols[at:])
            break
    else:
        ins.append((in_name, count))
        cols = (*inner_cols, *outer_cols)
    result = LinearLayout._make(tuple(ins), tuple(outs), cols)
    if inner._cache_rank is not None and outer._cache_rank is not None:
        result._cache_rank = inner._cache_rank + outer._cache_rank  # disjoint output bits: ranks add
    return result


def _merged(
    x: tuple[tuple[str, int], ...], y: tuple[tuple[str, int], ...], missing: int, what: str
) -> list[tuple[str, int, int]]:
    """``(name, x's value, y's value)`` over ``supremum`` of the names of ``x`` and ``y`` (pairs
    ``(name, value)``), ``missing`` for a name one of them lacks. One pass over ``x`` when ``y``'s
    names are a subsequence of ``x``'s (the usual ``*``), else through :func:`supremum`.

    >>> _merged((("a", 2), ("b", 4)), (("b", 8),), 1, "dims")
    [('a', 2, 1), ('b', 4, 8)]
    """
    out = []
    j, count = 0, len(y)
    for name, value in x:
        if j < count and y[j][0] == name:
            out.append((name, value, y[j][1]))
            j += 1
        else:
            out.append((name, value, missing))
    if j == count:
        return out
    x_values, y_values = dict(x), dict(y)
    names = supremum(tuple(x_values), tuple(y_values), what=what)
    return [(name, x_values.get(name, missing), y_values.get(name, missing)) for name in names]


def _add_move(moves: list[tuple[int, int, int]], source: int, width: int, target: int) -> None:
    """Append the move of a ``width``-bit field from ``source`` to ``target`` (``(source shift,
    mask, target shift)``, as ``_packing.field_moves``), merged into the last move when the field
    continues it by the same distance."""
    if moves:
        last_source, last_mask, last_target = moves[-1]
        last_width = last_mask.bit_length()
        if last_source + last_width == source and target - last_target == source - last_source:
            moves[-1] = (last_source, (1 << (last_width + width)) - 1, last_target)
            return
    moves.append((source, (1 << width) - 1, target))


def _raised(cols: Sequence[int], moves: list[tuple[int, int, int]]) -> Sequence[int]:
    """``cols`` with every field ``(source shift, mask, target shift)`` of ``moves`` moved up to its
    target, as ``_packing.mover(moves)(cols)``, in fewer operations per column.

    Formula: a field moved up by ``k`` bits is multiplied by ``2**k``, so
    ``moved(c) = c + sum((c & (mask << source)) * (2**(target - source) - 1))``.
    Requires: the fields cover every set bit of every column, and ``target >= source``
    (true of a product: each operand's fields only move up past the other's).

    >>> _raised([0b01, 0b10, 0b11], [(0, 1, 0), (1, 1, 3)])
    [1, 8, 9]
    """
    terms = [(mask << source, (1 << (target - source)) - 1) for source, mask, target in moves if target != source]
    if not terms:
        return cols
    if len(terms) == 1:
        ((high, factor),) = terms
        if factor == 1:
            return [c + (c & high) for c in cols]
        return [c + (c & high) * factor for c in cols]
    if len(terms) == 2:
        (high0, factor0), (high1, factor1) = terms
        return [c + (c & high0) * factor0 + (c & high1) * factor1 for c in cols]
    result = []
    for col in cols:
        moved = col
        for high, factor in terms:
            moved += (col & high) * factor
        result.append(moved)
    return result


def _plan_product(inner: LinearLayout, outer: LinearLayout) -> tuple:
    in_names = _supremum(inner.get_in_dim_names(), outer.get_in_dim_names(), what="input dimensions")
    out_names = _supremum(inner.get_out_dim_names(), outer.get_out_dim_names(), what="output dimensions")
    inner_outs = dict(inner._outs)
    outer_outs = dict(outer._outs)
    outs = tuple([(name, inner_outs.get(name, 1) * outer_outs.get(name, 1)) for name in out_names])
    inner_target = {}
    outer_target = {}
    shift = 0
    for name, size in outs:
        inner_target[name] = (shift, 0)
        outer_target[name] = (shift + inner_outs.get(name, 1).bit_length() - 1, 0)
        shift += size.bit_length() - 1
    repack = (inner._repacker(inner_target), outer._repacker(outer_target))
    slices = (inner._in_slices(), outer._in_slices())
    ins = []
    segments: list[tuple[int, int, int, Any]] = []
    for name in in_names:
        count = 0
        for which in (0, 1):
            if name in slices[which]:
                start, n = slices[which][name]
                count += n
                if not n:
                    continue
                if segments and segments[-1][0] == which and segments[-1][2] == start:
                    # Contiguous columns of the same operand: one repack call instead of two.
                    segments[-1] = (which, segments[-1][1], start + n, repack[which])
                else:
                    segments.append((which, start, start + n, repack[which]))
        ins.append((name, count))
    return tuple(ins), outs, tuple(segments)


def _solve(A: LinearLayout, B: LinearLayout, identity_dims: tuple[str, ...]) -> LinearLayout:
    """``X`` with ``A o X = B``; dimensions in ``identity_dims`` map to themselves."""
    if set(A.get_out_dim_names()) != set(B.get_out_dim_names()):
        raise ValueError(
            f"invert_and_compose: the layouts must have the same output dimensions, got "
            f"{_join_dims(B.get_out_dim_names())} and {_join_dims(A.get_out_dim_names())}"
        )
    for name, size in B._outs:
        if size > A.get_out_dim_size(name):
            raise ValueError(
                f"invert_and_compose: output dimension '{name}' has size {size}, larger than "
                f"{A.get_out_dim_size(name)} in the layout being inverted"
            )
    # Pack both in A's field widths, B's dimension order.
    target = {}
    shift = 0
    for name, _ in B._outs:
        width = A.get_out_dim_size_log2(name)
        target[name] = (shift, width)
        shift += width
    a_cols = A._repacker(target)(A._cols)
    b_cols = B._repacker(target)(B._cols)
    a_slices = A._in_slices()
    b_slices = B._in_slices()

    reduced = EchelonBasis()
    for name, (start, count) in a_slices.items():
        if name not in identity_dims:
            for index in range(start, start + count):
                reduced.insert(a_cols[index], index)
    cols: list[int] = []
    for name, count in B._ins:
        if name in identity_dims:
            start = a_slices[name][0]
            cols.extend(1 << (start + i) for i in range(count))
            continue
        start, count = b_slices[name]
        for col in b_cols[start : start + count]:
            # Identity dimensions touch output bits no other dimension touches, so a column of B
            # in A's image is already in the image of A's other dimensions.
            x = reduced.solve(col)
            if x is None:
                raise ValueError(
                    f"no solution: basis {col} of '{name}' is not in the image of the layout being inverted"
                )
            cols.append(x)
    outs = tuple((name, 1 << count) for name, count in A._ins)
    return LinearLayout._make(B._ins, outs, tuple(cols))


def _divide(A: LinearLayout, B: LinearLayout, method: str, b_is_minor: bool) -> LinearLayout | None:
    """``divide_left`` (``b_is_minor``) or ``divide_right``, named ``method`` in errors."""
    _require_layout(A, method, "A")
    _require_layout(B, method, "B")
    a_in, a_out = dict(A._ins), dict(A._outs)
    b_in, b_out = dict(B._ins), dict(B._outs)
    if not set(b_in) <= set(a_in) or not set(b_out) <= set(a_out):
        return None
    if any(b_in[d] > a_in[d] for d in b_in) or any(a_out[d] % b_out[d] for d in b_out):
        return None
    c_outs = tuple((name, size // b_out.get(name, 1)) for name, size in A._outs)
    c_in = {name: count - b_in.get(name, 0) for name, count in A._ins}
    a_bases = dict(A.bases)
    c_bases = []
    for name, count in A._ins:
        own = a_bases[name][count - c_in[name] :] if b_is_minor else a_bases[name][: c_in[name]]
        new = []
        for basis in own:
            coords = []
            for (out, _), value in zip(A._outs, basis):
                scale = b_out.get(out, 1) if b_is_minor else 1
                if value % scale:
                    return None
                coords.append(value // scale)
            new.append(coords)
        c_bases.append((name, new))
    try:
        C = LinearLayout.from_bases(c_bases, [n for n, _ in c_outs], [s for _, s in c_outs], require_surjective=False)
    except ValueError:
        return None
    product = B * C if b_is_minor else C * B
    if product.transpose_ins(A.get_in_dim_names()).transpose_outs(A.get_out_dim_names()) != A:
        return None
    return C


class ColumnAction:
    """Permute or drop the bases of one input dimension, and the matching registers.

    ``action[j]`` is the old basis index that becomes basis ``j``. Applied to a layout it rebuilds
    ``in_dim``'s bases; applied to a list of ``2**in_size_log2`` values (the registers) it moves
    value ``old(i)`` to position ``i``, where ``old(i)`` sets bit ``action[j]`` for each set bit
    ``j`` of ``i``. A dropped basis keeps only the values at index bit 0.

    Requires: distinct basis indices below ``in_size_log2``.
    Postcondition: for a layout ``L`` and its registers ``v``, register ``i`` of
    ``apply(L)`` holds ``apply_values(v)[i]`` -- layout and values stay in step.

    >>> ColumnAction((1, 0), "register", 2).apply_values(["a", "b", "c", "d"])
    ('a', 'c', 'b', 'd')
    """

    __slots__ = ("action", "in_dim", "in_size_log2")

    def __init__(self, action: Sequence[int], in_dim: str, in_size_log2: int) -> None:
        action = tuple(int(a) for a in action)
        if len(set(action)) != len(action) or any(not 0 <= a < in_size_log2 for a in action):
            raise ValueError(f"ColumnAction: {list(action)} must be distinct basis indices below {in_size_log2}")
        self.action = action
        self.in_dim = in_dim
        self.in_size_log2 = in_size_log2

    def __repr__(self) -> str:
        return f"ColumnAction({self.action}, {self.in_dim!r}, {self.in_size_log2})"

    def is_identity(self) -> bool:
        return self.action == tuple(range(self.in_size_log2))

    def apply(self, layout: LinearLayout) -> LinearLayout:
        """Rebuild ``in_dim``'s bases as ``old[action[0]], old[action[1]], ...``."""
        if layout.get_in_dim_size_log2(self.in_dim) != self.in_size_log2:
            raise ValueError(
                f"ColumnAction: '{self.in_dim}' has {layout.get_in_dim_size_log2(self.in_dim)} bases, "
                f"expected {self.in_size_log2}"
            )
        start = layout._in_start(self.in_dim)
        old = layout._cols[start : start + self.in_size_log2]
        new = tuple(old[a] for a in self.action)
        ins = tuple((n, len(new) if n == self.in_dim else c) for n, c in layout._ins)
        return LinearLayout._make(
            ins, layout._outs, layout._cols[:start] + new + layout._cols[start + self.in_size_log2 :]
        )

    def apply_values(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """Permute (or subsample) ``2**in_size_log2`` register values the same way."""
        if len(values) != 1 << self.in_size_log2:
            raise ValueError(f"ColumnAction: expected {1 << self.in_size_log2} values, got {len(values)}")
        result = []
        for i in range(1 << len(self.action)):
            old = 0
            for j, a in enumerate(self.action):
                if i >> j & 1:
                    old |= 1 << a
            result.append(values[old])
        return tuple(result)

    def inverse(self) -> ColumnAction:
        """The inverse permutation. Requires: nothing is dropped."""
        if len(self.action) != self.in_size_log2:
            raise ValueError("ColumnAction.inverse: a dropping action has no inverse")
        inverse = [0] * self.in_size_log2
        for j, a in enumerate(self.action):
            inverse[a] = j
        return ColumnAction(inverse, self.in_dim, self.in_size_log2)


# The builders live in core/builders.py (Triton's LayoutUtils.h); they stay importable from here.
# This import comes last because builders.py imports LinearLayout from this module; core/__init__.py
# imports this module first, so either entry point finds LinearLayout defined.
from .builders import (  # noqa: E402
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    product_1d,
    standard_out_dim_names,
    supremum,
    zeros_like,
)
