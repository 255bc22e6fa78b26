"""The generic distributed families: ``#ttg.blocked``, ``#ttg.slice`` and ``#ttg.linear``.

Each is built as Triton 3.9's ``toLinearLayout`` builds it, from the algebra's builders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.layout import (
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
)
from .base import (
    Basis,
    BasisList,
    DistributedLayout,
    EncodingError,
    FactoredLayout,
    basis_list,
    cga_suffix,
    check_order,
    check_pow2,
    check_shape,
    dim_names,
    fitted_tile,
    fmt,
    int_fields,
    integer,
    ints,
    non_unit_basis,
    plain_int_tuples,
    standard_factors,
    store_fields,
    type_name,
)

if TYPE_CHECKING:  # annotations only
    from .base import Factor

__all__ = ["BlockedLayout", "DistributedLinearLayout", "SliceLayout"]


@dataclass(frozen=True)
class BlockedLayout(FactoredLayout):
    """Each thread holds a ``size_per_thread`` block; threads, then warps, tile the
    tensor in ``order`` (order[0] is the fastest-varying dim).

    Formula: ``identity_standard_nd(register, size_per_thread, order) * identity_standard_nd(lane,
    threads_per_warp, order) * identity_standard_nd(warp, warps_per_cta, order)``, fitted to the
    shape with the CGA layout (a larger shape wraps into more registers, a smaller one broadcasts),
    then its zero register bases dropped (Triton 3.9 drops, rather than zeroes, them).
    Requires: equal ranks, ``order`` a permutation, all sizes powers of two.
    Postcondition: ``to_linear_layout(shape)`` is surjective onto ``shape``.

    >>> BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0)).to_linear_layout((16, 16)).get_in_dim_size("register")
    4
    """

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_layout: BasisList = ()

    def __post_init__(self) -> None:
        fields = (self.size_per_thread, self.threads_per_warp, self.warps_per_cta, self.order)
        if type(self.cga_layout) is tuple and not self.cga_layout and plain_int_tuples(fields):
            # The readers' case: every field already normalised (tuples of plain ints, one CTA),
            # so only the rules remain to be checked and nothing to store.
            _check_blocked(*fields)
            return
        spt, tpw, wpc, order = int_fields(self, "size_per_thread", "threads_per_warp", "warps_per_cta", "order")
        _check_blocked(spt, tpw, wpc, order)
        store_fields(self, len(spt), size_per_thread=spt, threads_per_warp=tpw, warps_per_cta=wpc, order=order)

    @property
    def rank(self) -> int:
        return len(self.order)

    def _launch_sizes(self) -> dict[str, int] | None:
        # One CTA: the fitted tile keeps every lane and warp basis (zeroed, not dropped, where the
        # shape is smaller) and its block in-dim has none.
        if self.cga_layout:
            return None
        return {"lane": math.prod(self.threads_per_warp), "warp": math.prod(self.warps_per_cta), "block": 1}

    def tile_factors(self, shape: tuple[int, ...]) -> list[Factor]:
        return (
            standard_factors("register", self.size_per_thread, self.order)
            + standard_factors("lane", self.threads_per_warp, self.order)
            + standard_factors("warp", self.warps_per_cta, self.order)
        )

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        return super()._build(shape).remove_zero_bases_along_dim("register")

    def __str__(self) -> str:
        return (
            f"#ttg.blocked<{{sizePerThread = {fmt(self.size_per_thread)}, "
            f"threadsPerWarp = {fmt(self.threads_per_warp)}, warpsPerCTA = {fmt(self.warps_per_cta)}, "
            f"order = {fmt(self.order)}{cga_suffix(self.cga_layout)}}}>"
        )


def _check_blocked(spt: Basis, tpw: Basis, wpc: Basis, order: Basis) -> None:
    """Triton's BlockedEncodingAttr rules: equal ranks, ``order`` a permutation, sizes powers of two."""
    rank = len(spt)
    if not (len(tpw) == len(wpc) == len(order) == rank):
        raise EncodingError("size_per_thread, threads_per_warp, warps_per_cta and order must all have the same rank")
    check_order(order, rank)
    check_pow2("size_per_thread", spt)
    check_pow2("threads_per_warp", tpw)
    check_pow2("warps_per_cta", wpc)


