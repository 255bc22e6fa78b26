r"""Shared-memory conversions with ``ldmatrix`` / ``stmatrix``: planned with the algebra (pure).

One side of the exchange (the *matrix side*) uses ``stmatrix`` (storing ``src``; sm_90+) or
``ldmatrix`` (loading ``dst``; sm_75+); the other side uses ordinary vector ``st/ld.shared``.

The 8x8 matrix tile is a linear layout
=======================================
Write ``M`` for the matrix side's layout (``register, lane, warp -> tensor``; vectors are
flattened tensor coordinates, GF(2) bit vectors). One ``.m8n8 .b16`` instruction moves
``num`` matrices of 8 rows x 16 bytes. Per the PTX ISA, lane ``L``'s register ``i`` holds row
``L / 4``, columns ``2 (L % 4) + j`` (``j`` = half of the 32-bit word) of matrix ``i``; lane
``8 i + r`` supplies the address of row ``r`` of matrix ``i``. As a linear map from the
instruction's inputs to a stored matrix:

=================  ==================================  ================================
input bit          not transposed                      ``.trans``
=================  ==================================  ================================
``j`` (register)   column bit 0                        row bit 0
lane bits 0, 1     column bits 1, 2                    row bits 1, 2
lane bits 2..4     row bits 0..2                       column bits 0..2
matrix bits        matrix index (``num`` = 2**bits)    matrix index
=================  ==================================  ================================

so with ``rho`` the register direction of ``M`` chosen for ``j`` and ``l_k = M(lane = 2**k)``:

* the **row contents** ``C = (c_0, c_1, c_2)``, the 8 elements of one 16-byte row in order, are
  ``(rho, l_0, l_1)`` (or ``(l_2, l_3, l_4)`` with ``.trans``): they must be the shared offset
  bits 0..2;
* the **rows** ``Rw = (l_2, l_3, l_4)`` (or ``(rho, l_0, l_1)``) and the matrix directions
  ``Mx`` (``log2 num`` more registers of ``M``) are addressed per lane: their offsets must be
  multiples of 16 bytes, as must every other direction of ``M`` (warps, the registers that
  select the instruction). For 8-bit data one more register ``beta`` of ``M`` pairs two bytes
  into a b16 element (not transposed only): ``C = (beta, rho, l_0, l_1)``. For 32-bit data a
  word is one element (no ``rho``; not transposed only): ``C = (l_0, l_1)``, 4 elements a row.

The shared layout
=================
Offsets are coordinates in a basis ``(C, Rw, S)`` of the per-CTA tensor space (and ``R``, the
repetitions: register directions common to both sides looped over to bound the scratch):

* ``C`` first, in order (the row contents; the other side's vector must be a prefix ``C[:v]``
  of it, register for register, so that its accesses are ``2**v`` elements);
* ``Rw`` next: the 8 rows of a matrix lie in 8 consecutive 16-byte slots, i.e. 8 distinct bank
  groups, so **every matrix is one conflict-free wavefront**;
* ``S`` (the segment, offsets >= 128 bytes) is a *common complement* inside
  ``Q = span(M bases except C)`` minus ``R``: of ``Rw`` (the matrix side's phases) and of
  ``B = (P + C[:v] + R) ∩ Q``, where ``P`` holds the lane directions of one phase of the other
  side. ``Rw`` and ``B`` have the same dimension 3 (or 4 for 8-bit data), so ``S`` exists:
  ``I = Rw ∩ B``, ``Rw = I ⊕ A1``, ``B = I ⊕ B1``, ``S = span(a_i ^ b_i) ⊕ D``, ``D`` a
  complement of ``Rw + B`` in ``Q``. With ``S ∩ B = 0`` the other side's phase lanes hit distinct
  banks: **its accesses are conflict-free too**, and both sides move 128 bytes per wavefront:
  the conversion reaches the bandwidth floor (``planning/floor.py``).

Requires: ``M`` and the other side are injective on the CTA up to zero bases (broadcasts) and
the other side has a vector of at least 4 bytes inside ``C``; otherwise no matrix plan is
returned (the ordinary shared plan stays). Broadcast registers are left out of the planning
(the loading side fills them by ``copies``); the storing side's broadcast warps (and a vector
storing side's broadcast lanes) do not store (``predicate``); a ``stmatrix`` side needs 32
distinct lanes. Postcondition: ``wavefronts == ideal`` for both sides, ``== floor`` unless the
loads broadcast (checked by exact counting in :func:`plan_matrix_conversion`, not assumed).

Example: the Hopper matmul epilogue, ``nvidia_mma`` v3 ``[16,128,16]`` -> blocked
``[1,1],[1,32],[1,4]`` 128x128 f16: ``stmatrix.x4.trans`` with ``C`` = the mma's lanes 2..4
(rows 0..7 of the tile), which are also the blocked layout's first three registers: 16
``stmatrix.x4`` + 16 ``ld.shared.v4`` per thread, 256 + 256 wavefronts = the floor (Triton: 16 +
16, the same figures).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..core.gf2 import EchelonBasis, extend, rank
from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES
from ..core.layout import LinearLayout
from ..core.targets import is_amdgpu_chip, lowering_chip, nvptx_target
from .floor import FloorReport, SideFloor, access_bytes, vector_side_floor
from .layouts import PlannerError
from .shared import SharedPlan

__all__ = [
    "MATRIX_CHIPS",
    "MatrixInstruction",
    "MatrixPlan",
    "MatrixSide",
    "VectorSide",
    "chip_capability",
    "matrix_instructions",
    "matrix_rows_cost",
    "plan_matrix_conversion",
]

#: The first compute capability with ``ldmatrix`` and with ``stmatrix``.
MATRIX_CHIPS = {"ldmatrix": 75, "stmatrix": 90}
ROW_BYTES = 16
ROWS = 8
HW = ("register", "lane", "warp")


def chip_capability(chip: str | None) -> int:
    """``"sm_90"`` -> 90, ``"sm_90a"`` -> 90; ``None`` (portable) and AMD chips (``"gfx942"``,
    which have no ldmatrix/stmatrix) -> 0. An unknown chip is a ``TargetError`` (a ValueError)
    from :func:`linear_layout.core.targets.lowering_chip`, listing the NVIDIA and AMD chips.

    >>> chip_capability("sm_90a"), chip_capability(None)
    (90, 0)
    """
    if chip is None or is_amdgpu_chip(lowering_chip(chip)):
        return 0
    return nvptx_target(chip).sm


def matrix_instructions(chip: str | None) -> tuple[str, ...]:
    """The matrix instructions a chip has: none when portable.

    >>> matrix_instructions("sm_80"), matrix_instructions("sm_90"), matrix_instructions(None)
    (('ldmatrix',), ('ldmatrix', 'stmatrix'), ())
    """
    capability = chip_capability(chip)
    return tuple(name for name, first in MATRIX_CHIPS.items() if capability >= first)


# ============================================================================ results


@dataclass(frozen=True)
class MatrixInstruction:
    """One ``ldmatrix``/``stmatrix`` of every thread: ``words[i] = (low, high)`` registers of
    matrix ``i`` (``high`` is None for 8-bit data, where one register pair is one half); the
    lane's row address is ``address(lane, warp) ^ offset``."""

    rep: int
    words: tuple[tuple[int, ...], ...]
    offset: int


