"""Hardware constants and the names of the hardware input dimensions: one definition each.

Pure: no ``mlir`` import. Every layer that needs a bank count, a warp size or the
``(register, lane, warp, block)`` tuple imports it from here.
"""

from __future__ import annotations

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
#: 32-bit registers one thread can hold (NVIDIA, sm_30+); a tensor needing more would live in local memory.
MAX_REGISTERS_PER_THREAD = 255
