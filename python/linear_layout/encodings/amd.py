"""AMD matrix-core layouts: ``#ttg.amd_mfma`` (CDNA, 64-lane waves) and ``#ttg.amd_wmma`` (RDNA3/4,
gfx1250, 32-lane waves), and the register layouts of their dot operands.

Built as Triton 3.9's ``AMDMfmaEncodingAttr::toLinearLayout``, ``AMDWmmaEncodingAttr::toLinearLayout``,
``mfmaDotToLinearLayout`` and ``wmmaDotOperandToLinearLayout``: products of ``identity_1d`` over
one instruction's tile, then the warps (or the WMMA ``ctaLayout``), fitted with the CGA layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.arguments import require_bool
from ..core.layout import ColumnAction, LinearLayout, product_1d
from .base import (
    MAX_RANK,
    BasisList,
    DistributedLayout,
    EncodingError,
    FactoredLayout,
    basis_list,
    box_sizes,
    cga_suffix,
    check_pow2,
    combine_cta_cga,
    dim_names,
    fitted_tile,
    fmt,
    integer,
    ints,
    listed_dims,
    matrix_order,
    standard_factors,
    store_fields,
    times,
    zeroed_along,
)

if TYPE_CHECKING:  # annotations only
    from .base import Factor

__all__ = ["WMMA_INSTR_SHAPES", "WMMA_K_WIDTHS", "AMDMFMALayout", "AMDWMMALayout", "mfma_dot_layout", "wmma_dot_layout"]

MFMA_WAVE = 64  # MFMA lanes per warp
WMMA_WAVE = 32  # WMMA lanes per warp

#: Instruction shapes Triton 3.9's WMMA verifier accepts, per version.
WMMA_INSTR_SHAPES = {
    1: ((16, 16, 16),),
    2: ((16, 16, 16), (16, 16, 32)),
    3: ((16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)),
}
#: k_width values Triton 3.9 accepts for WMMA dot operands (any power of two for v3).
WMMA_K_WIDTHS = {1: (8, 16), 2: (4, 8, 16)}


_NAMES = dim_names(MAX_RANK)


def _along(in_dim: str, size: int, dim: int) -> Factor:
    """The factor ``identity_1d(size, in_dim, dim)``: ``size`` more steps along ``dim``.  A size below 2
    adds no basis but still lists the dim (Triton's identity1D of 0 or 1); a chain starts with
    ``listed_dims("register", ...)``, so ``register`` is always the first in-dim."""
    return (size if size > 1 else 1, in_dim, _NAMES[dim])


@dataclass(frozen=True)
class AMDMFMALayout(FactoredLayout):
    """Accumulator layout of AMD MFMA (matrix cores, 64-lane wavefronts).

    Formula: one tile is instr_shape[:2] (M x N in 32x32, 16x16, 64x4, 4x64): each lane holds
    4 consecutive rows (1 for 64-bit elements), lanes run along N then M; transposed
    swaps the roles of M and N.  Tiles repeat along N (tiles_per_warp, warps, the
    whole tensor's N) before M, then warps along M and batch.
    Requires: version 1-4, (M, N) one of the four shapes, element_bitwidth 32 or 64;
    converting a 64x4 layout also needs ``transposed`` (Triton asserts it).
    """

    version: int
    instr_shape: tuple[int, ...]
    transposed: bool
    warps_per_cta: tuple[int, ...]
    element_bitwidth: int | None = None
    tiles_per_warp: tuple[int, ...] | None = None
    cga_layout: BasisList = ()

    def __post_init__(self) -> None:
        version = integer("version", self.version)
        if version not in (1, 2, 3, 4):
            raise EncodingError(f"version must be in the [1, 4] range, got {version}")
        instr = ints("instr_shape", self.instr_shape)
        if len(instr) != 3:
            raise EncodingError(f"instr_shape must follow the (M, N, K) format, got {list(instr)}")
        if list(instr[:2]) not in ([32, 32], [16, 16], [64, 4], [4, 64]):
            raise EncodingError(f"instr_shape M x N must be 32x32, 16x16, 64x4 or 4x64, got {list(instr)}")
        warps = ints("warps_per_cta", self.warps_per_cta)
        rank = len(warps)
        if rank not in (2, 3):
            raise EncodingError(f"warps_per_cta of an MFMA layout must have rank 2 or 3, got {rank}")
        check_pow2("warps_per_cta", warps)
        bitwidth = 32 if self.element_bitwidth is None else integer("element_bitwidth", self.element_bitwidth)
        if bitwidth not in (32, 64):
            raise EncodingError(f"element_bitwidth must be 32 or 64, got {bitwidth}")
        tiles = (1,) * rank if self.tiles_per_warp is None else ints("tiles_per_warp", self.tiles_per_warp)
        if len(tiles) != rank:
            raise EncodingError(f"tiles_per_warp must have {rank} entries (the rank), got {list(tiles)}")
        check_pow2("tiles_per_warp", tiles)
        store_fields(
            self,
            rank,
            version=version,
            instr_shape=instr,
            warps_per_cta=warps,
            element_bitwidth=bitwidth,
            tiles_per_warp=tiles,
        )

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def _tile(self, m_dim: int, n_dim: int) -> list[Factor]:
        """The factors of one instruction's tile: ``height`` registers along M, lanes along N then M,
        register groups along M (M and N swapped when transposed); out dims listed N, M."""
        mdim, ndim = self.instr_shape[:2]
        height = 1 if self.element_bitwidth == 64 else 4  # consecutive elements per lane
        tiles = max(1, mdim * ndim // (MFMA_WAVE * height))  # register groups filling one tile
        along, across = (n_dim, m_dim) if self.transposed else (m_dim, n_dim)
        lanes_across = mdim if self.transposed else ndim
        return listed_dims("register", (n_dim, m_dim), self.rank) + [
            _along("register", height, along),
            _along("lane", lanes_across, across),
            _along("lane", MFMA_WAVE // lanes_across, along),
            _along("register", tiles, along),
        ]

    def tile_factors(self, shape: tuple[int, ...]) -> list[Factor]:
        rank = self.rank
        m_dim, n_dim = rank - 2, rank - 1
        mdim, ndim = self.instr_shape[:2]
        if (mdim, ndim) == (64, 4) and not self.transposed:
            # Triton 3.9 only builds 64x4 as the transposed 4x64 (asserting otherwise).
            raise EncodingError("a 64x4 MFMA layout must be transposed to convert (Triton 3.9 asserts isTransposed)")
        # Triton lays MFMA tiles N-contiguously over the whole tensor (its dot lowering
        # expects that order): tiles_per_warp and warps along N, then the rest of the
        # tensor's full N extent in registers, then tiles_per_warp and warps along M.
        tpw, wpc = self.tiles_per_warp or (1,) * rank, self.warps_per_cta
        factors = self._tile(m_dim, n_dim) + [
            _along("register", tpw[n_dim], n_dim),
            _along("warp", wpc[n_dim], n_dim),
            _along("register", shape[n_dim] // (ndim * wpc[n_dim] * tpw[n_dim]), n_dim),
            _along("register", tpw[m_dim], m_dim),
            _along("warp", wpc[m_dim], m_dim),
        ]
        if rank == 3:
            factors.append(_along("warp", wpc[0], 0))
        return factors

    def __str__(self) -> str:
        extra = ""
        if any(t != 1 for t in self.tiles_per_warp or ()):
            extra += f", tilesPerWarp = {fmt(self.tiles_per_warp)}"
        if self.element_bitwidth != 32:
            extra += f", elementBitWidth = {self.element_bitwidth}"
        return (
            f"#ttg.amd_mfma<{{version = {self.version}, warpsPerCTA = {fmt(self.warps_per_cta)}, "
            f"instrShape = {fmt(self.instr_shape)}, isTransposed = {fmt(self.transposed)}"
            f"{cga_suffix(self.cga_layout)}{extra}}}>"
        )


def mfma_dot_layout(
    operand_index: int, mfma: AMDMFMALayout, k_width: int, k_dim: int, shape: tuple[int, ...]
) -> LinearLayout:
    """Triton's mfmaDotToLinearLayout: k_width registers along K, lanes along the non-K dim then K,
    registers over the whole K extent, then tiles_per_warp along the non-K dim.  Warps use the
    parent's grid; in Triton those along K land past the tile's K extent (at least the tensor's),
    where the shape fit zeroes them, so here they are broadcast (``zeros_1d``) from the start: the
    same layout, without a fit that only clears them."""
    rank = mfma.rank
    nonk_dim = rank - 2 if operand_index == 0 else rank - 1
    mdim, ndim = mfma.instr_shape[:2]
    nonk = mdim if operand_index == 0 else ndim
    factors = listed_dims("register", (k_dim, nonk_dim), rank) + [
        _along("register", k_width, k_dim),
        _along("lane", nonk, nonk_dim),
        _along("lane", MFMA_WAVE // nonk, k_dim),
    ]
    k_tile = MFMA_WAVE // nonk * k_width
    if (mdim, ndim, operand_index) in ((64, 4, 0), (4, 64, 1)):
        # The 64-wide operand of a 64x4 / 4x64 MFMA repeats its tile 16 times along K.
        factors.append(_along("register", 16, k_dim))
        k_tile *= 16
    if shape[k_dim] > k_tile:
        factors.append(_along("register", shape[k_dim] // k_tile, k_dim))
    factors.append(_along("register", mfma.tiles_per_warp[nonk_dim], nonk_dim))  # type: ignore[index]
    if rank == 3:
        factors.append(_along("register", 1, 0))
    # The tile now lists every dim, so the warps' factors follow its out-dim order (Triton's transposeOuts).
    warps = standard_factors("warp", mfma.warps_per_cta, matrix_order(rank, True), broadcast=k_dim)
    return fitted_tile([*factors, *warps], mfma.cga_layout, shape)


@dataclass(frozen=True)
class AMDWMMALayout(DistributedLayout):
    """Accumulator layout of AMD WMMA (32-lane waves; version 1 RDNA3, 2 RDNA4, 3 gfx1250).

    Formula: one tile is instr_shape[:2] (16x16, or 32x16 on version 3): lanes 0-15 run
    along N, lane 16 and the registers along M (version 1 interleaves rows:
    lane 16 is row 1, registers rows 2, 4, 8; later versions give each half-wave 8
    consecutive rows).  ``transposed`` swaps M and N.  ``reg_bases`` and ``warp_bases``
    (the ``ctaLayout``) place whole tiles: basis (1, 0) is the next tile down M.
    Requires: an instr_shape the version supports; reg_bases and warp_bases of
    ``rank`` entries that together reach every tile of the box they span.
    Converting needs rank 2 or 3 (Triton asserts it).
    """

    version: int
    transposed: bool
    warp_bases: BasisList
    reg_bases: BasisList | None = ()
    instr_shape: tuple[int, ...] | None = (16, 16, 16)
    cga_layout: BasisList = ()
    rank: int | None = 2  # type: ignore[assignment]

    def __post_init__(self) -> None:
        version = integer("version", self.version)
        if version not in (1, 2, 3):
            raise EncodingError(f"version must be in the [1, 3] range, got {version}")
        rank = 2 if self.rank is None else integer("rank", self.rank)
        if rank < 1:
            raise EncodingError(f"rank must be a positive integer, got {rank!r}")
        instr = (16, 16, 16) if self.instr_shape is None else ints("instr_shape", self.instr_shape)
        if instr not in WMMA_INSTR_SHAPES[version]:
            allowed = ", ".join(str(list(s)) for s in WMMA_INSTR_SHAPES[version])
            raise EncodingError(f"invalid WMMA v{version} instruction shape {list(instr)} (allowed: {allowed})")
        warp = basis_list("warp_bases", self.warp_bases, rank)
        reg = basis_list("reg_bases", () if self.reg_bases is None else self.reg_bases, rank)
        _check_surjective("ctaLayout (reg_bases with warp_bases)", reg + warp, rank)
        store_fields(self, rank, version=version, warp_bases=warp, reg_bases=reg, instr_shape=instr, rank=rank)

    def _tile(self) -> list[Factor]:
        """The factors of one instruction's tile (Triton's getTileLayout), out dims listed row-major
        (last dim first, as Triton lists them: the order decides where repetitions that fit the shape go)."""
        rank = self.rank
        if rank not in (2, 3):
            raise EncodingError(f"an amd_wmma layout converts only at rank 2 or 3 (Triton 3.9 asserts it), got {rank}")
        m_dim, n_dim = rank - 2, rank - 1
        fast, slow = (m_dim, n_dim) if self.transposed else (n_dim, m_dim)
        factors = listed_dims("register", matrix_order(rank, True), rank)
        if self.version == 1:  # lane 16 is the next row: rows interleave
            return factors + [_along("lane", 16, fast), _along("lane", 2, slow), _along("register", 8, slow)]
        factors += [_along("register", 8, slow), _along("lane", 16, fast), _along("lane", 2, slow)]
        if self.instr_shape[0] == 32:  # type: ignore[index]  # 32x16: two 16x16 tiles stacked in registers
            factors.append(_along("register", 2, slow))
        return factors

    def cta_layout(self, project_dim: int | None = None, row_major: bool = False) -> LinearLayout:
        """The ctaLayout (register and warp bases in tile units), optionally with one out dim
        projected away (its components zeroed, as for dot operands), its out dims listed in standard
        order or ``row_major`` (last dim first).  Without a projection it is surjective (checked when
        the encoding was made), so its rank is known and ``*`` carries it."""
        if project_dim is not None:
            project_dim = integer("project_dim", project_dim)
        require_bool(row_major, "AMDWMMALayout.cta_layout", "row_major")
        regs, warps = self.reg_bases or (), self.warp_bases
        if project_dim is not None:
            regs, warps = zeroed_along(regs, project_dim), zeroed_along(warps, project_dim)
        names = dim_names(self.rank or 2)
        if row_major:
            regs, warps, names = tuple([b[::-1] for b in regs]), tuple([b[::-1] for b in warps]), names[::-1]
        # Out-dim sizes inferred from the bases (the box they span), as Triton's LinearLayout(bases, names).
        return LinearLayout.from_bases(  # the block in-dim listed last, without bases
            [("register", regs), ("warp", warps), ("block", ())], names, require_surjective=project_dim is None
        )

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        layout = product_1d(self._tile()) * self.cta_layout(row_major=True)
        return combine_cta_cga(layout, self.cga_layout, shape)

    def __str__(self) -> str:
        cta = []
        if self.reg_bases:
            cta.append(f"register = {fmt(self.reg_bases)}")
        if self.warp_bases:
            cta.append(f"warp = {fmt(self.warp_bases)}")
        instr = f", instrShape = {fmt(self.instr_shape)}" if self.instr_shape != (16, 16, 16) else ""
        # Triton 3.9 does not print `rank` (and so cannot read its own rank-3 text back).
        return (
            f"#ttg.amd_wmma<{{version = {self.version}, isTranspose = {fmt(self.transposed)}, "
            f"ctaLayout = {{{', '.join(cta)}}}{cga_suffix(self.cga_layout)}{instr}}}>"
        )


def _check_surjective(name: str, bases: BasisList, rank: int) -> None:
    """Triton's LinearLayout constructor (requireSurjective): the bases must reach every
    point of the box their largest entries imply."""
    layout = LinearLayout.from_bases(
        [("bases", bases)], dim_names(rank), box_sizes(bases, rank), require_surjective=False
    )
    if not layout.is_surjective():
        raise EncodingError(
            f"{name} must be surjective (reach every point of the box its bases span), got {[list(b) for b in bases]}"
        )


def _drop_spanned_registers(cta: LinearLayout) -> LinearLayout:
    """Triton's actionRemoveBroadcastedRegs: keep only the register bases independent of the
    earlier ones (the free variables of ``register``, its first in-dim, are the rest)."""
    count = cta.get_in_dim_size_log2("register")
    if count == 0:  # no register bases: nothing to drop
        return cta
    free = cta.get_free_variable_masks()["register"]
    kept = [i for i in range(count) if not free >> i & 1]
    return ColumnAction(kept, "register", count).apply(cta)


def wmma_dot_layout(
    operand_index: int, wmma: AMDWMMALayout, k_width: int, k_dim: int, cga_layout: BasisList, shape: tuple[int, ...]
) -> LinearLayout:
    """Triton's wmmaDotOperandToLinearLayout: k_width registers along K, 16 lanes along the non-K
    dim, the other half-wave along K (version 1: a copy of the first), registers up to the
    instruction's K, and (32x16) a second 16-row group; then the parent's ctaLayout with its K
    components zeroed and the register bases that became redundant removed."""
    rank = wmma.rank or 2
    nonk_dim = rank - 2 if operand_index == 0 else rank - 1
    instr = wmma.instr_shape or (16, 16, 16)
    # The parent's tile extent along this operand's non-K dim: a transposed 32x16 tile is 32
    # wide along N, so there operand B (not A) stacks two 16-lane groups.
    nonk_repeat = instr[1 - operand_index if wmma.transposed else operand_index] // 16
    depth = WMMA_WAVE // 16
    factors = listed_dims("register", (k_dim, nonk_dim), rank) + [
        _along("register", k_width, k_dim),
        _along("lane", 16, nonk_dim),
        (depth, "lane", _NAMES[k_dim], 0) if wmma.version == 1 else _along("lane", depth, k_dim),
        _along("register", instr[2] // (depth * k_width), k_dim),
        _along("register", nonk_repeat, nonk_dim),
    ]
    layout = times(product_1d(factors), _drop_spanned_registers(wmma.cta_layout(project_dim=k_dim)))
    order = [k_dim, nonk_dim] + list(range(rank - 2))
    return combine_cta_cga(layout.transpose_outs([_NAMES[d] for d in order]), cga_layout, shape)
