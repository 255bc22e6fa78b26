r"""The shared-memory bank model and :func:`bank_conflicts` (pure).

The model is the SIMT interpreter's (``linear_layout.simt``): 32 banks of 4 bytes; an access of
``w`` bytes per thread is served in *phases* of ``128 / max(w, 4)`` consecutive lanes (on 64-lane
warps a 16-byte read is served in gfx942's lane groups, lanes 0-3 with 20-23 and so on:
``core.hardware.phase_lane_basis``); a phase costs the maximum over banks of the distinct 4-byte
words it touches; the ideal is ``ceil(distinct words / 32)`` per phase. Predictions and the interpreter's counts agree one to
one (``tests/test_conversion_plan.py`` checks it on random layouts).

Analytically, a phase touches a coset of the word space ``U`` spanned by its active lanes'
offsets and the vector's offsets (both projected to 4-byte words); the bank of a word is its
low 5 bits, so the phase costs ``2**(dim U - dim(U mod 32))`` wavefronts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.gf2 import Span, log2, rank
from ..core.hardware import BANK_BYTES, MAX_ACCESS_BYTES, NUM_BANKS, SHARED_DIMS, phase_lane_basis
from ..core.layout import LinearLayout
from .layouts import LayoutLike, PlannerError, as_hardware_layout

__all__ = [
    "BankConflicts",
    "Wavefronts",
    "access_layouts",
    "active_offset_bits",
    "bank_conflicts",
    "count_wavefronts",
    "phase_columns",
    "widest_vector",
]


@dataclass(frozen=True)
class BankConflicts:
    """Wavefronts of one side of a shared-memory access, per CTA."""

    wavefronts: int
    ideal_wavefronts: int
    instructions: int  # per thread
    vector: int  # elements per access
    instruction_bytes: int
    phase_cost: int  # wavefronts per phase; phase_cost - 1 is Gluon's bank_conflicts

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts


@dataclass(frozen=True)
class Wavefronts:
    """What :func:`count_wavefronts` predicts: totals and the cost of one phase."""

    wavefronts: int
    ideal_wavefronts: int
    phase_cost: int


def _phase_cost(lane_offsets: Sequence[int], vector_bits: int, bitwidth: int) -> tuple[int, int]:
    """(wavefronts per phase, ideal per phase) of an access whose active phase lanes have
    offsets spanning ``lane_offsets`` (elements) and whose vector covers offsets
    ``[0, 2**vector_bits)``."""
    element_bytes = max(1, bitwidth // 8)
    offsets = [*lane_offsets, *(1 << i for i in range(vector_bits))]
    if element_bytes >= BANK_BYTES:
        shift = log2(element_bytes // BANK_BYTES)
        words = [v << shift for v in offsets] + [1 << i for i in range(shift)]
    else:
        shift = log2(BANK_BYTES // element_bytes)
        words = [v >> shift for v in offsets]
    word_space = Span(words)
    bank_rank = rank([w & (NUM_BANKS - 1) for w in word_space.basis])
    cost = 1 << (len(word_space) - bank_rank)
    ideal = -(-(1 << len(word_space)) // NUM_BANKS)
    return cost, ideal


def phase_columns(lane_offsets: Sequence[int], lane_active: Sequence[bool], basis: Sequence[int]) -> list[int]:
    """The offsets of the phase's lane vectors ``basis`` whose lanes are all active."""
    columns = []
    for vector in basis:
        bits = [k for k in range(len(lane_offsets)) if vector >> k & 1]
        if all(lane_active[k] for k in bits):
            column = 0
            for k in bits:
                column ^= lane_offsets[k]
            columns.append(column)
    return columns


