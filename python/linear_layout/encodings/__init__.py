"""Triton's layout encodings as Python values that convert to a `LinearLayout`.

Each encoding is a frozen dataclass with Gluon's class and field names (tuples
inside).  `layout.to_linear_layout(shape)` builds the same linear layout as
Triton 3.9's `toLinearLayout`; `str(layout)` prints Triton's attribute syntax
and `parse_encoding(text)` reads it back.

Distributed layouts map (register, lane, warp, block) to (dim0, ..., dimN-1);
shared layouts map (offset, block) to the same outputs.

Internally a layout is built as plain basis lists (`_Bases`) and turned into a
`LinearLayout` once at the end: this module does not depend on the algebra's
speed, and results are cached per (layout, shape) because both are immutable.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Optional, Union
from collections.abc import Sequence

from ..core.gf2 import EchelonBasis, rank as gf2_rank

__all__ = [
    "BlockedLayout", "SliceLayout", "DistributedLinearLayout", "NVMMADistributedLayout",
    "DotOperandLayout", "AMDMFMALayout", "AMDWMMALayout", "SwizzledSharedLayout",
    "NVMMASharedLayout", "SharedLinearLayout", "PaddedSharedLayout", "DistributedLayout",
    "SharedLayout", "to_linear_layout", "parse_encoding", "format_tensor_view",
    "format_hardware_view", "verify_module_sizes", "to_gluon",
]

Basis = tuple[int, ...]
BasisList = tuple[Basis, ...]


# ----------------------------------------------------------------------------
# Small validation helpers (every message names the rule that was broken)
# ----------------------------------------------------------------------------

def _is_pow2(n: int) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _ints(name: str, values) -> tuple[int, ...]:
    try:
        out = tuple(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of integers, got {values!r}") from None
    for v in out:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"{name} must be a sequence of integers, got {values!r}")
    return out


def _basis_list(name: str, values, rank: int | None = None) -> BasisList:
    out = tuple(_ints(name, b) for b in (values or ()))
    for b in out:
        if rank is not None and len(b) != rank:
            raise ValueError(f"{name}: every basis must have {rank} entries (the rank), got {list(b)}")
        if any(v < 0 for v in b):
            raise ValueError(f"{name}: basis entries must be non-negative, got {list(b)}")
    return out


def _check_pow2(name: str, values: Sequence[int]) -> None:
    for v in values:
        if not _is_pow2(v):
            raise ValueError(f"{name} must contain only powers of two, got {list(values)}")


def _check_order(order: Sequence[int], rank: int, name: str = "order") -> None:
    if sorted(order) != list(range(rank)):
        raise ValueError(f"{name} must be a permutation of 0..{rank - 1}, got {list(order)}")


def _check_cga(cga_layout: BasisList, rank: int) -> None:
    for b in cga_layout:
        if len(b) != rank:
            raise ValueError(f"cga_layout bases must have {rank} entries (the layout rank), got {list(b)}")
    # Triton's CGAEncodingAttr: without its zero (broadcast) bases the CGA layout is a
    # permutation matrix, so each dim is split by distinct bits 1, 2, 4, ... (no gaps).
    seen = [set() for _ in range(rank)]
    for b in cga_layout:
        nonzero = [(d, v) for d, v in enumerate(b) if v]
        if not nonzero:
            continue
        if len(nonzero) != 1 or not _is_pow2(nonzero[0][1]) or nonzero[0][1] in seen[nonzero[0][0]]:
            raise ValueError("cga_layout without its zero bases must be a permutation matrix "
                             f"(each basis one distinct power of two), got {[list(b) for b in cga_layout]}")
        seen[nonzero[0][0]].add(nonzero[0][1])
    for d, powers in enumerate(seen):
        if powers and max(powers) >= 1 << len(powers):
            raise ValueError(f"cga_layout must be surjective: dim {d} is split by {sorted(powers)}, "
                             "which skips a bit")


def _check_surjective(name: str, bases: Sequence[Basis], rank: int) -> None:
    """Triton's LinearLayout constructor (requireSurjective): the bases must reach every
    point of the box their largest entries imply."""
    bits = [0] * rank
    for b in bases:
        for d in range(rank):
            bits[d] = max(bits[d], b[d].bit_length())
    shifts = [sum(bits[:d]) for d in range(rank)]
    packed = [sum(b[d] << shifts[d] for d in range(rank)) for b in bases]
    if gf2_rank(packed) != sum(bits):
        raise ValueError(f"{name} must be surjective (reach every point of the box its bases span), "
                         f"got {[list(b) for b in bases]}")


def _check_shape(shape, rank: int) -> tuple[int, ...]:
    shape = _ints("shape", shape)
    if len(shape) != rank:
        raise ValueError(f"shape {list(shape)} has rank {len(shape)}, but the layout has rank {rank}")
    _check_pow2("shape", shape)
    return shape


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


# ----------------------------------------------------------------------------
# Basis-list arithmetic mirroring Triton's LinearLayout operations
# ----------------------------------------------------------------------------

def _size_of(bases_by_dim: dict, dim: int) -> int:
    """Out-dim size Triton infers from bases: next power of two above the largest entry."""
    top = 0
    for bases in bases_by_dim.values():
        for b in bases:
            top = max(top, b[dim])
    return 1 << top.bit_length()


class _Bases:
    """A linear layout under construction: in-dim -> list of bases (standard dim order),
    explicit out sizes, and `dim_order`, the order in which Triton's layout lists its
    out dims (it decides where `ensure_not_smaller` appends register bases)."""

    __slots__ = ("bases", "sizes", "dim_order")

    def __init__(self, bases: dict, sizes: list, dim_order: Sequence[int]):
        self.bases = bases
        self.sizes = sizes
        self.dim_order = list(dim_order)

    @staticmethod
    def identity_nd(in_dim: str, shape: Sequence[int], order: Sequence[int], rank: int) -> _Bases:
        """Triton's identityStandardND: order[0] is the most minor dimension."""
        bases = []
        for d in order:
            for k in range(_log2(shape[d])):
                v = [0] * rank
                v[d] = 1 << k
                bases.append(v)
        sizes = [1] * rank
        for d in order:
            sizes[d] = shape[d]
        return _Bases({in_dim: bases}, sizes, order)

    def times(self, other: _Bases) -> _Bases:
        """Direct product self * other: `other` occupies the bits above `self`."""
        bases = {k: list(v) for k, v in self.bases.items()}
        for in_dim, obases in other.bases.items():
            scaled = [[b[d] * self.sizes[d] for d in range(len(b))] for b in obases]
            bases.setdefault(in_dim, []).extend(scaled)
        sizes = [a * b for a, b in zip(self.sizes, other.sizes)]
        order = self.dim_order + [d for d in other.dim_order if d not in self.dim_order]
        return _Bases(bases, sizes, order)

    def mul_identity(self, in_dim: str, size: int, dim: int) -> _Bases:
        """self *= identity1D(size, in_dim, dim): `size` more steps along `dim`, above
        what the layout covers.  Sizes below 2 add no basis (Triton's identity1D of
        0 or 1) but still list `dim` among the out dims."""
        bases = self.bases.setdefault(in_dim, [])
        rank = len(self.sizes)
        for k in range(_log2(size) if size > 1 else 0):
            v = [0] * rank
            v[dim] = self.sizes[dim] << k
            bases.append(v)
        self.sizes[dim] *= max(size, 1)
        if dim not in self.dim_order:
            self.dim_order.append(dim)
        return self

    def mul_zeros(self, in_dim: str, size: int, dim: int) -> _Bases:
        """self *= zeros1D(size, in_dim, dim): `size` steps that all hit the same data."""
        self.bases.setdefault(in_dim, []).extend([0] * len(self.sizes) for _ in range(_log2(size)))
        if dim not in self.dim_order:
            self.dim_order.append(dim)
        return self

    def ensure_not_smaller(self, shape: Sequence[int]) -> None:
        """Append bases of the first in-dim until every out dim covers `shape`
        (repetitions wrap into registers), minor dims first."""
        first = next(iter(self.bases))
        for d in self.dim_order:
            while self.sizes[d] < shape[d]:
                v = [0] * len(self.sizes)
                v[d] = self.sizes[d]
                self.bases[first].append(v)
                self.sizes[d] *= 2

    def ensure_not_larger(self, shape: Sequence[int], broadcast_registers: bool = True) -> None:
        """Zero every basis component that reaches past `shape` (the data is then
        broadcast).  With broadcast_registers=False such register bases are removed.
        A threshold rather than a count, as in Triton: duplicate bases all go."""
        removed: set[int] = set()
        changed = False
        for d in self.dim_order:
            if self.sizes[d] <= shape[d]:
                continue
            changed = True
            for in_dim, bs in self.bases.items():
                for i, b in enumerate(bs):
                    if b[d] >= shape[d]:
                        if not broadcast_registers and in_dim == "register":
                            removed.add(i)
                        else:
                            b[d] = 0
        if removed:
            self.bases["register"] = [b for i, b in enumerate(self.bases["register"]) if i not in removed]
        if changed:
            for d in range(len(self.sizes)):
                self.sizes[d] = _size_of(self.bases, d)


