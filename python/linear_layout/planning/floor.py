r"""The bandwidth floor of a shared-memory conversion, and why a plan does or does not reach it.

Pure (no ``mlir``). A shared-memory wavefront serves at most ``WAVEFRONT_BYTES`` = 128 bytes
(32 banks x 4 bytes). Whatever instructions a conversion uses, every warp must move its distinct
bytes through the banks, once when storing and once when loading, so

    floor = ceil(stored bytes / 128) + ceil(loaded bytes / 128)

where the bytes of one side are summed over the warps that access shared memory, each warp
counting per instruction the *distinct* elements its lanes touch (lanes of one instruction
reading the same element share it, as the hardware merges them; two instructions reading the
same element each move it).

Formula, per side, from the plan's ``thread_offset: (lane, warp) -> offset`` (linear) and its
vector of ``v`` elements:

* one instruction of one warp touches a coset of ``span(active lane offsets, 0..v-1)``, i.e.
  ``2**rank(...)`` elements;
* the warps that access are the ``2**(active warp bits)`` ones the store predicate keeps (all
  warps load); each issues the side's instructions.

Requires: a plan whose accesses are per CTA (``block`` is ignored: each CTA pays its own).
Postcondition: ``floor <= ideal_wavefronts <= wavefronts`` for every side of every plan: the
per-access minimum ``ideal`` (``ceil(distinct words / 32)`` per phase) is at least the bytes of
the phase over 128.

Example: the Hopper matmul epilogue (``nvidia_mma`` v3 ``[16,128,16]`` -> blocked, 128x128 f16,
4 warps) moves 32 KiB each way: ``floor = 256 + 256 = 512``; 2-byte ``st.shared.b16`` stores
move 64 bytes per wavefront and cost 512 on the store side alone (768 in all).

The per-access minimum and the floor differ in three ways, each of which :func:`floor_of`
names in :attr:`FloorReport.reasons` when the plan does not reach the floor:

* **sub-word accesses**: an access narrower than 4 bytes moves ``32 * width < 128`` bytes
  per wavefront (pack sub-32-bit elements, or use ``ldmatrix``/``stmatrix``);
* **broadcast**: lanes of one phase touch the same element, so a phase moves fewer distinct
  bytes than it could (no layout of the scratch changes that: the data is duplicated);
* **bank conflicts**: the phase touches two words of one bank (the swizzle failed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, overload

from ..core.gf2 import rank
from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES, WARP_SIZE
from ..core.layout import LinearLayout

__all__ = ["FloorReport", "SideFloor", "access_bytes", "explain", "floor_of", "floor_wavefronts"]


@dataclass(frozen=True)
class SideFloor:
    """The store (or load) side of a shared-memory conversion, measured against the floor."""

    kind: str  # "store" or "load"
    bytes: int  # distinct bytes moved, summed over the accessing warps
    wavefronts: int  # the plan's exact prediction
    ideal_wavefronts: int  # the per-access minimum
    instruction_bytes: int  # width of one thread's access (0 when the side moves nothing)
    broadcast_lanes: int  # lanes per phase that repeat another lane's element

    @property
    def floor(self) -> int:
        return floor_wavefronts(self.bytes)

    @property
    def reaches_floor(self) -> bool:
        return self.wavefronts <= self.floor

    def reasons(self) -> tuple[str, ...]:
        """Why ``wavefronts > floor`` (empty when the floor is reached)."""
        if self.reaches_floor:
            return ()
        out = []
        if self.wavefronts > self.ideal_wavefronts:
            out.append(f"{self.kind}: {self.wavefronts - self.ideal_wavefronts} wavefronts of bank conflicts")
        if 0 < self.instruction_bytes < BANK_BYTES:
            moved = WARP_SIZE * self.instruction_bytes
            out.append(
                f"{self.kind}: {self.instruction_bytes}-byte accesses move {moved} of "
                f"{WAVEFRONT_BYTES} bytes per wavefront"
            )
        if self.broadcast_lanes:
            out.append(
                f"{self.kind}: broadcast, {self.broadcast_lanes} lane(s) per phase repeat another lane's element"
            )
        if not out:
            out.append(f"{self.kind}: a phase holds fewer than {WAVEFRONT_BYTES} distinct bytes")
        return tuple(out)


class _SideTotal:
    """A read-only attribute of :class:`FloorReport`: ``measure`` summed over the sides it has."""

    def __init__(self, measure: Callable[[SideFloor], int]) -> None:
        self.measure = measure

    @overload
    def __get__(self, report: None, owner: type | None = None) -> _SideTotal: ...

    @overload
    def __get__(self, report: FloorReport, owner: type | None = None) -> int: ...

    def __get__(self, report: FloorReport | None, owner: type | None = None) -> _SideTotal | int:
        if report is None:  # looked up on the class (help(), inspect)
            return self
        return sum(self.measure(side) for side in report.sides())


@dataclass(frozen=True)
class FloorReport:
    """Both sides of a conversion against the floor. ``store``/``load`` are None for plans that
    do not touch shared memory (their floor is 0)."""

    store: SideFloor | None
    load: SideFloor | None

    bytes = _SideTotal(lambda side: side.bytes)
    floor = _SideTotal(lambda side: side.floor)
    wavefronts = _SideTotal(lambda side: side.wavefronts)
    ideal_wavefronts = _SideTotal(lambda side: side.ideal_wavefronts)

    def sides(self) -> tuple[SideFloor, ...]:
        """The sides that touch shared memory: store, then load."""
        return tuple(s for s in (self.store, self.load) if s is not None)

    @property
    def reaches_floor(self) -> bool:
        return all(s.reaches_floor for s in self.sides())

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(r for s in self.sides() for r in s.reasons())

    def summary(self) -> str:
        """``wavefronts W (floor F, per-access minimum M)`` and the reasons when ``W > F``."""
        text = f"wavefronts {self.wavefronts} (floor {self.floor}, per-access minimum {self.ideal_wavefronts})"
        return text + ("" if self.reaches_floor else "; above the floor: " + "; ".join(self.reasons))


def floor_wavefronts(num_bytes: int) -> int:
    """``ceil(num_bytes / 128)``: the fewest wavefronts that can move ``num_bytes``.

    >>> floor_wavefronts(32768), floor_wavefronts(64), floor_wavefronts(0)
    (256, 1, 0)
    """
    return -(-num_bytes // WAVEFRONT_BYTES)


def _columns(offsets: LinearLayout, dim: str) -> list[int]:
    flat = offsets.flatten_outs()
    if not flat.has_in_dim(dim):
        return []
    return [basis[0] for basis in dict(flat.bases)[dim]]


def _active(columns: list[int], mask: int) -> list[int]:
    return [c for k, c in enumerate(columns) if not mask >> k & 1]


def access_bytes(
    thread_offset: LinearLayout, predicate: dict[str, int] | Any, vector: int, instructions: int, element_bytes: int
) -> int:
    """Distinct bytes one side moves per CTA: per instruction and active warp, the lanes'
    ``vector``-element rows cover ``2**rank(active lane offsets + vector offsets)`` elements.

    ``thread_offset`` is the side's ``(lane, warp) -> offset`` map, ``vector`` its elements per
    access (a power of two) and ``instructions`` its accesses per thread.

    >>> lanes = [[4], [8], [16], [32], [64]]; warps = [[128], [0]]
    >>> offs = LinearLayout.from_bases([("lane", lanes), ("warp", warps)], ["offset"], [256],
    ...                                require_surjective=False)
    >>> access_bytes(offs, {"lane": 0, "warp": 0}, 4, 2, 2), access_bytes(offs, {"lane": 0, "warp": 2}, 4, 2, 2)
    (2048, 1024)
    """
    lanes = _active(_columns(thread_offset, "lane"), predicate.get("lane", 0))
    warps = _active(_columns(thread_offset, "warp"), predicate.get("warp", 0))
    row = [1 << k for k in range(vector.bit_length() - 1)]
    per_instruction = 1 << rank(lanes + row)
    return instructions * per_instruction * (1 << len(warps)) * element_bytes


def _broadcast_lanes(thread_offset: LinearLayout, predicate: Any, instruction_bytes: int) -> int:
    """Active lanes of one phase whose element another lane of the phase already covers."""
    width = max(instruction_bytes, BANK_BYTES)
    lanes_per_phase = NUM_BANKS * BANK_BYTES // width
    columns = _columns(thread_offset, "lane")[: lanes_per_phase.bit_length() - 1]
    active = _active(columns, predicate.get("lane", 0))
    return (1 << len(active)) - (1 << rank(active))


def _side(kind: str, access: Any) -> SideFloor:
    element_bytes = max(1, access.instruction_bytes // max(1, access.vector))
    moved = access_bytes(access.thread_offset, access.predicate, access.vector, len(access.instructions), element_bytes)
    return SideFloor(
        kind=kind,
        bytes=moved,
        wavefronts=access.wavefronts,
        ideal_wavefronts=access.ideal_wavefronts,
        instruction_bytes=access.instruction_bytes if access.instructions else 0,
        broadcast_lanes=_broadcast_lanes(access.thread_offset, access.predicate, access.instruction_bytes),
    )


def _matrix_sides(plan: Any) -> FloorReport:
    """The two sides of a ``MatrixPlan``: the matrix instructions and the vector accesses."""
    matrix, other = plan.matrix, plan.other
    matrix_kind = "store" if matrix.instruction == "stmatrix" else "load"
    sides = {
        matrix_kind: SideFloor(matrix_kind, matrix.bytes, matrix.wavefronts, matrix.ideal_wavefronts, 16, 0),
        other.kind: SideFloor(
            other.kind,
            other.bytes,
            other.wavefronts,
            other.ideal_wavefronts,
            other.instruction_bytes,
            _broadcast_lanes(other.thread_offset, {}, other.instruction_bytes)
            if hasattr(other, "thread_offset")
            else 0,
        ),
    }
    return FloorReport(sides["store"], sides["load"])


def floor_of(plan: Any) -> FloorReport:
    """The floor report of a conversion plan (its ``matrix`` plan when it has one, else its
    ``shared`` plan; nothing for the other strategies), of a ``SharedPlan`` (anything with
    ``store`` and ``load`` accesses) or of a ``MatrixPlan`` (``matrix`` and ``other`` sides)."""
    if hasattr(plan, "other") and hasattr(plan, "matrix"):
        return _matrix_sides(plan)
    if getattr(plan, "matrix", None) is not None:
        return _matrix_sides(plan.matrix)
    shared = plan if hasattr(plan, "store") and hasattr(plan, "load") else getattr(plan, "shared", None)
    if shared is None:
        return FloorReport(None, None)
    return FloorReport(_side("store", shared.store), _side("load", shared.load))


def explain(plan: Any) -> str:
    """``plan.summary()`` and the floor: ``; floor F: reached`` or ``; above the floor F: why``.

    >>> class Noop:
    ...     matrix = shared = None
    ...     def summary(self): return "noop (the layouts agree)"
    >>> explain(Noop())
    'noop (the layouts agree)'
    """
    report = floor_of(plan)
    if report.store is None and report.load is None:
        return plan.summary()
    if report.reaches_floor:
        return f"{plan.summary()}; floor {report.floor}: reached"
    return f"{plan.summary()}; above the floor {report.floor}: {'; '.join(report.reasons)}"
