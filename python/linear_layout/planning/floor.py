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
* **broadcast loads**: lanes of the loading side repeat data (zero lane bases of the
  destination). See *the lane floor* below: no layout of the scratch changes that;
* **bank conflicts**: the phase touches two words of one bank (the swizzle failed).

The lane floor
==============
Every lane must end up with its own copy of its data in registers, and a shared-memory
wavefront hands at most 128 bytes to lanes: an ``ld.shared`` of ``w >= 4`` bytes per lane is
served in phases of ``128 / w`` lanes, and an ``ldmatrix`` matrix (one phase) gives 4 bytes to
each of 32 lanes. So any exchange through shared memory, with any scratch layout and any mix of
these instructions, loads with at least

    lane floor = ceil(lane bytes / 128),   lane bytes = (loading threads) x (bytes each receives)

wavefronts. When destination lanes repeat data (lane ``L`` and ``L ^ 2**k`` hold the same
elements), the lane bytes exceed the distinct bytes by the broadcast factor, and the floor
cannot be reached: ``lane floor > floor``. (Only a register exchange could deliver the copies,
e.g. ``shfl`` of the words a partner lane loaded; a warp shuffle moves 32 x 4 bytes, what a
wavefront moves, and the copies need selects to land in the right registers:
docs/conversions.md.) Stores never pay it: broadcast copies are stored once (the predicate).
:attr:`SideFloor.lane_bytes` and :attr:`SideFloor.lane_floor` measure it per side, and the
reason names the repeated lane bases. Example: the f16 ``broadcast-dst 32x32`` kernel of
``benchmarks/bench_codegen.py`` (8 warps, destination lane basis 3 is zero) loads 16 bytes per
lane: 8 x 512 lane bytes = 32 wavefronts for 2048 distinct bytes (16): 48 in all, floor 32.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, overload

from ..core.gf2 import rank
from ..core.hardware import BANK_BYTES, WARP_SIZE, WAVEFRONT_BYTES
from ..core.layout import LinearLayout
from .shared import Access, SharedPlan

if TYPE_CHECKING:  # matrix.py imports this module (a MatrixPlan has its own floor_report)
    from .matrix import VectorSide

__all__ = [
    "FloorReport",
    "SideFloor",
    "access_bytes",
    "explain",
    "floor_of",
    "floor_wavefronts",
    "lane_bytes",
    "vector_side_floor",
]


