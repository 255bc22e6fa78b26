"""Interoperability with Gluon (``triton.experimental.gluon``): :func:`to_gluon`.

Gluon's layout classes have the same names and fields as ours, so a layout built here can be
handed to a Gluon kernel.  Triton is an optional dependency, imported only when a conversion
actually needs it.
"""

from __future__ import annotations

from typing import Any

from .amd import AMDMFMALayout, AMDWMMALayout
from .base import BasisList, type_name
from .blocked import BlockedLayout, DistributedLinearLayout, SliceLayout
from .dot import DotOperandLayout
from .nvidia import NVMMADistributedLayout
from .shared import NVMMASharedLayout, SharedLinearLayout, SwizzledSharedLayout

__all__ = ["to_gluon"]

_CONVERTIBLE = (
    BlockedLayout,
    SliceLayout,
    DistributedLinearLayout,
    NVMMADistributedLayout,
    DotOperandLayout,
    AMDMFMALayout,
    AMDWMMALayout,
    SwizzledSharedLayout,
    NVMMASharedLayout,
    SharedLinearLayout,
)


def _lists(bases: BasisList | None) -> list[list[int]]:
    return [list(b) for b in bases or ()]


def _gluon_modules() -> tuple[Any, Any]:
    try:
        import triton.experimental.gluon.language._layouts as gluon
        import triton.experimental.gluon.language.amd._layouts as gluon_amd
    except ImportError as error:
        raise ValueError(f"to_gluon needs Triton 3.9 (pip install triton==3.9.0): {error}") from None
    return gluon, gluon_amd


def _distributed(layout: Any, G: Any, GA: Any) -> Any:
    if isinstance(layout, BlockedLayout):
        return G.BlockedLayout(
            list(layout.size_per_thread),
            list(layout.threads_per_warp),
            list(layout.warps_per_cta),
            list(layout.order),
            _lists(layout.cga_layout),
        )
    if isinstance(layout, SliceLayout):
        return G.SliceLayout(layout.dim, to_gluon(layout.parent))
    if isinstance(layout, DistributedLinearLayout):
        return G.DistributedLinearLayout(
            _lists(layout.reg_bases),
            _lists(layout.lane_bases),
            _lists(layout.warp_bases),
            _lists(layout.block_bases),
            list(layout.shape),
        )
    if isinstance(layout, NVMMADistributedLayout):
        return G.NVMMADistributedLayout(
            list(layout.version), list(layout.warps_per_cta), list(layout.instr_shape), _lists(layout.cga_layout)
        )
    if isinstance(layout, DotOperandLayout):
        return G.DotOperandLayout(layout.operand_index, to_gluon(layout.parent), layout.k_width)
    if isinstance(layout, AMDMFMALayout):
        return GA.AMDMFMALayout(
            layout.version,
            list(layout.instr_shape),
            layout.transposed,
            list(layout.warps_per_cta),
            layout.element_bitwidth,
            list(layout.tiles_per_warp or ()),
            _lists(layout.cga_layout),
        )
    return GA.AMDWMMALayout(
        layout.version,
        layout.transposed,
        _lists(layout.warp_bases),
        _lists(layout.reg_bases),
        list(layout.instr_shape),
        _lists(layout.cga_layout),
        layout.rank,
    )


def _shared(layout: Any, G: Any) -> Any:
    if isinstance(layout, SwizzledSharedLayout):
        return G.SwizzledSharedLayout(
            layout.vec, layout.per_phase, layout.max_phase, list(layout.order), _lists(layout.cga_layout)
        )
    if isinstance(layout, NVMMASharedLayout):
        return G.NVMMASharedLayout(
            layout.swizzle_byte_width,
            layout.element_bitwidth,
            layout.rank,
            layout.transposed,
            layout.fp4_padded,
            _lists(layout.cga_layout),
        )
    return G.SharedLinearLayout(_lists(layout.offset_bases), _lists(layout.block_bases), layout.alignment)


def to_gluon(layout: object) -> Any:
    """The Gluon object for one of our encodings.

    Requires: ``layout`` is one of our encodings other than :class:`PaddedSharedLayout` (a
    ``ValueError`` otherwise, raised before Triton is imported); Triton 3.9 is installed.
    Postcondition: Gluon converts the result to the same linear layout as ``to_linear_layout``.
    """
    if not isinstance(layout, _CONVERTIBLE):
        raise ValueError(f"to_gluon: {type_name(layout)} has no Gluon counterpart")
    G, GA = _gluon_modules()
    if isinstance(layout, (SwizzledSharedLayout, NVMMASharedLayout, SharedLinearLayout)):
        return _shared(layout, G)
    return _distributed(layout, G, GA)
