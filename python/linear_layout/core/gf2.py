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

__all__ = ["EchelonBasis", "rank", "pivot_columns"]


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
    rows: dict[int, int] = {}
    for vector in columns:
        while vector:
            lead = vector.bit_length() - 1
            row = rows.get(lead)
            if row is None:
                rows[lead] = vector
                break
            vector ^= row
    return len(rows)


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
