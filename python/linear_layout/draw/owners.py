"""Who owns each tensor element of a distributed layout: the tabulated inverse.

For a layout ``L: (register, lane, warp, block) -> tensor`` every hardware point ``h`` (register
fastest, then lane, warp, block: Triton's order) holds element ``L(h)``. Sorting the hardware
points by the row-major index of their element lists each element's owners in increasing ``h``
(the order of Triton's tensor view); an element may have several owners (a broadcast) or none
(a layout that does not cover the tensor). For an invertible layout the single owner is
``L.invert()`` of the element.

Also here: turning anything drawable (a LinearLayout, an encoding, encoding text) into the
layout and shape to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.hardware import HW_DIMS, SHARED_DIMS
from ..core.layout import LinearLayout
from ..core.limits import MAX_PICTURE, check_materialised
from ..encodings import DistributedLayout, SharedLayout, parse_encoding

__all__ = ["COLOR_BY", "Ownership", "as_layout", "natural_shape", "owner_texts", "ownership", "thread_elements"]

#: The indices a distributed picture can be coloured by.
COLOR_BY = ("warp", "lane", "thread", "register", "block")

#: A shape drawn for an encoding given without one grows each dimension up to this size at most.
_MAX_NATURAL = 256
_MAX_SHARED = 64


def _with_dims(layout: LinearLayout, dims: Sequence[str]) -> LinearLayout:
    """``layout`` with exactly the input dimensions ``dims`` in that order (missing ones size 1)."""
    names = layout.get_in_dim_names()
    extra = [d for d in names if d not in dims]
    if extra:
        raise ValueError(
            f"cannot draw a layout with input dimension(s) {extra}: expected a subset of ({', '.join(dims)})"
        )
    bases = dict(layout.bases)
    return LinearLayout.from_bases(
        [(d, [list(b) for b in bases.get(d, ())]) for d in dims],
        list(layout.get_out_dim_names()),
        [s for _, s in layout.out_dims],
        require_surjective=False,
    )


def natural_shape(encoding: DistributedLayout | SharedLayout) -> tuple[int, ...]:
    """The shape an encoding is drawn at when none is given.

    An encoding's own shape if it has one (``shared_linear``, ``padded_shared``). Otherwise each
    dimension in turn is doubled while some lane, warp or block basis that a larger size along it
    would make non-zero is still zero: the smallest shape on which every thread holds its own
    element (up to the encoding's own broadcasts), about one CTA tile. Registers that repeat
    beyond it are not drawn: give a shape to see them. Shared encodings without a shape get
    8 x 8 (last two dimensions), doubled while the encoding rejects it, up to 64 x 64.
    """
    own = getattr(encoding, "shape", None)
    if own:
        return tuple(own)
    if isinstance(encoding, SharedLayout):
        return _shared_shape(encoding)
    full = [_MAX_NATURAL >> (2 * (encoding.rank - 2)) if encoding.rank > 2 else _MAX_NATURAL] * encoding.rank
    shape = [1] * encoding.rank
    for dim in range(encoding.rank):
        target = _zero_thread_bases(encoding, shape[:dim] + [full[dim]] + shape[dim + 1 :])
        while shape[dim] < full[dim] and _zero_thread_bases(encoding, shape) > target:
            shape[dim] *= 2
    return tuple(shape)


def _shared_shape(encoding: SharedLayout) -> tuple[int, ...]:
    """8 x 8 in the last two dimensions, both doubled while the encoding rejects the shape (an
    ``nvmma_shared`` swizzle needs a whole swizzle width), up to 64."""
    shape = [1] * encoding.rank
    size = 8
    while True:
        shape[-2:] = [size] * min(2, encoding.rank)
        try:
            encoding.to_linear_layout(shape)
            return tuple(shape)
        except ValueError:
            if size >= _MAX_SHARED:
                raise
            size *= 2


def _zero_thread_bases(encoding: DistributedLayout, shape: Sequence[int]) -> int:
    """How many lane, warp and block bases are zero (broadcast) on ``shape``."""
    bases = dict(encoding.to_linear_layout(shape).bases)
    return sum(1 for dim in ("lane", "warp", "block") for basis in bases.get(dim, ()) if not any(basis))


def as_layout(value: Any, shape: Sequence[int] | None, dims: Sequence[str] = HW_DIMS) -> tuple[LinearLayout, str]:
    """``(layout with exactly the input dims ``dims``, description)`` for a LinearLayout, an encoding
    or encoding text. Raises ValueError for anything else, for a mismatched ``shape``, and
    (``LimitError``) for a layout of more than ``MAX_PICTURE`` elements or hardware points."""
    layout, name = _as_layout(value, shape, dims)
    for log2 in (layout.get_total_out_dim_size_log2(), layout.get_total_in_dim_size_log2()):
        check_materialised(1 << log2, f"drawing {name}", MAX_PICTURE)
    return layout, name


def _as_layout(value: Any, shape: Sequence[int] | None, dims: Sequence[str]) -> tuple[LinearLayout, str]:
    if isinstance(value, str):
        value = parse_encoding(value)
    want_shared = tuple(dims) == SHARED_DIMS
    if isinstance(value, (DistributedLayout, SharedLayout)):
        if isinstance(value, SharedLayout) != want_shared:
            raise ValueError(
                f"{value} is a {'shared' if isinstance(value, SharedLayout) else 'distributed'} "
                f"encoding; draw it with {'draw_shared' if not want_shared else 'draw_layout'}"
            )
        shape = natural_shape(value) if shape is None else tuple(int(s) for s in shape)
        return _with_dims(value.to_linear_layout(shape), dims), str(value)
    if isinstance(value, LinearLayout):
        sizes = tuple(s for _, s in value.out_dims)
        if shape is not None and tuple(int(s) for s in shape) != sizes:
            raise ValueError(f"shape {list(shape)} does not match the layout's output sizes {list(sizes)}")
        return _with_dims(value, dims), "LinearLayout"
    raise ValueError(f"cannot draw a {type(value).__name__}: expected a LinearLayout, an encoding or encoding text")


@dataclass(frozen=True)
class Ownership:
    """The owners of every element of a distributed layout.

    ``sizes``: ``(registers, lanes, warps, blocks)``; ``order``: hardware indices sorted by the
    row-major index of their element (ties by hardware index); element ``e``'s owners are
    ``order[starts[e]:starts[e] + counts[e]]``.
    """

    layout: LinearLayout
    shape: tuple[int, ...]
    sizes: tuple[int, int, int, int]
    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @property
    def first(self) -> np.ndarray:
        """Each element's first owner (its smallest hardware index), or -1 when it has none."""
        first = np.full(self.counts.size, -1, dtype=np.int64)
        held = self.counts > 0
        first[held] = self.order[self.starts[held]]
        return first

    def split(self, hardware: np.ndarray) -> dict[str, np.ndarray]:
        """Hardware indices as ``register, lane, warp, block`` and ``thread`` (lane + warp * lanes)."""
        registers, lanes, warps, _ = self.sizes
        register = hardware % registers
        lane = hardware // registers % lanes
        warp = hardware // (registers * lanes) % warps
        block = hardware // (registers * lanes * warps)
        return {"register": register, "lane": lane, "warp": warp, "block": block, "thread": lane + warp * lanes}

    def owners(self, element: int) -> np.ndarray:
        """The hardware indices that hold ``element``."""
        start = int(self.starts[element])
        return self.order[start : start + int(self.counts[element])]


def ownership(layout: LinearLayout) -> Ownership:
    """Tabulate ``layout`` (input dims exactly ``HW_DIMS``) and group hardware points by element."""
    shape = tuple(s for _, s in layout.out_dims)
    coords = layout.tabulate()
    flat = np.zeros(coords.shape[0], dtype=np.int64)
    for k, size in enumerate(shape):
        flat = flat * size + coords[:, k]
    total = int(np.prod(shape)) if shape else 1
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=total)
    starts = np.cumsum(counts) - counts
    sizes = tuple(layout.get_in_dim_size(d) for d in HW_DIMS)
    return Ownership(layout, shape, sizes, order, starts, counts)  # type: ignore[arg-type]