@dataclass(frozen=True)
class MatrixSide:
    instruction: str  # "ldmatrix" or "stmatrix"
    trans: bool
    num: int  # matrices per instruction: 1, 2 or 4
    address: LinearLayout  # (lane, warp) -> offset (elements) of the row the lane addresses
    instructions: tuple[MatrixInstruction, ...]  # over all reps
    wavefronts: int
    ideal_wavefronts: int
    bytes: int
    warp_mask: int = 0  # storing side: the warps with a set bit here repeat another's data and skip
    copies: tuple[tuple[int, int], ...] = ()  # loading side: (register, the loaded register it copies)

    @property
    def kind(self) -> str:
        return "store" if self.instruction == "stmatrix" else "load"

    @property
    def predicate(self) -> dict[str, int]:
        """The store predicate (dim -> mask, as ``SharedPlan``'s): warps repeating data skip."""
        return {"warp": self.warp_mask} if self.warp_mask else {}

    @property
    def instruction_bytes(self) -> int:
        return ROW_BYTES

    def name(self) -> str:
        return f"{self.instruction}.x{self.num}{'.trans' if self.trans else ''}"


@dataclass(frozen=True)
class VectorInstruction:
    rep: int
    registers: tuple[int, ...]
    offset: int
    additive: bool


@dataclass(frozen=True)
class VectorSide:
    kind: str  # "store" or "load"
    vector: int  # elements per access
    instruction_bytes: int
    thread_offset: LinearLayout  # (lane, warp) -> offset
    instructions: tuple[VectorInstruction, ...]
    wavefronts: int
    ideal_wavefronts: int
    bytes: int
    lane_mask: int = 0  # storing side: the lanes with a set bit here repeat another's data and skip
    warp_mask: int = 0  # storing side: the same for warps
    copies: tuple[tuple[int, int], ...] = ()  # loading side: (register, the loaded register it copies)

    @property
    def predicate(self) -> dict[str, int]:
        """The store predicate (dim -> mask): threads repeating another's data do not store."""
        return _predicate(self.lane_mask, self.warp_mask)


