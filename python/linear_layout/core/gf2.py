"""Bit-packed linear algebra over GF(2).

A vector over GF(2) is a Python ``int``: bit ``k`` is coordinate ``k``. A matrix is a sequence of
column vectors. Python integers are arbitrary precision, so nothing here has a width cap; XOR and
``bit_length`` on small ints run at C speed, which beats array-based libraries (``galois``,
numpy) for the matrices layouts produce (tens of columns, tens of rows), where per-call overhead
dominates.

The one algorithm is Gaussian elimination by insertion into an *echelon basis*: a dict from a
pivot bit to a reduced vector whose highest set bit is that pivot. Inserting the columns of a
matrix left to right marks column ``c`` a *pivot column* exactly when it is not in the span of the
columns before it. These are the pivot columns of the reduced row echelon form, so solutions
that set every non-pivot variable to zero are the ones Triton's ``lstsq`` (built on ``f2reduce``)
returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "EchelonBasis",
    "Span",
    "apply_columns",
    "echelon_coordinates",
    "echelon_form",
    "extend",
    "intersect",
    "log2",
    "pivot_columns",
    "rank",
    "solve",
]


class EchelonBasis:
    """An incrementally built basis of a subspace, remembering how to reach each vector.

    Each stored row is ``(vector, combination)``: ``vector`` is the XOR of the inserted columns
    whose indices are the set bits of ``combination``.

    >>> basis = EchelonBasis()
    >>> [basis.insert(v, i) for i, v in enumerate([0b011, 0b110, 0b101])]
    [True, True, False]
    >>> bin(basis.solve(0b101))   # 0b101 == column 0 ^ column 1
    '0b11'
    >>> basis.solve(0b001) is None
    True
    """

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def reduce(self, vector: int) -> tuple[int, int]:
        """Return ``(residual, combination)`` with ``vector == residual ^ span-element(combination)``.

        ``residual`` is zero exactly when ``vector`` lies in the span.
        """
        rows = self._rows
        combination = 0
        while vector:
            row = rows.get(vector.bit_length() - 1)
            if row is None:
                break
            vector ^= row[0]
            combination ^= row[1]
        return vector, combination

    def insert(self, vector: int, index: int) -> bool:
        """Insert column ``index`` with value ``vector``; return whether it was independent."""
        residual, combination = self.reduce(vector)
        if not residual:
            return False
        self._rows[residual.bit_length() - 1] = (residual, combination ^ (1 << index))
        return True

    def solve(self, vector: int) -> int | None:
        """Return the combination of inserted pivot columns equal to ``vector``, or ``None``."""
        residual, combination = self.reduce(vector)
        return None if residual else combination


def rank(columns: Iterable[int]) -> int:
    """Rank of the matrix whose columns are ``columns``.

    >>> rank([0b011, 0b110, 0b101]), rank([1 << 100, 1 << 100])
    (2, 1)
    """
    return len(_rows_by_lead(columns))


def _rows_by_lead(vectors: Iterable[int]) -> dict[int, int]:
    """Gaussian elimination of ``vectors`` in order: each independent one, reduced by the rows
    before it, keyed by its leading bit (a basis of their span)."""
    rows: dict[int, int] = {}
    for vector in vectors:
        while vector:
            lead = vector.bit_length() - 1
            row = rows.get(lead)
            if row is None:
                rows[lead] = vector
                break
            vector ^= row
    return rows


def pivot_columns(columns: Sequence[int]) -> int:
    """Bit mask of the pivot columns: column ``c`` is set iff it is independent of columns ``< c``.

    >>> bin(pivot_columns([1, 0, 2, 3, 4]))
    '0b10101'
    """
    basis = EchelonBasis()
    mask = 0
    for index, vector in enumerate(columns):
        if basis.insert(vector, index):
            mask |= 1 << index
    return mask


def apply_columns(columns: Sequence[int], x: int) -> int:
    """The product ``M x``: the XOR of the columns selected by the set bits of ``x``.

    Formula: ``M x = XOR_{k : bit k of x} columns[k]``.
    Requires: ``x < 2**len(columns)`` (higher bits of ``x`` select nothing).
    Postcondition: linear, ``apply_columns(M, x ^ y) == apply_columns(M, x) ^ apply_columns(M, y)``.

    >>> apply_columns([0b011, 0b110, 0b101], 0b101)
    6
    """
    out = 0
    k = 0
    while x:
        if x & 1:
            out ^= columns[k]
        x >>= 1
        k += 1
    return out


def solve(columns: Sequence[int], vector: int) -> int | None:
    """A combination ``x`` of ``columns`` with ``M x == vector``, or ``None`` if there is none.

    Among the solutions, the one that uses pivot columns only (the first independent columns, as
    :func:`pivot_columns`): the minimum-norm choice of Triton's ``lstsq``.

    >>> solve([0b011, 0b110, 0b101], 0b101), solve([0b011, 0b110], 0b001) is None
    (3, True)
    """
    basis = EchelonBasis()
    for index, column in enumerate(columns):
        basis.insert(column, index)
    return basis.solve(vector)


class Span:
    """A subspace of GF(2)^n, grown one vector at a time.

    ``basis`` holds the inserted independent vectors in insertion order; :meth:`solve` gives
    coordinates in that basis (bit ``k`` is ``basis[k]``).

    >>> s = Span([0b011, 0b110, 0b101])
    >>> s.basis, 0b101 in s, 0b001 in s, bin(s.solve(0b101))
    ([3, 6], True, False, '0b11')
    """

    __slots__ = ("_echelon", "basis")

    def __init__(self, vectors: Iterable[int] = ()) -> None:
        self._echelon = EchelonBasis()
        self.basis: list[int] = []
        for vector in vectors:
            self.add(vector)

    def add(self, vector: int) -> bool:
        """Insert ``vector``; return whether it was independent (and joined the basis)."""
        if self._echelon.insert(vector, len(self.basis)):
            self.basis.append(vector)
            return True
        return False

    def __contains__(self, vector: int) -> bool:
        return not self._echelon.reduce(vector)[0]

    def __len__(self) -> int:
        return len(self.basis)

    def solve(self, vector: int) -> int | None:
        """Coordinates of ``vector`` in :attr:`basis`, or ``None`` outside the span."""
        return self._echelon.solve(vector)


def intersect(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """A basis of ``span(a) ∩ span(b)`` (Zassenhaus), sorted ascending.

    Formula: reduce the rows ``(v | v)`` for ``v`` in ``a`` and ``(v | 0)`` for ``v`` in ``b``
    (upper half shifted by the width); the reduced rows with an empty upper half span the
    intersection.
    Postcondition: every returned vector lies in both spans; their number is
    ``rank(a) + rank(b) - rank(a + b)``.

    >>> intersect([0b001, 0b010], [0b011, 0b100])
    [3]
    """
    width = max([v.bit_length() for v in list(a) + list(b)] + [1])
    rows = _rows_by_lead([(v << width) | v for v in a] + [v << width for v in b])
    return sorted(r for lead, r in rows.items() if lead < width)


def extend(
    base: Sequence[int], candidates: Iterable[int], target: int | None = None, within: Span | None = None
) -> list[int]:
    """The independent vectors of ``base``, then the ``candidates`` (in order) independent of
    everything before them and inside ``within`` (when given), up to ``target`` vectors.

    >>> extend([1, 1], [2, 3, 4], target=3)
    [1, 2, 4]
    """
    span = Span(base)
    out = list(span.basis)
    for candidate in candidates:
        if target is not None and len(out) >= target:
            break
        if within is not None and candidate not in within:
            continue
        if span.add(candidate):
            out.append(candidate)
    return out


def echelon_form(columns: Iterable[int]) -> list[int]:
    """A basis of the span of ``columns`` with distinct leading bits, sorted by decreasing
    leading bit (each vector reduced by the ones before it).

    >>> echelon_form([0b011, 0b110, 0b101])
    [5, 3]
    """
    basis: list[int] = []
    for column in columns:
        for vector in basis:
            column = min(column, column ^ vector)
        if column:
            basis.append(column)
            basis.sort(reverse=True)
    return basis


def echelon_coordinates(basis: Sequence[int], vector: int) -> int:
    """Coordinates of ``vector`` in an :func:`echelon_form` basis (bit ``k`` is ``basis[k]``).

    Requires: ``vector`` in the span of ``basis`` (otherwise the residue is dropped).

    >>> echelon_coordinates([5, 3], 0b110)
    3
    """
    coordinates = 0
    for k, row in enumerate(basis):
        if vector ^ row < vector:
            vector ^= row
            coordinates |= 1 << k
    return coordinates


def log2(size: int) -> int:
    """``floor(log2(size))`` for ``size >= 1`` (exact for powers of two).

    >>> log2(1), log2(32), log2(33)
    (0, 5, 5)
    """
    return size.bit_length() - 1
