r"""The in-warp exchange: one algorithm that decides whether warp shuffles can convert a layout
and produces the shuffle rounds the emitter runs (pure).

Both steps read the same conversion (``src``/``dst`` with their zero register bases removed).

**Decision** (:func:`warp_decomposition`, Triton's ``getWarpLayoutConvertDecomposition``). The
map taking each source register/lane bit to the destination bit that holds the same element
must be a bit permutation ``P``; it factors as ``P = P_mixed o P_lane o P_reg``, where
``P_mixed`` is a product of transpositions ``(register bit, lane bit)``. Triton, and this
planner, exchange through warp shuffles only when there is at most one such transposition.

**Rounds** (:func:`in_warp_rounds`). The *gather map* ``G = dst.invert_and_compose(src)`` gives,
for every destination hardware location, a source location that holds its element:
``src(G(h)) = dst(h)``. Its warp and block outputs are replaced by the destination's own warp
and block (valid exactly when the source warp/block coordinate does not matter, e.g. warps
that broadcast); the result is checked exhaustively. Restricted to registers ``i`` and lanes
``l`` it is a block GF(2) matrix

    src register = Gr(i) ^ Grl(l)          src lane = Glr(i) ^ Gl(l)

For each destination register ``i`` one round runs:

- the source lane is ``Gl(l) ^ Glr(i)``; when that is the thread's own lane for every lane
  (``Gl`` is the identity and ``Glr(i) = 0``) no shuffle is needed, else one ``gpu.shuffle``
  (``xor`` mode with mask ``Glr(i)`` when ``Gl`` is the identity, ``idx`` mode otherwise);
- the providing lane ``p`` must offer register ``Gr(i) ^ Grl(l)`` of the lane ``l`` that reads
  from it. With ``H`` the linear map with ``H o Gl = Grl`` (it exists when ``ker Gl`` lies in
  ``ker Grl``), that register is ``c_i ^ H(p)`` with ``c_i = Gr(i) ^ H(Glr(i))``: a constant
  register when ``H = 0``, else a ``select`` tree over ``2**m`` registers, ``m = rank(H)``.

A reader-side re-indexing ``A`` (lane -> destination register: in round ``k`` lane ``l`` fills
destination register ``k ^ A(l)``) makes the lane map ``Gl + Glr A`` invertible where it can.

The rounds do not exist for every permutation the decision accepts: when lanes that read from
one lane need different registers of it (``ker Gl`` not inside ``ker Grl``: a broadcast source
lane mixed with a register transposition; 32 of the 247 conversions Triton's criterion accepts
among ``tests/lowering_cases.py`` seeds 0-999, a generator rich in broadcasts), or for elements
wider than 32 bits. :func:`in_warp_rounds` then returns an :class:`InWarpRefusal` with the
reason, and the planner chooses shared memory (a decision, documented in docs/conversions.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.gf2 import apply_columns, echelon_coordinates, echelon_form, log2, solve
from ..core.hardware import HW_DIMS
from ..core.layout import LinearLayout
from .layouts import flat_columns

__all__ = [
    "InWarpPlan",
    "InWarpRefusal",
    "RegisterMap",
    "Round",
    "WarpDecomposition",
    "in_warp_rounds",
    "register_maps",
    "warp_decomposition",
]


# ============================================================================ decision


@dataclass(frozen=True)
class WarpDecomposition:
    """Triton's ``getWarpLayoutConvertDecomposition``: ``P = P_mixed o P_lane o P_reg``.

    ``register_perm`` / ``lane_perm``: destination bit of each source register / lane bit;
    ``mixed``: the transpositions ``(register bit, lane bit)``; ``pack``: log2 of the elements
    packed per 32-bit shuffle."""

    register_perm: tuple[int, ...]
    lane_perm: tuple[int, ...]
    mixed: tuple[tuple[int, int], ...]
    pack: int


def _padded(columns: dict[str, list[int]], n_registers: int, n_lanes: int) -> list[int]:
    registers, lanes = columns["register"], columns["lane"]
    return registers + [0] * (n_registers - len(registers)) + lanes + [0] * (n_lanes - len(lanes))


def _bit_permutation(src: LinearLayout, dst: LinearLayout) -> tuple[list[int], int, int] | None:
    """(destination bit of each source register/lane bit, registers, lanes), or None when the
    register/lane conversion is not a bit permutation. Zero (broadcast) bits of one side are
    paired with the other side's in order, as Triton does."""
    s, t = flat_columns(src), flat_columns(dst)
    n_registers = max(len(s["register"]), len(t["register"]))
    n_lanes = max(len(s["lane"]), len(t["lane"]))
    s_cols, t_cols = _padded(s, n_registers, n_lanes), _padded(t, n_registers, n_lanes)
    nonzero_t = [k for k, c in enumerate(t_cols) if c]
    images = []
    for column in s_cols:
        x = solve([t_cols[k] for k in nonzero_t], column) if column else 0
        if x is None:
            return None
        images.append(apply_columns([1 << k for k in nonzero_t], x))
    s_zero = [k for k, c in enumerate(s_cols) if not c]
    t_zero = [k for k, c in enumerate(t_cols) if not c]
    both = set(s_zero) & set(t_zero)
    for k in both:
        images[k] = 1 << k
    for a, b in zip([k for k in s_zero if k not in both], [k for k in t_zero if k not in both]):
        images[a] = 1 << b
    if any(v == 0 or v & (v - 1) for v in images) or len(set(images)) != len(images):
        return None
    return [log2(v) for v in images], n_registers, n_lanes


