"""The generic distributed families: ``#ttg.blocked``, ``#ttg.slice`` and ``#ttg.linear``.

Each is built as Triton 3.9's ``toLinearLayout`` builds it, from the algebra's builders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.layout import (
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
)
from .base import (
    BasisList,
    DistributedLayout,
    EncodingError,
    basis_list,
    cga_suffix,
    checked_cga,
    check_order,
    check_pow2,
    check_shape,
    combine_cta_cga,
    non_unit_basis,
    dim_names,
    fmt,
    integer,
    ints,
    set_field,
    set_fields,
    type_name,
)

__all__ = ["BlockedLayout", "DistributedLinearLayout", "SliceLayout"]


@dataclass(frozen=True)
class BlockedLayout(DistributedLayout):
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
        spt = ints("size_per_thread", self.size_per_thread)
        tpw = ints("threads_per_warp", self.threads_per_warp)
        wpc = ints("warps_per_cta", self.warps_per_cta)
        order = ints("order", self.order)
        rank = len(spt)
        if not (len(tpw) == len(wpc) == len(order) == rank):
            raise EncodingError(
                "size_per_thread, threads_per_warp, warps_per_cta and order must all have the same rank"
            )
        check_order(order, rank)
        check_pow2("size_per_thread", spt)
        check_pow2("threads_per_warp", tpw)
        check_pow2("warps_per_cta", wpc)
        cga = checked_cga(self.cga_layout, rank)
        set_fields(
            self,
            size_per_thread=spt,
            threads_per_warp=tpw,
            warps_per_cta=wpc,
            order=order,
            cga_layout=cga,
        )

    @property
    def rank(self) -> int:
        return len(self.order)

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        cta = (
            identity_standard_nd("register", self.size_per_thread, self.order)
            * identity_standard_nd("lane", self.threads_per_warp, self.order)
            * identity_standard_nd("warp", self.warps_per_cta, self.order)
        )
        return combine_cta_cga(cta, self.cga_layout, shape).remove_zero_bases_along_dim("register")

    def build_sliced(self, dim: int, cga_layout: BasisList, shape: tuple[int, ...]) -> LinearLayout:
        """The layout of ``#ttg.slice<{dim, parent = self}>`` on ``shape``, without building the parent.

        Formula: the parent on a shape of size 1 at ``dim`` keeps its tile's other bases, turns the
        lane and warp bases along ``dim`` into zeros (broadcast) and its register bases along ``dim``
        into zeros the slice then drops; so the CTA tile is ``_sliced_identity`` of each in-dim
        (registers without ``dim``), fitted to ``shape`` with the slice's CGA layout.
        Postcondition: equal to the parent built on the shape with a 1 at ``dim``, squeezed.
        """
        cta = (
            _sliced_identity("register", self.size_per_thread, self.order, dim, keep_zeros=False)
            * _sliced_identity("lane", self.threads_per_warp, self.order, dim, keep_zeros=True)
            * _sliced_identity("warp", self.warps_per_cta, self.order, dim, keep_zeros=True)
        )
        return combine_cta_cga(cta, cga_layout, shape).remove_zero_bases_along_dim("register")

    def __str__(self) -> str:
        return (
            f"#ttg.blocked<{{sizePerThread = {fmt(self.size_per_thread)}, "
            f"threadsPerWarp = {fmt(self.threads_per_warp)}, warpsPerCTA = {fmt(self.warps_per_cta)}, "
            f"order = {fmt(self.order)}{cga_suffix(self.cga_layout)}}}>"
        )


def _sliced_identity(
    in_dim: str, sizes: tuple[int, ...], order: tuple[int, ...], dim: int, *, keep_zeros: bool
) -> LinearLayout:
    """``identity_standard_nd(in_dim, sizes, order)`` with out dim ``dim`` removed (later dims renamed
    down by one): its bases become zero bases in place (``keep_zeros``) or are left out.

    Formula: the product over ``order`` of ``identity_1d(sizes[d], in_dim, name(d))``, with
    ``zeros_1d(sizes[dim], in_dim, first kept name)`` (or nothing) for ``dim``.
    Requires: ``order`` a permutation with at least one dim besides ``dim``.
    """
    kept = [d for d in order if d != dim]
    first = f"dim{kept[0] - (kept[0] > dim)}"
    layout = LinearLayout.empty()
    for d in order:
        if d != dim:
            layout = layout * LinearLayout.identity_1d(sizes[d], in_dim, f"dim{d - (d > dim)}")
        elif keep_zeros:
            layout = layout * LinearLayout.zeros_1d(sizes[d], in_dim, first)
    return layout


@dataclass(frozen=True)
class SliceLayout(DistributedLayout):
    """The parent layout with dimension ``dim`` removed (as after a reduction along it).

    Formula: the parent's layout for the shape with a 1 inserted at ``dim``; that out dim (size 1)
    is squeezed, the later ones renamed down by one, and register bases that became zero dropped.
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
        set_field(self, "dim", dim)

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    @property
    def cga_layout(self) -> BasisList:
        return tuple(b[: self.dim] + b[self.dim + 1 :] for b in self.parent.cga_layout)  # type: ignore[attr-defined]

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        if isinstance(self.parent, BlockedLayout) and self.rank > 0:  # built directly (same result)
            return self.parent.build_sliced(self.dim, self.cga_layout, shape)
        parent_shape = shape[: self.dim] + (1,) + shape[self.dim :]
        parent = self.parent._build(parent_shape)  # the slice's own result is checked, not the parent's
        squeezed = parent.squeeze_outs(f"dim{self.dim}")
        renamed = squeezed.reshape_outs(list(zip(dim_names(len(shape)), shape)))
        return renamed.remove_zero_bases_along_dim("register")

    def __str__(self) -> str:
        return f"#ttg.slice<{{dim = {self.dim}, parent = {self.parent}}}>"


def _linear_base(
    name: str, reg: BasisList, lane: BasisList, warp: BasisList, block: BasisList, shape: tuple[int, ...]
) -> LinearLayout:
    """The layout an explicit ``#ttg.linear``/``#ttg.generic_linear`` holds, checked surjective onto
    ``shape`` (Triton's parser aborts otherwise)."""
    names = dim_names(len(shape))
    for in_dim, bases in (("register", reg), ("lane", lane), ("warp", warp), ("block", block)):
        for b in bases:
            if any(v >= s for v, s in zip(b, shape)):
                raise EncodingError(f"{in_dim} basis {list(b)} of {name} is out of range for shape {list(shape)}")
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
        for n, v in named.items():
            set_field(self, n, v)
        set_field(self, "shape", shape)
        set_field(
            self,
            "_layout",
            _linear_base(
                "#ttg.linear", named["reg_bases"], named["lane_bases"], named["warp_bases"], named["block_bases"], shape
            ),
        )

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
