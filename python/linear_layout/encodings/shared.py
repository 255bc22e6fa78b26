"""Shared-memory layouts: ``#ttg.swizzled_shared``, ``#ttg.amd_rotating_shared``, ``#ttg.nvmma_shared``,
``#ttg.shared_linear`` and ``#ttg.padded_shared``.  They map (offset, block) to tensor coordinates.

Built as Triton 3.9's ``swizzledSharedToLinearLayout``, ``sharedToLinearLayoutAMDRotating`` and
``nvmmaSharedToLinearLayout``: the swizzled core matrix as explicit offset bases, the rest from
``identity_1d`` / ``identity_standard_nd`` and ``*``, fitted with ``ensure_layout_not_smaller_than`` and the CGA layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.layout import LinearLayout, ensure_layout_not_smaller_than, identity_standard_nd, product_1d
from .base import (
    BasisList,
    EncodingError,
    SharedLayout,
    basis_list,
    box_sizes,
    cga_suffix,
    check_order,
    check_pow2,
    check_shape,
    combine_cta_cga,
    dim_names,
    flag,
    fmt,
    integer,
    ints,
    is_pow2,
    listed_dims,
    log2,
    shape_per_cta,
    store_fields,
)

__all__ = [
    "AMDRotatingSharedLayout",
    "NVMMASharedLayout",
    "PaddedSharedLayout",
    "SharedLinearLayout",
    "SwizzledSharedLayout",
]


@dataclass(frozen=True)
class _RowSwizzledLayout(SharedLayout):
    """Common part of the row-swizzled families (``swizzled_shared``, ``amd_rotating_shared``): a
    row-major tile (order[0] fastest) whose row r XOR-permutes groups of ``vec`` columns by
    :meth:`row_phase` (r); the families differ only in that phase.

    Formula: offset bases columns (0, 2^i); rows (2^i, (vec * row_phase(2^i)) % num_cols);
    then ``identity_1d`` over the further dims in order[2:], fitted with the CGA layout.
    Requires: vec, per_phase, max_phase positive; ``order`` a permutation.
    """

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga_layout: BasisList = ()

    #: The attribute name in Triton's syntax (``#ttg.<MNEMONIC><{...}>``).
    MNEMONIC = ""

    def __post_init__(self) -> None:
        values = {n: integer(n, getattr(self, n)) for n in ("vec", "per_phase", "max_phase")}
        for n, v in values.items():
            if v < 1:
                raise EncodingError(f"{n} must be a positive integer, got {v!r}")
        order = ints("order", self.order)
        check_order(order, len(order))
        store_fields(self, len(order), order=order, **values)

    @property
    def rank(self) -> int:
        return len(self.order)

    def row_phase(self, row: int) -> int:
        """The group of ``vec`` columns row ``row`` XORs its column groups with (before ``% num_cols``)."""
        row = integer("row", row)
        return (row // self.per_phase) % self.max_phase

    def tile_shape(self, shape: tuple[int, ...]) -> Sequence[int]:
        """The shape the swizzled tile is built on before the CGA layout fits it: one CTA's share."""
        return shape_per_cta(ints("shape", shape), self.cga_layout)

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        per_cta = self.tile_shape(shape)
        names = dim_names(self.rank)
        if self.rank == 1:
            return combine_cta_cga(LinearLayout.identity_1d(per_cta[0], "offset", "dim0"), self.cga_layout, shape)
        col, row = self.order[0], self.order[1]
        num_cols, num_rows = per_cta[col], per_cta[row]
        vec = self.vec
        offsets = [(0, 1 << k) for k in range(log2(num_cols))]  # (row, col) coordinates
        offsets += [(1 << k, vec * self.row_phase(1 << k) % num_cols) for k in range(log2(num_rows))]
        # The shape fit never grows the tile (it covers the CTA's share, or more), so the order its out
        # dims are listed in changes nothing: standard order (Triton lists row, col) spares a transpose.
        if col < row:
            offsets = [(c, r) for r, c in offsets]
        dims = sorted([(row, num_rows), (col, num_cols)])
        cta = LinearLayout.from_bases(  # surjective (triangular), as Triton's constructor requires
            [("offset", offsets), ("block", ())], [names[d] for d, _ in dims], [size for _, size in dims]
        )
        for d in self.order[2:]:
            cta = cta * LinearLayout.identity_1d(per_cta[d], "offset", names[d])
        return combine_cta_cga(cta, self.cga_layout, shape)

    def __str__(self) -> str:
        return (
            f"#ttg.{self.MNEMONIC}<{{vec = {self.vec}, perPhase = {self.per_phase}, "
            f"maxPhase = {self.max_phase}, order = {fmt(self.order)}{cga_suffix(self.cga_layout)}}}>"
        )


