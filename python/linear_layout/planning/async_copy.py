"""The plan of an async copy (`ttg.async_copy_global_to_local`, PTX `cp.async`): which elements
each thread copies with one instruction, from global memory to the shared layout.

A copy is planned like a `ttg.local_store` of the pointer tensor's layout into the shared
layout (:func:`~linear_layout.planning.shared.plan_local_access`: offsets
`distributed.invert_and_compose(shared)`), then each planned vector store is split into copies of
`width` elements: `width` is the largest power of two that is at most the vector, at most the
elements contiguous in global memory (Triton's `contiguity` and the mask's constancy, from the
axis info), and whose offsets `1, 2, 4, ..` are steps of one element along the pointers' fast
dimension (so its elements are consecutive in both memories). `cp.async` moves 4, 8 or 16
bytes: a narrower copy is a :class:`PlannerError` (Triton pipelines no such load).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..core.layout import LinearLayout
from .layouts import PlannerError
from .shared import Access, plan_local_access

__all__ = ["CP_ASYNC_BYTES", "AsyncCopyPlan", "plan_async_copy"]

#: The sizes one `cp.async` may move.
CP_ASYNC_BYTES = (4, 8, 16)


@dataclass(frozen=True)
class AsyncCopyPlan:
    """The copies of one async copy: the planned stores (`access`, of the pointer tensor's layout
    into the shared layout) split into copies of `width` elements of `element_bytes` each."""

    access: Access
    width: int
    element_bytes: int

    @property
    def copy_bytes(self) -> int:
        return self.width * self.element_bytes

    @property
    def copies_per_thread(self) -> int:
        return len(self.access.instructions) * (self.access.vector // self.width)


def _unit_steps(shared: LinearLayout, fast_dim: int, count: int) -> bool:
    """Whether offsets 1, 2, 4, .. < `count` of `shared` are 1, 2, 4, .. elements along `fast_dim`."""
    names = shared.get_out_dim_names()
    others = {name: 0 for name in shared.get_in_dim_names() if name != "offset"}
    step = 1
    while step < count:
        element = shared.apply({"offset": step, **others})
        if any(element[name] != (step if axis == fast_dim else 0) for axis, name in enumerate(names)):
            return False
        step *= 2
    return True


@functools.lru_cache(maxsize=1024)  # plans are immutable; a PlannerError is raised, never cached
def plan_async_copy(
    distributed: LinearLayout, shared: LinearLayout, bits: int, global_width: int, fast_dim: int
) -> AsyncCopyPlan:
    """The copies from pointers laid out as `distributed` into `shared` (`bits` per element), at
    most `global_width` elements contiguous in global memory along tensor dim `fast_dim`.

    Requires: `distributed` covers the shape `shared` maps onto (a subslice view resized to its
    allocation); else, or when a copy would move fewer than 4 bytes, raises PlannerError.
    Postcondition: each copy's `width` elements are consecutive in shared memory (a planned
    vector's registers sit at offsets `o ^ j`) and in global memory (along `fast_dim`).

    Example: a 32 x 32 f16 tile in `#blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4],
    warpsPerCTA = [4, 1]}>` into `#swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4}>` with
    `contiguity = 8`: one 16-byte copy per thread (`width` 8)."""
    access = plan_local_access(distributed, shared, bits, kind="store")
    width = min(access.vector, global_width)
    while width > 1 and not _unit_steps(shared, fast_dim, width):
        width //= 2
    element_bytes = max(bits // 8, 1)
    if width * element_bytes not in CP_ASYNC_BYTES:
        raise PlannerError(
            f"copies of {width} x {bits}-bit elements: cp.async moves 4, 8 or 16 bytes (Triton pipelines no such load)"
        )
    return AsyncCopyPlan(access, width, element_bytes)