def owner_texts(owned: Ownership) -> list[str]:
    """``T<thread> r<register> lane <l> warp <w>`` (`` block <b>`` appended with several blocks)
    for every hardware index."""
    parts = owned.split(np.arange(int(np.prod(owned.sizes)), dtype=np.int64))
    texts = [
        f"T{t} r{r} lane {lane} warp {w}"
        for t, r, lane, w in zip(
            parts["thread"].tolist(), parts["register"].tolist(), parts["lane"].tolist(), parts["warp"].tolist()
        )
    ]
    if owned.sizes[3] > 1:
        texts = [f"{text} block {b}" for text, b in zip(texts, parts["block"].tolist())]
    return texts


def thread_elements(owned: Ownership, thread: int) -> np.ndarray:
    """The elements (row-major flat indices, increasing) that thread ``thread`` (``lane + warp *
    lanes``, any block) holds in one of its registers. Raises ValueError for a thread the layout
    does not have."""
    threads = owned.sizes[1] * owned.sizes[2]
    if not 0 <= thread < threads:
        raise ValueError(f"highlight: thread {thread} does not exist; the layout has threads 0-{threads - 1}")
    elements = np.repeat(np.arange(owned.counts.size, dtype=np.int64), owned.counts)
    return np.unique(elements[owned.split(owned.order)["thread"] == thread])
