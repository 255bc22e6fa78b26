r"""A model of the scratch Triton 3.9 allocates for a shared-memory ``convert_layout`` (pure).

Triton's ``optimalSwizzling`` (``GenericSwizzling.cpp``) tries every pair of *instruction tiles*
-- plain ``ld/st.shared`` (tile: 3 register/lane bits), ``ldmatrix``/``stmatrix`` (lane address
bits 0, 1 replaced by registers), and for 16-bit data their transposed forms -- derives for
each pair a vector basis, the two tiles and a swizzled segment, and keeps the pair with the
fewest bank conflicts, then the most repetitions (``buildReps``: common register bases of the
segment become rounds of the exchange). The scratch is ``2**(log2 elements - reps - blocks)``
elements (``getNumScratchElemsSwizzledCvt``). When no tile pair applies it falls back to the
vectorised plain access (``getVbasis``).

:func:`triton_scratch_bytes` reproduces that number; :func:`linear_layout.planning.plan_conversion`
never uses more scratch. Each step below is one of Triton's functions, named after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.gf2 import Span, intersect, log2
from ..core.hardware import HW_DIMS
from ..core.layout import LinearLayout
from .layouts import LayoutLike, as_hardware_layout, flat_columns

__all__ = ["triton_scratch_bytes"]


@dataclass(frozen=True)
class InstructionTile:
    """An access pattern: ``address_lanes`` are the lane bits that address rows (replaced by
    registers for ldmatrix/stmatrix), ``tile_lanes`` the lane bits that form the 8x16-byte tile."""

    address_lanes: tuple[int, ...]
    tile_lanes: tuple[int, ...]


PLAIN_TILE = InstructionTile((), (0, 1, 2))
MATRIX_TILE = InstructionTile((0, 1), (2, 3, 4))
MATRIX_TILE_TRANSPOSED = InstructionTile((2, 3, 4), (0, 1))


@dataclass(frozen=True)
class SwizzleChoice:
    """One tile pair's outcome: bank conflicts and the register bases that became rounds."""

    conflicts: int
    reps: int


@dataclass(frozen=True)
class Side:
    """One side of the conversion: its hardware layout (zero registers removed) and that layout's
    flattened register and lane columns."""

    layout: LinearLayout
    registers: tuple[int, ...]
    lanes: tuple[int, ...]

    @staticmethod
    def of(layout: LinearLayout) -> Side:
        columns = flat_columns(layout)
        return Side(layout, tuple(columns["register"]), tuple(columns["lane"]))


@dataclass(frozen=True)
class ConversionSides:
    """Both sides of the conversion, the element width and ``dim``, log2 of the elements."""

    src: Side
    dst: Side
    bitwidth: int
    dim: int


def _intersection_basis(b1: Sequence[int], b2: Sequence[int]) -> list[int]:
    """Triton's ``intersectionBasis``: exact membership (order of ``b1``) for unit vectors, else
    the span intersection."""
    if all(b and not b & (b - 1) for b in list(b1) + list(b2)):
        members = set(b2)
        return [b for b in b1 if b and b in members]
    return intersect([b for b in b1 if b], [b for b in b2 if b])


def _compute_segment(bank_src: Sequence[int], bank_dst: Sequence[int], dim: int, length: int) -> list[int]:
    """Triton's ``computeSegment``: unit vectors neither bank set uses, then XOR pairs."""
    src_set, dst_set = set(bank_src) - {0}, set(bank_dst) - {0}
    segment = [1 << b for b in range(dim) if (1 << b) not in src_set and (1 << b) not in dst_set]
    if len(segment) >= length:
        return segment[: max(length, 0)]
    only_src = sorted(v for v in src_set if v not in dst_set)
    only_dst = sorted(v for v in dst_set if v not in src_set)
    if len(only_src) > len(only_dst):
        only_src, only_dst = only_dst, only_src
    k = min(max(0, length - len(only_src) - len(segment)), len(only_src))
    segment += [only_src[i] ^ only_dst[i] for i in range(k, len(only_src))] + only_src[:k] + only_dst[:k]
    return segment[:length]