def sliced_factors(factors: Sequence[Factor], dim: int, rank: int) -> list[Factor]:
    """The factors of a rank-``rank`` tile with out dim ``dim`` taken out and the later dims renamed
    down by one: the slice's tile, as Triton gets it from the parent's on a shape with a 1 at ``dim``.

    Formula: there ``ensure_layout_not_larger_than`` clears every coordinate along ``dim`` and the
    out dim is squeezed; so a lane or warp factor along ``dim`` becomes ``zeros_1d`` (a broadcast),
    and a register one adds no basis (the zero register bases go in the end anyway), both on the
    first kept dim, which keeps the listing order of the kept dims.
    Requires: some factor along another dim than ``dim``.
    """
    names = dim_names(rank)
    gone = names[dim]
    renamed = dict(zip(names[:dim] + names[dim + 1 :], dim_names(rank - 1)))
    first = ""
    for factor in factors:
        if factor[2] != gone:
            first = renamed[factor[2]]
            break
    out: list[Factor] = []
    for factor in factors:
        if factor[2] != gone:
            out.append((factor[0], factor[1], renamed[factor[2]], *factor[3:]))
        elif factor[1] == "register":
            out.append((1, "register", first))
        else:
            out.append((factor[0], factor[1], first, 0))
    return out


@dataclass(frozen=True)
class SliceLayout(DistributedLayout):
    """The parent layout with dimension ``dim`` removed (as after a reduction along it).

    Formula: the parent's layout for the shape with a 1 inserted at ``dim``; that out dim (size 1)
    is squeezed, the later ones renamed down by one, and register bases that became zero dropped.
    A parent whose tile is a product of 1-D factors (:class:`FactoredLayout`) is not built: the
    slice's tile is its factors with ``dim`` taken out (:func:`sliced_factors`), fitted to ``shape``.
    Requires: ``parent`` a distributed layout, ``0 <= dim < parent.rank``.

    >>> SliceLayout(1, BlockedLayout((1, 1), (4, 8), (1, 1), (1, 0))).to_linear_layout((4,)).bases[1]
    ('lane', ((0,), (0,), (0,), (1,), (2,)))
    """

    dim: int
    parent: DistributedLayout

    def __post_init__(self) -> None:
        if not isinstance(self.parent, DistributedLayout):
            raise TypeError(f"slice parent must be a distributed layout, got {type_name(self.parent)}")
        dim = integer("slice dim", self.dim)
        if not 0 <= dim < self.parent.rank:
            raise EncodingError(f"slice dim must be in [0, {self.parent.rank}) (the parent's rank), got {dim}")
        store_fields(self, 0, dim=dim)

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    @property
    def cga_layout(self) -> BasisList:
        dim = self.dim
        return tuple([b[:dim] + b[dim + 1 :] for b in self.parent.cga_layout])  # type: ignore[attr-defined]

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        dim, parent = self.dim, self.parent
        parent_shape = shape[:dim] + (1,) + shape[dim:]
        if shape and isinstance(parent, FactoredLayout):  # built without the parent (same result)
            factors = sliced_factors(parent.tile_factors(parent_shape), dim, len(parent_shape))
            return fitted_tile(factors, self.cga_layout, shape).remove_zero_bases_along_dim("register")
        built = parent._build(parent_shape)  # the slice's own result is checked, not the parent's
        squeezed = built.squeeze_outs(f"dim{dim}")
        renamed = squeezed.reshape_outs(list(zip(dim_names(len(shape)), shape)))
        return renamed.remove_zero_bases_along_dim("register")

    def __str__(self) -> str:
        return f"#ttg.slice<{{dim = {self.dim}, parent = {self.parent}}}>"


