"""Hardware constants and the names of the hardware input dimensions: one definition each.

Pure: no ``mlir`` import. Every layer that needs a bank count, a warp size or the
``(register, lane, warp, block)`` tuple imports it from here.
"""

from __future__ import annotations

import functools

#: The input dimensions of a distributed layout, in Triton's order.
HW_DIMS: tuple[str, ...] = ("register", "lane", "warp", "block")
#: The input dimensions of a shared-memory layout.
SHARED_DIMS: tuple[str, ...] = ("offset", "block")

#: Shared-memory banks per wavefront and the width of one bank.
NUM_BANKS = 32
BANK_BYTES = 4
#: Bytes one wavefront serves: ``NUM_BANKS * BANK_BYTES``.
WAVEFRONT_BYTES = NUM_BANKS * BANK_BYTES
#: The widest single shared/global access, in bytes (``ld.shared.v4.b32``).
MAX_ACCESS_BYTES = 16
#: Threads per NVIDIA warp.
WARP_SIZE = 32
#: The warp sizes the lowering supports: NVIDIA's (and AMD RDNA's wave32) and AMD CDNA's wave64 (gfx942).
LANES_PER_WARP = (32, 64)
#: 32-bit registers one thread can hold (NVIDIA, sm_30+); a tensor needing more would live in local memory.
MAX_REGISTERS_PER_THREAD = 255
#: The most static ``.shared`` memory a CUDA module may declare; more must be dynamic (``.extern .shared``).
MAX_STATIC_SHARED_BYTES = 48 * 1024

#: AMD CDNA3 (gfx942) serves a 16-byte LDS read (``ds_read_b128``) of a 64-lane wavefront to 8 lanes
#: per cycle, but not 8 consecutive ones: lanes 0-3 with 20-23, 4-7 with 16-19, 8-11 with 28-31,
#: 12-15 with 24-27, and the same in lanes 32-63 (ROCm's "Avoiding LDS bank conflicts" guide,
#: docs/triton-kernels.md). Those lane sets are the cosets of the span of lanes 1, 2 and 4 ^ 16.
CDNA_B128_READ_PHASE: tuple[int, ...] = (1, 2, 4 ^ 16)


def phase_lane_basis(width: int, threads_per_warp: int, kind: str) -> tuple[int, ...]:
    """The lanes served in one wavefront, as a GF(2) basis of lane vectors: a warp's shared-memory
    access of ``width`` bytes per lane is served in *phases*, the cosets of its span.

    The bank model (NVIDIA, and AMD's LDS of 32 banks x 4 bytes, 128 bytes per cycle): a phase is
    ``WAVEFRONT_BYTES / max(width, BANK_BYTES)`` consecutive lanes (a 64-lane wavefront: half of it
    for 4-byte and narrower accesses, a quarter for 8-byte ones, 8 lanes for a 16-byte write),
    except a 16-byte read of a 64-lane warp (:data:`CDNA_B128_READ_PHASE`). ``kind``: "load" or "store".

    >>> phase_lane_basis(4, 32, "load"), phase_lane_basis(16, 64, "store"), phase_lane_basis(16, 64, "load")
    ((1, 2, 4, 8, 16), (1, 2, 4), (1, 2, 20))
    """
    if threads_per_warp == 64 and width == MAX_ACCESS_BYTES and kind == "load":
        return CDNA_B128_READ_PHASE
    lanes = min(threads_per_warp, WAVEFRONT_BYTES // max(width, BANK_BYTES))
    return tuple(1 << k for k in range(lanes.bit_length() - 1))


@functools.cache
def lane_phases(width: int, threads_per_warp: int, kind: str) -> tuple[int, ...]:
    """The phase (``0, 1, ...``, numbered by their lowest lane) of each lane of a warp access, as
    :func:`phase_lane_basis` groups the lanes.

    >>> lane_phases(16, 64, "load")[:32]
    (0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 3, 3, 3, 3, 2, 2, 2, 2)
    """
    span = {0}
    for vector in phase_lane_basis(width, threads_per_warp, kind):
        span |= {lane ^ vector for lane in span}
    numbers: dict[int, int] = {}
    return tuple(numbers.setdefault(min(lane ^ v for v in span), len(numbers)) for lane in range(threads_per_warp))