def _optimal_swizzling(
    sides: ConversionSides, vbasis: Sequence[int], tile_src: Sequence[int], tile_dst: Sequence[int], leave_reps: int
) -> tuple[list[int], int]:
    """Triton's ``optimalSwizzling`` + ``buildReps``: (segment without reps, number of reps)."""
    bank_bits = min(log2(max(1, 1024 // ((1 << len(vbasis)) * sides.bitwidth))), sides.dim - len(vbasis))
    segment_bits = sides.dim - bank_bits - len(vbasis)
    segment = _compute_segment([*vbasis, *tile_src], [*vbasis, *tile_dst], sides.dim, segment_bits)
    common = set(sides.src.registers) & set(sides.dst.registers)
    keep, reps = [], 0
    for s in segment:
        if s in common and leave_reps <= 0:
            reps += 1
            continue
        if s in common:
            leave_reps -= 1
        keep.append(s)
    return keep, reps


def _hardware_coordinates(layout: LinearLayout, vector: int) -> tuple[int, int]:
    """(register bits, lane bits) of flattened ``vector`` in ``layout``'s hardware coordinates
    (the earliest independent bases, as ``invertAndCompose``'s minimum-norm choice)."""
    columns = flat_columns(layout)
    span = Span()
    where = []
    for name in HW_DIMS:
        for k, c in enumerate(columns[name]):
            if c and span.add(c):
                where.append((name, k))
    combination = span.solve(vector) or 0
    registers = lanes = 0
    for k, (name, index) in enumerate(where):
        if combination >> k & 1 and name == "register":
            registers |= 1 << index
        elif combination >> k & 1 and name == "lane":
            lanes |= 1 << index
    return registers, lanes


def _tile_vbasis(
    a: LinearLayout, b: LinearLayout, n_a: int, n_b: int, ids_a: Sequence[int], ids_b: Sequence[int]
) -> list[int] | None:
    """The vector basis of a tile pair (``n_a``/``n_b`` vector bits, address lanes ``ids_*``),
    or None when the layouts cannot use it."""
    if n_a < n_b:
        return _tile_vbasis(b, a, n_b, n_a, ids_b, ids_a)
    columns_a, columns_b = flat_columns(a), flat_columns(b)
    vbasis = _intersection_basis(columns_a["register"], columns_b["register"])
    if len(vbasis) < n_b:
        return None
    lanes_a = [columns_a["lane"][i] for i in ids_a]
    lanes_b = [columns_b["lane"][i] for i in ids_b]
    if any(x == 0 for x in lanes_a + lanes_b):
        return None
    if any(not _hardware_coordinates(a, columns_b["lane"][ids_b[i]])[0] for i in range(n_a - n_b)):
        return None
    for ia, ib in zip(ids_a, list(ids_b)[len(ids_b) - len(ids_a) :]):
        if _hardware_coordinates(a, columns_b["lane"][ib])[1] != 1 << ia:
            return None
    return vbasis[:n_b] + lanes_b


def _get_tile(tile: InstructionTile, side: Side, vbasis: Sequence[int]) -> list[int] | None:
    """The tile's bases: registers outside the vector for the address bits, then its lanes."""
    need = 3 - len(tile.tile_lanes)
    chosen = [r for r in side.registers if r not in vbasis][:need]
    if len(chosen) < need:
        return None
    return chosen + [side.lanes[i] for i in tile.tile_lanes]


def _instruction_tiles(bitwidth: int, matrix: bool) -> list[InstructionTile]:
    tiles = [PLAIN_TILE]
    if bitwidth <= 32 and matrix:
        tiles.append(MATRIX_TILE)
        if bitwidth == 16:
            tiles.append(MATRIX_TILE_TRANSPOSED)
    return tiles


def _tile_pair(sides: ConversionSides, tile_src: InstructionTile, tile_dst: InstructionTile) -> SwizzleChoice | None:
    """The outcome of one (store tile, load tile) pair, or None when it does not apply."""
    total = log2(max(1, 128 // sides.bitwidth))
    vbasis = _tile_vbasis(
        sides.src.layout,
        sides.dst.layout,
        total - len(tile_src.address_lanes),
        total - len(tile_dst.address_lanes),
        tile_src.address_lanes,
        tile_dst.address_lanes,
    )
    if vbasis is None:
        return None
    bases_src = _get_tile(tile_src, sides.src, vbasis)
    bases_dst = _get_tile(tile_dst, sides.dst, vbasis)
    if bases_src is None or bases_dst is None:
        return None
    leave = min(
        len(tile_src.address_lanes) + len(tile_src.tile_lanes) - 3,
        len(tile_dst.address_lanes) + len(tile_dst.tile_lanes) - 3,
    )
    segment, reps = _optimal_swizzling(sides, vbasis, bases_src, bases_dst, leave)
    conflicts = (
        (1 << len(_intersection_basis(segment, bases_src))) + (1 << len(_intersection_basis(segment, bases_dst))) - 2
    )
    return SwizzleChoice(conflicts, reps)


def _vectors_after_bank0(
    registers: Sequence[int], vbasis: Sequence[int], other_lanes: set[int], bitwidth: int
) -> list[int]:
    """Registers (outside ``vbasis``) that are lanes of the other side, up to a 16-byte vector."""
    out: list[int] = []
    cap = log2(128 // max(bitwidth, 32))
    for r in registers:
        if r in vbasis:
            continue
        if r in other_lanes:
            out.append(r)
        if len(out) == cap:
            break
    return out


def _fill_bank(registers: Sequence[int], vbasis: Sequence[int], per_bank: int) -> list[int]:
    return list(vbasis) + [registers[i] for i in range(len(vbasis), min(per_bank, len(registers)))]


def _get_vbasis(sides: ConversionSides) -> list[int]:
    """Triton's ``getVbasis``: the common vector, filled to a 32-bit word on the side that
    vectorises further."""
    bitwidth = sides.bitwidth
    reg_src, reg_dst = list(sides.src.registers), list(sides.dst.registers)
    lanes_src, lanes_dst = set(sides.src.lanes), set(sides.dst.lanes)
    vbasis = _intersection_basis(reg_src, reg_dst)[: log2(max(1, 128 // bitwidth))]
    per_bank = 0 if bitwidth > 32 else log2(32 // bitwidth)
    vectorise_src = True
    if (1 << len(vbasis)) * bitwidth < 32:
        src_prefix = reg_src[: len(vbasis)] == vbasis
        dst_prefix = reg_dst[: len(vbasis)] == vbasis
        if vbasis and not src_prefix and not dst_prefix:
            reg_src = vbasis + [r for r in reg_src if r not in vbasis]
            reg_dst = vbasis + [r for r in reg_dst if r not in vbasis]
            src_prefix = dst_prefix = True
        if src_prefix and dst_prefix:
            more_src = _vectors_after_bank0(reg_src, _fill_bank(reg_src, vbasis, per_bank), lanes_dst, bitwidth)
            more_dst = _vectors_after_bank0(reg_dst, _fill_bank(reg_dst, vbasis, per_bank), lanes_src, bitwidth)
            src_prefix = len(more_src) >= len(more_dst)
        vectorise_src = src_prefix
        vbasis = _fill_bank(reg_src if vectorise_src else reg_dst, vbasis, per_bank)
    if vectorise_src:
        return vbasis + _vectors_after_bank0(reg_src, vbasis, lanes_dst, bitwidth)
    return vbasis + _vectors_after_bank0(reg_dst, vbasis, lanes_src, bitwidth)


def _vector_prefix(registers: Sequence[int], vbasis: Sequence[int]) -> int:
    """How many leading registers follow ``vbasis`` in order."""
    for i, v in enumerate(vbasis):
        if i >= len(registers) or registers[i] != v:
            return i
    return len(vbasis)


def _fallback(sides: ConversionSides) -> SwizzleChoice:
    """No tile pair applies: the vectorised plain access of ``getVbasis``."""
    vbasis = _get_vbasis(sides)
    tiles = []
    for side in (sides.src, sides.dst):
        tile = list(side.lanes)
        width = (1 << _vector_prefix(side.registers, vbasis)) * sides.bitwidth
        if width > 32:
            tile = tile[: len(tile) - log2(width // 32)]
        tiles.append([b for b in tile if b not in vbasis])
    _, reps = _optimal_swizzling(sides, vbasis, tiles[0], tiles[1], 0)
    return SwizzleChoice(0, reps)


def _sides(src: LayoutLike, dst: LayoutLike, bitwidth: int, shape: Sequence[int] | None) -> ConversionSides:
    src_ll = as_hardware_layout(src, shape, "src").remove_zero_bases_along_dim("register")
    dst_ll = as_hardware_layout(dst, shape, "dst").remove_zero_bases_along_dim("register")
    return ConversionSides(Side.of(src_ll), Side.of(dst_ll), bitwidth, src_ll.get_total_out_dim_size_log2())


def triton_scratch_bytes(
    src: LayoutLike,
    dst: LayoutLike,
    bitwidth: int,
    shape: Sequence[int] | None = None,
    *,
    ldmatrix: bool = True,
    stmatrix: bool = True,
) -> int:
    """The scratch bytes Triton 3.9 allocates for a shared-memory ``convert_layout`` (a model of
    ``optimalSwizzling`` over its instruction tiles, ``buildReps`` and
    ``getNumScratchElemsSwizzledCvt``; sm_90 has ``ldmatrix`` and ``stmatrix``, sm_80 only
    ``ldmatrix``). :func:`linear_layout.planning.plan_conversion` keeps its scratch at or below this.

    Formula: ``max(1, 2**(log2 elements - reps - log2 blocks) * bitwidth / 8)`` with ``reps``
    from the best tile pair (fewest conflicts, then most reps), or from ``getVbasis``.
    """
    sides = _sides(src, dst, bitwidth, shape)
    best: SwizzleChoice | None = None
    for tile_src in _instruction_tiles(bitwidth, stmatrix):
        for tile_dst in _instruction_tiles(bitwidth, ldmatrix):
            choice = _tile_pair(sides, tile_src, tile_dst)
            if choice is None:
                continue
            if best is None or (choice.conflicts, -choice.reps) < (best.conflicts, -best.reps):
                best = choice
    if best is None:
        best = _fallback(sides)
    blocks = log2(sides.src.layout.get_in_dim_size("block"))
    return max(1, (1 << (sides.dim - best.reps - blocks)) * bitwidth // 8)