@dataclass(frozen=True)
class SideFloor:
    """The store (or load) side of a shared-memory conversion, measured against the floor."""

    kind: str  # "store" or "load"
    bytes: int  # distinct bytes moved, summed over the accessing warps
    wavefronts: int  # the plan's exact prediction
    ideal_wavefronts: int  # the per-access minimum
    instruction_bytes: int  # width of one thread's access (0 when the side moves nothing)
    lane_bytes: int  # bytes handed to (or taken from) lanes: every active lane's own copy
    repeated_lanes: tuple[int, ...] = ()  # lane bases (bit k: lanes L, L ^ 2**k) holding the same data

    @property
    def floor(self) -> int:
        return floor_wavefronts(self.bytes)

    @property
    def lane_floor(self) -> int:
        """The fewest wavefronts of any shared-memory access sequence that gives every active
        lane its own bytes (see *the lane floor*): >= ``floor``."""
        return floor_wavefronts(self.lane_bytes)

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
        if self.lane_bytes > self.bytes and self.wavefronts <= self.lane_floor:
            bases = ", ".join(map(str, self.repeated_lanes))
            out.append(
                f"{self.kind}: lanes repeat data (lane basis {bases} is zero): every lane needs its own copy and a "
                f"wavefront hands at most {WAVEFRONT_BYTES} bytes to lanes, so {self.lane_bytes} bytes need "
                f"{self.lane_floor} wavefronts (reached) for {self.bytes} distinct bytes (floor {self.floor}): "
                "no layout of the scratch reaches the floor"
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
    lane_floor = _SideTotal(lambda side: side.lane_floor)
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
    thread_offset: LinearLayout, predicate: Mapping[str, int], vector: int, instructions: int, element_bytes: int
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


def lane_bytes(thread_offset: LinearLayout, predicate: Mapping[str, int], per_thread: int) -> int:
    """Bytes handed to (or taken from) lanes per CTA: ``per_thread`` bytes for every active
    (lane, warp), copies included (compare :func:`access_bytes`, which counts distinct ones).

    >>> offs = LinearLayout.from_bases([("lane", [[8], [16], [0], [32], [64]]), ("warp", [[128]])], ["offset"], [256],
    ...                                require_surjective=False)
    >>> lane_bytes(offs, {}, 16), access_bytes(offs, {}, 8, 1, 2)
    (1024, 512)
    """
    lanes = _active(_columns(thread_offset, "lane"), predicate.get("lane", 0))
    warps = _active(_columns(thread_offset, "warp"), predicate.get("warp", 0))
    return (1 << len(lanes)) * (1 << len(warps)) * per_thread


def _repeated_lanes(thread_offset: LinearLayout, predicate: Mapping[str, int]) -> tuple[int, ...]:
    """Active lane bases ``k`` with a zero offset: lanes ``L`` and ``L ^ 2**k`` access the same data."""
    mask = predicate.get("lane", 0)
    return tuple(k for k, c in enumerate(_columns(thread_offset, "lane")) if not c and not mask >> k & 1)


def vector_side_floor(kind: str, access: Access | VectorSide, predicate: Mapping[str, int]) -> SideFloor:
    """A side of ``ld/st.shared`` accesses (``SharedPlan``'s, or a ``MatrixPlan``'s vector side)."""
    element_bytes = max(1, access.instruction_bytes // max(1, access.vector))
    count = len(access.instructions)
    moved = access_bytes(access.thread_offset, predicate, access.vector, count, element_bytes)
    return SideFloor(
        kind=kind,
        bytes=moved,
        wavefronts=access.wavefronts,
        ideal_wavefronts=access.ideal_wavefronts,
        instruction_bytes=access.instruction_bytes if count else 0,
        lane_bytes=lane_bytes(access.thread_offset, predicate, count * access.instruction_bytes),
        repeated_lanes=_repeated_lanes(access.thread_offset, predicate),
    )


class _HasFloor(Protocol):
    """A conversion plan (``planning/plan.py``): it knows the floor report of what runs."""

    def floor_report(self) -> FloorReport: ...


class _Explainable(_HasFloor, Protocol):
    def summary(self) -> str: ...

    def rejections(self) -> str: ...


def floor_of(plan: SharedPlan | _HasFloor) -> FloorReport:
    """The floor report of a conversion plan (its ``matrix`` plan when it has one, else its
    ``shared`` plan; nothing for the other strategies), of a ``SharedPlan`` (``store`` and
    ``load`` accesses) or of a ``MatrixPlan`` (``matrix`` and ``other`` sides)."""
    if isinstance(plan, SharedPlan):
        return FloorReport(
            vector_side_floor("store", plan.store, plan.store.predicate),
            vector_side_floor("load", plan.load, plan.load.predicate),
        )
    return plan.floor_report()


def explain(plan: _Explainable) -> str:
    """``plan.summary()`` and the floor: ``; floor F: reached`` or ``; above the floor F: why``;
    then the alternatives the planner rejected, and why (``; rejected: ...``).

    >>> class Noop:
    ...     def summary(self): return "noop (the layouts agree)"
    ...     def floor_report(self): return FloorReport(None, None)
    ...     def rejections(self): return ""
    >>> explain(Noop())
    'noop (the layouts agree)'
    """
    report = plan.floor_report()
    if report.store is None and report.load is None:
        text = plan.summary()
    elif report.reaches_floor:
        text = f"{plan.summary()}; floor {report.floor}: reached"
    else:
        text = f"{plan.summary()}; above the floor {report.floor}: {'; '.join(report.reasons)}"
    rejected = plan.rejections()
    return f"{text}; {rejected}" if rejected else text
