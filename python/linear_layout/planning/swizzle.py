r"""The shared layout of a shared-memory conversion: vectorisation and swizzle (pure).

A small API in the spirit of Triton's ``GenericSwizzling.h``: :func:`smem_bases` derives one
candidate shared layout for a (src, dst) pair and a :class:`CandidateConfig`, in named steps:

1. :func:`_exchange_spaces` -- the subspaces (flattened tensor coordinates, GF(2)) each side
   reaches with its active registers and threads;
2. :func:`_common_vector` -- ``V``: register directions common to both sides that no thread
   offset touches, as many as fit in 16 bytes (``vec_cap`` narrows it);
3. :func:`_extension` -- ``E``: one side's own registers that extend its vector into the first
   bank bases (the asymmetric vectorisation);
4. :func:`_repetitions` -- ``R``: other common register directions, executed as rounds;
5. :func:`_swizzled_part` -- ``H``: the rest of the per-CTA space, threads of the extended side
   first;
6. :func:`_bank_and_segment` -- ``H`` split into bank bases (the first 128 bytes: each side's
   phase tile projected onto ``H`` fills them, conflict-free) and segment bases (``a ^ b`` pairs
   of the two tiles' leftovers, then units).

The shared layout maps ``vector, bank, segment`` (the offset, low bits first) and ``reps`` onto
the tensor; :mod:`linear_layout.planning.shared` turns it into instructions and costs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.gf2 import Span, apply_columns, extend, intersect, log2, rank
from ..core.hardware import BANK_BYTES, MAX_ACCESS_BYTES, NUM_BANKS, phase_lane_basis
from ..core.layout import LinearLayout
from .banks import phase_columns
from .layouts import PlannerError, SideColumns, side_columns

__all__ = ["CANDIDATE_CONFIGS", "CandidateConfig", "SmemBases", "max_vector_bits", "smem_bases"]


@dataclass(frozen=True)
class CandidateConfig:
    """Which side extends its vector (``None``: neither), which tile fills a 32-bit word first
    for sub-word elements, and which side's tile chooses the bank bases."""

    extended_side: str | None  # None, "store" or "load"
    fill_preference: str  # "both", "store" or "load"
    bank_source: str  # "store" or "load"


CANDIDATE_CONFIGS = tuple(
    CandidateConfig(e, f, b)
    for e in (None, "store", "load")
    for f in ("both", "store", "load")
    for b in ("store", "load")
)


@dataclass(frozen=True)
class SmemBases:
    """One candidate shared layout, as flattened bases per shared input dimension."""

    vector: tuple[int, ...]
    bank: tuple[int, ...]
    segment: tuple[int, ...]
    reps: tuple[int, ...]
    extended_side: str | None
    store_vector_bits: int
    load_vector_bits: int

    @property
    def offset_bases(self) -> tuple[int, ...]:
        """The bases of the offset, low bits first: vector, bank, segment."""
        return self.vector + self.bank + self.segment


@dataclass(frozen=True)
class ExchangeSpaces:
    """What each side reaches (flattened coordinates). Spans are built once, never mutated."""

    src: SideColumns
    dst: SideColumns
    src_registers: tuple[int, ...]  # active (non-broadcast) registers
    dst_registers: tuple[int, ...]
    src_threads: Span  # active lanes and warps of the source
    dst_threads: Span  # non-zero lanes and warps of the destination
    threads: Span  # both
    common: tuple[int, ...]  # span(src registers) ∩ span(dst registers)
    common_span: Span
    bitwidth: int
    n_bits: int  # log2 of the elements

    def common_candidates(self) -> list[int]:
        """Common register directions, the source's own registers first."""
        return [r for r in self.src_registers if r in self.common_span] + list(self.common)

    def free_of_threads(self, vector: Sequence[int], extension: Sequence[int], reps: Sequence[int] = ()) -> bool:
        """``(V + R) ∩ (T + E) = 0`` and ``V, E, R`` independent."""
        base = Span([*self.threads.basis, *extension])
        independent = len(Span([*vector, *reps, *base.basis])) == len(vector) + len(reps) + len(base)
        return independent and rank([*vector, *extension, *reps]) == len(vector) + len(extension) + len(reps)