@dataclass(frozen=True)
class MatrixPlan:
    """A conversion through shared memory with a matrix side (``matrix``) and a vector side, or
    with matrix instructions on both sides (``other`` is then the ``ldmatrix`` side).
    ``smem``: (offset, reps) -> tensor, as a LinearLayout with in-dims ``offset`` and ``reps``."""

    matrix: MatrixSide
    other: VectorSide | MatrixSide
    smem: LinearLayout
    num_reps: int
    scratch_bytes: int
    bitwidth: int

    @property
    def store_side(self) -> str:
        return "matrix" if self.matrix.instruction == "stmatrix" else "vector"

    @property
    def barriers(self) -> int:
        return 2 * self.num_reps - 1

    @property
    def wavefronts(self) -> int:
        return self.matrix.wavefronts + self.other.wavefronts

    @property
    def floor(self) -> int:
        return -(-self.matrix.bytes // WAVEFRONT_BYTES) + -(-self.other.bytes // WAVEFRONT_BYTES)

    @property
    def shared_instructions(self) -> int:
        return len(self.matrix.instructions) + len(self.other.instructions)

    def floor_report(self) -> FloorReport:
        """Both sides against the bandwidth floor (``planning/floor.py``): the matrix instructions,
        whose rows are distinct (no lane repeats data: bytes = lane bytes), and the vector accesses
        (every thread accesses: no predicate) or the other matrix side."""
        sides = {}
        for side in (self.matrix, self.other):
            if isinstance(side, VectorSide):
                sides[side.kind] = vector_side_floor(side.kind, side, side.predicate)
            else:
                sides[side.kind] = SideFloor(
                    side.kind, side.bytes, side.wavefronts, side.ideal_wavefronts, side.instruction_bytes, side.bytes
                )
        return FloorReport(sides["store"], sides["load"])

    def summary(self) -> str:
        m, o = self.matrix, self.other
        name = m.name()
        second = (
            f"{len(o.instructions)} x {o.name()}"
            if isinstance(o, MatrixSide)
            else f"{o.kind} {len(o.instructions)} x {o.instruction_bytes} B"
        )
        names = name + (f" + {o.name()}" if isinstance(o, MatrixSide) else "")
        return (
            f"shared ({names}): {self.scratch_bytes} B scratch, {self.num_reps} rep(s), {self.barriers} "
            f"barrier(s); {len(m.instructions)} x {name} ({m.wavefronts} wavefronts); {second} "
            f"({o.wavefronts} wavefronts)"
        )


# ============================================================================ GF(2) helpers


def _intersect(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """A basis of ``span(a) ∩ span(b)`` (``b`` independent), in the order of ``b``: element ``j``
    is ``b[j]`` plus a combination of earlier ``b`` vectors. Not :func:`..core.gf2.intersect`,
    whose basis is sorted: callers here truncate the basis (``[:max_reps]``), so its order is part
    of the plan."""
    span_a = EchelonBasis()
    for i, v in enumerate(a):
        span_a.insert(v, i)
    residuals, out = EchelonBasis(), []
    for j, v in enumerate(b):
        residual = span_a.reduce(v)[0]
        if residuals.insert(residual, j):
            continue
        combination = residuals.solve(residual) or 0  # dependent: a combination exists
        element = v
        for k in range(j):
            if combination >> k & 1:
                element ^= b[k]
        out.append(element)
    return out


def _complement(sub: Sequence[int], space: Sequence[int]) -> list[int]:
    """Vectors of ``space`` completing a basis of ``sub`` to one of ``span(space)``."""
    base = extend([], sub)
    return extend(base, space)[len(base) :]


def _common_complement(a: Sequence[int], b: Sequence[int], space: Sequence[int]) -> list[int]:
    """A common complement of ``span(a)`` and ``span(b)`` (equal dimensions) in ``span(space)``."""
    both = _intersect(a, b)
    a1 = extend(both, a)[len(both) :]
    b1 = extend(both, b)[len(both) :]
    pairs = [x ^ y for x, y in zip(a1, b1, strict=True)]
    return pairs + _complement(extend(a, b), space)


# ============================================================================ layouts as vectors


@dataclass(frozen=True)
class _Sides:
    reg: tuple[int, ...]
    lane: tuple[int, ...]
    warp: tuple[int, ...]


def _columns(layout: LinearLayout) -> _Sides:
    flat = layout.flatten_outs()
    bases = dict(flat.bases)
    return _Sides(*(tuple(b[0] for b in bases.get(d, ())) for d in HW))


@dataclass(frozen=True)
class _Registers:
    """A side with its broadcast registers (zero bases) left out: ``side`` has the distinct
    registers only; ``positions[k]`` is the layout's register bit of ``side``'s bit ``k``, and
    ``size`` the layout's register count."""

    side: _Sides
    positions: tuple[int, ...]
    size: int

    def expand(self, register: int) -> int:
        """A register of the reduced side -> the layout's register (its broadcast bits 0).

        >>> _Registers(_Sides((1, 2), (), ()), (0, 2), 8).expand(3)
        5
        """
        return sum(1 << p for k, p in enumerate(self.positions) if register >> k & 1)

    def copies(self) -> tuple[tuple[int, int], ...]:
        """(register, the register with its broadcast bits cleared) for every layout register
        with a broadcast bit set: the loading side fills them by copying.

        >>> _Registers(_Sides((1,), (), ()), (1,), 4).copies()
        ((1, 0), (3, 2))
        """
        kept = sum(1 << p for p in self.positions)
        return tuple((r, r & kept) for r in range(self.size) if r & ~kept)


def _distinct_registers(side: _Sides) -> _Registers:
    """``side`` without its broadcast registers (see :class:`_Registers`)."""
    positions = tuple(k for k, v in enumerate(side.reg) if v)
    reduced = _Sides(tuple(side.reg[k] for k in positions), side.lane, side.warp)
    return _Registers(reduced, positions, 1 << len(side.reg))


_Side = TypeVar("_Side", bound="MatrixSide | VectorSide")


def _expand_side(side: _Side, registers: _Registers, kind: str) -> _Side:
    """A side planned on the reduced registers, in the layout's registers: indices expanded and,
    on the loading side, the broadcast registers filled by copies."""
    if not registers.copies():
        return side
    copies = registers.copies() if kind == "load" else ()
    if isinstance(side, MatrixSide):
        matrix = tuple(
            dataclasses.replace(i, words=tuple(tuple(map(registers.expand, w)) for w in i.words))
            for i in side.instructions
        )
        return dataclasses.replace(side, instructions=matrix, copies=copies)
    vector = tuple(
        dataclasses.replace(i, registers=tuple(map(registers.expand, i.registers))) for i in side.instructions
    )
    return dataclasses.replace(side, instructions=vector, copies=copies)


def _usable(side: _Sides) -> bool:
    """Registers, lanes and warps that are not zero (broadcast) are independent. Lanes and warps
    may repeat data (zero bases) on either side: on the storing side only the threads whose
    repeating bits are 0 store (:func:`_thread_masks`, the store predicate; a ``stmatrix`` side
    needs 32 distinct lanes, which its tile geometry checks); on the loading side each thread
    loads its own copy (a lane repeating another in one phase is served by the same wavefront)."""
    threads = tuple(x for x in side.lane + side.warp if x)
    vectors = side.reg + threads
    return all(vectors) and rank(vectors) == len(vectors)


def _thread_masks(side: _Sides, kind: str) -> tuple[int, int]:
    """The storing side's predicate masks (lane, warp): the bits whose basis is zero (threads
    repeating another's data); (0, 0) for a loading side, where every thread loads its own copy.

    >>> _thread_masks(_Sides((1,), (0, 4, 8, 16, 32), (0, 64)), "store")
    (1, 1)
    """
    if kind != "store":
        return 0, 0
    lane_mask = sum(1 << k for k, v in enumerate(side.lane) if not v)
    warp_mask = sum(1 << k for k, v in enumerate(side.warp) if not v)
    return lane_mask, warp_mask


def _predicate(lane_mask: int, warp_mask: int) -> dict[str, int]:
    return {dim: mask for dim, mask in (("lane", lane_mask), ("warp", warp_mask)) if mask}


def _active(shape: tuple[int, int], lane_mask: int, warp_mask: int) -> np.ndarray:
    """(warps, lanes) -> whether the thread accesses (outside both predicate masks)."""
    warps, lanes = np.arange(shape[0])[:, None], np.arange(shape[1])[None, :]
    return (warps & warp_mask == 0) & (lanes & lane_mask == 0)


# ============================================================================ the construction


@dataclass(frozen=True)
class _Choice:
    """The matrix tile chosen in ``M``: register indices of ``beta`` (8-bit), ``rho``, matrix bits."""

    trans: bool
    rho: int | None  # None for 32-bit data (a word is one element)
    beta: int | None
    matrix_bits: tuple[int, ...]


@dataclass(frozen=True)
class _Geometry:
    contents: tuple[int, ...]  # C
    rows: tuple[int, ...]  # Rw
    reps: tuple[int, ...]  # R
    segment: tuple[int, ...]  # S
    vector_registers: tuple[int, ...]  # other side's registers (indices) in C order (vector side)
    basis: tuple[int, ...]  # C + Rw + S + R


def _tile_registers(choice: _Choice) -> set[int]:
    """The registers of ``M`` inside the tile: ``rho``, ``beta`` and the matrix bits."""
    return {k for k in (choice.rho, choice.beta, *choice.matrix_bits) if k is not None}


def _contents_and_rows(m: _Sides, choice: _Choice) -> tuple[list[int], list[int]]:
    if choice.rho is None:  # 32-bit elements: the word is the element
        return [m.lane[0], m.lane[1]], list(m.lane[2:5])
    rho = m.reg[choice.rho]
    if choice.trans:
        contents, rows = list(m.lane[2:5]), [rho, m.lane[0], m.lane[1]]
    else:
        contents, rows = [rho, m.lane[0], m.lane[1]], list(m.lane[2:5])
    if choice.beta is not None:
        contents.insert(0, m.reg[choice.beta])
    return contents, rows


def _vector_prefix(o: _Sides, contents: Sequence[int]) -> tuple[int, ...]:
    """Indices of the other side's registers equal to ``C[0], C[1], ...`` (the longest prefix)."""
    out = []
    for c in contents:
        if c not in o.reg:
            break
        out.append(o.reg.index(c))
    return tuple(out)


def _phase_lanes(o: _Sides, vector: int, element_bytes: int) -> list[int]:
    width = max(vector * element_bytes, BANK_BYTES)
    per_phase = NUM_BANKS * BANK_BYTES // width
    return [x for x in o.lane[: per_phase.bit_length() - 1] if x]  # lanes repeating data add no bank


def _addressed(side: _Sides, choice: _Choice, rows: Sequence[int]) -> list[int]:
    """The directions a matrix side addresses per lane: rows, matrix bits, warps (non-zero)."""
    return list(rows) + [side.reg[k] for k in choice.matrix_bits] + [w for w in side.warp if w]


def _other_tile(
    m: _Sides, o: _Sides, choice: _Choice, other: _Choice | None, contents: list[int], element_bytes: int
) -> tuple[list[int], list[int], list[int], tuple[int, ...]] | None:
    """(registers of ``o`` outside its tile, directions ``o`` addresses, its phase tile before R,
    vector registers) for a vector side (``other`` None) or a second matrix side; None when the
    other side cannot use ``C``."""
    if other is not None:  # both sides matrix instructions: the same row contents
        other_contents, other_rows = _contents_and_rows(o, other)
        if other_contents != contents or rank(other_contents + other_rows) != len(contents) + len(other_rows):
            return None
        used = _tile_registers(other)
        return (
            [o.reg[k] for k in range(len(o.reg)) if k not in used],
            _addressed(o, other, other_rows),
            other_rows,
            (),
        )
    vector_registers = _vector_prefix(o, contents)
    v = len(vector_registers)
    if (1 << v) * element_bytes < BANK_BYTES:
        return None  # the other side would move less than a bank per lane: not at the floor
    other_regs = [o.reg[k] for k in range(len(o.reg)) if k not in vector_registers]
    return other_regs, [], _phase_lanes(o, 1 << v, element_bytes) + contents[:v], vector_registers


def _geometry(
    m: _Sides, o: _Sides, choice: _Choice, bitwidth: int, max_reps: int, other: _Choice | None = None
) -> _Geometry | None:
    """``(C, Rw, S, R)`` for one tile choice (see the module docstring), or None. ``other``: the
    tile of the other side when it uses matrix instructions too (else it uses vectors)."""
    contents, rows = _contents_and_rows(m, choice)
    if rank(contents + rows) != len(contents) + len(rows):
        return None
    found = _other_tile(m, o, choice, other, contents, bitwidth // 8)
    if found is None:
        return None
    other_regs, other_fixed, tile, vector_registers = found
    # R: register directions of both sides outside the tiles and the vector, looped over.
    used = _tile_registers(choice)
    instruction_regs = [m.reg[k] for k in range(len(m.reg)) if k not in used]
    reps = _intersect(extend([], instruction_regs), extend([], other_regs))[:max_reps]
    # Q': the directions addressed per lane (rows, matrix bits, warps first), less R.
    fixed = extend([], _addressed(m, choice, rows) + other_fixed)
    q_space = [x for x in m.reg + m.lane + m.warp if x and x not in contents]
    extended = extend(fixed + reps, q_space)
    if len(extended) != len(q_space) or len(fixed) + len(reps) > len(extended):
        return None
    q_prime = fixed + extended[len(fixed) + len(reps) :]
    # S: a common complement in Q' of the rows and of the other side's phase tile (or rows).
    tile = list(tile) + reps
    if rank(tile) != len(tile):
        return None
    b_space = _intersect(q_prime, tile)
    if len(b_space) > len(rows):
        return None
    b_space = extend(b_space, q_prime)[: len(rows)]  # fewer when lanes repeat data: any extension
    segment = _common_complement(rows, b_space, q_prime)
    basis = tuple(contents + rows + segment + reps)
    if rank(basis) != len(q_space) + len(contents):
        return None
    return _Geometry(tuple(contents), tuple(rows), tuple(reps), tuple(segment), vector_registers, basis)


class _Coordinates:
    """Coordinates in the basis ``(C, Rw, S, R)``: (offset, rep) of a tensor vector."""

    def __init__(self, geometry: _Geometry) -> None:
        self.basis = EchelonBasis()
        for i, v in enumerate(geometry.basis):
            self.basis.insert(v, i)
        self.offset_bits = len(geometry.basis) - len(geometry.reps)

    def __call__(self, v: int) -> tuple[int, int]:
        combination = self.basis.solve(v)
        if combination is None:
            raise PlannerError("a layout vector outside the shared layout")
        return combination & ((1 << self.offset_bits) - 1), combination >> self.offset_bits


def _register_point(cols: Sequence[tuple[int, int]], r: int) -> tuple[int, int]:
    offset = rep = 0
    for k, (o, p) in enumerate(cols):
        if r >> k & 1:
            offset ^= o
            rep ^= p
    return offset, rep


# ============================================================================ exact wavefronts


_SKIPPED = -(1 << 40)  # the word of a lane that does not access (below every real word)


def _phases_cost(byte_addresses: np.ndarray, width: int, active: np.ndarray | None = None) -> tuple[int, int]:
    """(wavefronts, ideal) summed over phases: ``byte_addresses`` is (phases, lanes of a phase),
    each lane accessing ``width`` bytes (``active``, of the same shape: the lanes that access);
    a phase costs the most distinct words in one bank.

    Distinct words per phase: sort each phase's words and keep the first of every run."""
    phases = byte_addresses.shape[0]
    words = byte_addresses[:, :, None] // BANK_BYTES + np.arange(max(1, width // BANK_BYTES))
    if active is not None:
        words = np.where(active[:, :, None], words, _SKIPPED)
    words = np.sort(words.reshape(phases, -1), axis=1)
    first = words >= 0
    first[:, 1:] &= words[:, 1:] != words[:, :-1]
    slots = np.arange(phases)[:, None] * NUM_BANKS + words % NUM_BANKS
    per_bank = np.bincount(slots[first], minlength=phases * NUM_BANKS).reshape(phases, NUM_BANKS)
    return int(per_bank.max(axis=1).sum()), int((-(-per_bank.sum(axis=1) // NUM_BANKS)).sum())


def _vector_wavefronts(
    thread: np.ndarray, offsets: Sequence[int], width: int, element_bytes: int, active: np.ndarray
) -> tuple[int, int]:
    """Sum over warps, instructions and phases; ``thread`` is (warps, lanes) of element offsets,
    ``active`` (warps, lanes) the threads that access."""
    per_phase = NUM_BANKS * BANK_BYTES // max(width, BANK_BYTES)
    addresses = (thread[None] ^ np.asarray(offsets, dtype=np.int64)[:, None, None]) * element_bytes
    every = np.broadcast_to(active[None], addresses.shape)
    return _phases_cost(addresses.reshape(-1, per_phase), width, every.reshape(-1, per_phase))


def _table(layout: LinearLayout, lanes: int, warps: int) -> np.ndarray:
    """``layout`` ((lane, warp) -> offset) at every (warp, lane): the XOR of the bases of the
    set bits, one numpy pass per basis."""
    flat = dict(layout.bases)
    table = np.zeros((warps, lanes), dtype=np.int64)
    for dim, index in (("lane", np.arange(lanes)[None, :]), ("warp", np.arange(warps)[:, None])):
        for k, basis in enumerate(flat.get(dim, ())):
            table = table ^ np.where(index >> k & 1, basis[0], 0)
    return table


def matrix_rows_cost(
    address: LinearLayout,
    offsets: Sequence[int],
    num: int,
    num_warps: int,
    element_bytes: int,
    warp_mask: int = 0,
) -> tuple[int, int, int]:
    """(wavefronts, ideal, bytes moved) per CTA of ``ldmatrix``/``stmatrix`` instructions
    ``.x{num}`` whose lanes address rows at ``address(lane, warp) ^ offset`` (elements of
    ``element_bytes``), one instruction per ``offsets`` entry, by the warps outside ``warp_mask``.

    Each matrix is one phase of shared memory: its 8 rows of 16 bytes (lanes ``8 i .. 8 i + 7``
    supply the rows of matrix ``i``); a phase costs the most distinct 4-byte words in one bank,
    and its ideal is its distinct words over 32 banks (`bank_conflicts`' model).

    Requires: ``address`` over (lane, warp) -> offset, 32 lanes; ``num`` in 1, 2, 4.
    Postcondition: ``wavefronts >= ideal``; ``moved = len(offsets) * num * 128 * active warps``.

    >>> rows = LinearLayout.from_bases([("lane", [[8], [16], [32], [64], [128]]), ("warp", [])], ["offset"], [256],
    ...                                require_surjective=False)
    >>> matrix_rows_cost(rows, [0], 4, 1, 2)  # 4 matrices of 8 contiguous 16-byte rows: no conflict
    (4, 4, 512)
    """
    table = _table(address, 32, num_warps)
    table = table[_active(table.shape, 0, warp_mask)[:, 0]][:, : ROWS * num]  # the warps that access, lanes of rows
    addresses = (table[None] ^ np.asarray(offsets, dtype=np.int64)[:, None, None]) * element_bytes
    waves, ideal = _phases_cost(addresses.reshape(-1, ROWS), ROW_BYTES)  # one phase per matrix
    return waves, ideal, len(offsets) * num * ROWS * ROW_BYTES * len(table)


# ============================================================================ the two sides


def _thread_layout(lanes: Sequence[int], warps: Sequence[int], offset_bits: int) -> LinearLayout:
    return LinearLayout.from_bases(
        [("lane", [[v] for v in lanes]), ("warp", [[v] for v in warps])],
        ["offset"],
        [1 << offset_bits],
        require_surjective=False,
    )


def _matrix_side(
    m: _Sides, choice: _Choice, geometry: _Geometry, coords: _Coordinates, kind: str, element_bytes: int
) -> MatrixSide | None:
    num = 1 << len(choice.matrix_bits)
    reg = [coords(v) for v in m.reg]
    row_offsets = [coords(v)[0] for v in _contents_and_rows(m, choice)[1]]  # this side's own rows
    matrix_offsets = [reg[k][0] for k in choice.matrix_bits]
    warp_offsets = [coords(v)[0] for v in m.warp]
    if any(o & ((ROW_BYTES // element_bytes) - 1) for o in row_offsets + matrix_offsets + warp_offsets):
        return None  # a row address that is not 16-byte aligned
    lane_offsets = row_offsets + (matrix_offsets + [0, 0])[:2]
    address = _thread_layout(lane_offsets, warp_offsets, coords.offset_bits)
    used = _tile_registers(choice)
    rest = [k for k in range(len(m.reg)) if k not in used]
    instructions = []
    for index in range(1 << len(rest)):
        base = sum(1 << rest[b] for b in range(len(rest)) if index >> b & 1)
        offset, rep = _register_point(reg, base)
        words = []
        for i in range(num):
            matrix = base | sum(1 << choice.matrix_bits[b] for b in range(len(choice.matrix_bits)) if i >> b & 1)
            halves = [matrix] if choice.rho is None else [matrix, matrix | 1 << choice.rho]
            if choice.beta is not None:
                halves = [h | extra for h in halves for extra in (0, 1 << choice.beta)]
            words.append(tuple(halves))
        instructions.append(MatrixInstruction(rep, tuple(words), offset))
    mask = _thread_masks(m, kind)[1]  # a stmatrix side's lanes are distinct (its tile's rank)
    offsets = [ins.offset for ins in instructions]
    waves, ideal, moved = matrix_rows_cost(address, offsets, num, 1 << len(m.warp), element_bytes, mask)
    return MatrixSide(
        "stmatrix" if kind == "store" else "ldmatrix",
        choice.trans,
        num,
        address,
        tuple(sorted(instructions, key=lambda x: x.rep)),
        waves,
        ideal,
        moved,
        mask,
    )


def _vector_side(
    o: _Sides, geometry: _Geometry, coords: _Coordinates, kind: str, element_bytes: int
) -> VectorSide | None:
    v = len(geometry.vector_registers)
    reg = [coords(x) for x in o.reg]
    lane_offsets = [coords(x)[0] for x in o.lane]
    warp_offsets = [coords(x)[0] for x in o.warp]
    if any(o_ & ((1 << v) - 1) for o_ in lane_offsets + warp_offsets):
        return None  # a thread's base offset is not aligned to its vector
    if any(coords(x)[1] for x in o.lane + o.warp):
        return None  # a thread selects a repetition
    thread_bits = 0
    for x in lane_offsets + warp_offsets:
        thread_bits |= x
    groups: dict[tuple[int, int], dict[int, int]] = {}
    for r in range(1 << len(o.reg)):
        offset, rep = _register_point(reg, r)
        groups.setdefault((rep, offset & ~((1 << v) - 1)), {})[offset & ((1 << v) - 1)] = r
    instructions = tuple(
        VectorInstruction(rep, tuple(members[k] for k in range(1 << v)), base, not base & thread_bits)
        for (rep, base), members in sorted(groups.items())
    )
    if any(len(ins.registers) != 1 << v for ins in instructions):
        return None
    thread = _thread_layout(lane_offsets, warp_offsets, coords.offset_bits)
    width = (1 << v) * element_bytes
    lane_mask, warp_mask = _thread_masks(o, kind)
    table = _table(thread, 32, 1 << len(o.warp))
    active = _active(table.shape, lane_mask, warp_mask)
    waves, ideal = _vector_wavefronts(table, [ins.offset for ins in instructions], width, element_bytes, active)
    moved = access_bytes(thread, _predicate(lane_mask, warp_mask), 1 << v, len(instructions), element_bytes)
    return VectorSide(kind, 1 << v, width, thread, instructions, waves, ideal, moved, lane_mask, warp_mask)


def _smem_layout(geometry: _Geometry, out_dims: tuple[tuple[str, int], ...], coords: _Coordinates) -> LinearLayout:
    def unflatten(v: int) -> list[int]:
        out, shift = [], 0
        for _, size in out_dims:
            bits = size.bit_length() - 1
            out.append((v >> shift) & (size - 1))
            shift += bits
        return out

    offsets = [unflatten(v) for v in geometry.basis[: coords.offset_bits]]
    reps = [unflatten(v) for v in geometry.basis[coords.offset_bits :]]
    return LinearLayout.from_bases(
        [("offset", offsets), ("reps", reps)],
        [d for d, _ in out_dims],
        [s for _, s in out_dims],
        require_surjective=False,
    )


# ============================================================================ the planner


def _choices(m: _Sides, o: _Sides, bitwidth: int, trans_allowed: bool) -> list[_Choice]:
    """Every (trans, rho, beta) with the matrix registers taken first among the registers that the
    other side does not share (shared ones can become repetitions), then in order."""
    out: dict[_Choice, None] = {}  # ordered, without repeats
    registers = range(len(m.reg))
    shared = extend([], o.reg)
    in_other = {k: rank(shared + [m.reg[k]]) == len(shared) for k in registers}
    betas = list(registers) if bitwidth == 8 else [None]
    rhos = [None] if bitwidth == 32 else list(registers)
    for trans in (False, True) if trans_allowed else (False,):
        for beta in betas:
            for rho in rhos:
                if rho is not None and rho == beta:
                    continue
                rest = [k for k in registers if k not in (rho, beta)]
                private = sorted(rest, key=in_other.__getitem__)
                for bits in (2, 1, 0):
                    for order in (private, rest):
                        if len(order) >= bits:
                            out.setdefault(_Choice(trans, rho, beta, tuple(order[:bits])))
    return list(out)


def _candidate(
    src: _Sides,
    dst: _Sides,
    kind: str,
    choice: _Choice,
    bitwidth: int,
    max_reps: int,
    out_dims: tuple[tuple[str, int], ...],
    other: _Choice | None = None,
) -> MatrixPlan | str:
    """The plan for a matrix side ``kind`` with tile ``choice`` and exactly ``max_reps``
    repetition bits; the other side uses vectors, or ``ldmatrix`` with tile ``other`` (when
    ``kind`` is ``"store"``). Else why there is none, in a few words."""
    m, o = (src, dst) if kind == "store" else (dst, src)
    geometry = _geometry(m, o, choice, bitwidth, max_reps, other)
    if geometry is None:
        return "no tile geometry"
    if len(geometry.reps) != max_reps:
        return "too few repetitions for the scratch bound"
    coords = _Coordinates(geometry)
    element_bytes = bitwidth // 8
    matrix = _matrix_side(m, choice, geometry, coords, kind, element_bytes)
    if matrix is None:
        return f"no {'stmatrix' if kind == 'store' else 'ldmatrix'} side"
    other_kind = "load" if kind == "store" else "store"
    second: VectorSide | MatrixSide | None
    if other is None:
        second = _vector_side(o, geometry, coords, other_kind, element_bytes)
    else:
        second = _matrix_side(o, other, geometry, coords, other_kind, element_bytes)
    if second is None:
        return f"no {other_kind} side"
    scratch = (1 << coords.offset_bits) * element_bytes
    return MatrixPlan(
        matrix, second, _smem_layout(geometry, out_dims, coords), 1 << len(geometry.reps), scratch, bitwidth
    )


def _key(plan: MatrixPlan) -> tuple:
    return (plan.wavefronts - plan.floor, plan.shared_instructions, plan.scratch_bytes, plan.num_reps)


def _reps_needed(layout: LinearLayout, bitwidth: int, max_scratch_bytes: int | None) -> int:
    """The fewest repetitions (log2) that bring one round's scratch within the bound."""
    if max_scratch_bytes is None:
        return 0
    full = layout.get_total_out_dim_size() * bitwidth // 8
    needed = 0
    while full >> needed > max_scratch_bytes:
        needed += 1
    return needed


def plan_matrix_conversion(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, chip: str | None, *, max_scratch_bytes: int | None = None
) -> MatrixPlan | None:
    """The best conversion of ``src`` to ``dst`` (hardware layouts of one CTA) with one matrix side,
    or None when the chip has no matrix instruction, the element type is not 8, 16 or 32 bits, a
    layout repeats data other than by zero bases, or no candidate is conflict-free within
    ``max_scratch_bytes``. Cached.

    Candidates: ``stmatrix`` (sm_90+) storing ``src`` or ``ldmatrix`` (sm_75+) loading ``dst``;
    ``.trans`` or not (16-bit only); every choice of the word-pair register ``rho`` (and byte-pair
    ``beta``) and of the matrix registers (``x4`` first); exactly as many repetitions as the
    scratch bound needs. The winner has the fewest (wavefronts above the floor, shared
    instructions, scratch, repetitions); only candidates at the floor are returned.
    """
    plan = _plan_cached(src, dst, bitwidth, chip, max_scratch_bytes)
    return plan if isinstance(plan, MatrixPlan) else None


@functools.lru_cache(maxsize=1024)
def _plan_cached(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, chip: str | None, max_scratch_bytes: int | None
) -> MatrixPlan | str:
    """:func:`plan_matrix_conversion`, or why there is no matrix plan (one line)."""
    available = matrix_instructions(chip)
    if not available:
        return f"{chip or 'no chip'} has neither ldmatrix nor stmatrix"
    if bitwidth not in (8, 16, 32):
        return f"ldmatrix/stmatrix move 8, 16 or 32-bit elements, not {bitwidth}-bit ones"
    src_registers, dst_registers = _distinct_registers(_columns(src)), _distinct_registers(_columns(dst))
    src_cols, dst_cols = src_registers.side, dst_registers.side
    if not (_usable(src_cols) and _usable(dst_cols)) or len(src_cols.lane) != 5 or len(dst_cols.lane) != 5:
        return "a layout repeats data other than by zero bases, or a warp has not 32 lanes"
    reps = _reps_needed(src, bitwidth, max_scratch_bytes)
    best: MatrixPlan | None = None
    misses: collections.Counter[str] = collections.Counter()
    for kind, choice, other in _candidates(src_cols, dst_cols, bitwidth, available):
        if (
            best is not None
            and _fewest_instructions(src_cols, dst_cols, kind, choice, other) > best.shared_instructions
        ):
            continue  # cannot beat the best plan found so far
        plan = _candidate(src_cols, dst_cols, kind, choice, bitwidth, reps, src.out_dims, other)
        if isinstance(plan, str):
            misses[plan] += 1
        elif not _conflict_free(plan):
            misses["bank conflicts"] += 1
        elif plan.num_reps != 1 << reps:
            misses["too few repetitions for the scratch bound"] += 1
        elif best is None or _key(plan) < _key(best):
            best = plan
    if best is None:
        return _no_candidate(misses, max_scratch_bytes)
    return _expand_plan(best, src_registers, dst_registers)


def _expand_plan(plan: MatrixPlan, src: _Registers, dst: _Registers) -> MatrixPlan:
    """A plan made on the distinct registers of both sides, in the layouts' registers."""
    sides = {"store": src, "load": dst}
    return dataclasses.replace(
        plan,
        matrix=_expand_side(plan.matrix, sides[plan.matrix.kind], plan.matrix.kind),
        other=_expand_side(plan.other, sides[plan.other.kind], plan.other.kind),
    )


def _no_candidate(misses: collections.Counter[str], max_scratch_bytes: int | None) -> str:
    """Why no candidate tile gave a plan: the causes, most frequent first."""
    within = f" within {max_scratch_bytes} B of scratch" if max_scratch_bytes is not None else ""
    causes = ", ".join(f"{count} {cause}" for cause, count in misses.most_common())
    return f"no candidate at the floor{within} ({causes or 'no tile fits the layouts'})"


def _conflict_free(plan: MatrixPlan) -> bool:
    """Both sides at their per-access minimum: then at the floor, unless lanes repeat data."""
    return all(side.wavefronts == side.ideal_wavefronts for side in (plan.matrix, plan.other))


def _fewest_instructions(src: _Sides, dst: _Sides, kind: str, choice: _Choice, other: _Choice | None) -> int:
    """A lower bound of a candidate's shared instructions per thread: every register outside a
    matrix tile selects another matrix instruction; the vector side needs at least one access
    per 16 bytes."""
    m, o = (src, dst) if kind == "store" else (dst, src)
    count = 1 << (len(m.reg) - len(_tile_registers(choice)))
    if other is not None:
        return count + (1 << (len(o.reg) - len(_tile_registers(other))))
    return count + max(1, (1 << len(o.reg)) // 8)


def _candidates(
    src_cols: _Sides, dst_cols: _Sides, bitwidth: int, available: tuple[str, ...]
) -> Iterator[tuple[str, _Choice, _Choice | None]]:
    """Every (kind, tile, other side's tile or None): one matrix side (stmatrix or ldmatrix), or
    both (stmatrix and ldmatrix with the same row contents)."""
    trans = bitwidth == 16
    if "stmatrix" in available:
        load_tiles: dict[tuple[int, ...], list[_Choice]] = {}
        for tile in _choices(dst_cols, src_cols, bitwidth, trans) if "ldmatrix" in available else []:
            load_tiles.setdefault(tuple(_contents_and_rows(dst_cols, tile)[0]), []).append(tile)
        for choice in _choices(src_cols, dst_cols, bitwidth, trans):
            contents = tuple(_contents_and_rows(src_cols, choice)[0])
            for other in [None, *load_tiles.get(contents, [])]:
                yield "store", choice, other
    if "ldmatrix" in available:
        for choice in _choices(dst_cols, src_cols, bitwidth, trans):
            yield "load", choice, None


def choose_matrix_plan(
    src: LinearLayout,
    dst: LinearLayout,
    bitwidth: int,
    shared: SharedPlan,
    chip: str | None,
    max_scratch_bytes: int | None,
) -> MatrixPlan | str:
    """The decision: a matrix plan replaces ``shared`` (the ordinary exchange of ``src -> dst``)
    when the chip has the instructions and the matrix plan costs fewer (wavefronts, shared
    instructions); else why not, in one line.

    Requires: ``max_scratch_bytes`` is the scratch bound of the shared plan (Triton's).
    Postcondition: a returned plan is at the floor and within the bound."""
    if any(layout.has_in_dim("block") and layout.get_in_dim_size("block") > 1 for layout in (src, dst)):
        return "the conversion spans several CTAs"
    matrix = _plan_cached(src, dst, bitwidth, chip, max_scratch_bytes)
    if isinstance(matrix, str):
        return matrix
    current = (
        shared.store.wavefronts + shared.load.wavefronts,
        len(shared.store.instructions) + len(shared.load.instructions),
    )
    if (matrix.wavefronts, matrix.shared_instructions) < current:
        return matrix
    return (
        f"{matrix.wavefronts} wavefronts and {matrix.shared_instructions} shared instructions, "
        f"not fewer than the vector exchange's {current[0]} and {current[1]}"
    )
