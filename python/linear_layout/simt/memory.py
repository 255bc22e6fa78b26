"""The interpreter's memory: buffers (memrefs), their race tracking, and dynamic shared memory."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import mlir.ir as ir
import numpy as np

from ..ir.upstream import memory_space_name
from .elements import Elem
from .errors import MemoryAccessError, SimtError, UnsupportedOp

__all__ = [
    "GLOBAL_ARGUMENT_SPAN",
    "GLOBAL_BASE_ADDRESS",
    "SHARED_BASE_ALIGNMENT",
    "Buffer",
    "DynamicSharedMemory",
    "RaceTracking",
    "memory_space",
    "memref_layout",
]

SHARED_BASE_ALIGNMENT = 128
#: Global memref argument ``i`` starts at byte address ``GLOBAL_BASE_ADDRESS + i * GLOBAL_ARGUMENT_SPAN``
#: (what ``memref.extract_aligned_pointer_as_index`` gives and ``!llvm.ptr<1>`` pointers hold); far
#: above every workgroup address, so a pointer names its buffer.
GLOBAL_BASE_ADDRESS = 1 << 48
GLOBAL_ARGUMENT_SPAN = 1 << 40


@dataclasses.dataclass(frozen=True, eq=False)
class RaceTracking:
    """Race tracking of one workgroup buffer: per element, bit w set if warp w wrote / read /
    updated it atomically (``atomics``) since the last barrier; ``initialized`` is set once any
    thread has written the element; ``in_flight`` has bit w set while a ``cp.async`` of warp w to
    the element has not landed (its ``wait_group`` has not run). Atomics of several warps on one
    element do not race with each other, only with plain reads and writes of other warps. The
    arrays are updated in place (the tracking is per-buffer scratch state, never cached)."""

    writers: np.ndarray
    readers: np.ndarray
    initialized: np.ndarray
    in_flight: np.ndarray
    atomics: np.ndarray

    @classmethod
    def of_size(cls, size: int) -> RaceTracking:
        return cls(
            np.zeros(size, np.uint64),
            np.zeros(size, np.uint64),
            np.zeros(size, bool),
            np.zeros(size, np.uint64),
            np.zeros(size, np.uint64),
        )


@dataclasses.dataclass(eq=False)
class Buffer:
    """A memref: a flat numpy array plus the strided indexing of its MLIR type."""

    name: str
    space: str  # "global" or "workgroup"
    elem: Elem
    data: np.ndarray  # flat, in elem.storage; global buffers are views of the caller's arrays
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    base_address: int
    tracking: RaceTracking | None = None  # workgroup buffers only

    def start_interval(self) -> None:
        if self.tracking is not None:
            self.tracking.writers[:] = 0
            self.tracking.readers[:] = 0
            self.tracking.atomics[:] = 0

    def race_tracking(self) -> RaceTracking:
        """The race tracking of a workgroup buffer."""
        if self.tracking is None:
            raise SimtError(f"{self.name} is {self.space} memory: no race tracking")
        return self.tracking

    def multi_index(self, flat: int) -> tuple[int, ...]:
        """Indices of a flat element offset, for messages."""
        rest = flat - self.offset
        out = []
        for stride in self.strides:
            out.append(rest // stride if stride else 0)
            rest -= out[-1] * stride
        return tuple(out)


def memref_layout(t: ir.MemRefType, shape: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """(strides, offset) of a memref type, for a static shape (dynamic sizes come from the array)."""
    if isinstance(t.layout, ir.AffineMapAttr) and t.layout.value == ir.AffineMap.get_identity(t.rank):
        strides, running = [], 1
        for size in reversed(shape):
            strides.append(running)
            running *= size
        return tuple(reversed(strides)), 0
    strides, offset = t.get_strides_and_offset()
    if ir.ShapedType.get_dynamic_stride_or_offset() in (*strides, offset):
        raise UnsupportedOp(f"memref type {t} has a dynamic strided layout")
    return tuple(strides), offset


def memory_space(t: ir.MemRefType) -> str:
    """ "global" or "workgroup"; UnsupportedOp for any other memory space."""
    space = memory_space_name(t)
    if space not in ("global", "workgroup"):
        raise UnsupportedOp(f"memref memory space {space} is not supported (global and workgroup only)")
    return space


@dataclasses.dataclass(frozen=True)
class DynamicSharedMemory:
    """The value of ``gpu.dynamic_shared_memory``: the launch's dynamic shared bytes, from
    ``base_address`` on; only ``memref.view`` reads it."""

    base_address: int


def elements_at(ex, op, buffers, addresses: np.ndarray, nbytes: int, what: str) -> tuple[Buffer, np.ndarray]:
    """The one buffer of ``buffers`` that holds ``[address, address + nbytes)`` for every
    address, and each address as an element offset into it."""
    first = int(addresses[0])
    found = [b for b in buffers if b.base_address <= first < b.base_address + len(b.data) * b.elem.mem_bytes]
    if not found:
        raise MemoryAccessError(f"{op.name}: {what} address {first} is in no {what} buffer")
    buf = found[0]
    end = buf.base_address + len(buf.data) * buf.elem.mem_bytes
    outside = (addresses < buf.base_address) | (addresses + nbytes > end)
    misaligned = (addresses - buf.base_address) % buf.elem.mem_bytes != 0
    if outside.any() or misaligned.any():
        t = int(np.argmax(outside | misaligned))
        raise MemoryAccessError(
            f"{op.name}: {what} address {int(addresses[t])} (copy {t}) is outside {buf.name} or between its elements"
        )
    return buf, (addresses - buf.base_address) // buf.elem.mem_bytes
