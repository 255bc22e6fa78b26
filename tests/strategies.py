"""Hypothesis strategies for linear layouts, shared by the algebra tests.

Layouts are drawn as :class:`Spec` values -- plain bases, output names and sizes -- so that the
very same description can be built both by ``linear_layout`` and by Triton's binding. Triton's C++
aborts the whole process on invalid input, so every strategy here produces valid input by
construction (never by filtering afterwards): sizes are powers of two, coordinates are in range and
below 2**31, and ``surjective=True`` specs really are surjective.

The generated layouts cover what real layouts contain and what breaks implementations: several
input dimensions (including size-1 ones), zero (broadcast) bases, repeated bases (non-injective),
unit bases (permutations, as in blocked and MMA layouts), random bases (XOR swizzles), output
dimensions larger than the image (non-surjective), and dimension orders that differ between
layouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from linear_layout import LinearLayout

IN_NAMES = ("register", "lane", "warp", "block", "offset", "in5")
OUT_NAMES = ("dim0", "dim1", "dim2", "dim3")
DISTRIBUTED_INS = ("register", "lane", "warp", "block")
SHARED_INS = ("offset", "block")


# ---------------------------------------------------------------- an independent GF(2) rank

def rank(columns: Sequence[int]) -> int:
    """Rank over GF(2) of integer bit-vectors; deliberately independent of ``linear_layout.core.gf2``."""
    pivots: dict[int, int] = {}
    for vector in columns:
        while vector:
            top = vector.bit_length() - 1
            if top not in pivots:
                pivots[top] = vector
                break
            vector ^= pivots[top]
    return len(pivots)


# ---------------------------------------------------------------- the spec

@dataclass(frozen=True)
class Spec:
    """A layout as plain data: ``bases`` is ``((in_name, (basis, ...)), ...)``."""

    bases: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]
    out_names: tuple[str, ...]
    out_sizes: tuple[int, ...]

    @property
    def in_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.bases)

    @property
    def in_bits(self) -> dict[str, int]:
        return {name: len(bs) for name, bs in self.bases}

    @property
    def out_bits(self) -> dict[str, int]:
        return {name: size.bit_length() - 1 for name, size in zip(self.out_names, self.out_sizes)}

    @property
    def total_in_bits(self) -> int:
        return sum(len(bs) for _, bs in self.bases)

    @property
    def total_out_bits(self) -> int:
        return sum(self.out_bits.values())

    def columns(self) -> list[int]:
        """Each basis packed into one int, first output dimension in the low bits."""
        shifts, shift = [], 0
        for size in self.out_sizes:
            shifts.append(shift)
            shift += size.bit_length() - 1
        return [sum(v << s for v, s in zip(basis, shifts)) for _, bs in self.bases for basis in bs]

    def is_surjective(self) -> bool:
        return rank(self.columns()) == self.total_out_bits

    def ours(self) -> LinearLayout:
        return LinearLayout.from_bases(
            [(name, [list(b) for b in bs]) for name, bs in self.bases],
            list(self.out_names), list(self.out_sizes), require_surjective=False,
        )

    def triton(self):
        from triton.tools import LinearLayout as TL

        return TL.from_bases(
            [(name, [list(b) for b in bs]) for name, bs in self.bases],
            list(self.out_names), list(self.out_sizes), False,
        )


def spec_of(layout: LinearLayout) -> Spec:
    """The spec of one of our layouts (to hand a derived layout to Triton)."""
    names, sizes = zip(*layout.out_dims) if layout.out_dims else ((), ())
    return Spec(tuple((n, tuple(tuple(b) for b in bs)) for n, bs in layout.bases), tuple(names), tuple(sizes))


# ---------------------------------------------------------------- drawing pieces

def _split_bits(draw, total: int, parts: int, max_each: int) -> list[int]:
    """``parts`` numbers in ``[0, max_each]`` summing to ``total`` (requires it to be possible)."""
    bits = [0] * parts
    for _ in range(total):
        open_parts = [i for i in range(parts) if bits[i] < max_each]
        bits[draw(st.sampled_from(open_parts))] += 1
    return bits


def _column(draw, out_bits: int, zero_weight: int) -> int:
    """One packed basis: zero (broadcast), a unit vector, a pair of units, or anything."""
    if out_bits == 0:
        return 0
    kind = draw(st.integers(0, 9 + zero_weight))
    if kind >= 10:
        return 0
    if kind < 5:
        return 1 << draw(st.integers(0, out_bits - 1))
    if kind < 7:
        return (1 << draw(st.integers(0, out_bits - 1))) ^ (1 << draw(st.integers(0, out_bits - 1)))
    return draw(st.integers(0, (1 << out_bits) - 1))


def _make_surjective(draw, columns: list[int], out_bits: int) -> None:
    """Raise the rank to ``out_bits`` by XORing unit vectors into redundant columns.

    A column in the span of the others, XORed with a unit vector outside the span, raises the
    rank by one; there is always such a column while ``rank < out_bits <= len(columns)``.
    """
    current = rank(columns)
    while current < out_bits:
        redundant = [i for i in range(len(columns)) if rank(columns[:i] + columns[i + 1:]) == current]
        missing = [k for k in range(out_bits) if rank(columns + [1 << k]) > current]
        i = draw(st.sampled_from(redundant))
        columns[i] ^= 1 << draw(st.sampled_from(missing))
        current += 1


def _names(draw, pool: Sequence[str], count: int, keep_pool_order: bool) -> list[str]:
    chosen = draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count, unique=True))
    return sorted(chosen, key=pool.index) if keep_pool_order else chosen


@st.composite
def layout_specs(
    draw,
    *,
    in_dims: Sequence[tuple[str, int]] | None = None,
    out_dims: Sequence[tuple[str, int]] | None = None,
    in_names: Sequence[str] | None = None,
    out_names: Sequence[str] | None = None,
    in_pool: Sequence[str] = IN_NAMES,
    out_pool: Sequence[str] = OUT_NAMES,
    keep_pool_order: bool = False,
    min_in_dims: int = 0,
    max_in_dims: int = 4,
    min_out_dims: int = 0,
    max_out_dims: int = 3,
    max_in_bits: int = 18,
    max_out_bits: int = 18,
    max_dim_bits: int = 10,
    surjective: bool | None = None,
    square: bool = False,
    zero_weight: int = 2,
):
    """A :class:`Spec`.

    ``in_dims`` / ``out_dims`` fix the dimensions as ``(name, log2 size)``; ``in_names`` /
    ``out_names`` fix just the names (in that order). Otherwise names are drawn from the pools
    (in pool order if ``keep_pool_order``, so that any two drawn layouts order their common
    dimensions alike, as ``*`` requires), and sizes up to ``2**max_dim_bits`` within the totals.

    ``surjective``: True forces a surjective layout, False a non-surjective one (when there are
    output bits), None leaves it to chance. ``square`` makes the input and output bit counts
    equal, so a square surjective layout is invertible. ``zero_weight`` tunes how often a basis
    is zero (a broadcast).
    """
    if out_dims is None:
        if out_names is None:
            n_out = draw(st.integers(min_out_dims, min(max_out_dims, len(out_pool))))
            out_names = _names(draw, out_pool, n_out, keep_pool_order)
        n_out = len(out_names)
        budget = max_out_bits
        if surjective:  # every output bit needs an input bit
            budget = min(budget, max_in_bits if in_names is None or in_names else 0)
        total_out = draw(st.integers(0, min(budget, n_out * max_dim_bits)))
        out_widths = _split_bits(draw, total_out, n_out, max_dim_bits)
    else:
        out_names = [n for n, _ in out_dims]
        out_widths = [b for _, b in out_dims]
    total_out = sum(out_widths)

    if in_dims is None:
        need = total_out if (surjective or square) else 0
        min_dims = max(min_in_dims, 1 if need else 0)
        if in_names is None:
            n_in = draw(st.integers(min_dims, max(min_dims, min(max_in_dims, len(in_pool)))))
            in_names = _names(draw, in_pool, n_in, keep_pool_order)
        n_in = len(in_names)
        if square:
            total_in = total_out
        else:
            total_in = draw(st.integers(need, max(need, min(max_in_bits, n_in * max_dim_bits))))
        in_widths = _split_bits(draw, total_in, n_in, max(max_dim_bits, -(-total_in // max(n_in, 1))))
    else:
        in_names = [n for n, _ in in_dims]
        in_widths = [b for _, b in in_dims]
    total_in = sum(in_widths)

    columns = [_column(draw, total_out, zero_weight) for _ in range(total_in)]
    if surjective:
        assert total_in >= total_out, "a surjective layout needs at least as many input bits"
        _make_surjective(draw, columns, total_out)
    elif surjective is False and total_out and rank(columns) == total_out:
        # Make room for an unreachable output: drop the top bit of the last non-empty out dim's
        # image by zeroing that bit everywhere (then the output still has the old size).
        top = total_out - 1
        columns = [c & ~(1 << top) for c in columns]

    shifts, shift = [], 0
    for width in out_widths:
        shifts.append(shift)
        shift += width
    bases, position = [], 0
    for name, width in zip(in_names, in_widths):
        in_bases = []
        for col in columns[position:position + width]:
            in_bases.append(tuple((col >> s) & ((1 << w) - 1) for s, w in zip(shifts, out_widths)))
        bases.append((name, tuple(in_bases)))
        position += width
    return Spec(tuple(bases), tuple(out_names), tuple(1 << w for w in out_widths))


def layouts(**kwargs):
    """Our layouts (see :func:`layout_specs` for the parameters)."""
    return layout_specs(**kwargs).map(Spec.ours)


@st.composite
def in_values(draw, layout: LinearLayout, overflow: bool = False):
    """An ``apply`` argument: one value per input dimension, optionally with bits above its size."""
    values = {}
    for name in layout.get_in_dim_names():
        bits = layout.get_in_dim_size_log2(name) + (draw(st.integers(0, 3)) if overflow else 0)
        values[name] = draw(st.integers(0, (1 << bits) - 1))
    return values


@st.composite
def composable_pairs(draw, max_bits: int = 14, **kwargs):
    """``(A, B)`` specs with ``A.compose(B)`` defined: B's inputs are A's outputs, at least as big."""
    a = draw(layout_specs(max_in_bits=max_bits, max_out_bits=max_bits, **kwargs))
    b_in = [(name, bits + draw(st.integers(0, 2))) for name, bits in a.out_bits.items()]
    b_in = draw(st.permutations(b_in))
    b = draw(layout_specs(in_dims=b_in, max_out_bits=max_bits, **kwargs))
    return a, b


@st.composite
def invert_and_compose_pairs(draw, max_bits: int = 14):
    """``(self, outer)`` specs valid for ``self.invert_and_compose(outer)``.

    ``outer`` is surjective; ``self`` has the same output names (in its own order) and sizes no
    bigger than ``outer``'s, so its image is covered. Some of ``outer``'s input dimensions are
    copied into ``self`` verbatim, to exercise the rule that maps such dimensions identically.
    """
    outer = draw(layout_specs(surjective=True, min_out_dims=1, max_in_bits=max_bits, max_out_bits=max_bits))
    shrink = draw(st.booleans())
    self_outs = [(name, bits - (draw(st.integers(0, min(bits, 1))) if shrink else 0))
                 for name, bits in outer.out_bits.items()]
    self_outs = draw(st.permutations(self_outs))
    self_spec = draw(layout_specs(out_dims=self_outs, max_in_bits=max_bits))

    # Copy some of outer's input dimensions (bases reordered to self's output order) if they fit.
    sizes = dict(zip(self_spec.out_names, self_spec.out_sizes))
    order = [outer.out_names.index(name) for name in self_spec.out_names]
    bases = dict(self_spec.bases)
    names = list(self_spec.in_names)
    for name, outer_bases in outer.bases:
        if draw(st.integers(0, 2)) != 0:
            continue
        copied = tuple(tuple(basis[k] for k in order) for basis in outer_bases)
        if all(v < sizes[n] for basis in copied for v, n in zip(basis, self_spec.out_names)):
            if name not in bases:
                names.insert(draw(st.integers(0, len(names))), name)
            bases[name] = copied
    self_spec = Spec(tuple((n, bases[n]) for n in names), self_spec.out_names, self_spec.out_sizes)
    return self_spec, outer


def _chain(draw, pool: Sequence[str], lengths: Sequence[int]) -> list[list[str]]:
    """Nested name lists (each a subsequence of the next), in pool order, then randomly reversed."""
    names = sorted(draw(st.lists(st.sampled_from(pool), min_size=max(lengths), max_size=max(lengths),
                                 unique=True)), key=pool.index)
    chain = [sorted(names[:n], key=pool.index) for n in sorted(lengths)]
    return chain if draw(st.booleans()) else chain[::-1]


@st.composite
def product_pairs(draw, max_bits: int = 8, **kwargs):
    """Two specs whose common dimensions appear in the same relative order, so ``A * B`` is defined."""
    in_pool = tuple(draw(st.permutations(IN_NAMES)))
    out_pool = tuple(draw(st.permutations(OUT_NAMES)))
    make = layout_specs(in_pool=in_pool, out_pool=out_pool, keep_pool_order=True,
                        max_in_bits=max_bits, max_out_bits=max_bits, max_dim_bits=4, **kwargs)
    return draw(make), draw(make)


@st.composite
def product_triples(draw, max_bits: int = 8, **kwargs):
    """Three specs for which ``(A * B) * C`` and ``A * (B * C)`` are both defined.

    Any two layouts whose common dimensions agree in order can be multiplied, but the product's
    merged order may then disagree with a third layout. Nested name sets (in one pool order) keep
    every partial product's order a subsequence of the largest layout's.
    """
    in_pool = tuple(draw(st.permutations(IN_NAMES)))
    out_pool = tuple(draw(st.permutations(OUT_NAMES)))
    in_chain = _chain(draw, in_pool, [draw(st.integers(0, 4)) for _ in range(3)])
    out_chain = _chain(draw, out_pool, [draw(st.integers(0, 3)) for _ in range(3)])
    specs = [draw(layout_specs(in_names=ins, out_names=outs, max_in_bits=max_bits,
                               max_out_bits=max_bits, max_dim_bits=4, **kwargs))
             for ins, outs in zip(in_chain, out_chain)]
    return tuple(specs)


# ---------------------------------------------------------------- encoding parameters


def pow2(lo, hi):
    return st.integers(lo, hi).map(lambda k: 1 << k)


@st.composite
def split_bits(draw, total_log2, rank):
    """Powers of two, one per dim, multiplying to 2**total_log2."""
    logs = [0] * rank
    for _ in range(total_log2):
        logs[draw(st.integers(0, rank - 1))] += 1
    return tuple(1 << k for k in logs)


@st.composite
def cga_layouts(draw, rank, max_blocks_log2=2):
    """CGA bases: each CTA bit either splits one dim (unit bits, in any order) or broadcasts (zero)."""
    n = draw(st.integers(0, max_blocks_log2))
    splits = [0] * rank
    bases = []
    for _ in range(n):
        if draw(st.booleans()) or not bases:
            d = draw(st.integers(0, rank - 1))
            b = [0] * rank
            b[d] = 1 << splits[d]
            splits[d] += 1
            bases.append(b)
        else:
            bases.append([0] * rank)
    return tuple(tuple(b) for b in draw(st.permutations(bases)))