def _factor(successor: list[int], n_registers: int, n_lanes: int) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Split the cycles of a permutation of register bits ``[0, n_registers)`` and lane bits into
    a register permutation, a lane permutation and the mixed transpositions."""
    registers, lanes = [0] * n_registers, [0] * n_lanes
    mixed = []
    visited = [False] * (n_registers + n_lanes)
    for start in range(n_registers + n_lanes):
        current, register_start, lane_start = start, -1, -1
        while not visited[current]:
            visited[current] = True
            following = successor[current]
            if current < n_registers and following < n_registers:
                registers[current] = following
            elif current >= n_registers and following >= n_registers:
                lanes[current - n_registers] = following - n_registers
            elif current < n_registers:
                register_start, lane_start = current, following - n_registers
            else:
                registers[register_start] = following
                lanes[current - n_registers] = lane_start
                mixed.append((following, lane_start))
            current = following
    return registers, lanes, mixed


def warp_decomposition(src: LinearLayout, dst: LinearLayout, bitwidth: int = 32) -> WarpDecomposition | None:
    """Factor an in-warp conversion into register, lane and mixed bit permutations.

    ``src``/``dst`` have their zero register bases removed. Returns ``None`` when the
    register/lane conversion is not a bit permutation (Triton only handles permutation-like
    layouts with shuffles; the planner then uses shared memory).

    Example: a 2-register, 32-lane row layout converted to the column layout that trades
    register bit 0 for lane bit 0 has ``mixed == ((0, 0),)``: one shuffle round per pair."""
    permutation = _bit_permutation(src, dst)
    if permutation is None:
        return None
    successor, n_registers, n_lanes = permutation
    registers, lanes, mixed = _factor(successor, n_registers, n_lanes)
    pack = min(log2(max(1, min(4, 32 // max(bitwidth, 1)))), n_registers - len(mixed))
    return WarpDecomposition(tuple(registers), tuple(lanes), tuple(mixed), max(pack, 0))


# ============================================================================ rounds


@dataclass(frozen=True)
class Round:
    """How one reduced destination register is produced inside a warp.

    ``source_lane``: LinearLayout lane -> "lane" (``Gl``), xored with ``lane_xor`` (``Glr(i)``),
    or None when every thread reads its own lane. ``register_base`` (``c_i``) and
    ``register_select`` (``H``, a LinearLayout "lane" -> "register", or None when zero): the
    register a thread provides (or reads itself, when there is no shuffle) is
    ``register_base ^ H(lane)``."""

    source_lane: LinearLayout | None
    lane_xor: int
    xor_mode: bool
    register_base: int
    register_select: LinearLayout | None


@dataclass(frozen=True)
class InWarpPlan:
    """The rounds of an in-warp exchange, one per reduced destination register.

    ``select_basis``: image basis of ``H`` (source registers a provider selects among);
    ``reader_basis``/``reader_select``: image basis of ``A`` (destination registers) and
    lane -> coordinates of ``A(lane)`` in it."""

    rounds: tuple[Round, ...]
    shuffles: int
    selects: int
    select_basis: tuple[int, ...]
    reader_basis: tuple[int, ...]
    reader_select: LinearLayout | None


@dataclass(frozen=True)
class InWarpRefusal:
    """Why no in-warp rounds realise this conversion."""

    reason: str


@dataclass(frozen=True)
class GatherBlocks:
    """The register/lane blocks of the gather map, as GF(2) columns."""

    gr: tuple[int, ...]  # register -> register
    glr: tuple[int, ...]  # register -> lane
    grl: tuple[int, ...]  # lane -> register
    gl: tuple[int, ...]  # lane -> lane
    lane_bits: int
    register_bits: int


class RegisterMap(NamedTuple):
    """Reduced register ``j`` is full register ``full_of[j]`` (broadcast bits 0); full register
    ``i`` holds reduced register ``reduced_of[i]``."""

    full_of: tuple[int, ...]
    reduced_of: tuple[int, ...]


def register_maps(layout: LinearLayout) -> RegisterMap:
    """The :class:`RegisterMap` of ``layout``'s registers.

    Reduced register ``j`` is the full register whose bits at the non-zero basis positions spell
    ``j`` and whose bits at zero-basis (broadcast) positions are 0.

    >>> L = LinearLayout.from_bases([("register", [[1], [0]])], ["o"])
    >>> register_maps(L)
    RegisterMap(full_of=(0, 1), reduced_of=(0, 1, 0, 1))
    """
    bases = dict(layout.bases).get("register", ())
    kept = [k for k, b in enumerate(bases) if any(b)]
    full_of = tuple(apply_columns([1 << k for k in kept], j) for j in range(1 << len(kept)))
    reduced_of = tuple(sum(1 << t for t, k in enumerate(kept) if i >> k & 1) for i in range(1 << len(bases)))
    return RegisterMap(full_of, reduced_of)


def _columns(layout: LinearLayout, in_dim: str, out_dim: str) -> tuple[int, ...]:
    return tuple(b[0] for b in dict(layout.sublayout([in_dim], [out_dim]).bases)[in_dim])


def _gather_map(src: LinearLayout, dst: LinearLayout) -> LinearLayout | InWarpRefusal:
    """``dst.invert_and_compose(src)`` with the source warp/block replaced by the destination's
    own, checked exhaustively."""
    gather = dst.invert_and_compose(src)
    bases = []
    for name in HW_DIMS:
        vectors = []
        for k, original in enumerate(dict(gather.bases)[name]):
            basis = list(original)
            for out in ("warp", "block"):
                basis[gather.get_out_dim_index(out)] = (1 << k) if name == out else 0
            vectors.append(basis)
        bases.append((name, vectors))
    gather = LinearLayout.from_bases(
        bases, list(gather.get_out_dim_names()), [s for _, s in gather.out_dims], require_surjective=False
    )
    if not gather.sublayout_is_zero(["warp", "block"], ["register", "lane"]):
        return InWarpRefusal("data moves between warps")
    if not np.array_equal(_composed_table(src, gather), _composed_table(dst, None)):
        return InWarpRefusal("no in-warp source for some destination element")
    return gather


def _gather_blocks(gather: LinearLayout, dst: LinearLayout) -> GatherBlocks:
    return GatherBlocks(
        _columns(gather, "register", "register"),
        _columns(gather, "register", "lane"),
        _columns(gather, "lane", "register"),
        _columns(gather, "lane", "lane"),
        dst.get_in_dim_size_log2("lane"),
        dst.get_in_dim_size_log2("register"),
    )


def _choose_reindexing(blocks: GatherBlocks) -> list[int]:
    """``A`` (one destination register per lane bit) with ``Gl + Glr A`` invertible; ``A = 0``
    where possible."""
    span: list[int] = []
    columns = []
    for b in range(blocks.lane_bits):
        chosen = 0  # no gain possible: several readers share a source lane (shuffle idx does it)
        for x in range(1 << blocks.register_bits):
            reduced = blocks.gl[b] ^ apply_columns(blocks.glr, x)
            for v in span:
                reduced = min(reduced, reduced ^ v)
            if reduced:
                chosen = x
                span.append(reduced)
                span.sort(reverse=True)
                break
        columns.append(chosen)
    return columns


def _solve_h(gl: list[int], grl: list[int], lane_bits: int) -> list[int] | None:
    """Columns of ``H`` (one per lane bit) with ``H(Gl(x)) = Grl(x)``, or None if none exists."""
    pivots: list[tuple[int, int]] = []  # (x, y) reduced: x has a distinct leading bit
    for x, y in zip(gl, grl):
        for px, py in pivots:
            if x ^ px < x:
                x, y = x ^ px, y ^ py
        if x == 0:
            if y != 0:
                return None
            continue
        pivots.append((x, y))
        pivots.sort(key=lambda p: -p[0])
    columns = []
    for bit in range(lane_bits):
        x, y = 1 << bit, 0
        for px, py in pivots:
            if x ^ px < x:
                x, y = x ^ px, y ^ py
        # What is left of x lies in a complement of span(Gl), where H is free: it maps to 0.
        # (Reduction by an echelon basis is a linear projection, so H stays linear.)
        columns.append(y)
    return columns


def _lane_layout(columns: list[int], out_name: str, out_size: int) -> LinearLayout:
    return LinearLayout.from_bases([("lane", [[c] for c in columns])], [out_name], [out_size], require_surjective=False)


def _select_layout(columns: list[int]) -> tuple[tuple[int, ...], LinearLayout | None]:
    """(image basis, lane -> coordinates in that basis) of a linear map given by its columns."""
    basis = echelon_form(columns)
    if not basis:
        return (), None
    coordinates = [echelon_coordinates(basis, column) for column in columns]
    return tuple(basis), _lane_layout(coordinates, "register", 1 << len(basis))


@dataclass(frozen=True)
class _LaneMaps:
    """``Gl' = Gl + Glr A``, ``H`` and ``A`` (columns per lane bit)."""

    lanes: list[int]
    select: list[int]
    reindex: list[int]