def _linear_base(
    name: str, reg: BasisList, lane: BasisList, warp: BasisList, block: BasisList, shape: tuple[int, ...]
) -> LinearLayout:
    """The layout an explicit ``#ttg.linear``/``#ttg.generic_linear`` holds, checked as Triton 3.9's
    ``GenericLinearEncodingAttr::verify`` checks it: register, lane and block bases move along at most
    one dim (only warp bases may be swizzled), and the layout is surjective onto ``shape`` (Triton's
    parser aborts otherwise)."""
    names = dim_names(len(shape))
    for in_dim, bases in (("register", reg), ("lane", lane), ("warp", warp), ("block", block)):
        for b in bases:
            if any(v >= s for v, s in zip(b, shape)):
                raise EncodingError(f"{in_dim} basis {list(b)} of {name} is out of range for shape {list(shape)}")
            if in_dim != "warp" and sum(1 for v in b if v) > 1:
                raise EncodingError(
                    f"{in_dim} basis {list(b)} moves along several dims; in #ttg.linear and #ttg.generic_linear, "
                    "register, lane and block bases move along at most one (only warp bases may be swizzled)"
                )
    layout = LinearLayout.from_bases(
        [("register", reg), ("lane", lane), ("warp", warp), ("block", block)], names, shape, require_surjective=False
    )
    if not layout.is_surjective():
        raise EncodingError(
            f"{name} must be surjective onto its shape {list(shape)} (every element owned by some "
            f"register, lane, warp or block), but its bases reach only 2**{layout.rank()} of the "
            f"2**{layout.get_total_out_dim_size_log2()} elements"
        )
    return layout


@dataclass(frozen=True)
class DistributedLinearLayout(DistributedLayout):
    """An explicit linear layout (Gluon's ``DistributedLinearLayout``): bases for each hardware index bit.

    Its text is Triton 3.9's: ``#ttg.linear`` when the layout is a permutation matrix once its zero
    (broadcast) bases are dropped (``LinearEncodingAttr::verify`` requires it), else
    ``#ttg.generic_linear`` (any surjective layout), as Gluon builds one or the other.

    Formula (Triton's LinearEncodingAttr::toLinearLayout): the layout with its out dims in the
    register order, ``ensure_layout_not_smaller_than`` then ``ensure_layout_not_larger_than``
    (dropping, not zeroing, registers) for ``shape``, then the out dims in standard order.
    Requires: bases of ``len(shape)`` non-negative entries inside ``shape``, together surjective
    onto ``shape`` (every element has an owner), as Triton's verifier requires.
    """

    reg_bases: BasisList
    lane_bases: BasisList
    warp_bases: BasisList
    block_bases: BasisList
    shape: tuple[int, ...]
    _layout: LinearLayout = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        shape = check_shape(self.shape, len(ints("shape", self.shape)))
        rank = len(shape)
        named = {
            n: basis_list(n, getattr(self, n), rank) for n in ("reg_bases", "lane_bases", "warp_bases", "block_bases")
        }
        layout = _linear_base(
            "#ttg.linear", named["reg_bases"], named["lane_bases"], named["warp_bases"], named["block_bases"], shape
        )
        store_fields(self, rank, shape=shape, _layout=layout, **named)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def cga_layout(self) -> BasisList:
        return self.block_bases

    def _register_order(self) -> list[int]:
        """Triton's LinearEncodingAttr::getOrder: dims in the order registers first move
        along them, then the remaining dims from the last to the first."""
        order: list[int] = []
        for b in self.reg_bases:
            first = next((d for d, v in enumerate(b) if v), None)
            if first is not None and first not in order:
                order.append(first)
        order += [d for d in range(self.rank - 1, -1, -1) if d not in order]
        return order

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        names = dim_names(self.rank)
        permuted = [names[d] for d in self._register_order()]
        named_shape = {names[d]: shape[d] for d in range(self.rank)}
        layout = self._layout.transpose_outs(permuted)
        layout = ensure_layout_not_smaller_than(layout, named_shape)
        layout = ensure_layout_not_larger_than(layout, named_shape, broadcast_registers=False)
        return layout.transpose_outs(names)

    @property
    def is_generic(self) -> bool:
        """Not a permutation matrix once the zero bases are dropped: Triton's ``#ttg.generic_linear``."""
        return non_unit_basis(self.reg_bases + self.lane_bases + self.warp_bases + self.block_bases) is not None

    def __str__(self) -> str:
        return (
            f"#ttg.{'generic_linear' if self.is_generic else 'linear'}<{{register = {fmt(self.reg_bases)}, "
            f"lane = {fmt(self.lane_bases)}, "
            f"warp = {fmt(self.warp_bases)}, block = {fmt(self.block_bases)}}}>"
        )
