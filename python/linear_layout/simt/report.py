"""What a run of the interpreter reports: per-warp memory accesses, races and counts."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

from ..core.hardware import WAVEFRONT_BYTES
from .memory import Buffer

__all__ = ["GlobalAccess", "MemoryAccess", "Race", "Report", "SharedAccess"]


@dataclasses.dataclass(frozen=True)
class MemoryAccess:
    """What every access record holds: one warp's execution of one load or store."""

    op: str
    location: str
    kind: str  # "load" or "store"
    buffer: str
    block: int
    warp: int
    bytes_per_thread: int
    instruction_bytes: int
    instructions: int


@dataclasses.dataclass(frozen=True)
class SharedAccess(MemoryAccess):
    """One warp's execution of one workgroup-memory load or store."""

    wavefronts: int
    ideal_wavefronts: int
    bytes: int  # distinct bytes of the buffer this warp's active threads moved

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts


@dataclasses.dataclass(frozen=True)
class GlobalAccess(MemoryAccess):
    """One warp's execution of one global-memory load or store."""

    sectors: int  # distinct 32-byte sectors touched, summed over the instructions


@dataclasses.dataclass(frozen=True)
class Race:
    kind: str  # "read-after-write", "write-after-read" or "write-after-write"
    buffer: str
    element: tuple[int, ...]
    warp: int
    other_warps: tuple[int, ...]
    op: str
    location: str
    block: int
    interval: int  # barrier intervals are numbered from 0 in each block
    elements: int  # number of racing element accesses in this op execution

    def __str__(self) -> str:
        verb = "reads" if self.kind == "read-after-write" else "writes"
        what = "written" if self.kind != "write-after-read" else "read"
        others = ", ".join(map(str, self.other_warps))
        return (
            f"{self.kind} race on workgroup buffer {self.buffer} element {list(self.element)}: "
            f"warp {self.warp} {verb} it ({self.op} at {self.location}) after warp(s) {others} "
            f"{what} it in the same barrier interval #{self.interval} of block {self.block} "
            f"({self.elements} racing element access(es)); a gpu.barrier is missing"
        )


@dataclasses.dataclass
class Report:
    """What one :func:`run_kernel` call did. Counts are summed over the blocks that ran."""

    num_warps: int
    threads_per_warp: int
    blocks: list[tuple[int, int, int]]
    args: list[Any]  # the arguments as passed (global arrays were updated in place)
    shared_accesses: list[SharedAccess] = dataclasses.field(default_factory=list)
    global_accesses: list[GlobalAccess] = dataclasses.field(default_factory=list)
    shuffles: int = 0  # warp-level 32-bit shuffle instructions
    barriers: int = 0  # gpu.barrier and nvvm.bar.warp.sync executions (per block, not per warp)
    warp_barriers: int = 0  # of which nvvm.bar.warp.sync (a warp barrier, every warp at once)
    races: list[Race] = dataclasses.field(default_factory=list)
    op_counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    # The workgroup buffers of every block as the kernel left them (placement checks read their bytes).
    workgroup_buffers: list[Buffer] = dataclasses.field(default_factory=list)

    @property
    def wavefronts(self) -> int:
        return sum(a.wavefronts for a in self.shared_accesses)

    @property
    def ideal_wavefronts(self) -> int:
        return sum(a.ideal_wavefronts for a in self.shared_accesses)

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    def shared_bytes(self, kind: str | None = None) -> int:
        """Distinct bytes moved through workgroup memory, summed over warp accesses; ``kind``
        (``"load"`` or ``"store"``) restricts the sum to one side."""
        return sum(a.bytes for a in self.shared_accesses if kind in (None, a.kind))

    @property
    def floor_wavefronts(self) -> int:
        """The bandwidth floor: ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)``."""
        return sum(-(-self.shared_bytes(kind) // WAVEFRONT_BYTES) for kind in ("store", "load"))

    def shared_by_op(self) -> dict[tuple[str, str, str], tuple[int, int]]:
        """(op, location, kind) -> (wavefronts, ideal wavefronts), summed over warps and executions."""
        out: dict[tuple[str, str, str], tuple[int, int]] = {}
        for a in self.shared_accesses:
            key = (a.op, a.location, a.kind)
            w, i = out.get(key, (0, 0))
            out[key] = (w + a.wavefronts, i + a.ideal_wavefronts)
        return out

    def summary(self) -> str:
        lines = [
            f"blocks={len(self.blocks)} warps={self.num_warps}x{self.threads_per_warp} "
            f"barriers={self.barriers} shuffles={self.shuffles} races={len(self.races)}",
            f"shared: wavefronts={self.wavefronts} ideal={self.ideal_wavefronts} "
            f"bank_conflicts={self.bank_conflicts} bytes={self.shared_bytes()} floor={self.floor_wavefronts}",
        ]
        for (op, loc, kind), (w, i) in self.shared_by_op().items():
            lines.append(f"  {kind:5} {op:14} {loc}: wavefronts={w} ideal={i}")
        return "\n".join(lines)
