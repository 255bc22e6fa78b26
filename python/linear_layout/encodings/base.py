"""What every encoding family shares: errors, argument checks, the CGA combination, the cache.

An encoding is a frozen dataclass.  Its ``_build(shape)`` returns the ``LinearLayout`` Triton 3.9's
``toLinearLayout`` builds, assembled from the algebra's own builders (``identity_standard_nd``,
``product_1d``, ``*``, ``ensure_layout_not_smaller_than``/``_larger_than``) exactly as Triton's
``LinearLayoutConversions.cpp`` assembles it from ``identityND``, ``identity1D`` and ``*``.  A chain
``identity1D(...) * identity1D(...) * ...`` is written as the list of its factors (a :data:`Factor`
each) and built by one ``product_1d``, which skips the intermediate layouts.
:func:`linear_layout_of` checks the arguments, calls ``_build`` once per (layout, shape) and checks
the result: every tensor element has an owner (the layout is surjective).

Pure: numpy and the core only, never ``mlir``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

from ..core import display
from ..core.arguments import is_sequence, short
from ..core.hardware import HW_DIMS, SHARED_DIMS
from ..core.layout import (
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    product_1d,
    standard_out_dim_names,
)
from ..core.limits import MAX_ELEMENTS, LimitError

__all__ = [
    "MAX_RANK",
    "Basis",
    "BasisList",
    "DistributedLayout",
    "EncodingError",
    "EncodingSyntaxError",
    "SharedLayout",
    "format_hardware_view",
    "format_tensor_view",
    "launch_sizes",
    "to_linear_layout",
    "verify_module_sizes",
]

Basis = tuple[int, ...]
BasisList = tuple[Basis, ...]
#: One factor of ``product_1d``: ``(size, in_dim, out_dim)`` is ``identity_1d``, a fourth entry 0 is ``zeros_1d``.
Factor = tuple[Any, ...]
#: The last factor of a tile: it lists the ``block`` in-dim, without bases (the CGA layout places the tiles).
BLOCK: Factor = (1, "block", "dim0")

#: The highest tensor rank an encoding may have (Triton's kernels use at most 5).
MAX_RANK = 16


class EncodingError(ValueError):
    """An encoding whose parameters break one of Triton's rules, or a shape it cannot take."""


class EncodingSyntaxError(EncodingError):
    """Encoding text that cannot be read: a syntax error, an unknown name, key or alias."""


# ----------------------------------------------------------------------------
# Argument checks (every message names the argument and the rule it broke)
# ----------------------------------------------------------------------------


def type_name(value: object) -> str:
    return type(value).__name__


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def log2(n: int) -> int:
    return n.bit_length() - 1