def _combine_cta_cga(cta: _Bases, cga_layout: BasisList, shape: Sequence[int]) -> dict:
    """Triton's combineCtaCgaWithShape: fit the per-CTA layout to shape / CGA size,
    then place each block's tile with the (shape-clipped) CGA bases.
    Postcondition: the result covers exactly `shape`."""
    rank = len(shape)
    if not cga_layout:  # one CTA: the common case, without the CGA bookkeeping
        cta.ensure_not_smaller(shape)
        cta.ensure_not_larger(shape)
        cta.bases["block"] = []
        return cta.bases
    cga = _Bases({"block": [list(b) for b in cga_layout]}, [0] * rank, range(rank))
    cga.sizes = [_size_of(cga.bases, d) for d in range(rank)]
    cga.ensure_not_larger(shape)
    cta_shape = [max(1, shape[d] // cga.sizes[d]) for d in range(rank)]
    cta.ensure_not_smaller(cta_shape)
    cta.ensure_not_larger(cta_shape)
    cta.bases["block"] = [[b[d] * cta.sizes[d] for d in range(rank)] for b in cga.bases["block"]]
    return cta.bases


def _cga_sizes(cga_layout: BasisList, rank: int) -> list[int]:
    """How many CTAs tile each dim: the CGA layout's out-dim sizes."""
    by_dim = {"block": cga_layout}
    return [_size_of(by_dim, d) for d in range(rank)]


def _shape_per_cta(shape: Sequence[int], cga_layout: BasisList) -> list[int]:
    sizes = _cga_sizes(cga_layout, len(shape))
    for d, (s, c) in enumerate(zip(shape, sizes)):
        if s % c:
            raise ValueError(f"shape {list(shape)} is not divisible by the CGA layout along dim {d} ({c} CTAs)")
    return [s // c for s, c in zip(shape, sizes)]


def _matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's getMatrixOrder: [rank-1, ..., 0], with the two minor dims swapped if column-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def _broadcast_along(in_dim: str, shape: Sequence[int], order: Sequence[int], k_dim: int, rank: int) -> _Bases:
    """Like identity_nd, but the k_dim bits are zero: every step along K hits the same data."""
    bases = []
    sizes = [1] * rank
    for d in order:
        for k in range(_log2(shape[d])):
            v = [0] * rank
            if d != k_dim:
                v[d] = 1 << k
            bases.append(v)
        if d != k_dim:
            sizes[d] = shape[d]
    return _Bases({in_dim: bases}, sizes, order)


_DISTRIBUTED_DIMS = ("register", "lane", "warp", "block")
_SHARED_DIMS = ("offset", "block")


def _finish(bases: dict, names: Sequence[str]) -> dict[str, BasisList]:
    return {n: tuple(tuple(b) for b in bases.get(n, ())) for n in names}


# ----------------------------------------------------------------------------
# Printing helpers (Triton's attribute syntax)
# ----------------------------------------------------------------------------

def _fmt(values) -> str:
    if isinstance(values, (tuple, list)):
        return "[" + ", ".join(_fmt(v) for v in values) + "]"
    if isinstance(values, bool):
        return "true" if values else "false"
    return str(values)


def _cga_suffix(cga_layout: BasisList) -> str:
    return f", CGALayout = {_fmt(cga_layout)}" if cga_layout else ""


# ----------------------------------------------------------------------------
# Distributed layouts
# ----------------------------------------------------------------------------

class DistributedLayout:
    """Base of register layouts: in-dims register, lane, warp, block."""

    IN_DIMS = _DISTRIBUTED_DIMS

    def to_linear_layout(self, shape: Sequence[int]):
        return _to_linear_layout_cached(self, tuple(shape))

    def bases(self, shape: Sequence[int]) -> dict[str, BasisList]:
        """The layout's bases per in-dim for `shape`, exactly as Triton's toLinearLayout."""
        return _bases_cached(self, tuple(shape))

    def format_tensor_view(self, shape: Sequence[int]) -> str:
        return format_tensor_view(self, shape)

    def format_hardware_view(self, shape: Sequence[int]) -> str:
        return format_hardware_view(self, shape)


class SharedLayout:
    """Base of shared-memory layouts: in-dims offset, block."""

    IN_DIMS = _SHARED_DIMS

    to_linear_layout = DistributedLayout.to_linear_layout
    bases = DistributedLayout.bases
    format_tensor_view = DistributedLayout.format_tensor_view
    format_hardware_view = DistributedLayout.format_hardware_view


@dataclass(frozen=True)
class BlockedLayout(DistributedLayout):
    """Each thread holds a `size_per_thread` block; threads, then warps, tile the
    tensor in `order` (order[0] is the fastest-varying dim).

    register bases = identity over size_per_thread, lane bases = identity over
    threads_per_warp scaled by size_per_thread, warp bases likewise; a shape larger
    than the layout wraps into more registers, a smaller one broadcasts.
    Requires: equal ranks, `order` a permutation, all sizes powers of two.
    """
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_layout: BasisList = ()

    def __post_init__(self):
        spt = _ints("size_per_thread", self.size_per_thread)
        tpw = _ints("threads_per_warp", self.threads_per_warp)
        wpc = _ints("warps_per_cta", self.warps_per_cta)
        order = _ints("order", self.order)
        rank = len(spt)
        if not (len(tpw) == len(wpc) == len(order) == rank):
            raise ValueError("size_per_thread, threads_per_warp, warps_per_cta and order must all have the same rank")
        _check_order(order, rank)
        _check_pow2("size_per_thread", spt)
        _check_pow2("threads_per_warp", tpw)
        _check_pow2("warps_per_cta", wpc)
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, rank)
        for n, v in (("size_per_thread", spt), ("threads_per_warp", tpw), ("warps_per_cta", wpc),
                     ("order", order), ("cga_layout", cga)):
            _set(self, n, v)

    @property
    def rank(self) -> int:
        return len(self.order)

    def _build(self, shape):
        rank = self.rank
        cta = _Bases.identity_nd("register", self.size_per_thread, self.order, rank)
        cta = cta.times(_Bases.identity_nd("lane", self.threads_per_warp, self.order, rank))
        cta = cta.times(_Bases.identity_nd("warp", self.warps_per_cta, self.order, rank))
        bases = _combine_cta_cga(cta, self.cga_layout, shape)
        # Unlike the MMA families, Triton 3.9 drops (rather than zeroes) the register
        # bits a blocked layout broadcasts over.
        bases["register"] = [b for b in bases["register"] if any(b)]
        return bases

    def __str__(self):
        return (f"#ttg.blocked<{{sizePerThread = {_fmt(self.size_per_thread)}, "
                f"threadsPerWarp = {_fmt(self.threads_per_warp)}, warpsPerCTA = {_fmt(self.warps_per_cta)}, "
                f"order = {_fmt(self.order)}{_cga_suffix(self.cga_layout)}}}>")


@dataclass(frozen=True)
class SliceLayout(DistributedLayout):
    """The parent layout with dimension `dim` removed (as after a reduction along it).

    Built from the parent's layout for the shape with a 1 inserted at `dim`: drop
    that output, then drop register bases that became zero.
    """
    dim: int
    parent: DistributedLayout

    def __post_init__(self):
        if not isinstance(self.parent, DistributedLayout):
            raise ValueError(f"slice parent must be a distributed layout, got {type(self.parent).__name__}")
        if not isinstance(self.dim, int) or not 0 <= self.dim < self.parent.rank:
            raise ValueError(f"slice dim must be in [0, {self.parent.rank}) (the parent's rank), got {self.dim}")

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    @property
    def cga_layout(self) -> BasisList:
        return tuple(b[:self.dim] + b[self.dim + 1:] for b in self.parent.cga_layout)

    def _build(self, shape):
        parent_shape = tuple(shape[:self.dim]) + (1,) + tuple(shape[self.dim:])
        parent = _bases_cached(self.parent, parent_shape)
        drop = self.dim
        out = {n: [list(b[:drop] + b[drop + 1:]) for b in bs] for n, bs in parent.items()}
        out["register"] = [b for b in out["register"] if any(b)]
        return out

    def __str__(self):
        return f"#ttg.slice<{{dim = {self.dim}, parent = {self.parent}}}>"


@dataclass(frozen=True)
class DistributedLinearLayout(DistributedLayout):
    """An explicit linear layout (`#ttg.linear`): bases for each hardware index bit.

    For a different `shape` Triton tiles/broadcasts it like blocked: missing
    coverage is added as register bases (fastest register dims first), excess
    register bases are dropped and excess lane/warp/block bases zeroed.
    """
    reg_bases: BasisList
    lane_bases: BasisList
    warp_bases: BasisList
    block_bases: BasisList
    shape: tuple[int, ...]

    def __post_init__(self):
        shape = _ints("shape", self.shape)
        _check_pow2("shape", shape)
        rank = len(shape)
        for n in ("reg_bases", "lane_bases", "warp_bases", "block_bases"):
            bases = _basis_list(n, getattr(self, n), rank)
            for b in bases:
                if any(v >= s for v, s in zip(b, shape)):
                    raise ValueError(f"{n}: basis {list(b)} is out of range for shape {list(shape)}")
            _set(self, n, bases)
        _set(self, "shape", shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def cga_layout(self) -> BasisList:
        return self.block_bases

    def _register_order(self) -> list[int]:
        """Triton's LinearEncodingAttr::getOrder: dims in the order registers first move
        along them, then the remaining dims from the last to the first."""
        order: list[int] = []
        for b in self.reg_bases:
            for d, v in enumerate(b):
                if v:
                    if d not in order:
                        order.append(d)
                    break
        order += [d for d in range(self.rank - 1, -1, -1) if d not in order]
        return order

    def _build(self, shape):
        rank = self.rank
        named = {"register": self.reg_bases, "lane": self.lane_bases,
                 "warp": self.warp_bases, "block": self.block_bases}
        layout = _Bases({n: [list(b) for b in bs] for n, bs in named.items()}, list(self.shape),
                        self._register_order())
        layout.ensure_not_smaller(shape)
        layout.ensure_not_larger(shape, broadcast_registers=False)
        return layout.bases

    def __str__(self):
        return (f"#ttg.linear<{{register = {_fmt(self.reg_bases)}, lane = {_fmt(self.lane_bases)}, "
                f"warp = {_fmt(self.warp_bases)}, block = {_fmt(self.block_bases)}}}>")


def _mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int], rep_order: Sequence[int]) -> _Bases:
    """Triton's nvidiaMmaTile for an m x n tile (n = tile[order[0]], the inner dim):
    k_width registers, 4 lanes along n; 8 lanes along m; m/8 register
    repeats along m; n/(4*k_width) register repeats along n."""
    rank = len(rep_order)
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    regs, lanes = [], []

    def unit(d, v):
        b = [0] * rank
        b[d] = v
        return b

    regs += [unit(inner, 1 << k) for k in range(_log2(k_width))]
    lanes += [unit(inner, k_width << k) for k in range(2)]
    lanes += [unit(outer, 1 << k) for k in range(3)]
    regs += [unit(outer, 8 << k) for k in range(_log2(m // 8))]
    regs += [unit(inner, 4 * k_width << k) for k in range(_log2(n // (4 * k_width)))]
    sizes = [1] * rank
    sizes[inner], sizes[outer] = n, m
    return _Bases({"register": regs, "lane": lanes}, sizes, rep_order)


@dataclass(frozen=True)
class NVMMADistributedLayout(DistributedLayout):
    """Accumulator layout of NVIDIA tensor-core MMA: version (2, 0) is Ampere mma.sync,
    (3, 0) is Hopper wgmma.

    One warp's tile is instr_shape[:2] (m x n) built by `_mma_tile` with k_width 2;
    warps tile it row-major (Ampere) or column-major (Hopper).
    Requires: Ampere instr_shape of rank entries, Hopper rank 2 and instr_shape (m, n, k).
    """
    version: tuple[int, int]
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    cga_layout: BasisList = ()

    def __post_init__(self):
        version = _ints("version", self.version)
        warps = _ints("warps_per_cta", self.warps_per_cta)
        instr = _ints("instr_shape", self.instr_shape)
        if len(version) != 2 or version[0] not in (2, 3):
            raise ValueError(f"version must be [major, minor] with major 2 (Ampere) or 3 (Hopper), got {list(version)}")
        rank = len(warps)
        if rank < 2:
            raise ValueError("warps_per_cta of an MMA layout must have rank >= 2")
        _check_pow2("warps_per_cta", warps)
        if version[0] == 2 and len(instr) != rank:
            raise ValueError(f"instr_shape of MMA v2 must have one entry per dim ({rank}), got {list(instr)}")
        if version[0] == 3:
            if rank != 2:
                raise ValueError(f"MMA v3 (Hopper) layouts must have rank 2, got {rank}")
            if len(instr) != 3:
                raise ValueError(f"instr_shape of MMA v3 must be [m, n, k], got {list(instr)}")
        _check_pow2("instr_shape", instr)
        tile = instr[:2] if version[0] == 3 else instr[-2:]
        if tile[0] % 8 or tile[1] % 8:
            raise ValueError(f"the MMA tile {list(tile)} must be a multiple of 8 in m and n")
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, rank)
        for name, v in (("version", version), ("warps_per_cta", warps), ("instr_shape", instr), ("cga_layout", cga)):
            _set(self, name, v)

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def is_hopper(self) -> bool:
        return self.version[0] == 3

    def _build(self, shape):
        rank = self.rank
        tile = list(self.instr_shape) if not self.is_hopper else list(self.instr_shape[:2])
        row_major = _matrix_order(rank, True)
        cta = _mma_tile(tile, 2, row_major, row_major)
        warp_order = _matrix_order(rank, not self.is_hopper)
        cta = cta.times(_Bases.identity_nd("warp", self.warps_per_cta, warp_order, rank))
        return _combine_cta_cga(cta, self.cga_layout, shape)

    def __str__(self):
        return (f"#ttg.nvidia_mma<{{versionMajor = {self.version[0]}, versionMinor = {self.version[1]}, "
                f"warpsPerCTA = {_fmt(self.warps_per_cta)}{_cga_suffix(self.cga_layout)}, "
                f"instrShape = {_fmt(self.instr_shape)}}}>")


@dataclass(frozen=True)
class DotOperandLayout(DistributedLayout):
    """Layout of operand A (operand_index 0, shape [..., M, K]) or B (1, [..., K, N])
    of a dot whose result has layout `parent`.

    NVIDIA MMA parents: each warp holds a 16 x 8*k_width (A) or 8*k_width x 8 (B)
    tile built like the accumulator with k_width consecutive K elements per
    register group; warps repeat the parent's warp grid but are broadcast along K.
    AMD parents: k_width consecutive K elements per lane, lanes along the non-K dim
    then K; MFMA registers cover the whole K extent, WMMA repeats the parent's
    ctaLayout without its K components.
    Blocked parent (FMA dot): every thread holds the whole K extent.
    Requires: k_width 0 for blocked parents, else a power of two (WMMA v1: 8 or 16,
    v2: 4, 8 or 16); Hopper parents take only operand A from registers.
    """
    operand_index: int
    parent: DistributedLayout
    k_width: int

    def __post_init__(self):
        if self.operand_index not in (0, 1):
            raise ValueError(f"dot_op operand_index must be 0 or 1, got {self.operand_index}")
        parent = self.parent
        if not isinstance(parent, (BlockedLayout, NVMMADistributedLayout, AMDMFMALayout, AMDWMMALayout)):
            raise ValueError(f"dot_op parent must be a blocked, MMA, MFMA or WMMA layout, got {type(parent).__name__}")
        if parent.rank < 2:
            raise ValueError("dot_op parent must have rank >= 2")
        if isinstance(parent, BlockedLayout):
            if self.k_width != 0:
                raise ValueError("dot_op k_width must be 0 when the parent is a blocked layout")
            return
        if not _is_pow2(self.k_width):
            raise ValueError(f"dot_op k_width must be a positive power of two for an MMA parent, "
                             f"got {self.k_width}")
        if isinstance(parent, NVMMADistributedLayout):
            if parent.is_hopper and self.operand_index != 0:
                raise ValueError("dot_op operand_index must be 0 for a Hopper MMA parent "
                                 "(wgmma only takes operand A in registers)")
        elif isinstance(parent, AMDWMMALayout) and parent.version in _WMMA_K_WIDTHS:
            allowed = _WMMA_K_WIDTHS[parent.version]
            if self.k_width not in allowed:
                raise ValueError(f"dot_op k_width must be {'/'.join(map(str, allowed))} for WMMA "
                                 f"v{parent.version}, got {self.k_width}")

    @property
    def rank(self) -> int:
        return self.parent.rank

    @property
    def k_dim(self) -> int:
        return self.rank - 1 if self.operand_index == 0 else self.rank - 2

    @property
    def cga_layout(self) -> BasisList:
        """The parent's CGA layout with the K component dropped: CTAs never split K."""
        k = self.k_dim
        return tuple(tuple(0 if d == k else v for d, v in enumerate(b)) for b in self.parent.cga_layout)

    def _build(self, shape):
        parent, rank, k_dim = self.parent, self.rank, self.k_dim
        if isinstance(parent, BlockedLayout):
            thread_size = list(parent.size_per_thread)
            thread_size[k_dim] = shape[k_dim]
            cta = _Bases.identity_nd("register", thread_size, parent.order, rank)
            cta = cta.times(_broadcast_along("lane", parent.threads_per_warp, parent.order, k_dim, rank))
            cta = cta.times(_broadcast_along("warp", parent.warps_per_cta, parent.order, k_dim, rank))
            return _combine_cta_cga(cta, self.cga_layout, shape)
        if isinstance(parent, NVMMADistributedLayout):
            tile = [1] * rank
            if self.operand_index == 0:
                tile[rank - 2], tile[rank - 1] = 16, self.k_width * 8
            else:
                tile[rank - 2], tile[rank - 1] = self.k_width * 8, 8
            order = _matrix_order(rank, self.operand_index == 0)  # K is the inner dim
            cta = _mma_tile(tile, self.k_width, order, order)
            warp_order = _matrix_order(rank, not parent.is_hopper)
            cta = cta.times(_broadcast_along("warp", parent.warps_per_cta, warp_order, k_dim, rank))
            return _combine_cta_cga(cta, self.cga_layout, shape)
        if isinstance(parent, AMDMFMALayout):
            return _mfma_dot_bases(self, shape)
        return _wmma_dot_bases(self, shape)

    def __str__(self):
        kw = f", kWidth = {self.k_width}" if self.k_width else ""
        return f"#ttg.dot_op<{{opIdx = {self.operand_index}, parent = {self.parent}{kw}}}>"


@dataclass(frozen=True)
class AMDMFMALayout(DistributedLayout):
    """Accumulator layout of AMD MFMA (matrix cores, 64-lane wavefronts).

    One tile is instr_shape[:2] (M x N in 32x32, 16x16, 64x4, 4x64): each lane holds
    4 consecutive rows (1 for 64-bit elements), lanes run along N then M; transposed
    swaps the roles of M and N.  Tiles repeat along N (tiles_per_warp, warps, the
    whole tensor's N) before M, then warps along M and batch.
    Requires: version 1-4, (M, N) one of the four shapes, element_bitwidth 32 or 64;
    converting a 64x4 layout also needs `transposed` (Triton asserts it).
    """
    version: int
    instr_shape: tuple[int, ...]
    transposed: bool
    warps_per_cta: tuple[int, ...]
    element_bitwidth: int | None = None
    tiles_per_warp: tuple[int, ...] | None = None
    cga_layout: BasisList = ()

    def __post_init__(self):
        if self.version not in (1, 2, 3, 4):
            raise ValueError(f"version must be in the [1, 4] range, got {self.version}")
        instr = _ints("instr_shape", self.instr_shape)
        if len(instr) != 3:
            raise ValueError(f"instr_shape must follow the (M, N, K) format, got {list(instr)}")
        if list(instr[:2]) not in ([32, 32], [16, 16], [64, 4], [4, 64]):
            raise ValueError(f"instr_shape M x N must be 32x32, 16x16, 64x4 or 4x64, got {list(instr)}")
        warps = _ints("warps_per_cta", self.warps_per_cta)
        rank = len(warps)
        if rank not in (2, 3):
            raise ValueError(f"warps_per_cta of an MFMA layout must have rank 2 or 3, got {rank}")
        _check_pow2("warps_per_cta", warps)
        bitwidth = 32 if self.element_bitwidth is None else self.element_bitwidth
        if bitwidth not in (32, 64):
            raise ValueError(f"element_bitwidth must be 32 or 64, got {bitwidth}")
        tiles = (1,) * rank if self.tiles_per_warp is None else _ints("tiles_per_warp", self.tiles_per_warp)
        if len(tiles) != rank:
            raise ValueError(f"tiles_per_warp must have {rank} entries (the rank), got {list(tiles)}")
        _check_pow2("tiles_per_warp", tiles)
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, rank)
        for n, v in (("instr_shape", instr), ("warps_per_cta", warps), ("element_bitwidth", bitwidth),
                     ("tiles_per_warp", tiles), ("transposed", bool(self.transposed)), ("cga_layout", cga)):
            _set(self, n, v)

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def _build(self, shape):
        return _mfma_bases(self, shape)

    def __str__(self):
        extra = ""
        if any(t != 1 for t in self.tiles_per_warp):
            extra += f", tilesPerWarp = {_fmt(self.tiles_per_warp)}"
        if self.element_bitwidth != 32:
            extra += f", elementBitWidth = {self.element_bitwidth}"
        return (f"#ttg.amd_mfma<{{version = {self.version}, warpsPerCTA = {_fmt(self.warps_per_cta)}, "
                f"instrShape = {_fmt(self.instr_shape)}, isTransposed = {_fmt(self.transposed)}"
                f"{_cga_suffix(self.cga_layout)}{extra}}}>")


_AMD_WAVE = 64  # MFMA lanes per warp
_WMMA_WAVE = 32  # WMMA lanes per warp


def _mfma_bases(layout: AMDMFMALayout, shape):
    rank = layout.rank
    m_dim, n_dim = rank - 2, rank - 1
    mdim, ndim = layout.instr_shape[:2]
    if (mdim, ndim) == (64, 4) and not layout.transposed:
        # Triton 3.9 only builds 64x4 as the transposed 4x64 (asserting otherwise).
        raise ValueError("a 64x4 MFMA layout must be transposed to convert (Triton 3.9 asserts isTransposed)")
    height = 1 if layout.element_bitwidth == 64 else 4  # consecutive elements per lane
    tiles = max(1, mdim * ndim // (_AMD_WAVE * height))  # register groups filling one tile
    # One tile: `height` registers along M, lanes along N then M, register groups along
    # M.  Transposed swaps the roles of M and N.  Out dims are listed N, M (, batch).
    along, across = (n_dim, m_dim) if layout.transposed else (m_dim, n_dim)
    lanes_across = mdim if layout.transposed else ndim
    lay = _Bases({"register": [], "lane": []}, [1] * rank, [n_dim, m_dim])
    lay.mul_identity("register", height, along)
    lay.mul_identity("lane", lanes_across, across)
    lay.mul_identity("lane", _AMD_WAVE // lanes_across, along)
    lay.mul_identity("register", tiles, along)
    # Triton lays MFMA tiles N-contiguously over the whole tensor (its dot lowering
    # expects that order): tiles_per_warp and warps along N, then the rest of the
    # tensor's full N extent in registers, then tiles_per_warp and warps along M.
    tpw, wpc = layout.tiles_per_warp, layout.warps_per_cta
    lay.mul_identity("register", tpw[n_dim], n_dim)
    lay.mul_identity("warp", wpc[n_dim], n_dim)
    lay.mul_identity("register", shape[n_dim] // (ndim * wpc[n_dim] * tpw[n_dim]), n_dim)
    lay.mul_identity("register", tpw[m_dim], m_dim)
    lay.mul_identity("warp", wpc[m_dim], m_dim)
    if rank == 3:
        lay.mul_identity("warp", wpc[0], 0)
    return _combine_cta_cga(lay, layout.cga_layout, shape)


def _mfma_dot_bases(dot: DotOperandLayout, shape):
    """Triton's mfmaDotToLinearLayout: k_width registers along K, lanes along the
    non-K dim then K, registers over the whole K extent, then tiles_per_warp along
    the non-K dim.  Warps use the parent's grid unchanged: those along K land past
    the K extent and are zeroed (broadcast) by the shape fit."""
    mfma, rank, op = dot.parent, dot.rank, dot.operand_index
    k_dim, nonk_dim = dot.k_dim, (rank - 2 if op == 0 else rank - 1)
    mdim, ndim = mfma.instr_shape[:2]
    nonk = mdim if op == 0 else ndim
    lay = _Bases({"register": [], "lane": []}, [1] * rank, [k_dim, nonk_dim])
    lay.mul_identity("register", dot.k_width, k_dim)
    lay.mul_identity("lane", nonk, nonk_dim)
    lay.mul_identity("lane", _AMD_WAVE // nonk, k_dim)
    k_tile = _AMD_WAVE // nonk * dot.k_width
    if (mdim, ndim, op) in ((64, 4, 0), (4, 64, 1)):
        # The 64-wide operand of a 64x4 / 4x64 MFMA repeats its tile 16 times along K.
        lay.mul_identity("register", 16, k_dim)
        k_tile *= 16
    if shape[k_dim] > k_tile:
        lay.mul_identity("register", shape[k_dim] // k_tile, k_dim)
    lay.mul_identity("register", mfma.tiles_per_warp[nonk_dim], nonk_dim)
    if rank == 3:
        lay.mul_identity("register", 1, 0)
    warp_order = _matrix_order(rank, True)
    lay = lay.times(_Bases.identity_nd("warp", mfma.warps_per_cta, warp_order, rank))
    return _combine_cta_cga(lay, mfma.cga_layout, shape)


# Instruction shapes Triton 3.9's WMMA verifier accepts, per version.
_WMMA_INSTR_SHAPES = {
    1: ((16, 16, 16),),
    2: ((16, 16, 16), (16, 16, 32)),
    3: ((16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)),
}
# k_width values Triton 3.9 accepts for WMMA dot operands (any power of two for v3).
_WMMA_K_WIDTHS = {1: (8, 16), 2: (4, 8, 16)}


@dataclass(frozen=True)
class AMDWMMALayout(DistributedLayout):
    """Accumulator layout of AMD WMMA (32-lane waves; version 1 RDNA3, 2 RDNA4,
    3 gfx1250).

    One tile is instr_shape[:2] (16x16, or 32x16 on version 3): lanes 0-15 run
    along N, lane 16 and the registers along M (version 1 interleaves rows:
    lane 16 is row 1, registers rows 2, 4, 8; later versions give each half-wave 8
    consecutive rows).  `transposed` swaps M and N.  `reg_bases` and `warp_bases`
    (the `ctaLayout`) place whole tiles: basis (1, 0) is the next tile down M.
    Requires: an instr_shape the version supports; reg_bases and warp_bases of
    `rank` entries that together reach every tile of the box they span.
    Converting needs rank 2 or 3 (Triton asserts it).
    """
    version: int
    transposed: bool
    warp_bases: BasisList
    reg_bases: BasisList | None = ()
    instr_shape: tuple[int, ...] | None = (16, 16, 16)
    cga_layout: BasisList = ()
    rank: int | None = 2

    def __post_init__(self):
        if self.version not in (1, 2, 3):
            raise ValueError(f"version must be in the [1, 3] range, got {self.version}")
        rank = 2 if self.rank is None else self.rank
        if not isinstance(rank, int) or rank < 1:
            raise ValueError(f"rank must be a positive integer, got {rank!r}")
        instr = (16, 16, 16) if self.instr_shape is None else _ints("instr_shape", self.instr_shape)
        if instr not in _WMMA_INSTR_SHAPES[self.version]:
            allowed = ", ".join(str(list(s)) for s in _WMMA_INSTR_SHAPES[self.version])
            raise ValueError(f"invalid WMMA v{self.version} instruction shape {list(instr)} (allowed: {allowed})")
        warp = _basis_list("warp_bases", self.warp_bases, rank)
        reg = _basis_list("reg_bases", self.reg_bases, rank)
        _check_surjective("ctaLayout (reg_bases with warp_bases)", reg + warp, rank)
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, rank)
        for n, v in (("warp_bases", warp), ("reg_bases", reg), ("instr_shape", instr), ("cga_layout", cga),
                     ("transposed", bool(self.transposed)), ("rank", rank)):
            _set(self, n, v)

    def _tile(self) -> _Bases:
        """One instruction's tile (Triton's getTileLayout) with out dims in standard order."""
        rank = self.rank
        if rank not in (2, 3):
            raise ValueError(f"an amd_wmma layout converts only at rank 2 or 3 (Triton 3.9 asserts it), got {rank}")
        m_dim, n_dim = rank - 2, rank - 1
        fast, slow = (m_dim, n_dim) if self.transposed else (n_dim, m_dim)
        lay = _Bases({"register": [], "lane": []}, [1] * rank, range(rank))
        if self.version == 1:
            lay.mul_identity("lane", 16, fast)
            lay.mul_identity("lane", 2, slow)  # lane 16 is the next row: rows interleave
            lay.mul_identity("register", 8, slow)
        else:
            lay.mul_identity("register", 8, slow)
            lay.mul_identity("lane", 16, fast)
            lay.mul_identity("lane", 2, slow)
            if self.instr_shape[0] == 32:  # 32x16: two 16x16 tiles stacked in more registers
                lay.mul_identity("register", 2, slow)
        return lay

    def _cta(self, project_dim: int | None = None) -> _Bases:
        """The ctaLayout (register and warp bases in tile units), optionally with one
        out dim projected away (its components zeroed, as for dot operands)."""
        regs = [list(b) for b in self.reg_bases]
        warps = [list(b) for b in self.warp_bases]
        if project_dim is not None:
            for b in regs + warps:
                b[project_dim] = 0
        by_dim = {"register": regs, "warp": warps}
        return _Bases(by_dim, [_size_of(by_dim, d) for d in range(self.rank)], range(self.rank))

    def _build(self, shape):
        lay = self._tile().times(self._cta())
        # Triton lists the out dims row-major (last dim first), which decides where
        # repetitions that fit the shape go.
        lay.dim_order = _matrix_order(self.rank, True)
        return _combine_cta_cga(lay, self.cga_layout, shape)

    def __str__(self):
        cta = []
        if self.reg_bases:
            cta.append(f"register = {_fmt(self.reg_bases)}")
        if self.warp_bases:
            cta.append(f"warp = {_fmt(self.warp_bases)}")
        instr = f", instrShape = {_fmt(self.instr_shape)}" if self.instr_shape != (16, 16, 16) else ""
        # Triton 3.9 does not print `rank` (and so cannot read its own rank-3 text back).
        return (f"#ttg.amd_wmma<{{version = {self.version}, isTranspose = {_fmt(self.transposed)}, "
                f"ctaLayout = {{{', '.join(cta)}}}{_cga_suffix(self.cga_layout)}{instr}}}>")


def _wmma_dot_bases(dot: DotOperandLayout, shape):
    """Triton's wmmaDotOperandToLinearLayout: k_width registers along K, 16 lanes
    along the non-K dim, the other half-wave along K (version 1: a copy of the
    first), registers up to the instruction's K, and (32x16) a second 16-row group;
    then the parent's ctaLayout with its K components zeroed and the register bases
    that became redundant removed."""
    wmma, rank, op = dot.parent, dot.rank, dot.operand_index
    k_dim, nonk_dim = dot.k_dim, (rank - 2 if op == 0 else rank - 1)
    instr = wmma.instr_shape
    # The parent's tile extent along this operand's non-K dim: a transposed 32x16
    # tile is 32 wide along N, so there operand B (not A) stacks two 16-lane groups.
    nonk_repeat = instr[1 - op if wmma.transposed else op] // 16
    depth = _WMMA_WAVE // 16
    lay = _Bases({"register": [], "lane": []}, [1] * rank, [k_dim, nonk_dim])
    lay.mul_identity("register", dot.k_width, k_dim)
    lay.mul_identity("lane", 16, nonk_dim)
    if wmma.version == 1:
        lay.mul_zeros("lane", depth, k_dim)
    else:
        lay.mul_identity("lane", depth, k_dim)
    lay.mul_identity("register", instr[2] // (depth * dot.k_width), k_dim)
    if nonk_repeat > 1:
        lay.mul_identity("register", nonk_repeat, nonk_dim)
    cta = wmma._cta(project_dim=k_dim)
    # actionRemoveBroadcastedRegs: drop register bases in the span of earlier ones.
    span, kept = EchelonBasis(), []
    shift = max(s.bit_length() for s in cta.sizes)
    for i, b in enumerate(cta.bases["register"]):
        if span.insert(sum(v << (d * shift) for d, v in enumerate(b)), i):
            kept.append(b)
    cta.bases["register"] = kept
    lay = lay.times(cta)
    lay.dim_order = [k_dim, nonk_dim] + list(range(rank - 2))
    return _combine_cta_cga(lay, dot.cga_layout, shape)


# ----------------------------------------------------------------------------
# Shared layouts
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class SwizzledSharedLayout(SharedLayout):
    """Row-major tile (order[0] fastest) whose rows XOR-permute groups of `vec` columns:
    element (r, c) lives at column ((c // vec) ^ ((r // per_phase) % max_phase)) * vec + c % vec.

    offset bases: columns (0, 2^i); rows (2^i, (vec * ((2^i // per_phase) % max_phase)) % num_cols);
    further dims follow order[2:] unswizzled.
    """
    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga_layout: BasisList = ()

    def __post_init__(self):
        for n in ("vec", "per_phase", "max_phase"):
            v = getattr(self, n)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{n} must be a positive integer, got {v!r}")
        order = _ints("order", self.order)
        _check_order(order, len(order))
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, len(order))
        _set(self, "order", order)
        _set(self, "cga_layout", cga)

    @property
    def rank(self) -> int:
        return len(self.order)

    def _build(self, shape):
        rank = self.rank
        per_cta = _shape_per_cta(shape, self.cga_layout)
        if rank == 1:
            cta = _Bases.identity_nd("offset", per_cta, [0], 1)
            return _combine_cta_cga(cta, self.cga_layout, shape)
        col, row = self.order[0], self.order[1]
        num_cols, num_rows = per_cta[col], per_cta[row]
        offsets = []
        for k in range(_log2(num_cols)):
            b = [0] * rank
            b[col] = 1 << k
            offsets.append(b)
        for k in range(_log2(num_rows)):
            r = 1 << k
            b = [0] * rank
            b[row] = r
            b[col] = (self.vec * ((r // self.per_phase) % self.max_phase)) % num_cols
            offsets.append(b)
        cta = _Bases({"offset": offsets}, [1] * rank, [row, col])
        cta.sizes[row], cta.sizes[col] = num_rows, num_cols
        cta = cta.times(_Bases.identity_nd("offset", per_cta, self.order[2:], rank))
        return _combine_cta_cga(cta, self.cga_layout, shape)

    def __str__(self):
        return (f"#ttg.swizzled_shared<{{vec = {self.vec}, perPhase = {self.per_phase}, "
                f"maxPhase = {self.max_phase}, order = {_fmt(self.order)}{_cga_suffix(self.cga_layout)}}}>")


@dataclass(frozen=True)
class NVMMASharedLayout(SharedLayout):
    """Shared layout read by wgmma/tcgen05 and written by TMA: 8-row core matrices
    whose rows are swizzled in 16-byte units over `swizzle_byte_width` bytes.

    Core matrix: 8 rows x 8*max(16, swizzle)/bitwidth columns; row r's bases shift
    by vec * ((r // per_phase) % max_phase) columns with vec = 128/bitwidth,
    per_phase = 128/swizzle, max_phase = swizzle/16.  Core matrices tile a TMA box
    (each dim at most 256, the contiguous dim exactly one swizzle width), boxes
    tile the CTA's shape.  `transposed` makes dim 0 the contiguous one.
    Requires: swizzle in {0, 32, 64, 128}, bitwidth in {8, 16, 32, 64};
    fp4_padded only with 128-byte swizzle and 8-bit elements.
    """
    swizzle_byte_width: int
    element_bitwidth: int
    rank: int = 2
    transposed: bool = False
    fp4_padded: bool = False
    cga_layout: BasisList = ()

    def __post_init__(self):
        if self.swizzle_byte_width not in (0, 32, 64, 128):
            raise ValueError(f"swizzle_byte_width must be 0, 32, 64 or 128, got {self.swizzle_byte_width}")
        if self.element_bitwidth not in (8, 16, 32, 64):
            raise ValueError(f"element_bitwidth must be 8, 16, 32 or 64, got {self.element_bitwidth}")
        if not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(f"rank must be a positive integer, got {self.rank!r}")
        if self.fp4_padded and (self.swizzle_byte_width != 128 or self.element_bitwidth != 8):
            raise ValueError("fp4_padded requires swizzle_byte_width 128 and element_bitwidth 8")
        cga = _basis_list("cga_layout", self.cga_layout)
        _check_cga(cga, self.rank)
        _set(self, "cga_layout", cga)
        _set(self, "transposed", bool(self.transposed))
        _set(self, "fp4_padded", bool(self.fp4_padded))

    @property
    def vec(self) -> int:
        return 128 // self.element_bitwidth if self.swizzle_byte_width else 1

    @property
    def per_phase(self) -> int:
        return 128 // self.swizzle_byte_width if self.swizzle_byte_width else 1

    @property
    def max_phase(self) -> int:
        return self.swizzle_byte_width // 16 if self.swizzle_byte_width else 1

    def _tma_block_shape(self, per_cta: Sequence[int]) -> list[int]:
        """The TMA box Triton uses: every dim clipped to 256, the contiguous dim one swizzle wide."""
        box = list(per_cta)
        contig = 0 if self.transposed else len(box) - 1
        if self.fp4_padded:
            box[contig] *= 2
        box = [min(s, 256) for s in box]
        if self.swizzle_byte_width:
            width = 8 * self.swizzle_byte_width // self.element_bitwidth
            if box[contig] < width:
                raise ValueError(f"shape {list(per_cta)} per CTA is narrower along dim {contig} than one "
                                 f"{self.swizzle_byte_width}-byte swizzle ({width} elements)")
            box[contig] = width
        if self.fp4_padded:
            box[contig] //= 2
        return box

    def _build(self, shape):
        rank = len(shape)
        per_cta = _shape_per_cta(shape, self.cga_layout)
        box = self._tma_block_shape(per_cta)
        if self.swizzle_byte_width == 0:
            last_first = list(range(rank - 1, -1, -1))
            if self.transposed:
                # Triton 3.9 walks the box rotated left (dim 0 moved last) row-major,
                # then renames out dim i to i - 1 (0 to rank - 1), so dim j gets the
                # extent of dim j + 2 (mod rank).  At rank 2 that is a column-major
                # walk; above it offsets past a dim's size become zero and short dims
                # wrap: Triton's layout, reproduced as is.
                rotated = box[1:] + box[:1]
                offsets, sizes = [], [1] * rank
                for i in last_first:
                    new = (i - 1) % rank
                    for k in range(_log2(rotated[i])):
                        v = [0] * rank
                        v[new] = 1 << k
                        offsets.append(v)
                    sizes[new] = rotated[i]
                cta = _Bases({"offset": offsets}, sizes, last_first)
            else:
                cta = _Bases.identity_nd("offset", box, last_first, rank)
            cta.dim_order = last_first  # boxes repeat along the last dim first
            cta.ensure_not_smaller(per_cta)
            return _combine_cta_cga(cta, self.cga_layout, shape)
        if rank < 2:
            raise ValueError("a swizzled nvmma_shared layout needs rank >= 2")
        rows = 1
        for s in box[:-1]:
            rows *= s
        collapsed = [rows, box[-1]]
        if self.transposed:
            collapsed.reverse()
        tile_cols = 8 * max(16, self.swizzle_byte_width) // self.element_bitwidth
        packing = 2 if self.fp4_padded else 1
        if collapsed[1] * packing < tile_cols or collapsed[0] < 8:
            raise ValueError(f"shape {list(shape)} is smaller than one {8}x{tile_cols // packing} nvmma core matrix")

        def packed(col):
            # fp4 padding: offsets 8..15 of every 16 are padding and alias 0..7.
            return col // 16 * 8 + col % 8 if self.fp4_padded else col

        offsets = [[0, packed(1 << k)] for k in range(_log2(tile_cols))]
        for k in range(3):
            r = 1 << k
            offsets.append([r, packed(self.vec * ((r // self.per_phase) % self.max_phase))])
        tile = _Bases({"offset": offsets}, [8, tile_cols // packing], [0, 1])
        tile.ensure_not_smaller(collapsed)
        # Reshape the 2-D [rows, cols] image row-major onto the (rotated if transposed) box.
        target = box[1:] + box[:1] if self.transposed else box
        flat_cols = collapsed[1]
        reshaped = []
        for r, c in tile.bases["offset"]:
            flat = r * flat_cols + c
            b = [0] * rank
            for d in range(rank - 1, -1, -1):
                b[d] = flat % target[d]
                flat //= target[d]
            reshaped.append(b)
        if self.transposed:
            # Move the last (contiguous) dim back to position 0.
            reshaped = [[b[-1]] + b[:-1] for b in reshaped]
        cta = _Bases({"offset": reshaped}, list(box), range(rank))
        cta.ensure_not_smaller(per_cta)
        return _combine_cta_cga(cta, self.cga_layout, shape)

    def __str__(self):
        extra = ", fp4Padded = true" if self.fp4_padded else ""
        if self.rank != 2 and not self.cga_layout:  # otherwise the CGA layout implies the rank
            extra += f", rank = {self.rank}"
        return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {self.swizzle_byte_width}, "
                f"transposed = {_fmt(self.transposed)}, elementBitWidth = {self.element_bitwidth}"
                f"{extra}{_cga_suffix(self.cga_layout)}}}>")


@dataclass(frozen=True)
class SharedLinearLayout(SharedLayout):
    """An explicit shared layout (`#ttg.shared_linear`): offset bit i holds element
    offset_bases[i].  `alignment` is the byte alignment of the allocation."""
    offset_bases: BasisList
    block_bases: BasisList = ()
    alignment: int = 16

    def __post_init__(self):
        offs = tuple(tuple(b) for b in self.offset_bases)
        if not offs or not offs[0]:
            raise ValueError("offset_bases must not be empty")
        rank = len(offs[0])
        _set(self, "offset_bases", _basis_list("offset_bases", offs, rank))
        _set(self, "block_bases", _basis_list("block_bases", self.block_bases, rank))
        if not _is_pow2(self.alignment):
            raise ValueError(f"alignment must be a positive power of two, got {self.alignment}")

    @property
    def rank(self) -> int:
        return len(self.offset_bases[0])

    @property
    def shape(self) -> tuple[int, ...]:
        by_dim = {"offset": self.offset_bases, "block": self.block_bases}
        return tuple(_size_of(by_dim, d) for d in range(self.rank))

    @property
    def cga_layout(self) -> BasisList:
        return self.block_bases

    def _build(self, shape):
        if tuple(shape) != self.shape:
            raise ValueError(f"shape {list(shape)} does not match the shared_linear layout's shape {list(self.shape)}")
        return {"offset": self.offset_bases, "block": self.block_bases}

    def __str__(self):
        block = f", block = {_fmt(self.block_bases)}" if self.block_bases else ""
        return f"#ttg.shared_linear<{{offset = {_fmt(self.offset_bases)}{block}}}, alignment = {self.alignment}>"


@dataclass(frozen=True)
class PaddedSharedLayout(SharedLayout):
    """A linear shared layout plus padding: after every `interval` elements,
    `padding` unused elements are inserted (summed over all pairs).

    `to_linear_layout` gives the linear component (offset -> element);
    `padded_offset(offset)` maps a linear offset to its padded position.
    """
    interval_padding_pairs: tuple[tuple[int, int], ...]
    offset_bases: BasisList
    cga_layout: BasisList
    shape: tuple[int, ...]

    def __post_init__(self):
        shape = _ints("shape", self.shape)
        if not shape:
            raise ValueError("shape must not be empty")
        pairs = tuple(tuple(_ints("interval_padding_pairs", p)) for p in self.interval_padding_pairs)
        if not pairs:
            raise ValueError("interval_padding_pairs must have at least one [interval, padding] pair")
        if any(len(p) != 2 for p in pairs):
            raise ValueError("interval_padding_pairs entries must be [interval, padding] pairs")
        intervals = [p[0] for p in pairs]
        if len(set(intervals)) != len(intervals):
            raise ValueError(f"intervals must be unique, got {intervals}")
        _check_pow2("intervals", intervals)
        _check_pow2("paddings", [p[1] for p in pairs])
        rank = len(shape)
        _set(self, "interval_padding_pairs", pairs)
        _set(self, "offset_bases", _basis_list("offset_bases", self.offset_bases, rank))
        _set(self, "cga_layout", _basis_list("cga_layout", self.cga_layout, rank))
        _set(self, "shape", shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def padded_offset(self, offset):
        """offset + sum(padding * (offset // interval)) (works on numpy arrays too)."""
        out = offset
        for interval, padding in self.interval_padding_pairs:
            out = out + (offset >> _log2(interval)) * padding
        return out

    def _build(self, shape):
        return {"offset": self.offset_bases, "block": self.cga_layout}

    def identity_order(self) -> tuple[int, ...] | None:
        """The dim order if the offsets are a plain (unpermuted) row-/column-major
        walk of `shape` on one CTA, which Triton prints as {order, shape}."""
        if self.cga_layout:
            return None
        order = []
        for b in self.offset_bases:
            nonzero = [d for d, v in enumerate(b) if v]
            if len(nonzero) == 1 and nonzero[0] not in order:
                order.append(nonzero[0])
        order += [d for d in range(self.rank - 1, -1, -1) if d not in order]
        identity = _Bases.identity_nd("offset", self.shape, order, self.rank).bases["offset"]
        return tuple(order) if [tuple(b) for b in identity] == list(self.offset_bases) else None

    def __str__(self):
        pairs = ", ".join(f"{i}:+{p}" for i, p in self.interval_padding_pairs)
        order = self.identity_order()
        if order is not None:
            body = f"order = {_fmt(order)}, shape = {_fmt(self.shape)}"
        else:
            body = f"offset = {_fmt(self.offset_bases)}, block = {_fmt(self.cga_layout)}"
        return f"#ttg.padded_shared<[{pairs}] {{{body}}}>"


# ----------------------------------------------------------------------------
# Conversion entry points (cached: layouts and shapes are immutable)
# ----------------------------------------------------------------------------

Layout = Union[DistributedLayout, SharedLayout]


@functools.lru_cache(maxsize=4096)
def _bases_cached(layout: Layout, shape: tuple[int, ...]) -> dict[str, BasisList]:
    shape = _check_shape(shape, layout.rank)
    return _finish(layout._build(shape), layout.IN_DIMS)


@functools.lru_cache(maxsize=4096)
def _to_linear_layout_cached(layout: Layout, shape: tuple[int, ...]):
    from ..core.layout import LinearLayout

    bases = _bases_cached(layout, shape)
    names = tuple(f"dim{d}" for d in range(len(shape)))
    return LinearLayout.from_bases(list(bases.items()), names, shape, require_surjective=False)


def to_linear_layout(layout: Layout, shape: Sequence[int]):
    """The `LinearLayout` Triton 3.9 builds for `layout` on a tensor of `shape`."""
    return layout.to_linear_layout(shape)


def verify_module_sizes(layout: DistributedLayout, num_warps: int, threads_per_warp: int = 32,
                        num_ctas: int = 1) -> None:
    """Check a distributed layout against a module's warp size, warp count and CTA count
    (Triton's module-level rule).  Raises ValueError naming the mismatch."""
    bases = layout.bases([1] * layout.rank)
    for dim, expected in (("lane", threads_per_warp), ("warp", num_warps), ("block", num_ctas)):
        got = 1 << len(bases[dim])
        if got != expected:
            raise ValueError(f"the layout has {got} {dim}s, but the module has {expected} "
                             f"({'threads per warp' if dim == 'lane' else dim + 's'})")


# ----------------------------------------------------------------------------
# Parsing Triton's attribute syntax
# ----------------------------------------------------------------------------

class _Parser:
    _TOKEN = re.compile(r"\s*(#ttg\.[a-z_]+<|[\[\]{}<>=,:+]|-?\d+|[A-Za-z_][A-Za-z0-9_]*)")

    def __init__(self, text: str):
        self.text = text
        self.tokens = []
        pos = 0
        while pos < len(text):
            m = self._TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip() == "":
                    break
                raise ValueError(f"cannot parse encoding: unexpected {text[pos:pos + 20]!r} at {pos} in {text!r}")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"cannot parse encoding: expected {expected!r}, got {tok!r} in {self.text!r}")
        self.i += 1
        return tok

    def value(self):
        tok = self.peek()
        if tok == "[":
            self.take("[")
            items = []
            while self.peek() != "]":
                items.append(self.value())
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
            return tuple(items)
        if tok is not None and tok.startswith("#ttg."):
            return self.attribute()
        if tok == "{":  # a nested dictionary (amd_wmma's ctaLayout)
            return self.dictionary()
        self.take()
        if tok in ("true", "false"):
            return tok == "true"
        try:
            return int(tok)
        except (TypeError, ValueError):
            raise ValueError(f"cannot parse encoding: unexpected {tok!r} in {self.text!r}") from None

    def dictionary(self) -> dict:
        self.take("{")
        out = {}
        while self.peek() != "}":
            key = self.take()
            self.take("=")
            out[key] = self.value()
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return out

    def attribute(self):
        head = self.take()
        name = head[len("#ttg."):-1]
        pairs = None
        if name == "padded_shared":
            pairs = []
            self.take("[")
            while self.peek() != "]":
                interval = int(self.take())
                self.take(":")
                self.take("+")
                pairs.append((interval, int(self.take())))
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
        fields = self.dictionary()
        while self.peek() == ",":  # trailing parameters outside the dictionary (alignment)
            self.take(",")
            key = self.take()
            self.take("=")
            fields[key] = self.value()
        self.take(">")
        return _from_fields(name, fields, pairs)


def _from_fields(name: str, f: dict, pairs) -> Layout:
    cga = f.get("CGALayout", ())
    try:
        if name == "blocked":
            return BlockedLayout(f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"], cga)
        if name == "slice":
            return SliceLayout(f["dim"], f["parent"])
        if name == "linear":
            by_dim = {"register": f["register"], "lane": f["lane"], "warp": f["warp"], "block": f["block"]}
            sample = next((b for bs in by_dim.values() for b in bs), None)
            if sample is None:
                raise ValueError("a #ttg.linear layout needs at least one basis to know its rank")
            shape = tuple(_size_of(by_dim, d) for d in range(len(sample)))
            return DistributedLinearLayout(f["register"], f["lane"], f["warp"], f["block"], shape)
        if name == "nvidia_mma":
            return NVMMADistributedLayout((f["versionMajor"], f["versionMinor"]), f["warpsPerCTA"],
                                          f["instrShape"], cga)
        if name == "dot_op":
            return DotOperandLayout(f["opIdx"], f["parent"], f.get("kWidth", 0))
        if name == "amd_mfma":
            return AMDMFMALayout(f["version"], f["instrShape"], f.get("isTransposed", False), f["warpsPerCTA"],
                                 f.get("elementBitWidth"), f.get("tilesPerWarp"), cga)
        if name == "amd_wmma":
            cta = f["ctaLayout"]
            if not isinstance(cta, dict):
                raise ValueError(f"#ttg.amd_wmma ctaLayout must be a dictionary, got {cta!r}")
            reg, warp = cta.get("register", ()), cta.get("warp", ())
            # Triton prints no `rank`; take it from any basis (Triton's own parser
            # assumes 2 and so cannot read back its rank-3 text).
            sample = next(iter(reg + warp + tuple(cga)), None)
            rank = f.get("rank", 2 if sample is None else len(sample))
            return AMDWMMALayout(f["version"], f.get("isTranspose", False), warp, reg,
                                 f.get("instrShape", (16, 16, 16)), cga, rank)
        if name == "swizzled_shared":
            return SwizzledSharedLayout(f["vec"], f["perPhase"], f["maxPhase"], f["order"], cga)
        if name == "nvmma_shared":
            rank = f.get("rank", len(cga[0]) if cga else 2)
            return NVMMASharedLayout(f["swizzlingByteWidth"], f["elementBitWidth"], rank,
                                     f.get("transposed", False), f.get("fp4Padded", False), cga)
        if name == "shared_linear":
            return SharedLinearLayout(f["offset"], f.get("block", ()), f.get("alignment", 16))
        if name == "padded_shared":
            if "order" in f:
                rank = len(f["order"])
                offsets = _Bases.identity_nd("offset", f["shape"], f["order"], rank).bases["offset"]
                return PaddedSharedLayout(pairs, offsets, (), f["shape"])
            by_dim = {"offset": f["offset"], "block": f.get("block", ())}
            shape = tuple(_size_of(by_dim, d) for d in range(len(f["offset"][0])))
            return PaddedSharedLayout(pairs, f["offset"], f.get("block", ()), shape)
    except KeyError as e:
        raise ValueError(f"#ttg.{name} is missing the field {e.args[0]}") from None
    raise ValueError(f"unknown encoding #ttg.{name}")


def parse_encoding(text: str) -> Layout:
    """Read an encoding written in Triton's attribute syntax, e.g.
    `#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>`.
    Keys may come in any order (MLIR sorts them); nested parents are inline."""
    parser = _Parser(text.strip())
    layout = parser.value()
    if parser.peek() is not None:
        raise ValueError(f"cannot parse encoding: trailing {parser.peek()!r} in {text!r}")
    if not isinstance(layout, (DistributedLayout, SharedLayout)):
        raise ValueError(f"not an encoding: {text!r}")
    return layout


# ----------------------------------------------------------------------------
# Views (Triton's get_layout_view text)
# ----------------------------------------------------------------------------

def _view(layout: Layout, shape: Sequence[int], use_hw: bool) -> str:
    ll = to_linear_layout(layout, shape)
    if isinstance(layout, SharedLayout):
        return ll.get_shared_view(use_hw)
    return ll.get_distributed_view(use_hw)


def format_tensor_view(layout: Layout, shape: Sequence[int]) -> str:
    """For every tensor element, which thread:register (or shared offset) holds it;
    identical to Triton's `layout.format_tensor_view(shape)`."""
    return _view(layout, shape, False)


def format_hardware_view(layout: Layout, shape: Sequence[int]) -> str:
    """For every warp, lane and register (or offset), which element it holds;
    identical to Triton's `layout.format_hardware_view(shape)`."""
    return _view(layout, shape, True)


# ----------------------------------------------------------------------------
# Interoperability with Gluon
# ----------------------------------------------------------------------------

def _lists(bases) -> list[list[int]]:
    return [list(b) for b in bases]


def to_gluon(layout):
    """The Gluon (``triton.experimental.gluon``) object for one of our encodings.

    Gluon's classes have the same names and fields, so a layout built here can be handed to a
    Gluon kernel; Triton is imported only when this is called.

    Requires: Triton 3.9 is installed; ``layout`` is not a :class:`PaddedSharedLayout`.
    Postcondition: Gluon converts the result to the same linear layout as :func:`to_linear_layout`.
    """
    try:
        import triton.experimental.gluon.language._layouts as G
        import triton.experimental.gluon.language.amd._layouts as GA
    except ImportError as error:
        raise ValueError(f"to_gluon needs Triton 3.9 (pip install triton==3.9.0): {error}") from None

    if isinstance(layout, BlockedLayout):
        return G.BlockedLayout(list(layout.size_per_thread), list(layout.threads_per_warp),
                               list(layout.warps_per_cta), list(layout.order), _lists(layout.cga_layout))
    if isinstance(layout, SliceLayout):
        return G.SliceLayout(layout.dim, to_gluon(layout.parent))
    if isinstance(layout, DistributedLinearLayout):
        return G.DistributedLinearLayout(_lists(layout.reg_bases), _lists(layout.lane_bases),
                                         _lists(layout.warp_bases), _lists(layout.block_bases), list(layout.shape))
    if isinstance(layout, NVMMADistributedLayout):
        return G.NVMMADistributedLayout(list(layout.version), list(layout.warps_per_cta), list(layout.instr_shape),
                                        _lists(layout.cga_layout))
    if isinstance(layout, DotOperandLayout):
        return G.DotOperandLayout(layout.operand_index, to_gluon(layout.parent), layout.k_width)
    if isinstance(layout, AMDMFMALayout):
        return GA.AMDMFMALayout(layout.version, list(layout.instr_shape), layout.transposed,
                                list(layout.warps_per_cta), layout.element_bitwidth, list(layout.tiles_per_warp),
                                _lists(layout.cga_layout))
    if isinstance(layout, AMDWMMALayout):
        return GA.AMDWMMALayout(layout.version, layout.transposed, _lists(layout.warp_bases), _lists(layout.reg_bases),
                                list(layout.instr_shape), _lists(layout.cga_layout), layout.rank)
    if isinstance(layout, SwizzledSharedLayout):
        return G.SwizzledSharedLayout(layout.vec, layout.per_phase, layout.max_phase, list(layout.order),
                                      _lists(layout.cga_layout))
    if isinstance(layout, NVMMASharedLayout):
        return G.NVMMASharedLayout(layout.swizzle_byte_width, layout.element_bitwidth, layout.rank,
                                   layout.transposed, layout.fp4_padded, _lists(layout.cga_layout))
    if isinstance(layout, SharedLinearLayout):
        return G.SharedLinearLayout(_lists(layout.offset_bases), _lists(layout.block_bases), layout.alignment)
    raise ValueError(f"to_gluon: {type(layout).__name__} has no Gluon counterpart")