def count_wavefronts(
    lane_offsets: Sequence[int],
    lane_active: Sequence[bool],
    warp_active: Sequence[bool],
    vector_bits: int,
    bitwidth: int,
    num_instructions: int,
    *,
    kind: str,
) -> Wavefronts:
    """Wavefronts of ``num_instructions`` accesses per thread by the active lanes and warps.

    ``lane_offsets``: the element offset each lane bit adds (linear in the lane; their number
    is log2 of the warp size); inactive lanes and warps (broadcast copies that do not store) are
    not counted. ``kind`` ("load"/"store") picks the phases (``core.hardware.phase_lane_basis``):
    a 16-byte read of a 64-lane warp groups lanes 0-3 with 20-23, and so on. (Loads have every
    lane active; a phase vector mixing lane bits only appears for them.)"""
    width = (1 << vector_bits) * max(1, bitwidth // 8)
    basis = phase_lane_basis(width, 1 << len(lane_offsets), kind)
    columns = phase_columns(lane_offsets, lane_active, basis)
    cost, ideal = _phase_cost(columns, vector_bits, bitwidth)
    phases = 1 << (sum(1 for a in lane_active if a) - len(columns))
    warps = 1 << sum(1 for a in warp_active if a)
    accesses = num_instructions * phases * warps
    return Wavefronts(cost * accesses, ideal * accesses, cost)


def widest_vector(register_offsets: Sequence[int], thread_bits: int, bitwidth: int) -> int:
    """log2 of the widest vector: registers at offsets ``1, 2, 4, ...`` that no thread offset
    touches, at most :data:`MAX_ACCESS_BYTES` bytes."""
    element_bytes = max(1, bitwidth // 8)
    offsets = set(register_offsets)
    bits = 0
    while (
        (1 << bits) in offsets
        and not thread_bits & ((2 << bits) - 1)
        and (2 << bits) * element_bytes <= MAX_ACCESS_BYTES
    ):
        bits += 1
    return bits


def access_layouts(
    distributed: LayoutLike, shared: LayoutLike, shape: Sequence[int] | None, kind: str
) -> tuple[LinearLayout, LinearLayout]:
    """The (distributed, shared) LinearLayouts of a register <-> shared-memory access."""
    if kind not in ("load", "store"):
        raise PlannerError("kind must be 'load' or 'store'")
    registers = as_hardware_layout(distributed, shape, "distributed")
    smem = as_hardware_layout(shared, shape, "shared", in_dims=SHARED_DIMS)
    if registers.out_dims != smem.out_dims:
        raise PlannerError(f"the layouts cover different shapes: {list(registers.out_dims)} vs {list(smem.out_dims)}")
    return registers, smem


def active_offset_bits(offsets: Sequence[int], mask: int) -> int:
    """The OR of the offsets whose bit in ``mask`` is clear (the threads that access)."""
    bits = 0
    for k, offset in enumerate(offsets):
        if not mask >> k & 1:
            bits |= offset
    return bits


def bank_conflicts(
    distributed: LayoutLike,
    shared: LayoutLike,
    bitwidth: int,
    shape: Sequence[int] | None = None,
    *,
    kind: str = "load",
) -> BankConflicts:
    """Wavefronts of ``ld.shared``/``st.shared`` moving a distributed tensor to/from a shared layout.

    ``distributed``: encoding or LinearLayout (register, lane, warp, block); ``shared``: encoding
    or LinearLayout (offset[, block]). Each thread accesses its registers at
    ``distributed.invert_and_compose(shared)``, vectorised over the largest set of registers at
    offsets ``1, 2, 4, ...`` (at most 16 bytes) that lane and warp offsets do not touch.
    ``kind="store"`` skips broadcast copies (free lanes/warps do not store, Triton's predicate);
    ``kind="load"`` counts every thread. Numbers are per CTA, under the bank model above.
    """
    registers, smem = access_layouts(distributed, shared, shape, kind)
    element_bytes = max(1, bitwidth // 8)
    cvt = registers.invert_and_compose(smem)
    offset_index = cvt.get_out_dim_index("offset")
    offsets = {name: [b[offset_index] for b in bases] for name, bases in cvt.bases}
    free = registers.get_free_variable_masks()
    lane_mask = free["lane"] if kind == "store" else 0
    warp_mask = free["warp"] if kind == "store" else 0
    thread_bits = active_offset_bits(offsets["lane"], lane_mask) | active_offset_bits(offsets["warp"], warp_mask)
    register_offsets = [o for k, o in enumerate(offsets["register"]) if not free["register"] >> k & 1]
    vector_bits = widest_vector(register_offsets, thread_bits, bitwidth)
    instructions = (1 << len(register_offsets)) >> vector_bits
    lane_active = [not lane_mask >> k & 1 for k in range(len(offsets["lane"]))]
    warp_active = [not warp_mask >> k & 1 for k in range(len(offsets["warp"]))]
    waves = count_wavefronts(offsets["lane"], lane_active, warp_active, vector_bits, bitwidth, instructions, kind=kind)
    return BankConflicts(
        waves.wavefronts,
        waves.ideal_wavefronts,
        instructions,
        1 << vector_bits,
        (1 << vector_bits) * element_bytes,
        waves.phase_cost,
    )
