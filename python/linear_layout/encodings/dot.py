"""``#ttg.dot_op``: the register layout of operand A or B of a dot, by the family of its parent."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.layout import LinearLayout, product_1d
from .amd import WMMA_K_WIDTHS, AMDMFMALayout, AMDWMMALayout, mfma_dot_layout, wmma_dot_layout
from .base import (
    BLOCK,
    BasisList,
    DistributedLayout,
    EncodingError,
    combine_cta_cga,
    integer,
    is_pow2,
    standard_factors,
    store_fields,
    type_name,
    zeroed_along,
)
from .blocked import BlockedLayout
from .nvidia import NVMMADistributedLayout, nvidia_dot_layout

__all__ = ["DotOperandLayout"]

_PARENTS = (BlockedLayout, NVMMADistributedLayout, AMDMFMALayout, AMDWMMALayout)


@dataclass(frozen=True)
class DotOperandLayout(DistributedLayout):
    """Layout of operand A (operand_index 0, shape [..., M, K]) or B (1, [..., K, N])
    of a dot whose result has layout ``parent``.

    NVIDIA MMA parents: each warp holds a 16 x 8*k_width (A) or 8*k_width x 8 (B)
    tile built like the accumulator with k_width consecutive K elements per
    register group; warps repeat the parent's warp grid but are broadcast along K.
    AMD parents: k_width consecutive K elements per lane, lanes along the non-K dim
    then K; MFMA registers cover the whole K extent, WMMA repeats the parent's
    ctaLayout without its K components.
    Blocked parent (FMA dot): every thread holds the whole K extent.
    Requires: k_width 0 for blocked parents, else a power of two (WMMA v1: 8 or 16,
    v2: 4, 8 or 16); Hopper parents take only operand A from registers.
    """

    operand_index: int
    parent: DistributedLayout
    k_width: int

    def __post_init__(self) -> None:
        op = integer("dot_op operand_index", self.operand_index)
        if op not in (0, 1):
            raise EncodingError(f"dot_op operand_index must be 0 or 1, got {op}")
        parent = self.parent
        if not isinstance(parent, DistributedLayout):
            raise TypeError(f"dot_op parent must be a distributed layout, got {type_name(parent)}")
        if not isinstance(parent, _PARENTS):
            raise EncodingError(f"dot_op parent must be a blocked, MMA, MFMA or WMMA layout, got {type_name(parent)}")
        k_width = integer("dot_op k_width", self.k_width)
        store_fields(self, 0, operand_index=op, k_width=k_width)
        if (parent.rank or 0) < 2:
            raise EncodingError("dot_op parent must have rank >= 2")
        if isinstance(parent, BlockedLayout):
            if k_width != 0:
                raise EncodingError("dot_op k_width must be 0 when the parent is a blocked layout")
            return
        if not is_pow2(k_width):
            raise EncodingError(f"dot_op k_width must be a positive power of two for an MMA parent, got {k_width}")
        if isinstance(parent, NVMMADistributedLayout):
            if parent.is_hopper and op != 0:
                raise EncodingError(
                    "dot_op operand_index must be 0 for a Hopper MMA parent (wgmma only takes operand A in registers)"
                )
        elif isinstance(parent, AMDWMMALayout) and parent.version in WMMA_K_WIDTHS:
            allowed = WMMA_K_WIDTHS[parent.version]
            if k_width not in allowed:
                raise EncodingError(
                    f"dot_op k_width must be {'/'.join(map(str, allowed))} for WMMA v{parent.version}, got {k_width}"
                )

    @property
    def rank(self) -> int:
        return self.parent.rank

    @property
    def k_dim(self) -> int:
        return self.rank - 1 if self.operand_index == 0 else self.rank - 2

    @property
    def cga_layout(self) -> BasisList:
        """The parent's CGA layout with the K component dropped: CTAs never split K."""
        return zeroed_along(self.parent.cga_layout, self.k_dim)  # type: ignore[attr-defined]

    def _fma_layout(self, parent: BlockedLayout, shape: tuple[int, ...]) -> LinearLayout:
        """Triton's fmaDotToLinearLayout: every thread holds the whole K extent; lanes and warps
        are the parent's, broadcast along K."""
        k_dim = self.k_dim
        thread_size = list(parent.size_per_thread)
        thread_size[k_dim] = shape[k_dim]
        cta = product_1d(
            standard_factors("register", thread_size, parent.order)
            + standard_factors("lane", parent.threads_per_warp, parent.order, broadcast=k_dim)
            + standard_factors("warp", parent.warps_per_cta, parent.order, broadcast=k_dim)
            + [BLOCK]
        )
        return combine_cta_cga(cta, self.cga_layout, shape)

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        parent = self.parent
        if isinstance(parent, BlockedLayout):
            return self._fma_layout(parent, shape)
        if isinstance(parent, NVMMADistributedLayout):
            return nvidia_dot_layout(self.operand_index, parent, self.k_width, self.k_dim, self.cga_layout, shape)
        if isinstance(parent, AMDMFMALayout):
            return mfma_dot_layout(self.operand_index, parent, self.k_width, self.k_dim, shape)
        if isinstance(parent, AMDWMMALayout):
            return wmma_dot_layout(self.operand_index, parent, self.k_width, self.k_dim, self.cga_layout, shape)
        raise EncodingError(f"dot_op parent must be a blocked, MMA, MFMA or WMMA layout, got {type_name(parent)}")

    def __str__(self) -> str:
        kw = f", kWidth = {self.k_width}" if self.k_width else ""
        return f"#ttg.dot_op<{{opIdx = {self.operand_index}, parent = {self.parent}{kw}}}>"
