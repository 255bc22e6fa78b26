"""The cost model of memory accesses: instruction widths, the shared-memory bank model
(wavefronts, ideal wavefronts, distinct bytes) and global-memory sectors. The module doc of
`interpreter.py` states the model."""

from __future__ import annotations

import numpy as np

from ..core.hardware import BANK_BYTES, NUM_BANKS, lane_phases

__all__ = [
    "MAX_INSTRUCTION_BYTES",
    "SECTOR_BYTES",
    "bank_wavefronts",
    "distinct_elements",
    "instruction_bytes",
    "sector_counts",
]

SECTOR_BYTES = 32
MAX_INSTRUCTION_BYTES = 16


def instruction_bytes(row_bytes: int, elem_bytes: int, alignment: int | None) -> int:
    """Width of the hardware instructions a contiguous per-thread access is split into."""
    limit = min(MAX_INSTRUCTION_BYTES, alignment if alignment else elem_bytes)
    width = elem_bytes
    while width * 2 <= limit and row_bytes % (width * 2) == 0:
        width *= 2
    return width


def bank_wavefronts(warps, lanes, addresses, width, num_warps, threads_per_warp, kind):
    """Wavefronts and ideal wavefronts per warp, under the module's bank model (the lanes of a
    phase: ``core.hardware.lane_phases``).

    ``addresses`` is (active threads, instructions) of byte addresses, each instruction ``width``
    bytes wide; ``kind`` is "load" or "store"."""
    phase_of_lane = np.asarray(lane_phases(width, threads_per_warp, kind))
    phases_per_warp = int(phase_of_lane.max()) + 1
    num_instr = addresses.shape[1]
    words_per_access = max(1, width // BANK_BYTES)
    # group = (warp, instruction, phase); one row per touched 4-byte word
    instruction = warps[:, None] * num_instr + np.arange(num_instr)
    group = instruction * phases_per_warp + phase_of_lane[lanes][:, None]
    words = (addresses // BANK_BYTES)[:, :, None] + np.arange(words_per_access)
    group = np.broadcast_to(group[:, :, None], words.shape).ravel().astype(np.int64)
    words = words.ravel().astype(np.int64)
    num_groups = num_warps * num_instr * phases_per_warp
    span = int(words.max()) + 1 if words.size else 1
    unique = np.unique(group * span + words)
    unique_group, unique_word = unique // span, unique % span
    per_bank = np.bincount(unique_group * NUM_BANKS + unique_word % NUM_BANKS, minlength=num_groups * NUM_BANKS)
    per_bank = per_bank.reshape(num_warps, num_instr * phases_per_warp, NUM_BANKS)  # distinct words
    wave = per_bank.max(axis=2).sum(axis=1)
    ideal = (-(-per_bank.sum(axis=2) // NUM_BANKS)).sum(axis=1)
    return wave, ideal


def distinct_elements(warps, offsets, num_warps):
    """Distinct buffer elements per warp: ``offsets`` is (active threads, ...) of flat offsets."""
    flat = offsets.reshape(len(warps), -1).astype(np.int64)
    span = int(flat.max()) + 1 if flat.size else 1
    keys = np.unique((warps.astype(np.int64)[:, None] * span + flat).ravel())
    return np.bincount(keys // span, minlength=num_warps)


def sector_counts(warps, addresses, width, num_warps):
    """Distinct 32-byte sectors touched per warp, summed over its instructions."""
    num_instr = addresses.shape[1]
    instruction = (warps[:, None] * num_instr + np.arange(num_instr)).astype(np.int64)
    first, last = addresses // SECTOR_BYTES, (addresses + width - 1) // SECTOR_BYTES
    span = int(last.max()) + 1
    keys = [instruction * span + np.minimum(first + k, last) for k in range(int((last - first).max()) + 1)]
    unique = np.unique(np.concatenate([k.ravel() for k in keys]))
    return np.bincount(unique // span // num_instr, minlength=num_warps)
