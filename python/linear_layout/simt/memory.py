"""The interpreter's memory: buffers (memrefs), their race tracking, and dynamic shared memory.

Workgroup memory is byte-addressed: each allocation (a `gpu.func` workgroup attribution, a
`memref.alloc`, a view of dynamic shared memory) is `SharedBytes`, its bytes and their race
tracking, and a workgroup `Buffer` is a typed view of some of them at a byte offset. Views of one
allocation (`memref.view`, the lowering's buffers that reuse a dead buffer's bytes) see the same
bytes whatever their element types, and the race tracking, per byte, sees an access through one
view racing with another's through any view of the same bytes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import mlir.ir as ir
import numpy as np

from ..ir.upstream import memory_space_name
from .elements import GARBAGE_BYTE, Elem
from .errors import MemoryAccessError, SimtError, UnsupportedOp

__all__ = [
    "GLOBAL_ARGUMENT_SPAN",
    "GLOBAL_BASE_ADDRESS",
    "SHARED_BASE_ALIGNMENT",
    "Buffer",
    "DynamicSharedMemory",
    "RaceTracking",
    "SharedBytes",
    "memory_space",
    "memref_layout",
    "typed_view",
]

SHARED_BASE_ALIGNMENT = 128
#: Global memref argument ``i`` starts at byte address ``GLOBAL_BASE_ADDRESS + i * GLOBAL_ARGUMENT_SPAN``
#: (what ``memref.extract_aligned_pointer_as_index`` gives and ``!llvm.ptr<1>`` pointers hold); far
#: above every workgroup address, so a pointer names its buffer.
GLOBAL_BASE_ADDRESS = 1 << 48
GLOBAL_ARGUMENT_SPAN = 1 << 40


@dataclasses.dataclass(frozen=True, eq=False)
class RaceTracking:
    """Race tracking of one workgroup allocation: per byte, bit w set if warp w wrote / read /
    updated it atomically (``atomics``) since the last barrier; ``initialized`` is set once any
    thread has written the byte; ``in_flight`` has bit w set while a ``cp.async`` of warp w to
    the byte has not landed (its ``wait_group`` has not run). Atomics of several warps on one
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


@dataclasses.dataclass(frozen=True, eq=False)
class SharedBytes:
    """One workgroup allocation: its bytes (``raw``, uint8, from byte address ``base_address``)
    and their race tracking. Updated in place."""

    name: str
    base_address: int
    raw: np.ndarray
    tracking: RaceTracking

    @classmethod
    def of_size(cls, name: str, base_address: int, size: int) -> SharedBytes:
        return cls(name, base_address, np.full(size, GARBAGE_BYTE, np.uint8), RaceTracking.of_size(size))


class _WideStorage:
    """The elements of a type held in numpy wider than in memory (bf16, held in float32) over
    their bytes: indexing reads and writes the bytes (``Elem.from_bits``/``to_bits``)."""

    def __init__(self, bits: np.ndarray, elem: Elem) -> None:
        self.bits, self.elem, self.dtype = bits, elem, elem.storage

    def __len__(self) -> int:
        return len(self.bits)

    def __getitem__(self, key):
        return self.elem.from_bits(self.bits[key])

    def __setitem__(self, key, value) -> None:
        self.bits[key] = self.elem.to_bits(self.elem.wrap(value))


def typed_view(raw: np.ndarray, elem: Elem):
    """The elements of type ``elem`` over the bytes ``raw`` (sharing them)."""
    if elem.storage.itemsize == elem.mem_bytes:
        return raw.view(elem.storage)
    return _WideStorage(raw.view(elem.bits_dtype), elem)


@dataclasses.dataclass(eq=False)
class Buffer:
    """A memref: a flat array plus the strided indexing of its MLIR type. A workgroup buffer's
    ``data`` is a typed view of the bytes of its allocation (``memory``) from ``byte_offset``."""

    name: str
    space: str  # "global" or "workgroup"
    elem: Elem
    data: np.ndarray  # flat, in elem.storage; global buffers are views of the caller's arrays
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    base_address: int
    memory: SharedBytes | None = None  # workgroup buffers only
    byte_offset: int = 0  # where element 0 of ``data`` sits in ``memory``

    def start_interval(self) -> None:
        if self.memory is not None:
            self.memory.tracking.writers[:] = 0
            self.memory.tracking.readers[:] = 0
            self.memory.tracking.atomics[:] = 0

    def race_tracking(self) -> RaceTracking:
        """The race tracking of a workgroup buffer's allocation (per byte: `byte_places`)."""
        if self.memory is None:
            raise SimtError(f"{self.name} is {self.space} memory: no race tracking")
        return self.memory.tracking

    def byte_places(self, flat: np.ndarray) -> np.ndarray:
        """The bytes of the elements at flat offsets ``flat``, in its allocation: element-major,
        ``elem.mem_bytes`` per element."""
        size = self.elem.mem_bytes
        starts = self.byte_offset + np.asarray(flat, dtype=np.int64).ravel() * size
        return (starts[:, None] + np.arange(size)).ravel()

    def element_at(self, place: int) -> int:
        """The flat element offset of the byte ``place`` of its allocation."""
        return (place - self.byte_offset) // self.elem.mem_bytes

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