def _lane_maps(blocks: GatherBlocks) -> _LaneMaps | InWarpRefusal:
    reindex = _choose_reindexing(blocks)
    lanes = [blocks.gl[b] ^ apply_columns(blocks.glr, reindex[b]) for b in range(blocks.lane_bits)]
    providers = [blocks.grl[b] ^ apply_columns(blocks.gr, reindex[b]) for b in range(blocks.lane_bits)]
    select = _solve_h(lanes, providers, blocks.lane_bits)
    if select is None:
        return InWarpRefusal("lanes that read from one lane need different registers of it")
    return _LaneMaps(lanes, select, reindex)


def _rounds(blocks: GatherBlocks, maps: _LaneMaps, num_registers: int) -> InWarpPlan:
    identity_lanes = maps.lanes == [1 << k for k in range(blocks.lane_bits)]
    select_basis, select_layout = _select_layout(maps.select)
    reader_basis, reader_select = _select_layout(maps.reindex)
    source_lane = _lane_layout(maps.lanes, "lane", 1 << blocks.lane_bits)
    rounds = []
    for k in range(num_registers):
        lane_xor = apply_columns(blocks.glr, k)
        local = identity_lanes and lane_xor == 0
        base = apply_columns(blocks.gr, k) ^ apply_columns(maps.select, lane_xor)
        rounds.append(Round(None if local else source_lane, lane_xor, identity_lanes, base, select_layout))
    selects_per_element = ((1 << len(select_basis)) - 1) + ((1 << len(reader_basis)) - 1)
    return InWarpPlan(
        tuple(rounds),
        sum(1 for r in rounds if r.source_lane is not None),
        num_registers * selects_per_element,
        select_basis,
        reader_basis,
        reader_select,
    )


