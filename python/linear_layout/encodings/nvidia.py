"""NVIDIA tensor-core layouts: the ``#ttg.nvidia_mma`` accumulator (Ampere mma.sync, Hopper wgmma)
and the register layout of its dot operands.

Built as Triton 3.9's ``NvidiaMmaEncodingAttr::toLinearLayout`` and ``nvidiaDotToLinearLayout``:
``nvidiaMmaTile`` for one warp, times the warps, fitted to the shape with the CGA layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.layout import LinearLayout
from .base import (
    BasisList,
    EncodingError,
    FactoredLayout,
    cga_suffix,
    check_pow2,
    dim_names,
    fitted_tile,
    fmt,
    int_fields,
    listed_dims,
    matrix_order,
    standard_factors,
    store_fields,
)

if TYPE_CHECKING:  # annotations only
    from .base import Factor

__all__ = ["NVMMADistributedLayout", "mma_tile", "nvidia_dot_layout"]


def mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int], rep_order: Sequence[int]) -> list[Factor]:
    """The ``product_1d`` factors of Triton's nvidiaMmaTile for an m x n tile (n = tile[order[0]],
    the inner dim).

    Formula: ``identity_standard_nd(register, [1]*rank, rep_order)`` times, in this order,
    k_width registers along n, 4 lanes along n, 8 lanes along m, m/8 registers along m and
    n/(4*k_width) registers along n.
    Requires: m a multiple of 8, n a multiple of 4*k_width.
    """
    names = dim_names(len(rep_order))
    inner, outer = names[order[0]], names[order[1]]
    m, n = tile_shape[order[1]], tile_shape[order[0]]
    return listed_dims("register", rep_order, len(rep_order)) + [
        (k_width, "register", inner),
        (4, "lane", inner),
        (8, "lane", outer),
        (m // 8, "register", outer),
        (n // (4 * k_width), "register", inner),
    ]


@dataclass(frozen=True)
class NVMMADistributedLayout(FactoredLayout):
    """Accumulator layout of NVIDIA tensor-core MMA: version (2, 0) is Ampere mma.sync,
    (3, 0) is Hopper wgmma.

    Formula: ``mma_tile(instr_shape[:2] (m x n), k_width 2)`` for one warp, times
    ``identity_standard_nd(warp, warps_per_cta, row-major (Ampere) or column-major (Hopper))``,
    fitted to the shape with the CGA layout.
    Requires: Ampere instr_shape of rank entries, Hopper rank 2 and instr_shape (m, n, k);
    m and n multiples of 8.

    >>> NVMMADistributedLayout((2, 0), (1, 1), (16, 8)).to_linear_layout((16, 8)).get_in_dim_size("lane")
    32
    """

    version: tuple[int, int]
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    cga_layout: BasisList = ()

    def __post_init__(self) -> None:
        version, warps, instr = int_fields(self, "version", "warps_per_cta", "instr_shape")
        if len(version) != 2 or version[0] not in (2, 3):
            raise EncodingError(
                f"version must be [major, minor] with major 2 (Ampere) or 3 (Hopper), got {list(version)}"
            )
        rank = len(warps)
        if rank < 2:
            raise EncodingError("warps_per_cta of an MMA layout must have rank >= 2")
        check_pow2("warps_per_cta", warps)
        if version[0] == 2 and len(instr) != rank:
            raise EncodingError(f"instr_shape of MMA v2 must have one entry per dim ({rank}), got {list(instr)}")
        if version[0] == 3:
            if rank != 2:
                raise EncodingError(f"MMA v3 (Hopper) layouts must have rank 2, got {rank}")
            if len(instr) != 3:
                raise EncodingError(f"instr_shape of MMA v3 must be [m, n, k], got {list(instr)}")
        check_pow2("instr_shape", instr)
        tile = instr[:2] if version[0] == 3 else instr[-2:]
        if tile[0] % 8 or tile[1] % 8:
            raise EncodingError(f"the MMA tile {list(tile)} must be a multiple of 8 in m and n")
        store_fields(self, rank, version=version, warps_per_cta=warps, instr_shape=instr)

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def is_hopper(self) -> bool:
        return self.version[0] == 3

    def tile_factors(self, shape: tuple[int, ...]) -> list[Factor]:
        rank = self.rank
        tile = self.instr_shape[:2] if self.is_hopper else self.instr_shape
        row_major = matrix_order(rank, True)
        warps = standard_factors("warp", self.warps_per_cta, matrix_order(rank, not self.is_hopper))
        return mma_tile(tile, 2, row_major, row_major) + warps

    def __str__(self) -> str:
        return (
            f"#ttg.nvidia_mma<{{versionMajor = {self.version[0]}, versionMinor = {self.version[1]}, "
            f"warpsPerCTA = {fmt(self.warps_per_cta)}{cga_suffix(self.cga_layout)}, "
            f"instrShape = {fmt(self.instr_shape)}}}>"
        )


def nvidia_dot_layout(
    operand_index: int,
    parent: NVMMADistributedLayout,
    k_width: int,
    k_dim: int,
    cga_layout: BasisList,
    shape: tuple[int, ...],
) -> LinearLayout:
    """Triton's nvidiaDotToLinearLayout: a 16 x 8*k_width (A) or 8*k_width x 8 (B) tile per warp
    (``mma_tile`` with K the inner dim), times the parent's warps broadcast along K (the tile lists
    every dim, so the warps' factors follow its out-dim order, as Triton's ``transposeOuts``)."""
    rank = parent.rank
    tile = [1] * rank
    if operand_index == 0:
        tile[rank - 2], tile[rank - 1] = 16, k_width * 8
    else:
        tile[rank - 2], tile[rank - 1] = k_width * 8, 8
    order = matrix_order(rank, operand_index == 0)  # K is the inner dim
    warps = standard_factors("warp", parent.warps_per_cta, matrix_order(rank, not parent.is_hopper), broadcast=k_dim)
    return fitted_tile([*mma_tile(tile, k_width, order, order), *warps], cga_layout, shape)
