r"""The packed sub-32-bit exchange: every shared access at least one 32-bit word (pure).

A shared-memory conversion of 8- or 16-bit data reaches the bandwidth floor only when both
sides access whole 32-bit words: a 2-byte ``ld.shared.b16`` of 32 lanes moves 64 bytes per
wavefront. A side whose vector stays narrower than a word (``planning/shared.py``: the common
register vector ``V`` and the one-sided extension ``E`` give it fewer than ``w`` offset bits,
``w = log2(32 / bitwidth)``) needs the word's elements in its own registers.

**The word.** As in Triton's ``optimalSwizzling`` (GenericSwizzling.cpp), whose ``vbasis`` is
built from the register bases common to both layouts, the 32-bit word is a subspace ``W`` of
``w`` offset bases (offset bits ``0..w-1``) that *both* sides hold in registers:
``W ⊆ span(Rs) ∩ span(Rd)``, and, as every vector direction, outside the threads of both sides
(``W ∩ (Ts + Td) = 0``: each thread's base offset stays word-aligned). When registers alone do
not share such bases (a transpose: the source holds rows, the destination columns), the planner
makes them share one by a **2x2 register transpose across a lane pair** on one or both sides:

    swap (i, j) of a layout L:   register_i <-> lane_j

the exchange of two input coordinates, so the swapped layout is a valid layout of the same
tensor. In registers it is one exchange with the partner lane ``lane ^ 2**j``: a thread whose
lane bit ``j`` is ``t`` sends its registers with bit ``i`` = ``1 - t`` and puts the partner's
in their place (``send = t ? lo : hi``, ``lo' = t ? recv : lo``, ``hi' = t ? hi : recv``:
three selects and the shuffles of half the registers, sub-32-bit registers travelling packed,
``max(1, n*b/64)`` 32-bit shuffles). The swap also *moves* the thread span: the lane now maps to the
register's old direction, so a swap whose register the other side reads with its threads
shrinks ``Ts + Td`` and leaves room for the word next to the repetitions the scratch bound needs.

A word direction ``ω`` is, on each side, a register ``L(register_i)`` or a swapped lane
``L(lane_j)``. The source swaps before its stores, the destination after its loads (a swap is
its own inverse). For 16-bit data one ``ω`` suffices; 8-bit data needs two independent ones (two
swaps: a 4x4 transpose over two lane bits). Example: the 64x64 f16 transpose
``blocked [1,4],[4,8]`` -> ``[4,1],[8,4]`` swaps the source's register ``(0,1)`` with its lane
``(1,0)``: the word ``(1,0)`` is then a register of both sides, and the source's lanes now hold
``(0,1)``, which the destination's lanes hold too, so the two repetitions ``(0,32), (32,0)`` of
Triton's 2 KiB scratch still fit.

**The decision** (one planner, :func:`plan_packed`, called by ``plan_conversion`` for every
shared-memory conversion of sub-32-bit data): the ordinary plan stays when it is at the floor
or when no word exists; otherwise the candidates, fewest 32-bit shuffles first (no swap at all:
a common register the scratch bound had turned into a repetition; then one side; then both),
are planned by :func:`~linear_layout.planning.shared.plan_shared` with ``W`` forced into the
vector, under the *original* conversion's scratch bound (Triton's), and the first one that
reaches the floor wins; if none reaches it, the one with the fewest wavefronts, if fewer than
the ordinary plan's. The swizzle of ``plan_shared`` keeps every phase conflict-free.
The packed plan is kept only when its wavefronts plus its warp shuffles (per CTA) are fewer
than the ordinary plan's wavefronts. The model charges a warp's 32-bit ``shfl.sync`` and a
shared-memory wavefront one cycle each (32 shuffle results and 128 shared bytes per clock per
SM), assuming both compete for the SM's memory pipe (a model, not measured here), so the swaps
must save more than they cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..core.gf2 import Span, intersect, log2, rank
from ..core.hardware import BANK_BYTES
from ..core.layout import LinearLayout
from .floor import floor_of
from .layouts import PlannerError, flat_columns, side_columns
from .shared import SharedPlan, plan_shared

__all__ = ["PackedExchange", "Swap", "WordOption", "plan_packed", "swap", "word_options"]

#: Candidates planned (cheapest first) before the planner settles for the best one it has.
MAX_CANDIDATES = 6


@dataclass(frozen=True)
class Swap:
    """A 2x2 register transpose with the partner lane ``lane ^ 2**lane``: register bit
    ``register`` and lane bit ``lane`` trade places (``register_i <-> lane_j``)."""

    register: int
    lane: int


@dataclass(frozen=True)
class PackedExchange:
    """What runs around ``plan.shared``: the source's swaps before the stores and the
    destination's after the loads. ``plan.shared`` is the exchange between the *swapped*
    layouts ``src`` and ``dst``; its register indices are theirs (the same count as the
    originals'). ``word`` holds the flattened directions of offset bits ``0..w-1``."""

    src_steps: tuple[Swap, ...]
    dst_steps: tuple[Swap, ...]
    src: LinearLayout
    dst: LinearLayout
    word: tuple[int, ...]
    shuffles: int  # 32-bit shuffles per thread, both sides together
    narrow: SharedPlan  # the ordinary (unpacked) exchange of the original layouts, for comparison

    def describe(self) -> str:
        def steps(side: str, swaps: tuple[Swap, ...]) -> str:
            return ", ".join(f"{side} register {s.register} <-> lane {s.lane}" for s in swaps)

        swapped = "; ".join(s for s in (steps("src", self.src_steps), steps("dst", self.dst_steps)) if s)
        return f"packed: {self.shuffles} shuffle(s) per thread" + (f" ({swapped})" if swapped else "")


def word_bits(bitwidth: int) -> int:
    """``w``: log2 of the elements of ``bitwidth`` bits in one 32-bit word (0 from 32 bits up)."""
    return log2(BANK_BYTES * 8 // bitwidth) if bitwidth < BANK_BYTES * 8 else 0


def swap(layout: LinearLayout, steps: Sequence[Swap]) -> LinearLayout:
    """``layout`` with ``register_i`` and ``lane_j`` exchanged for every step ``(i, j)``.

    Formula: ``L'(r, l, ...) = L(r', l', ...)`` where ``r'``, ``l'`` are ``r``, ``l`` with bit
    ``i`` of ``r`` and bit ``j`` of ``l`` exchanged: a permutation of the input coordinates, so
    ``L'`` covers the same tensor with the same warps and broadcasts.
    Requires: distinct registers and distinct lanes among the steps.

    >>> from linear_layout.encodings import BlockedLayout as B
    >>> L = B((1, 2), (2, 16), (1, 1), (1, 0)).to_linear_layout([2, 32])
    >>> M = swap(L, [Swap(0, 4)])
    >>> dict(M.bases)["register"], dict(M.bases)["lane"][4]
    (((1, 0),), (0, 1))
    """
    bases = {name: [list(b) for b in vectors] for name, vectors in layout.bases}
    for step in steps:
        registers, lanes = bases["register"], bases["lane"]
        registers[step.register], lanes[step.lane] = lanes[step.lane], registers[step.register]
    return LinearLayout.from_bases(
        list(bases.items()), list(layout.get_out_dim_names()), [s for _, s in layout.out_dims], require_surjective=False
    )


@dataclass(frozen=True)
class WordOption:
    """One way a side holds a word direction in a register: ``register`` itself (``lane`` is
    None) or ``lane``'s direction swapped into ``register``."""

    direction: int
    register: int
    lane: int | None


def word_options(layout: LinearLayout) -> list[WordOption]:
    """Every register of ``layout`` that holds distinct data, and every lane that holds distinct
    data swapped into each such register (flattened directions)."""
    columns = flat_columns(layout)
    free = layout.get_free_variable_masks()
    registers = [(i, c) for i, c in enumerate(columns["register"]) if c and not free["register"] >> i & 1]
    lanes = [(j, c) for j, c in enumerate(columns["lane"]) if c and not free["lane"] >> j & 1]
    options = [WordOption(c, i, None) for i, c in registers]
    options += [WordOption(l, i, j) for (i, _), (j, l) in itertools.product(registers, lanes)]
    return options


@dataclass(frozen=True)
class _Candidate:
    """A word and the swaps of both sides that put it in their registers."""

    word: tuple[int, ...]
    src_steps: tuple[Swap, ...]
    dst_steps: tuple[Swap, ...]

    def key(self, costs: tuple[_SideCost, _SideCost]) -> tuple[int, int, int]:
        """(32-bit shuffles per thread, swapped registers the other side does not read with its
        threads, swaps that split a 32-bit register): smaller first."""
        shuffles = len(self.src_steps) * costs[0].shuffles + len(self.dst_steps) * costs[1].shuffles
        kept = sum(costs[0].outside(s) for s in self.src_steps) + sum(costs[1].outside(s) for s in self.dst_steps)
        split = sum(s.register < costs[0].word_bits for s in self.src_steps + self.dst_steps)
        return shuffles, kept, split


def _steps(options: Sequence[WordOption]) -> tuple[Swap, ...] | None:
    """The swaps of one side for ``options`` (None when two use the same register or lane)."""
    lanes = [o.lane for o in options if o.lane is not None]
    if len({o.register for o in options}) != len(options) or len(set(lanes)) != len(lanes):
        return None
    return tuple(Swap(o.register, o.lane) for o in options if o.lane is not None)


def _candidates(src: LinearLayout, dst: LinearLayout, w: int) -> Iterator[_Candidate]:
    by_direction: dict[int, tuple[list[WordOption], list[WordOption]]] = {}
    for side, layout in enumerate((src, dst)):
        for option in word_options(layout):
            by_direction.setdefault(option.direction, ([], []))[side].append(option)
    shared = sorted(d for d, (s, t) in by_direction.items() if s and t)
    for word in itertools.combinations(shared, w):
        if rank(word) != w:
            continue
        for src_options in itertools.product(*(by_direction[d][0] for d in word)):
            for dst_options in itertools.product(*(by_direction[d][1] for d in word)):
                src_steps, dst_steps = _steps(src_options), _steps(dst_options)
                if src_steps is not None and dst_steps is not None:
                    yield _Candidate(word, src_steps, dst_steps)


@dataclass(frozen=True)
class _SideCost:
    """What a swap costs on one side: its 32-bit shuffles, and whether its register leaves the
    other side's thread span (then ``Ts + Td`` grows)."""

    shuffles: int  # half the registers move
    registers: tuple[int, ...]
    other_threads: Span
    word_bits: int

    def outside(self, step: Swap) -> bool:
        return self.registers[step.register] not in self.other_threads


def _side_cost(layout: LinearLayout, other: LinearLayout, bitwidth: int) -> _SideCost:
    return _SideCost(
        max(1, layout.get_in_dim_size("register") * bitwidth // 64),
        tuple(flat_columns(layout)["register"]),
        Span(side_columns(other).active_threads()),
        word_bits(bitwidth),
    )


def _smallest_scratch(src: LinearLayout, dst: LinearLayout, bitwidth: int, w: int, max_reps: int | None) -> int:
    """A lower bound of the scratch of any plan with a ``w``-basis word: the per-CTA elements
    over ``2**reps``, where the repetitions are at most the common register directions left
    besides the word."""
    source, destination = side_columns(src), side_columns(dst)
    common = len(intersect(source.active_registers(), destination.active_registers()))
    reps = max(0, common - w) if max_reps is None else min(max_reps, max(0, common - w))
    elements = rank(source.active_registers() + source.active_threads())
    return (1 << max(0, elements - reps)) * bitwidth // 8


def _plan_candidate(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, max_reps: int | None, bound: int, candidate: _Candidate
) -> tuple[LinearLayout, LinearLayout, SharedPlan] | None:
    swapped_src, swapped_dst = swap(src, candidate.src_steps), swap(dst, candidate.dst_steps)
    for original, swapped in ((src, swapped_src), (dst, swapped_dst)):
        if original.get_free_variable_masks() != swapped.get_free_variable_masks():
            return None  # a swap that moves a broadcast: keep the predicate as planned
    if _smallest_scratch(swapped_src, swapped_dst, bitwidth, len(candidate.word), max_reps) > bound:
        return None  # the word would take a repetition the scratch bound needs
    try:
        plan = plan_shared(swapped_src, swapped_dst, bitwidth, max_reps, word=candidate.word, bound=bound)
    except PlannerError:
        return None
    if plan.scratch_bytes > bound or min(plan.store.instruction_bytes, plan.load.instruction_bytes) < BANK_BYTES:
        return None
    return swapped_src, swapped_dst, plan


def _needs_packing(narrow: SharedPlan, bitwidth: int) -> bool:
    """Sub-32-bit data whose ordinary plan is above the floor because a side is sub-word."""
    report = floor_of(narrow)
    return bool(word_bits(bitwidth)) and any("-byte accesses move" in r for r in report.reasons)


def _best(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, max_reps: int | None, bound: int, candidates: list[_Candidate]
) -> tuple[int, _Candidate, tuple[LinearLayout, LinearLayout, SharedPlan]] | None:
    """The first candidate (cheapest first) at the floor, else the one with fewest wavefronts."""
    best: tuple[int, _Candidate, tuple[LinearLayout, LinearLayout, SharedPlan]] | None = None
    for candidate in candidates[:MAX_CANDIDATES]:
        planned = _plan_candidate(src, dst, bitwidth, max_reps, bound, candidate)
        if planned is None:
            continue
        report = floor_of(planned[2])
        if best is None or report.wavefronts < best[0]:
            best = (report.wavefronts, candidate, planned)
        if report.reaches_floor:
            break
    return best


def plan_packed(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, max_reps: int | None, narrow: SharedPlan, bound: int
) -> tuple[PackedExchange, SharedPlan] | str | None:
    """The packed exchange replacing ``narrow`` (the ordinary plan of ``src -> dst``); None when
    packing has nothing to gain (32-bit data or wider, ``narrow`` at the floor or above it for
    another reason than a sub-word side); else a one-line reason why the narrow plan stays: no
    word both sides can hold in registers (after at most ``w`` swaps per side), no candidate
    within ``bound`` (Triton's scratch for ``src -> dst``) with fewer wavefronts, or shuffles
    that cost as much as the wavefronts they save.

    Requires: hardware layouts of one tensor on one launch, ``narrow = plan_shared(src, dst,
    ...)``. Postcondition: both sides of a returned shared plan access at least 4 bytes per
    thread; its scratch is at most ``bound``."""
    if not _needs_packing(narrow, bitwidth):
        return None
    costs = (_side_cost(src, dst, bitwidth), _side_cost(dst, src, bitwidth))
    candidates = sorted(_candidates(src, dst, word_bits(bitwidth)), key=lambda c: c.key(costs))
    if not candidates:
        held = min(rank(flat_columns(layout)["register"]) for layout in (src, dst))
        return (
            f"not packed: no 32-bit word both sides can hold in registers (a thread holds 2**{held} distinct elements)"
        )
    best = _best(src, dst, bitwidth, max_reps, bound, candidates)
    narrow_wavefronts = floor_of(narrow).wavefronts
    if best is None or best[0] >= narrow_wavefronts:
        return f"not packed: no word-wide exchange within {bound} B of scratch has fewer wavefronts"
    wavefronts, candidate, (swapped_src, swapped_dst, plan) = best
    shuffles = candidate.key(costs)[0] * src.get_in_dim_size("warp")
    if wavefronts + shuffles >= narrow_wavefronts:
        return (
            f"not packed: its {shuffles} warp shuffles cost as much as the "
            f"{narrow_wavefronts - wavefronts} wavefronts they save"
        )
    exchange = PackedExchange(
        candidate.src_steps,
        candidate.dst_steps,
        swapped_src,
        swapped_dst,
        candidate.word,
        candidate.key(costs)[0],
        narrow,
    )
    return exchange, plan