@dataclass(frozen=True)
class SwizzledSharedLayout(_RowSwizzledLayout):
    """``#ttg.swizzled_shared``: element (r, c) lives at column
    ((c // vec) ^ ((r // per_phase) % max_phase)) * vec + c % vec (Triton's ``swizzledSharedToLinearLayout``).

    >>> SwizzledSharedLayout(1, 1, 4, (1, 0)).to_linear_layout((4, 4)).bases[0][1]
    ((0, 1), (0, 2), (1, 1), (2, 2))
    """

    MNEMONIC = "swizzled_shared"


@dataclass(frozen=True)
class AMDRotatingSharedLayout(_RowSwizzledLayout):
    """``#ttg.amd_rotating_shared`` (Triton's ``sharedToLinearLayoutAMDRotating``): the swizzled
    layout whose phase also rotates from one block of ``per_phase * max_phase`` rows to the next,
    so that rows ``max_phase * per_phase`` apart do not share a phase:
    row_phase(r) = ((r // per_phase) % max_phase) ^ ((r // (per_phase * max_phase)) % max_phase),
    the tile built on the whole shape, then cut to one CTA by the CGA layout.

    >>> AMDRotatingSharedLayout(1, 1, 2, (1, 0)).to_linear_layout((4, 4)).bases[0][1]
    ((0, 1), (0, 2), (1, 1), (2, 1))
    """

    MNEMONIC = "amd_rotating_shared"

    def tile_shape(self, shape: tuple[int, ...]) -> Sequence[int]:
        """Triton 3.9 builds this family's rank >= 2 tile on the whole shape (not one CTA's share, as
        for ``swizzled_shared``); ``combine_cta_cga`` then cuts it down to one CTA.  Rank 1: one CTA's share."""
        shape = ints("shape", shape)
        return shape if self.rank > 1 else shape_per_cta(shape, self.cga_layout)

    def row_phase(self, row: int) -> int:
        row = integer("row", row)
        phase = (row // self.per_phase) % self.max_phase
        block = (row // self.max_phase // self.per_phase) % self.max_phase
        return phase ^ block


@dataclass(frozen=True)
class NVMMASharedLayout(SharedLayout):
    """Shared layout read by wgmma/tcgen05 and written by TMA: 8-row core matrices
    whose rows are swizzled in 16-byte units over ``swizzle_byte_width`` bytes.

    Formula: core matrix of 8 rows x 8*max(16, swizzle)/bitwidth columns; row r's bases shift
    by vec * ((r // per_phase) % max_phase) columns with vec = 128/bitwidth,
    per_phase = 128/swizzle, max_phase = swizzle/16.  Core matrices tile a TMA box
    (each dim at most 256, the contiguous dim exactly one swizzle width), boxes
    tile the CTA's shape (``ensure_layout_not_smaller_than``).  ``transposed`` makes dim 0
    the contiguous one.
    Requires: swizzle in {0, 32, 64, 128}, bitwidth in {8, 16, 32, 64};
    fp4_padded only with 128-byte swizzle and 8-bit elements.
    """

    swizzle_byte_width: int
    element_bitwidth: int
    rank: int = 2
    transposed: bool = False
    fp4_padded: bool = False
    cga_layout: BasisList = ()

    def __post_init__(self) -> None:
        swizzle = integer("swizzle_byte_width", self.swizzle_byte_width)
        bitwidth = integer("element_bitwidth", self.element_bitwidth)
        rank = integer("rank", self.rank)
        if swizzle not in (0, 32, 64, 128):
            raise EncodingError(f"swizzle_byte_width must be 0, 32, 64 or 128, got {swizzle}")
        if bitwidth not in (8, 16, 32, 64):
            raise EncodingError(f"element_bitwidth must be 8, 16, 32 or 64, got {bitwidth}")
        if rank < 1:
            raise EncodingError(f"rank must be a positive integer, got {rank!r}")
        fp4 = flag("fp4_padded", self.fp4_padded)
        if fp4 and (swizzle != 128 or bitwidth != 8):
            raise EncodingError("fp4_padded requires swizzle_byte_width 128 and element_bitwidth 8")
        store_fields(self, rank, swizzle_byte_width=swizzle, element_bitwidth=bitwidth, rank=rank, fp4_padded=fp4)

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
                raise EncodingError(
                    f"shape {list(per_cta)} per CTA is narrower along dim {contig} than one "
                    f"{self.swizzle_byte_width}-byte swizzle ({width} elements)"
                )
            box[contig] = width
        if self.fp4_padded:
            box[contig] //= 2
        return box

    def _unswizzled(self, box: list[int]) -> LinearLayout:
        """No swizzle: the box walked row-major (last dim fastest).  Transposed, Triton 3.9 walks
        the box rotated left (dim 0 moved last) and renames out dim i to i - 1, so dim j gets the
        extent of dim j + 2 (mod rank): a column-major walk at rank 2; above it, Triton's layout
        reproduced as is (the shape fit then broadcasts or wraps short dims)."""
        rank = len(box)
        names = dim_names(rank)
        last_first = list(range(rank - 1, -1, -1))
        if not self.transposed:
            return identity_standard_nd("offset", box, last_first)
        rotated = box[1:] + box[:1]
        walk = [(rotated[i], "offset", names[(i - 1) % rank]) for i in last_first]
        return product_1d(listed_dims("offset", last_first, rank) + walk)  # out dims listed last first

    def _swizzled(self, box: list[int], shape: Sequence[int]) -> LinearLayout:
        """The swizzled core matrix over the 2-D [rows, cols] image of the box, repeated to fill it,
        then reshaped row-major onto the box (rotated back when transposed)."""
        rank = len(box)
        names = dim_names(rank)
        if rank < 2:
            raise EncodingError("a swizzled nvmma_shared layout needs rank >= 2")
        rows = 1
        for s in box[:-1]:
            rows *= s
        collapsed = [box[-1], rows] if self.transposed else [rows, box[-1]]
        tile_cols = 8 * max(16, self.swizzle_byte_width) // self.element_bitwidth
        packing = 2 if self.fp4_padded else 1
        if collapsed[1] * packing < tile_cols or collapsed[0] < 8:
            raise EncodingError(f"shape {list(shape)} is smaller than one 8x{tile_cols // packing} nvmma core matrix")

        # At rank 2 the reshape below only names the rows and columns (dim1 and dim0 when transposed):
        # the tile gets those names at once, its out dims listed rows first as the fit needs them.
        row, col = ("dim1", "dim0") if rank == 2 and self.transposed else ("dim0", "dim1")
        tile = LinearLayout.from_bases(  # surjective (triangular), as Triton's constructor requires
            [("offset", self._core_offsets(tile_cols)), ("block", ())], [row, col], [8, tile_cols // packing]
        )
        tile = ensure_layout_not_smaller_than(tile, {row: collapsed[0], col: collapsed[1]})
        if rank == 2:
            return tile
        # flat = row * cols + col, split row-major over the (rotated if transposed) box; the
        # rotation moves the last (contiguous) dim back to position 0.
        target = box[1:] + box[:1] if self.transposed else box
        final = [names[(j + 1) % rank] if self.transposed else names[j] for j in range(rank)]
        return tile.transpose_outs(["dim1", "dim0"]).reshape_outs(
            [(final[j], target[j]) for j in reversed(range(rank))]
        )

    def _core_offsets(self, tile_cols: int) -> list[tuple[int, int]]:
        """The (row, col) offset bases of one 8-row core matrix: the columns, then rows 1, 2 and 4,
        whose ``vec``-column groups are XORed with ``(row // per_phase) % max_phase``."""
        vec, per_phase, max_phase = self.vec, self.per_phase, self.max_phase
        offsets = [(0, 1 << k) for k in range(log2(tile_cols))]
        offsets += (
            (1, vec * (1 // per_phase % max_phase)),
            (2, vec * (2 // per_phase % max_phase)),
            (4, vec * (4 // per_phase % max_phase)),
        )
        if self.fp4_padded:  # offsets 8..15 of every 16 are padding and alias 0..7
            return [(r, c // 16 * 8 + c % 8) for r, c in offsets]
        return offsets

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        per_cta = shape_per_cta(shape, self.cga_layout)
        box = self._tma_block_shape(per_cta)
        cta = self._swizzled(box, shape) if self.swizzle_byte_width else self._unswizzled(box)
        if box != per_cta:  # boxes tile the CTA's shape (the swizzled ones dim 0 first)
            names = dim_names(len(shape))
            if self.swizzle_byte_width and sum(b < p for b, p in zip(box, per_cta)) > 1:
                cta = cta.transpose_outs(names)  # the growth order matters only when several dims grow
            cta = ensure_layout_not_smaller_than(cta, dict(zip(names, per_cta)))
        return combine_cta_cga(cta, self.cga_layout, shape)

    def __str__(self) -> str:
        extra = ", fp4Padded = true" if self.fp4_padded else ""
        if self.rank != 2 and not self.cga_layout:  # otherwise the CGA layout implies the rank
            extra += f", rank = {self.rank}"
        return (
            f"#ttg.nvmma_shared<{{swizzlingByteWidth = {self.swizzle_byte_width}, "
            f"transposed = {fmt(self.transposed)}, elementBitWidth = {self.element_bitwidth}"
            f"{extra}{cga_suffix(self.cga_layout)}}}>"
        )


@dataclass(frozen=True)
class SharedLinearLayout(SharedLayout):
    """An explicit shared layout (``#ttg.shared_linear``): offset bit i holds element
    offset_bases[i].  ``alignment`` is the byte alignment of the allocation.

    Requires: at least one offset basis; bases of equal length; ``alignment`` a power of two.
    Postcondition: ``to_linear_layout(self.shape)`` is the layout itself.
    """

    offset_bases: BasisList
    block_bases: BasisList = ()
    alignment: int = 16
    _layout: LinearLayout = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        offs = basis_list("offset_bases", self.offset_bases)
        if not offs or not offs[0]:
            raise EncodingError("offset_bases must not be empty")
        rank = len(offs[0])
        offs = basis_list("offset_bases", offs, rank)
        block = basis_list("block_bases", self.block_bases, rank)
        alignment = integer("alignment", self.alignment)
        if not is_pow2(alignment):
            raise EncodingError(f"alignment must be a positive power of two, got {alignment}")
        sizes = box_sizes(offs + block, rank)
        check_shape(sizes, rank)
        layout = LinearLayout.from_bases(
            [("offset", offs), ("block", block)], dim_names(rank), sizes, require_surjective=False
        )
        store_fields(self, rank, offset_bases=offs, block_bases=block, alignment=alignment, _layout=layout)

    @property
    def rank(self) -> int:
        return len(self.offset_bases[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(size for _, size in self._layout.out_dims)

    @property
    def cga_layout(self) -> BasisList:
        return self.block_bases

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        if shape != self.shape:
            raise EncodingError(
                f"shape {list(shape)} does not match the shared_linear layout's shape {list(self.shape)}"
            )
        return self._layout

    def __str__(self) -> str:
        block = f", block = {fmt(self.block_bases)}" if self.block_bases else ""
        return f"#ttg.shared_linear<{{offset = {fmt(self.offset_bases)}{block}}}, alignment = {self.alignment}>"


def padded_identity_offsets(shape: Sequence[int], order: Sequence[int]) -> BasisList:
    """The offset bases of ``#ttg.padded_shared<[...] {order, shape}>``: ``identity_standard_nd`` over
    ``shape`` in ``order``, in standard dims.  Requires ``order`` a permutation of the shape's dims."""
    shape = check_shape(shape, len(shape))
    order = ints("order", order)
    check_order(order, len(shape), "padded_shared order")
    layout = identity_standard_nd("offset", shape, order).transpose_outs(dim_names(len(shape)))
    return layout.bases[0][1]


def _linear_component(offsets: BasisList, cga: BasisList, shape: tuple[int, ...]) -> LinearLayout:
    """The (offset, block) -> element layout of ``#ttg.padded_shared``, checked inside and onto ``shape``."""
    for name, bases in (("offset", offsets), ("block", cga)):
        for b in bases:
            if any(v >= s for v, s in zip(b, shape)):
                raise EncodingError(f"padded_shared {name} basis {list(b)} is out of range for shape {list(shape)}")
    layout = LinearLayout.from_bases(
        [("offset", offsets), ("block", cga)], dim_names(len(shape)), shape, require_surjective=False
    )
    if not layout.is_surjective():
        raise EncodingError(
            f"padded_shared bases must be surjective onto the shape {list(shape)} (every element "
            f"stored), but they reach only 2**{layout.rank()} of its 2**"
            f"{layout.get_total_out_dim_size_log2()} elements"
        )
    return layout


@dataclass(frozen=True)
class PaddedSharedLayout(SharedLayout):
    """A linear shared layout plus padding: after every ``interval`` elements,
    ``padding`` unused elements are inserted (summed over all pairs).

    ``to_linear_layout`` gives the linear component (offset -> element);
    ``padded_offset(offset)`` maps a linear offset to its padded position.
    Requires: unique power-of-two intervals, power-of-two paddings, bases inside ``shape``.
    """

    interval_padding_pairs: tuple[tuple[int, int], ...]
    offset_bases: BasisList
    cga_layout: BasisList
    shape: tuple[int, ...]
    _layout: LinearLayout = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        shape = ints("shape", self.shape)
        if not shape:
            raise EncodingError("shape must not be empty")
        shape = check_shape(shape, len(shape))
        pairs = tuple(
            ints("interval_padding_pairs", p) for p in basis_list("interval_padding_pairs", self.interval_padding_pairs)
        )
        if not pairs:
            raise EncodingError("interval_padding_pairs must have at least one [interval, padding] pair")
        if any(len(p) != 2 for p in pairs):
            raise EncodingError("interval_padding_pairs entries must be [interval, padding] pairs")
        intervals = [p[0] for p in pairs]
        if len(set(intervals)) != len(intervals):
            raise EncodingError(f"intervals must be unique, got {intervals}")
        check_pow2("intervals", intervals)
        check_pow2("paddings", [p[1] for p in pairs])
        rank = len(shape)
        offsets = basis_list("offset_bases", self.offset_bases, rank)
        cga = basis_list("cga_layout", self.cga_layout, rank)
        layout = _linear_component(offsets, cga, shape)
        store_fields(
            self, rank, interval_padding_pairs=pairs, offset_bases=offsets, cga_layout=cga, shape=shape, _layout=layout
        )

    @property
    def rank(self) -> int:
        return len(self.shape)

    def padded_offset(self, offset: Any) -> Any:
        """offset + sum(padding * (offset // interval)) (works on numpy arrays too)."""
        out = offset
        for interval, padding in self.interval_padding_pairs:
            out = out + (offset >> log2(interval)) * padding
        return out

    def _build(self, shape: tuple[int, ...]) -> LinearLayout:
        if shape != self.shape:
            raise EncodingError(
                f"shape {list(shape)} does not match the padded_shared layout's shape {list(self.shape)}"
            )
        return self._layout

    def identity_order(self) -> tuple[int, ...] | None:
        """The dim order if the offsets are a plain (unpermuted) row-/column-major
        walk of ``shape`` on one CTA, which Triton prints as {order, shape}."""
        if self.cga_layout:
            return None
        order: list[int] = []
        for b in self.offset_bases:
            nonzero = [d for d, v in enumerate(b) if v]
            if len(nonzero) == 1 and nonzero[0] not in order:
                order.append(nonzero[0])
        order += [d for d in range(self.rank - 1, -1, -1) if d not in order]
        return tuple(order) if padded_identity_offsets(self.shape, order) == self.offset_bases else None

    def __str__(self) -> str:
        pairs = ", ".join(f"{i}:+{p}" for i, p in self.interval_padding_pairs)
        order = self.identity_order()
        if order is not None:
            body = f"order = {fmt(order)}, shape = {fmt(self.shape)}"
        else:
            body = f"offset = {fmt(self.offset_bases)}, block = {fmt(self.cga_layout)}"
        return f"#ttg.padded_shared<[{pairs}] {{{body}}}>"