def in_warp_rounds(src: LinearLayout, dst: LinearLayout, bitwidth: int) -> InWarpPlan | InWarpRefusal:
    """The in-warp rounds converting ``src`` to ``dst`` (hardware layouts, zero register bases
    removed), or why there are none.

    Postcondition: running the rounds (and the reader re-indexing) on every register, lane,
    warp and block reproduces ``dst`` element for element (checked before returning)."""
    gather = _gather_map(src, dst)
    if isinstance(gather, InWarpRefusal):
        return gather
    blocks = _gather_blocks(gather, dst)
    maps = _lane_maps(blocks)
    if isinstance(maps, InWarpRefusal):
        return maps
    plan = _rounds(blocks, maps, dst.get_in_dim_size("register"))
    if bitwidth > 32 and plan.shuffles:
        return InWarpRefusal(f"{bitwidth}-bit elements cannot be shuffled")
    if not _rounds_reproduce(src, dst, plan, maps):
        return InWarpRefusal("the in-warp rounds do not reproduce the destination")
    return plan


def _rounds_reproduce(src: LinearLayout, dst: LinearLayout, plan: InWarpPlan, maps: _LaneMaps) -> bool:
    """Simulate the rounds on every (register, lane, warp, block) of ``dst`` and compare elements.

    One vectorised pass: the per-lane maps and the per-round fields become lookup tables, so the
    cost is linear in the number of hardware points."""
    points = _hardware_points(dst)
    register, lane = points["register"], points["lane"]
    num_lanes = dst.get_in_dim_size("lane")
    reindex, lane_map, select = (
        _column_table(columns, num_lanes) for columns in (maps.reindex, maps.lanes, maps.select)
    )
    own_lane = np.array([r.source_lane is None for r in plan.rounds])
    lane_xor = np.array([r.lane_xor for r in plan.rounds], dtype=np.int64)
    register_base = np.array([r.register_base for r in plan.rounds], dtype=np.int64)
    round_of = register ^ reindex[lane]
    source_lane = np.where(own_lane[round_of], lane, lane_map[lane] ^ lane_xor[round_of])
    source_register = register_base[round_of] ^ select[source_lane]
    want = dst.apply(points)
    got = src.apply({**points, "register": source_register, "lane": source_lane})
    return all(np.array_equal(want[d], got[d]) for d in dst.get_out_dim_names())


def _column_table(columns: list[int], size: int) -> np.ndarray:
    """``apply_columns(columns, x)`` for every ``x < size``."""
    return np.array([apply_columns(columns, x) for x in range(size)], dtype=np.int64)


def _hardware_points(layout: LinearLayout) -> dict[str, np.ndarray]:
    grids = np.meshgrid(*[np.arange(layout.get_in_dim_size(d)) for d in HW_DIMS], indexing="ij")
    return {d: g.reshape(-1) for d, g in zip(HW_DIMS, grids)}


def _composed_table(layout: LinearLayout, gather: LinearLayout | None) -> np.ndarray:
    """``layout(gather(h))`` (or ``layout(h)``) for every hardware point ``h`` of ``gather``."""
    points = _hardware_points(gather if gather is not None else layout)
    if gather is not None:
        mapped = gather.apply(points)
        points = {d: np.asarray(mapped[d]).reshape(-1) for d in HW_DIMS}
    out = layout.apply(points)
    return np.stack([np.asarray(out[n]).reshape(-1) for n in layout.get_out_dim_names()])