def max_vector_bits(bitwidth: int) -> int:
    """log2 of the elements in the widest (16-byte) access."""
    return log2(MAX_ACCESS_BYTES * 8 // bitwidth) if bitwidth <= MAX_ACCESS_BYTES * 8 else 0


@functools.lru_cache(maxsize=1024)  # immutable; every candidate of one conversion asks for the same
def _exchange_spaces(src: LinearLayout, dst: LinearLayout, bitwidth: int) -> ExchangeSpaces:
    s, d = side_columns(src), side_columns(dst)
    src_threads = s.active_threads()
    dst_threads = _nonzero(d.lanes + d.warps)
    common = intersect(s.active_registers(), d.active_registers())
    return ExchangeSpaces(
        s,
        d,
        tuple(s.active_registers()),
        tuple(d.active_registers()),
        Span(src_threads),
        Span(dst_threads),
        Span(src_threads + dst_threads),
        tuple(common),
        Span(common),
        bitwidth,
        src.get_total_out_dim_size_log2(),
    )


def _nonzero(columns: Sequence[int]) -> list[int]:
    return [c for c in columns if c]


def _common_vector(spaces: ExchangeSpaces, width_bits: int, word: Sequence[int] = ()) -> list[int] | None:
    """``V``: the ``word`` first (None when it is not common or touches the threads), then
    common register directions up to ``width_bits``."""
    vector = list(word)
    if not spaces.free_of_threads(vector, []) or any(c not in spaces.common_span for c in vector):
        return None
    for c in spaces.common_candidates():
        if len(vector) >= width_bits:
            break
        if c not in Span(vector) and spaces.free_of_threads([*vector, c], []):
            vector.append(c)
    return vector


def _extension(spaces: ExchangeSpaces, side: str, vector: list[int]) -> list[int]:
    """The extended side's own registers that widen its vector (empty when none can)."""
    max_bits = max_vector_bits(spaces.bitwidth)
    if side == "store":
        own_registers, own_threads = spaces.src_registers, spaces.src_threads
        other_lanes = Span(spaces.dst.lanes)
    else:
        own_registers, own_threads = spaces.dst_registers, spaces.dst_threads
        other_lanes = Span([c for k, c in enumerate(spaces.src.lanes) if not spaces.src.free_lane >> k & 1])
    extension: list[int] = []
    for c in [r for r in own_registers if r in other_lanes] + list(own_registers):
        if len(vector) + len(extension) >= max_bits:
            break
        if c in Span(vector + extension) or c in spaces.common_span:
            continue
        if rank([*own_threads.basis, *vector, *extension, c]) != len(own_threads) + len(vector) + len(extension) + 1:
            continue
        if spaces.free_of_threads(vector, [*extension, c]):
            extension.append(c)
    return extension


def _repetitions(spaces: ExchangeSpaces, vector: list[int], extension: list[int], max_reps: int | None) -> list[int]:
    reps: list[int] = []
    for c in spaces.common_candidates():
        if max_reps is not None and len(reps) >= max_reps:
            break
        if c in Span(vector + extension + reps):
            continue
        if spaces.free_of_threads(vector, extension, [*reps, c]):
            reps.append(c)
    return reps


def _per_cta_space(spaces: ExchangeSpaces) -> Span:
    """The elements one CTA holds; both sides must hold the same ones."""
    src_space = Span(list(spaces.src_registers) + spaces.src.active_threads())
    dst_vectors = list(spaces.dst_registers) + _nonzero(spaces.dst.lanes + spaces.dst.warps)
    if len(src_space) != len(Span(dst_vectors)) or any(c not in src_space for c in dst_vectors):
        raise PlannerError("the source and destination do not cover the same elements per CTA")
    return src_space


def _swizzled_part(
    spaces: ExchangeSpaces, per_cta: Span, extended_side: str | None, extension: list[int], low: list[int]
) -> list[int]:
    """``H``: a complement of ``low = V + E + R`` in the per-CTA space, starting with the threads
    of the extended side (the source's when none is extended), then the other threads outside
    ``own threads + E``, then unit vectors."""
    own = spaces.src_threads if extended_side in (None, "store") else spaces.dst_threads
    core = Span([*own.basis, *extension])
    preferred = list(own.basis) + [g for g in spaces.threads.basis if core.add(g)]
    taken = Span(low)
    swizzled = []
    for c in preferred + [1 << i for i in range(spaces.n_bits)] + per_cta.basis:
        if c in per_cta and taken.add(c):
            swizzled.append(c)
    return swizzled


@dataclass(frozen=True)
class PhaseTiles:
    """The offsets one phase of each side touches: its vector and its phase lanes."""

    store: tuple[int, ...]
    load: tuple[int, ...]


def _phase_lanes(lanes: Sequence[int], free_lane: int, vector_bits: int, bitwidth: int, kind: str) -> list[int]:
    """The offsets of the lanes one phase serves (``core.hardware.phase_lane_basis``: on 64-lane
    warps a 16-byte read groups lanes 0-3 with 20-23, ...), without free lanes."""
    width = (1 << vector_bits) * max(1, bitwidth // 8)
    basis = phase_lane_basis(min(width, MAX_ACCESS_BYTES), 1 << len(lanes), kind)
    active = [not free_lane >> k & 1 for k in range(len(lanes))]
    return [c for c in phase_columns(lanes, active, basis) if c]


def _phase_tiles(spaces: ExchangeSpaces, store_vector: list[int], load_vector: list[int]) -> PhaseTiles:
    bitwidth = spaces.bitwidth
    store = store_vector + _phase_lanes(spaces.src.lanes, spaces.src.free_lane, len(store_vector), bitwidth, "store")
    load = load_vector + _phase_lanes(spaces.dst.lanes, 0, len(load_vector), bitwidth, "load")
    return PhaseTiles(tuple(store), tuple(load))


@dataclass(frozen=True)
class Decomposition:
    """The candidate's basis ``V + E + R + H`` and how to project a vector onto ``H``."""

    basis: tuple[int, ...]
    low: int  # len(V + E + R)

    def project(self, vectors: Sequence[int]) -> list[int] | None:
        """The ``H`` components of ``vectors``, or None when one is outside the space."""
        span = Span(self.basis)
        out = []
        for y in vectors:
            combination = span.solve(y)
            if combination is None:
                return None
            out.append(apply_columns(self.basis, combination >> self.low << self.low))
        return out


def _word_fill(
    fill_preference: str, projected_store: list[int], projected_load: list[int], swizzled: list[int], count: int
) -> list[int]:
    """``F``: the ``H`` bases that complete a 32-bit word for sub-word elements."""
    both = intersect(projected_store, projected_load)
    order = {
        "both": both + projected_store + projected_load,
        "store": projected_store + both + projected_load,
        "load": projected_load + both + projected_store,
    }[fill_preference]
    return extend([], order + swizzled, target=count, within=Span(swizzled))[:count]


@dataclass(frozen=True)
class BankTiles:
    """Each side's first-128-byte tile inside ``H`` (``F`` first)."""

    store: tuple[int, ...]
    load: tuple[int, ...]


def _bank_tiles(
    decomposition: Decomposition,
    tiles: PhaseTiles,
    word: list[int],
    fill: list[int],
    swizzled: list[int],
    bank_bits: int,
    n_bits: int,
) -> BankTiles:
    swizzled_span = Span(swizzled)
    units = [u for u in (1 << i for i in range(n_bits)) if u in swizzled_span]
    store_parts = _nonzero(Span(decomposition.project(Span([*tiles.store, *word]).basis) or []).basis)
    load_parts = _nonzero(Span(decomposition.project(Span([*tiles.load, *word]).basis) or []).basis)
    store = extend(fill, store_parts, target=bank_bits)
    load = extend(fill, load_parts, target=bank_bits)
    store = extend(store, load + units + swizzled, target=bank_bits)
    load = extend(load, store + units + swizzled, target=bank_bits)
    return BankTiles(tuple(store), tuple(load))


def _bank_and_segment(
    config: CandidateConfig, bank_tiles: BankTiles, fill: list[int], swizzled: list[int], n_bits: int
) -> tuple[list[int], list[int]] | None:
    """(bank, segment) bases of ``H``, or None when they do not make up ``H``."""
    store, load = list(bank_tiles.store), list(bank_tiles.load)
    common = intersect(store, load)
    # Both tiles hold exactly ``bank_bits`` vectors (H itself is among the candidates), so the
    # two leftovers have the same length and pair up.
    store_only = extend(common, store)[len(common) :]
    load_only = extend(common, load)[len(common) :]
    swizzled_span = Span(swizzled)
    units = [u for u in (1 << i for i in range(n_bits)) if u in swizzled_span]
    rest = extend(store + load, units + swizzled)[len(Span(store + load)) :]
    segment = sorted(a ^ b for a, b in zip(store_only, load_only)) + sorted(rest)
    source = store if config.bank_source == "store" else load
    bank = extend(fill, fill + sorted(x for x in source if x not in fill))
    if len(bank) + len(segment) != len(swizzled):
        return None
    return bank, segment


def _word_bits(bitwidth: int) -> tuple[int, int]:
    """(log2 elements per 4-byte word, log2 elements per 128 bytes)."""
    element_bytes = max(1, bitwidth // 8)
    in_word = max(0, log2(BANK_BYTES // element_bytes)) if element_bytes < BANK_BYTES else 0
    in_wavefront = log2(NUM_BANKS * BANK_BYTES // element_bytes) if element_bytes <= NUM_BANKS * BANK_BYTES else 0
    return in_word, in_wavefront


@dataclass(frozen=True)
class _Low:
    """``V``, ``E`` and ``R`` of a candidate."""

    vector: list[int]
    extension: list[int]
    reps: list[int]


def _low_bases(
    spaces: ExchangeSpaces, config: CandidateConfig, max_reps: int | None, vec_cap: int | None, word: Sequence[int]
) -> _Low | None:
    max_bits = max_vector_bits(spaces.bitwidth)
    vector = _common_vector(spaces, max_bits if vec_cap is None else min(max_bits, vec_cap), word)
    if vector is None:
        return None
    extension: list[int] = []
    if config.extended_side is not None and len(vector) < max_bits:
        extension = _extension(spaces, config.extended_side, vector)
        if not extension:
            return None
    return _Low(vector, extension, _repetitions(spaces, vector, extension, max_reps))


def smem_bases(
    src: LinearLayout,
    dst: LinearLayout,
    bitwidth: int,
    config: CandidateConfig,
    max_reps: int | None,
    vec_cap: int | None = None,
    word: Sequence[int] = (),
) -> SmemBases | None:
    """One candidate shared layout for ``config``, or None when the candidate is infeasible.

    ``vec_cap`` limits how many common register directions go into the vector; the others
    become repetitions (smaller scratch, narrower common vector). ``max_reps`` limits the
    repetitions (``0``: one round). ``word`` (the packed exchange, ``planning/packed.py``):
    common directions that must be the vector's first bases, i.e. offset bits ``0..len-1``.

    Requires: ``src``/``dst`` hardware layouts of one tensor on one launch.
    Postcondition: ``vector + bank + segment + reps`` is a basis of the per-CTA elements, the
    thread offsets of both sides avoid ``vector`` and ``reps``.
    Raises :class:`PlannerError` when the two sides hold different elements per CTA."""
    spaces = _exchange_spaces(src, dst, bitwidth)
    low = _low_bases(spaces, config, max_reps, vec_cap, word)
    if low is None:
        return None
    per_cta = _per_cta_space(spaces)
    low_all = low.vector + low.extension + low.reps
    swizzled = _swizzled_part(spaces, per_cta, config.extended_side, low.extension, low_all)
    if len(low_all) + len(swizzled) != len(per_cta):
        return None
    store_vector = low.vector + (low.extension if config.extended_side == "store" else [])
    load_vector = low.vector + (low.extension if config.extended_side == "load" else [])
    tiles = _phase_tiles(spaces, store_vector, load_vector)
    decomposition = Decomposition(tuple(low_all + swizzled), len(low_all))
    projected_store, projected_load = decomposition.project(tiles.store), decomposition.project(tiles.load)
    if projected_store is None or projected_load is None:
        return None
    in_word, in_wavefront = _word_bits(bitwidth)
    fill_count = max(0, in_word - len(low.vector) - len(low.extension))
    fill = _word_fill(config.fill_preference, _nonzero(projected_store), _nonzero(projected_load), swizzled, fill_count)
    word = (low.vector + low.extension + fill)[:in_word]
    bank_bits = max(0, min(len(swizzled), in_wavefront - len(low.vector) - len(low.extension)))
    bank_tiles = _bank_tiles(decomposition, tiles, word, fill, swizzled, bank_bits, spaces.n_bits)
    split = _bank_and_segment(config, bank_tiles, fill, swizzled, spaces.n_bits)
    if split is None:
        return None
    bank, segment = split
    return SmemBases(
        tuple(low.vector),
        tuple(low.extension + bank),
        tuple(segment),
        tuple(low.reps),
        config.extended_side,
        len(store_vector),
        len(load_vector),
    )
