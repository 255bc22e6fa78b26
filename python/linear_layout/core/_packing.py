"""Private to ``core``: how :class:`~linear_layout.core.layout.LinearLayout` packs its columns, and
the one bounded cache its plans live in.

A layout stores each basis as one packed integer, output dimension ``k`` in the bits just above
those of dimensions ``< k``. The operations that move columns between packings (``*``,
``transpose_outs``, ``sublayout``, ``ensure_layout_not_*``, ``invert_and_compose``) depend on the
dimensions only, never on the bases, so each computes a *plan* once per dimension signature -- the
field moves below -- and keeps it in a :class:`BoundedCache`.

Nothing here is public; ``core.layout`` and ``core.builders`` are the API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(dict[K, V]):
    """A memo of at most ``limit`` entries that empties itself when full.

    A plain ``dict`` underneath, so a hit is the C ``dict.get`` on the hot path; ``store`` is the
    only way in. Every plan cache of the core is one of these (programs use few distinct shapes,
    and a fuzzer using many must not grow them without bound). Values must be immutable: tuples,
    ints and pure functions.

    Requires: ``limit >= 1``.
    Postcondition: ``len(cache) <= limit`` after every ``store``.

    >>> cache: BoundedCache[str, int] = BoundedCache(2)
    >>> [cache.store(key, n) for n, key in enumerate("abc")], sorted(cache)
    ([0, 1, 2], ['c'])
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int = 4096) -> None:
        super().__init__()
        self.limit = limit

    def store(self, key: K, value: V) -> V:
        """Remember ``value`` under ``key`` (emptying the cache first when it is full); return ``value``."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


def join_dims(names: Iterable[str]) -> str:
    """``[a, b, c]``: dimension names as error messages show them."""
    return "[" + ", ".join(names) + "]"


# The columns of identity_1d(2**n): unit vectors 1, 2, 4, ... (shared immutable tuples).
UNITS = tuple(tuple(1 << i for i in range(n)) for n in range(64))


def units(n: int) -> tuple[int, ...]:
    """The ``n`` unit columns ``1, 2, 4, ...``."""
    return UNITS[n] if n < 64 else tuple(1 << i for i in range(n))


def support(cols: Iterable[int]) -> int:
    """The output bits touched by any of ``cols``."""
    mask = 0
    for col in cols:
        mask |= col
    return mask


def field_moves(
    outs: tuple[tuple[str, int], ...], target_fields: Mapping[str, tuple[int, int]]
) -> tuple[list[tuple[int, int, int]], bool]:
    """The ``(source shift, mask, target shift)`` moves taking columns packed for ``outs`` into the
    packing ``target_fields`` describes, and whether that is the identity.  Neighbouring fields that
    move by the same distance are one move (one mask covering both)."""
    moves: list[tuple[int, int, int]] = []
    shift = 0
    identity = len(target_fields) == len(outs)
    for name, size in outs:
        width = size.bit_length() - 1
        target = target_fields.get(name)
        if target is None:
            identity = False
        elif width:
            dst = target[0]
            last = moves[-1] if moves else None
            if last is not None and last[0] + last[1].bit_length() == shift and dst - last[2] == shift - last[0]:
                moves[-1] = (last[0], (1 << (last[1].bit_length() + width)) - 1, last[2])
            else:
                moves.append((shift, (1 << width) - 1, dst))
            identity = identity and shift == dst
        shift += width
    return moves, identity


def field_moves_mover(
    outs: tuple[tuple[str, int], ...], target_fields: Mapping[str, tuple[int, int]]
) -> Callable[[Sequence[int]], Any]:
    """The repacker from columns packed for ``outs`` into ``target_fields`` (``LinearLayout._repacker``)."""
    moves, identity = field_moves(outs, target_fields)
    return list if identity else mover(moves)


def mover(moves: list[tuple[int, int, int]]) -> Callable[[Sequence[int]], list[int]]:
    """A function applying ``moves`` to a sequence of packed columns.  Comprehensions specialised to
    the common small cases: this is the inner loop of ``*``, ``sublayout``, ``transpose_outs``,
    ``ensure_layout_not_*`` and ``invert_and_compose``."""
    if not moves:
        return lambda cols: [0] * len(cols)
    if len(moves) == 1:
        ((s0, m0, d0),) = moves
        if s0 == d0:
            return lambda cols: [c & m0 for c in cols]
        return lambda cols: [((c >> s0) & m0) << d0 for c in cols]
    if len(moves) == 2:
        (s0, m0, d0), (s1, m1, d1) = moves
        return lambda cols: [(((c >> s0) & m0) << d0) | (((c >> s1) & m1) << d1) for c in cols]
    if len(moves) == 3:
        (s0, m0, d0), (s1, m1, d1), (s2, m2, d2) = moves
        return lambda cols: [
            (((c >> s0) & m0) << d0) | (((c >> s1) & m1) << d1) | (((c >> s2) & m2) << d2) for c in cols
        ]

    def repack(cols: Sequence[int]) -> list[int]:
        result = []
        for col in cols:
            packed = 0
            for src, mask, dst in moves:
                packed |= ((col >> src) & mask) << dst
            result.append(packed)
        return result

    return repack


def supremum(x: Sequence[str], y: Sequence[str], what: str = "dimensions") -> tuple[str, ...]:
    """The shortest list containing ``x`` and ``y`` as subsequences, preferring ``x`` on ties.

    Requires: common names appear in the same relative order in both.
    Postcondition: ``x`` and ``y`` are subsequences of the result, which has no duplicates.

    >>> supremum(["a", "b"], ["a", "c"])
    ('a', 'b', 'c')
    """
    x, y = tuple(x), tuple(y)
    if x == y:
        return x
    rest = iter(x)
    for name in y:
        if name not in rest:  # `in` advances the iterator: is y a subsequence of x?
            break
    else:
        return x  # the common case of `*`: the outer layout's dimensions are among the inner's, in order
    in_x, in_y = set(x), set(y)
    result: list[str] = []
    i = j = 0
    while i < len(x) or j < len(y):
        if i < len(x) and j < len(y) and x[i] == y[j]:
            result.append(x[i])
            i += 1
            j += 1
        elif i < len(x) and x[i] not in in_y:
            result.append(x[i])
            i += 1
        elif j < len(y) and y[j] not in in_x:
            result.append(y[j])
            j += 1
        else:
            raise ValueError(
                f"{what} common to both layouts must appear in the same relative order, got "
                f"{join_dims(x)} and {join_dims(y)}"
            )
    return tuple(result)
