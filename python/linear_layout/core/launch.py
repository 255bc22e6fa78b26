"""A layout as a kernel of a given launch holds it (Triton pads every distributed layout to the
launch's lanes, warps and CTAs with broadcast bases)."""

from __future__ import annotations

from .hardware import HW_DIMS
from .layout import LinearLayout

__all__ = ["pad_to_launch"]


def pad_to_launch(layout: LinearLayout, threads_per_warp: int, num_warps: int, num_ctas: int = 1) -> LinearLayout:
    """`layout` as a kernel of that launch holds it: every hardware input dimension present, in
    the standard order, lanes/warps/blocks padded with broadcast (zero) bases to the launch size.

    Requires: `layout`'s input dimensions are hardware dimensions (`HW_DIMS`).
    Postcondition: the result has the input dimensions `HW_DIMS` in that order, with sizes
    (registers of `layout`, `threads_per_warp`, `num_warps`, `num_ctas`), and maps every input
    of `layout` as `layout` does (the added bases are zero).
    Raises ValueError when the layout spreads over more lanes, warps or blocks than the launch has.

    Example: a layout over 4 lanes padded to 32 lanes gets 3 zero lane bases (lanes 4..31
    broadcast lanes 0..3)."""
    bases = dict(layout.bases)
    expected = {"lane": threads_per_warp, "warp": num_warps, "block": num_ctas}
    source = {"lane": "threads per warp", "warp": "warps", "block": "CTAs"}
    full = []
    for dim in HW_DIMS:
        vectors = [list(b) for b in bases.get(dim, ())]
        if dim != "register":
            size = 1 << len(vectors)
            if size > expected[dim]:
                raise ValueError(
                    f"too many {dim}s for the launch: the layout spreads over {size} {dim}s but the "
                    f"kernel has {expected[dim]} {source[dim]} (ttg.num-warps/threads-per-warp/num-ctas)"
                )
            while 1 << len(vectors) < expected[dim]:
                vectors.append([0] * layout.num_out_dims)
        full.append((dim, vectors))
    return LinearLayout.from_bases(
        full, list(layout.get_out_dim_names()), [s for _, s in layout.out_dims], require_surjective=False
    )
