"""The phases of one warp's shared-memory access, counted from the addresses themselves.

An access moves ``vector`` elements of ``bitwidth`` bits per thread (``w`` bytes). The hardware
serves a warp's access in *phases* of ``128 / max(w, 4)`` consecutive lanes (8 lanes for
16-byte accesses, 16 for 8-byte, 32 otherwise); a phase costs as many *wavefronts* as the
largest number of distinct 4-byte words any one of the 32 banks must deliver (bank
``= word mod 32``); a phase whose lanes are all predicated off costs nothing. This is the bank
model of :mod:`linear_layout.simt` and of the planner.

The counts here are made from the byte addresses of every lane, independently of the planner's
closed-form ones (``wavefronts = phase cost x phases x instructions x warps``), so the pictures
double as a check: :func:`access_phases` for the highlighted warp and instruction, and the total
over every warp, instruction and phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES

__all__ = ["AccessPhases", "Phase", "access_phases", "lanes_per_phase"]


@dataclass(frozen=True)
class Phase:
    """One phase of the highlighted instruction: its active lanes, each lane's element offsets,
    and the wavefronts it costs."""

    first_lane: int
    lanes: tuple[int, ...]
    offsets: tuple[tuple[int, ...], ...]
    wavefronts: int


@dataclass(frozen=True)
class AccessPhases:
    """The phases of warp ``warp``'s instruction ``instruction`` (of ``instructions``), and the
    wavefronts of the whole access (every warp, instruction and phase) counted the same way."""

    kind: str
    warp: int
    instruction: int
    instructions: int
    vector: int
    access_bytes: int
    phases: tuple[Phase, ...]
    total_wavefronts: int

    def notes(self) -> tuple[str, ...]:
        """One line per phase and a total, for the picture."""
        lines = [
            f"{self.kind}: warp {self.warp}, instruction {self.instruction + 1} of {self.instructions} "
            f"({self.vector} element(s), {self.access_bytes} B per lane)"
        ]
        for number, phase in enumerate(self.phases, start=1):
            lanes = f"lanes {phase.first_lane}-{phase.first_lane + lanes_per_phase(self.access_bytes) - 1}"
            active = "" if phase.lanes else ", no active lane"
            lines.append(f"  phase {number} ({lanes}{active}): {phase.wavefronts} wavefront(s)")
        lines.append(f"  {self.kind} total over all warps and instructions: {self.total_wavefronts} wavefront(s)")
        return tuple(lines)


def lanes_per_phase(access_bytes: int) -> int:
    """Lanes served together: ``128 / max(access bytes, 4)``."""
    return WAVEFRONT_BYTES // max(access_bytes, BANK_BYTES)


def _wavefronts(offsets: np.ndarray, vector: int, element_bytes: int) -> int:
    """Wavefronts of one phase: ``offsets`` are the first element offsets of its active lanes."""
    if offsets.size == 0:
        return 0
    starts = offsets.astype(np.int64) * element_bytes
    byte_addresses = (starts[:, None] + np.arange(vector * element_bytes, dtype=np.int64)[None, :]).reshape(-1)
    words = np.unique(byte_addresses // BANK_BYTES)
    return int(np.bincount(words % NUM_BANKS, minlength=NUM_BANKS).max())


def _lane_offsets(access: Any, lanes: int, warp: int) -> np.ndarray:
    values = access.thread_offset.apply(
        {"lane": np.arange(lanes, dtype=np.int64), "warp": np.full(lanes, warp, dtype=np.int64)}
    )
    return np.asarray(values["offset"], dtype=np.int64)


def _active(mask: int, count: int) -> np.ndarray:
    return (np.arange(count, dtype=np.int64) & mask) == 0


def access_phases(access: Any, bitwidth: int, kind: str, warp: int = 0, instruction: int = 0) -> AccessPhases:
    """Count the phases of ``access`` (a side of a shared plan, or a local load/store: anything
    with the planner's ``Access`` fields ``thread_offset`` (lane, warp -> offset),
    ``instructions`` (each with an element ``offset``), ``predicate``, ``vector`` and
    ``instruction_bytes``).

    Lanes and warps predicated off (``access.predicate``: a thread takes part iff
    ``index & mask == 0``) access nothing. Requires ``instruction < len(access.instructions)``.
    """
    element_bytes = max(1, bitwidth // 8)
    lanes = access.thread_offset.get_in_dim_size("lane")
    warps = access.thread_offset.get_in_dim_size("warp")
    per_phase = min(lanes, lanes_per_phase(access.instruction_bytes))
    lane_on = _active(access.predicate.get("lane", 0), lanes)
    warp_on = _active(access.predicate.get("warp", 0), warps)
    total = 0
    highlighted: list[Phase] = []
    for w in range(warps):
        if not warp_on[w]:
            continue
        base = _lane_offsets(access, lanes, w)
        for k, ins in enumerate(access.instructions):
            offsets = base ^ ins.offset
            for first in range(0, lanes, per_phase):
                members = np.arange(first, first + per_phase)[lane_on[first : first + per_phase]]
                cost = _wavefronts(offsets[members], access.vector, element_bytes)
                total += cost
                if w == warp and k == instruction:
                    starts = offsets[members].tolist()
                    highlighted.append(
                        Phase(
                            first,
                            tuple(members.tolist()),
                            tuple(tuple(range(s, s + access.vector)) for s in starts),
                            cost,
                        )
                    )
    return AccessPhases(
        kind,
        warp,
        instruction,
        len(access.instructions),
        access.vector,
        access.instruction_bytes,
        tuple(highlighted),
        total,
    )