def integer(name: str, value: object) -> int:
    """``value`` as an int (numpy integers too); bools and everything else are a TypeError."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got bool {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type_name(value)} {short(value)}") from None


def flag(name: str, value: object) -> bool:
    """A bool parameter: True/False (or 0/1)."""
    if isinstance(value, bool):
        return value
    try:  # a numpy array has __index__ but refuses it unless it is a 0-d integer one
        index = None if isinstance(value, str) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        index = None
    if index not in (0, 1):
        raise TypeError(f"{name} must be a bool, got {type_name(value)} {short(value)}")
    return bool(index)


def ints(name: str, values: object) -> tuple[int, ...]:
    """A sequence of integers as a tuple; anything else (a set, a mapping, a string) is a TypeError naming ``name``.
    A tuple of plain ints (what the readers and the other families pass) is returned as it is."""
    if type(values) is tuple and len(values) <= MAX_RANK and _plain_ints(values):
        return values
    if not is_sequence(values):
        raise TypeError(f"{name} must be a sequence of integers, got {type_name(values)} {short(values)}")
    out = tuple(values)
    if len(out) > MAX_RANK:
        raise LimitError(f"{name} has {len(out)} entries; the most an encoding may have is {MAX_RANK} (the rank limit)")
    return tuple(integer(f"{name} entry", v) for v in out)


def plain_int_tuples(values: Sequence[object]) -> bool:
    """Whether every one of ``values`` is a tuple of at most ``MAX_RANK`` plain ints: a field
    :func:`ints` would return as it is (the text readers pass such tuples).

    Example: ``plain_int_tuples([(1, 2), ()])`` is True; ``plain_int_tuples([[1, 2]])`` and
    ``plain_int_tuples([(True,)])`` are False."""
    for value in values:  # noqa: SIM110 (a plain loop: faster than all() on a generator)
        if type(value) is not tuple or len(value) > MAX_RANK or not _plain_ints(value):
            return False
    return True


def basis_list(name: str, values: object, rank: int | None = None) -> BasisList:
    """A sequence of bases (each a sequence of non-negative ints, ``rank`` long if given)."""
    if not is_sequence(values):
        raise TypeError(f"{name} must be a sequence of bases, got {type_name(values)} {short(values)}")
    out = tuple(ints(f"{name} basis", b) for b in values)
    for b in out:
        if rank is not None and len(b) != rank:
            raise EncodingError(f"{name}: every basis must have {rank} entries (the rank), got {list(b)}")
        if any(v < 0 for v in b):
            raise EncodingError(f"{name}: basis entries must be non-negative, got {list(b)}")
    return out


def check_pow2(name: str, values: Sequence[int]) -> None:
    for v in values:
        if not is_pow2(v):
            raise EncodingError(f"{name} must contain only powers of two, got {list(values)}")


def check_order(order: Sequence[int], rank: int, name: str = "order") -> None:
    """``order`` is a permutation of ``0..rank-1``, and not empty: every family using one has rank >= 1."""
    if rank < 1:
        raise EncodingError(f"{name} must not be empty: the layout needs rank >= 1")
    if sorted(order) != list(range(rank)):
        raise EncodingError(f"{name} must be a permutation of 0..{rank - 1}, got {list(order)}")


def check_rank(name: str, rank: int) -> None:
    if rank > MAX_RANK:
        raise LimitError(f"{name} has rank {rank}; the most an encoding may have is {MAX_RANK} (the rank limit)")


def non_unit_basis(bases: Sequence[Basis]) -> tuple[Basis, str] | None:
    """Triton's permutation-matrix rule (``isPermutationMatrixLayout``): without its zero
    (broadcast) bases, a layout is a permutation matrix, so every non-zero basis is one power of two
    in one dim, and no two are alike. The first basis breaking the rule, and how; None if none does.

    Requires: non-negative entries. Postcondition: None means the non-zero bases are distinct unit
    bits; with no bit skipped (surjective onto the bases' box) they are a permutation matrix.
    Example: ``[[0, 1], [0, 2], [1, 0], [0, 0]]`` gives None; ``[[0, 3]]`` gives ``((0, 3), "not a
    single power of two")`` and ``[[0, 1], [0, 1]]`` gives ``((0, 1), "a repeat")``.
    """
    seen: set[tuple[int, int]] = set()
    for b in bases:
        nonzero = [(d, v) for d, v in enumerate(b) if v]
        if not nonzero:
            continue
        if len(nonzero) != 1 or not is_pow2(nonzero[0][1]):
            return tuple(b), "not a single power of two"
        if nonzero[0] in seen:
            return tuple(b), "a repeat"
        seen.add(nonzero[0])
    return None


def check_unit_bases(what: str, bases: Sequence[Basis]) -> None:
    """:func:`non_unit_basis` as an :class:`EncodingError` naming ``what``."""
    problem = non_unit_basis(bases)
    if problem is not None:
        raise EncodingError(
            f"{what} without its zero bases must be a permutation matrix (each basis one distinct power "
            f"of two in one dim), but basis {list(problem[0])} is {problem[1]}; all its bases: {[list(b) for b in bases]}"
        )


def check_cga(cga_layout: BasisList, rank: int) -> None:
    """Triton's CGAEncodingAttr rule: without its zero (broadcast) bases the CGA layout is a
    permutation matrix, so each dim is split by distinct bits 1, 2, 4, ... (no gaps)."""
    for b in cga_layout:
        if len(b) != rank:
            raise EncodingError(f"cga_layout bases must have {rank} entries (the layout rank), got {list(b)}")
    check_unit_bases("cga_layout", cga_layout)
    seen: list[set[int]] = [set() for _ in range(rank)]
    for b in cga_layout:
        for d, v in enumerate(b):
            if v:
                seen[d].add(v)
    for d, powers in enumerate(seen):
        if powers and max(powers) >= 1 << len(powers):
            raise EncodingError(
                f"cga_layout must be surjective: dim {d} is split by {sorted(powers)}, which skips a bit"
            )


def box_sizes(bases: Sequence[Basis], rank: int) -> tuple[int, ...]:
    """The box a list of bases spans: per dim, the next power of two above its largest entry
    (Triton's size inference in ``LinearLayout(bases, outDimNames)``)."""
    tops = [0] * rank
    for b in bases:
        for d in range(rank):
            tops[d] |= b[d]
    return tuple(1 << top.bit_length() for top in tops)


def check_shape(shape: object, rank: int) -> tuple[int, ...]:
    """A tensor shape for a rank-``rank`` layout: powers of two, at most ``MAX_ELEMENTS`` elements."""
    dims: tuple[int, ...] = shape if type(shape) is tuple and _plain_ints(shape) else ints("shape", shape)
    if len(dims) != rank:
        raise EncodingError(f"shape {list(dims)} has rank {len(dims)}, but the layout has rank {rank}")
    total = 0
    for size in dims:
        if size < 1 or size & (size - 1):
            check_pow2("shape", dims)
        total += size.bit_length() - 1
    if 1 << total > MAX_ELEMENTS:
        raise LimitError(
            f"shape {list(dims)} holds 2**{total} elements, more than the limit of 2**{log2(MAX_ELEMENTS)} elements"
        )
    return dims


def int_fields(obj: object, *names: str) -> tuple[tuple[int, ...], ...]:
    """The fields ``names`` of an encoding read as sequences of integers (:func:`ints`), in order."""
    return tuple([ints(name, getattr(obj, name)) for name in names])


def store_fields(obj: Any, cga_rank: int, /, **values: object) -> None:
    """Store the normalised fields of a frozen encoding in ``__post_init__``: ``values``, and the two
    fields several families declare, normalised alike in each unless ``values`` has them:
    ``cga_layout``, a basis list checked against ``cga_rank`` (Triton's CGAEncodingAttr rule), and
    ``transposed``, a bool."""
    declared = obj.__dataclass_fields__
    if "cga_layout" in declared and "cga_layout" not in values:
        cga = basis_list("cga_layout", obj.cga_layout)
        check_cga(cga, cga_rank)
        values["cga_layout"] = cga
    if "transposed" in declared:
        values["transposed"] = flag("transposed", obj.transposed)
    for name, value in values.items():
        object.__setattr__(obj, name, value)


# ----------------------------------------------------------------------------
# Building blocks shared by the families (Triton's helpers of the same names)
# ----------------------------------------------------------------------------


#: ``("dim0", ..., "dim{rank-1}")``: the algebra's standard out-dim names (the same function).
dim_names = standard_out_dim_names


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's getMatrixOrder: [rank-1, ..., 0], with the two minor dims swapped if column-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def times(inner: LinearLayout, outer: LinearLayout) -> LinearLayout:
    """``inner * outer`` with ``outer``'s out dims first put in ``inner``'s order, as Triton's
    ``ctaLayout *= x.transposeOuts(ctaLayout.getOutDimNames())``; dims only ``outer`` has go last."""
    inner_names = inner.get_out_dim_names()
    outer_names = outer.get_out_dim_names()
    aligned = [n for n in inner_names if n in outer_names]
    aligned += [n for n in outer_names if n not in inner_names]
    if tuple(aligned) != outer_names:
        outer = outer.transpose_outs(aligned)
    return inner * outer


def standard_factors(in_dim: str, shape: Sequence[int], order: Sequence[int], broadcast: int = -1) -> list[Factor]:
    """The ``product_1d`` factors of ``identity_standard_nd(in_dim, shape, order)``: one
    ``identity_1d(shape[d], in_dim, dim{d})`` per ``d`` in ``order``.  With ``broadcast`` a dim, that
    dim's factor is ``zeros_1d`` instead (Triton's broadcastedDotOperandLayout: every step along K
    hits the same data)."""
    names = dim_names(len(shape))
    return [(shape[d], in_dim, names[d], 0) if d == broadcast else (shape[d], in_dim, names[d]) for d in order]


def listed_dims(in_dim: str, dims: Sequence[int], rank: int) -> list[Factor]:
    """Factors ``identity_1d(1, in_dim, dim{d})`` for ``d`` in ``dims``: no basis, but the out dims
    listed in that order (as Triton starts a tile from ``identityStandardND(in_dim, ones, order)``,
    which decides where a later ``ensure_layout_not_smaller_than`` puts repetitions)."""
    names = dim_names(rank)
    return [(1, in_dim, names[d]) for d in dims]


def zeroed_along(bases: BasisList, dim: int) -> BasisList:
    """``bases`` with their ``dim`` components zeroed (a projection: CTAs or tiles never split that dim)."""
    return tuple([b[:dim] + (0,) + b[dim + 1 :] for b in bases])


def cga_sizes(cga_layout: BasisList, rank: int) -> tuple[int, ...]:
    """How many CTAs tile each dim: the CGA layout's out-dim sizes."""
    return box_sizes(cga_layout, rank)


def shape_per_cta(shape: Sequence[int], cga_layout: BasisList) -> list[int]:
    if not cga_layout:  # one CTA holds the whole shape
        return list(shape)
    sizes = cga_sizes(cga_layout, len(shape))
    for d, (s, c) in enumerate(zip(shape, sizes)):
        if s % c:
            raise EncodingError(f"shape {list(shape)} is not divisible by the CGA layout along dim {d} ({c} CTAs)")
    return [s // c for s, c in zip(shape, sizes)]


def combine_cta_cga(cta: LinearLayout, cga_layout: BasisList, shape: Sequence[int]) -> LinearLayout:
    """Triton's combineCtaCgaWithShape: fit the per-CTA layout to ``shape / CGA size`` (repeat into
    the first in-dim, then broadcast what is too large), then place each CTA's tile with the
    shape-clipped CGA bases as the ``block`` in-dim.

    Formula: ``ensure_not_larger(ensure_not_smaller(cta, s_cta), s_cta) * ensure_not_larger(cga, shape)``
    with ``s_cta = max(1, shape / cga sizes)``, out dims then put in standard order.
    Requires: ``cta``'s out dims are ``dim0..dim{rank-1}`` in any order; a ``block`` in-dim it
    may list has no bases (a tile's, listed by its factors: the CGA layout places the tiles).
    Postcondition: the result's out dims are ``dim0..`` with sizes ``shape``.
    """
    rank = len(shape)
    names = dim_names(rank)
    labeled = dict(zip(names, shape))
    if not cga_layout:  # one CTA: fit the tile to the whole shape, then add a block in-dim without bases
        cta = _fit(cta, labeled)
        if cta.get_out_dim_names() != names:
            cta = cta.transpose_outs(names)
        return cta if cta.has_in_dim("block") else cta * _ONE_CTA[rank]
    cga = LinearLayout.from_bases([("block", cga_layout)], names, cga_sizes(cga_layout, rank), require_surjective=False)
    cga = ensure_layout_not_larger_than(cga, labeled).transpose_outs(cta.get_out_dim_names())
    cta_shape = {n: max(1, labeled[n] // size) for n, size in cga.out_dims}
    return (_fit(cta, cta_shape) * cga).transpose_outs(names)


def fitted_tile(factors: Sequence[Factor], cga_layout: BasisList, shape: Sequence[int]) -> LinearLayout:
    """``combine_cta_cga(product_1d([*factors, BLOCK]), cga_layout, shape)``: a tile given by its
    ``product_1d`` factors, fitted to ``shape``, its tiles placed by the CGA layout.

    Formula: with one CTA (no CGA layout) and only ``identity_1d``/``zeros_1d`` factors, fitting
    changes the factors alone (:func:`_fitted_factors`), so the layout is one ``product_1d``,
    without the intermediate layouts of growing, shrinking, transposing the out dims and the
    product with the block in-dim; otherwise as the formula says.
    Requires: ``shape`` checked (powers of two); the factors' out dims are ``dim0..`` of its rank.
    Postcondition: equal to the formula (``tests/test_encodings_builders.py`` compares the two).
    """
    if not cga_layout:
        fitted = _fitted_factors(factors, shape)
        if fitted is not None:
            return product_1d(fitted)
    return combine_cta_cga(product_1d([*factors, BLOCK]), cga_layout, shape)


def _fitted_factors(factors: Sequence[Factor], shape: Sequence[int]) -> list[Factor] | None:
    """The factors of ``_fit(product_1d([*factors, BLOCK]), shape)`` with its out dims in standard
    order, or None where they do not apply (no factors, a strided factor, out dims other than
    ``dim0..`` of ``shape``'s rank).

    Formula: the out dims listed first, in standard order (size-1 factors of the first in-dim:
    ``transpose_outs(dim0..)``); an identity factor whose bits reach past ``log2 shape[d]`` is
    split into the bits below (kept) and a ``zeros_1d`` for the rest (``ensure_layout_not_larger_than``
    zeroes them); a dim with fewer bits than ``log2 shape[d]`` gets an identity factor of the
    first in-dim for the missing bits, after all the others, in the order the dims first appear
    (``ensure_layout_not_smaller_than`` repeats into the first in-dim, dim by dim).
    """
    rank = len(shape)
    if not factors or not rank:
        return None
    names = dim_names(rank)
    room = {name: size.bit_length() - 1 for name, size in zip(names, shape)}  # bits each dim may still take
    first_in = factors[0][1]
    appeared: dict[str, None] = {}  # the out dims in first-appearance order
    fitted: list[Factor] = [(1, first_in, name) for name in names]
    for factor in (*factors, BLOCK):
        size, out_dim = factor[0], factor[2]
        left = room.get(out_dim)
        if left is None or type(size) is not int or size < 1 or size & (size - 1):
            return None
        appeared[out_dim] = None
        if len(factor) != 3:  # zeros_1d takes no bits; a strided factor takes the general path
            if len(factor) != 4 or factor[3] != 0:
                return None
            fitted.append(factor)
            continue
        bits = size.bit_length() - 1
        if bits <= left:
            fitted.append(factor)
            room[out_dim] = left - bits
            continue
        if left:
            fitted.append((1 << left, factor[1], out_dim))
            room[out_dim] = 0
        fitted.append((1 << (bits - left), factor[1], out_dim, 0))
    if len(appeared) != rank:
        return None
    for name in appeared:
        if room[name]:
            fitted.append((1 << room[name], first_in, name))
    return fitted


def _fit(cta: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """``ensure_layout_not_larger_than(ensure_layout_not_smaller_than(cta, shape), shape)``, each step
    taken only when some dim needs it."""
    smaller = larger = False
    for name, size in cta.out_dims:
        smaller = smaller or size < shape[name]
        larger = larger or size > shape[name]
    if smaller:  # growing leaves the dims that are too large as they are
        cta = ensure_layout_not_smaller_than(cta, shape)
    if larger:
        cta = ensure_layout_not_larger_than(cta, shape)
    return cta


def _one_cta(rank: int) -> LinearLayout:
    """The CGA layout of one CTA: a ``block`` in-dim without bases onto ``dim0..`` of size 1 (rank 0)."""
    layout = identity_standard_nd("block", [1] * rank, list(range(rank)))
    layout.rank()  # computed once, so products with it keep a known rank
    return layout


_ONE_CTA = tuple(_one_cta(rank) for rank in range(MAX_RANK + 1))


# ----------------------------------------------------------------------------
# Printing helpers (Triton's attribute syntax)
# ----------------------------------------------------------------------------


def fmt(values: Any) -> str:
    if isinstance(values, (tuple, list)):
        return "[" + ", ".join(fmt(v) for v in values) + "]"
    if isinstance(values, bool):
        return "true" if values else "false"
    return str(values)


def cga_suffix(cga_layout: BasisList) -> str:
    return f", CGALayout = {fmt(cga_layout)}" if cga_layout else ""


# ----------------------------------------------------------------------------
# The two kinds of encoding, and the conversion entry points
# ----------------------------------------------------------------------------


class _Encoding:
    """Shared methods of every encoding; subclasses define ``rank``, ``IN_DIMS`` and ``_build``."""

    IN_DIMS: tuple[str, ...] = ()

    @property
    def rank(self) -> int:  # overridden by every family
        raise TypeError(f"{type_name(self)} is not an encoding")

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        raise TypeError(f"{type_name(self)} is not an encoding")

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The ``LinearLayout`` Triton 3.9 builds for this encoding on a tensor of ``shape``."""
        return linear_layout_of(self, shape)

    def bases(self, shape: Sequence[int]) -> dict[str, BasisList]:
        """The layout's bases per in-dim for ``shape``, exactly as Triton's toLinearLayout."""
        return dict(linear_layout_of(self, shape).bases)

    def format_tensor_view(self, shape: Sequence[int]) -> str:
        return format_tensor_view(self, shape)

    def format_hardware_view(self, shape: Sequence[int]) -> str:
        return format_hardware_view(self, shape)

    # Jupyter: a picture on the encoding's CTA tile once linear_layout.draw registered one (core.display).
    _repr_svg_ = display.repr_svg
    _repr_html_ = display.repr_html


class DistributedLayout(_Encoding):
    """Base of register layouts: in-dims register, lane, warp, block."""

    IN_DIMS = HW_DIMS

    def _launch_sizes(self) -> dict[str, int] | None:
        """The lane, warp and block sizes of the layout on every shape it accepts, where the
        parameters fix them without building it (:func:`launch_sizes`); None otherwise."""
        return None


class FactoredLayout(DistributedLayout):
    """Base of the distributed families whose CTA tile is a product of one-dimensional layouts
    (Triton's ``identity1D(...) * ...`` chains): blocked, nvidia_mma, amd_mfma.

    Formula: ``combine_cta_cga(product_1d(tile_factors(shape)), cga_layout, shape)`` (:func:`fitted_tile`).
    A ``#ttg.slice`` of such a layout is built from the same factors with the sliced dim taken out
    (``blocked.sliced_factors``), without building the parent first.
    """

    cga_layout: BasisList

    def tile_factors(self, shape: tuple[int, ...]) -> list[Factor]:
        """The ``product_1d`` factors of the CTA tile for ``shape`` (out dims in Triton's order)."""
        raise TypeError(f"{type_name(self)} is not an encoding")

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        # The tile's factors, then the block in-dim (no bases) listed last, as the CGA layout will.
        return fitted_tile(self.tile_factors(shape), self.cga_layout, shape)


class SharedLayout(_Encoding):
    """Base of shared-memory layouts: in-dims offset, block."""

    IN_DIMS = SHARED_DIMS


Layout = DistributedLayout | SharedLayout

_size = operator.itemgetter(1)  # the size of a (name, size) dimension pair


def _finish(layout: _Encoding, built: LinearLayout, shape: tuple[int, ...]) -> LinearLayout:
    """Put the in-dims in the family's order (adding absent ones with no bases) and check the
    postconditions: out dims ``dim0..`` sized ``shape``, every element owned."""
    names = built.get_in_dim_names()
    if names != layout.IN_DIMS:
        for name in layout.IN_DIMS:
            if name not in names:
                built = built * LinearLayout.identity_1d(1, name, "dim0" if shape else name)
        built = built.transpose_ins(layout.IN_DIMS)
    sizes = tuple(map(_size, built.out_dims))
    if sizes != shape:
        raise EncodingError(f"{layout} does not fit shape {list(shape)}: it covers {list(sizes)}")
    if not built.is_surjective():
        raise EncodingError(
            f"{layout} leaves elements of shape {list(shape)} without an owner (the layout is not surjective)"
        )
    return built


@functools.lru_cache(maxsize=4096)
def _cached(layout: _Encoding, shape: tuple[int, ...]) -> LinearLayout:
    """Build once per (layout, shape); ``shape`` holds plain ints, checked here on a miss (an
    exception is never cached)."""
    check_shape(shape, layout.rank)
    return _finish(layout, layout._build(shape), shape)


def linear_layout_of(layout: object, shape: object) -> LinearLayout:
    """Check the arguments, then build (or fetch: layouts and shapes are immutable) the layout."""
    if not isinstance(layout, _Encoding) or type(layout) in (
        _Encoding,
        DistributedLayout,
        FactoredLayout,
        SharedLayout,
    ):
        raise TypeError(f"layout must be an encoding (BlockedLayout, NVMMASharedLayout, ...), got {type_name(layout)}")
    if _plain_ints(shape):
        return _cached(layout, tuple(shape))  # type: ignore[arg-type]
    return _cached(layout, check_shape(shape, layout.rank))


def _plain_ints(values: object) -> bool:
    """Whether ``values`` is a tuple or list of plain ints (the common case, hashable as a tuple as is)."""
    if type(values) is not tuple and type(values) is not list:
        return False
    for value in values:  # noqa: SIM110 (a plain loop: faster than all() on a generator)
        if type(value) is not int:
            return False
    return True


def cached_layout(layout: _Encoding, shape: tuple[int, ...]) -> LinearLayout:
    """The layout of an encoding for a shape of plain ints (a parent's, inside a family's build)."""
    return _cached(layout, shape)


def clear_cache() -> None:
    """Forget every cached conversion (benchmarks use it to time cold conversions)."""
    _cached.cache_clear()
    _launch_sizes_cached.cache_clear()


def to_linear_layout(layout: Layout, shape: Sequence[int]) -> LinearLayout:
    """The ``LinearLayout`` Triton 3.9 builds for ``layout`` on a tensor of ``shape``.

    Requires: ``layout`` is an encoding; ``shape`` has its rank, powers of two, at most
    ``MAX_ELEMENTS`` elements (TypeError / ValueError otherwise).
    Postcondition: out dims ``dim0..`` sized ``shape``; surjective (every element has an owner).

    >>> to_linear_layout(__import__("linear_layout.encodings").encodings.BlockedLayout(
    ...     (1,), (32,), (1,), (0,)), (32,)).get_in_dim_size("lane")
    32
    """
    return linear_layout_of(layout, shape)


#: The in-dims a kernel's launch gives a distributed layout (all but ``register``).
_LAUNCH_DIMS = HW_DIMS[1:]


def launch_sizes(layout: object, shape: object) -> dict[str, int]:
    """The sizes of the ``lane``, ``warp`` and ``block`` in-dims of ``to_linear_layout(layout, shape)``:
    what a kernel's launch must give the layout (a verifier needs no more of it).

    Formula: where the family's parameters fix them (``_launch_sizes``: a blocked layout with one
    CTA has ``prod(threads_per_warp)`` lanes, ``prod(warps_per_cta)`` warps and one block on every
    shape it accepts) the shape is checked and the layout is not built; otherwise they are read
    from the built layout.
    Requires: as :func:`to_linear_layout` (the same checks; the same errors, by the same functions).
    Postcondition: equal to the built layout's in-dim sizes (``tests/test_encodings_builders.py``).

    >>> from linear_layout.encodings import BlockedLayout
    >>> launch_sizes(BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0)), (16, 16))
    {'lane': 32, 'warp': 2, 'block': 1}
    """
    if isinstance(layout, DistributedLayout) and _plain_ints(shape):
        return dict(_launch_sizes_cached(layout, tuple(shape)))  # type: ignore[arg-type]
    sizes = layout._launch_sizes() if isinstance(layout, DistributedLayout) else None
    if sizes is None:
        built = linear_layout_of(layout, shape)
        return {dim: built.get_in_dim_size(dim) for dim in _LAUNCH_DIMS if built.has_in_dim(dim)}
    check_shape(shape, layout.rank)  # type: ignore[attr-defined]
    return sizes


@functools.lru_cache(maxsize=4096)
def _launch_sizes_cached(layout: DistributedLayout, shape: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    """:func:`launch_sizes` once per (layout, shape of plain ints), as immutable pairs (an
    exception is never cached)."""
    sizes = layout._launch_sizes()
    if sizes is None:
        built = linear_layout_of(layout, shape)
        return tuple([(dim, built.get_in_dim_size(dim)) for dim in _LAUNCH_DIMS if built.has_in_dim(dim)])
    check_shape(shape, layout.rank)
    return tuple(sizes.items())


def verify_module_sizes(
    layout: DistributedLayout, num_warps: int, threads_per_warp: int = 32, num_ctas: int = 1
) -> None:
    """Check a distributed layout against a module's warp size, warp count and CTA count
    (Triton's module-level rule).  Raises EncodingError naming the mismatch."""
    if not isinstance(layout, DistributedLayout):
        raise TypeError(
            f"verify_module_sizes: argument 'layout' must be a distributed encoding, got {type_name(layout)}"
        )
    expected_sizes = (
        ("lane", integer("threads_per_warp", threads_per_warp)),
        ("warp", integer("num_warps", num_warps)),
        ("block", integer("num_ctas", num_ctas)),
    )
    ll = linear_layout_of(layout, [1] * layout.rank)
    for dim, expected in expected_sizes:
        got = ll.get_in_dim_size(dim)
        if got != expected:
            raise EncodingError(
                f"the layout has {got} {dim}s, but the module has {expected} "
                f"({'threads per warp' if dim == 'lane' else dim + 's'})"
            )


# ----------------------------------------------------------------------------
# Views (Triton's get_layout_view text)
# ----------------------------------------------------------------------------


def _view(layout: _Encoding, shape: Sequence[int], use_hw: bool) -> str:
    ll = linear_layout_of(layout, shape)
    if isinstance(layout, SharedLayout):
        return ll.get_shared_view(use_hw)
    return ll.get_distributed_view(use_hw)


def format_tensor_view(layout: _Encoding, shape: Sequence[int]) -> str:
    """For every tensor element, which thread:register (or shared offset) holds it;
    identical to Triton's ``layout.format_tensor_view(shape)``."""
    return _view(layout, shape, False)


def format_hardware_view(layout: _Encoding, shape: Sequence[int]) -> str:
    """For every warp, lane and register (or offset), which element it holds;
    identical to Triton's ``layout.format_hardware_view(shape)``."""
    return _view(layout, shape, True)
