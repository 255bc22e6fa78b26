"""Realising a `convert_layout` plan in registers, shuffles or shared memory (pure algebra, no `mlir`).

The strategy has ONE source of truth: `linear_layout.conversion.plan_conversion` (Triton's
decision tree: no-op, register permutation, warp shuffles, shared memory; see
docs/conversions.md). This module only turns its answer into what the `ll-to-simt` emitter needs:

- **shared**: the `SharedPlan` of `conversion.plan_conversion` as is (store/load instructions,
  thread offsets, predicate, copies, repetitions);
- **noop / register / shuffle**: the *in-warp rounds* below, one per destination register.
  When the rounds cannot realise a shuffle plan (a broadcast source lane mixed with a register
  transposition, about 3% of random in-warp cases), the conversion is re-planned with
  `plan_conversion(..., in_warp=False)`, i.e. through shared memory, and the plan's `reason`
  says so.

In-warp rounds
--------------
The *gather map* `G = dst'.invert_and_compose(src')` (`src'`, `dst'`: zero register bases
removed) gives, for every destination hardware location, a source location that holds its
element: `src'(G(h)) = dst'(h)`. Its warp and block outputs are replaced by the destination's
own warp and block (valid exactly when the source warp/block coordinate does not matter, e.g.
warps that broadcast); the result is checked exhaustively. Restricted to registers `i` and lanes
`l` it is a block GF(2) matrix

    src register = Gr(i) ^ Grl(l)          src lane = Glr(i) ^ Gl(l)

that decomposes the conversion (as Triton's `getWarpLayoutConvertDecomposition` does) into a
register permutation `Gr`, a lane permutation `Gl` and the *mixed* parts `Grl`, `Glr` that move
register bits into lane bits and back. For each destination register `i` one round runs:

- the source lane is `Gl(l) ^ Glr(i)`; when that is the thread's own lane for every lane (`Gl`
  is the identity and `Glr(i) = 0`) no shuffle is needed, else one `gpu.shuffle` (`xor` mode
  with mask `Glr(i)` when `Gl` is the identity, `idx` mode otherwise);
- the providing lane `p` must offer register `Gr(i) ^ Grl(l)` of the lane `l` that reads from
  it. With `H` the linear map with `H o Gl = Grl` (it exists when `ker Gl` lies in `ker Grl`),
  that register is `c_i ^ H(p)` with `c_i = Gr(i) ^ H(Glr(i))`: a constant register when
  `H = 0`, else a `select` tree over `2**m` registers, `m = rank(H)`.

Element types wider than 32 bits are not shuffled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import shared as _conversion
from ..core.layout import LinearLayout
from .shared import minimal_conversion

__all__ = ["ConversionPlan", "Round", "plan_conversion", "minimal_conversion", "register_maps"]

HW_DIMS = ("register", "lane", "warp", "block")


@dataclass(frozen=True)
class Round:
    """How one reduced destination register is produced inside a warp.

    `source_lane`: LinearLayout lane -> "lane" (`Gl`), xored with `lane_xor` (`Glr(i)`), or
    None when every thread reads its own lane. `register_base` (`c_i`) and `register_select`
    (`H`, a LinearLayout "lane" -> "register", or None when zero): the register a thread
    provides (or reads itself, when there is no shuffle) is `register_base ^ H(lane)`."""

    source_lane: LinearLayout | None
    lane_xor: int
    xor_mode: bool
    register_base: int
    register_select: LinearLayout | None


@dataclass
class ConversionPlan:
    kind: str  # "noop", "register", "shuffle" or "shared"
    src: LinearLayout  # reduced (zero register bases removed)
    dst: LinearLayout
    conversion: LinearLayout  # the minimal conversion layout
    reason: str = ""
    rounds: list[Round] = field(default_factory=list)
    shuffles: int = 0
    selects: int = 0
    select_basis: list[int] = field(default_factory=list)  # image basis of H (source registers)
    reader_basis: list[int] = field(default_factory=list)  # image basis of A (destination registers)
    reader_select: LinearLayout | None = None  # lane -> coordinates of A(lane) in reader_basis
    strategy: _conversion.ConversionPlan | None = None  # the decision (conversion.plan_conversion)
    shared: _conversion.SharedPlan | None = None  # kind == "shared": what to emit

    def summary(self) -> str:
        if self.shared is not None:
            return self.strategy.summary()
        if self.kind == "shuffle":
            return f"shuffle: {self.shuffles} shuffles, {self.selects} selects per thread"
        return f"{self.kind} ({self.reason})" if self.reason else self.kind


def _with_dims(layout: LinearLayout) -> LinearLayout:
    """`layout` with every hardware input dimension present, in the standard order."""
    bases = dict(layout.bases)
    names = [n for n in layout.get_in_dim_names() if n not in HW_DIMS]
    if names:
        raise ValueError(f"input dimensions {names} are not hardware dimensions (register, lane, warp, block)")
    return LinearLayout.from_bases([(d, bases.get(d, ())) for d in HW_DIMS], list(layout.get_out_dim_names()),
                                   [s for _, s in layout.out_dims], require_surjective=False)


def register_maps(layout: LinearLayout) -> tuple[list[int], list[int]]:
    """(full index of each reduced register, reduced index of each full register).

    Reduced register `j` is the full register whose bits at the non-zero basis positions spell
    `j` and whose bits at zero-basis (broadcast) positions are 0."""
    bases = dict(layout.bases).get("register", ())
    kept = [k for k, b in enumerate(bases) if any(b)]
    full_of = []
    for j in range(1 << len(kept)):
        full_of.append(sum(1 << k for t, k in enumerate(kept) if j >> t & 1))
    reduced_of = []
    for i in range(1 << len(bases)):
        reduced_of.append(sum(1 << t for t, k in enumerate(kept) if i >> k & 1))
    return full_of, reduced_of


def _columns(layout: LinearLayout, in_dim: str, out_dim: str) -> list[int]:
    return [b[0] for b in dict(layout.sublayout([in_dim], [out_dim]).bases)[in_dim]]


def _apply_columns(columns: list[int], x: int) -> int:
    out = 0
    for k, column in enumerate(columns):
        if x >> k & 1:
            out ^= column
    return out


def _solve_h(gl: list[int], grl: list[int], lane_bits: int) -> list[int] | None:
    """Columns of H (one per lane bit) with H(Gl(x)) = Grl(x), or None if none exists."""
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


def _rank(columns: list[int]) -> list[int]:
    basis: list[int] = []
    for c in columns:
        for b in basis:
            c = min(c, c ^ b)
        if c:
            basis.append(c)
            basis.sort(reverse=True)
    return basis


def _lane_layout(columns: list[int], out_name: str, out_size: int) -> LinearLayout:
    return LinearLayout.from_bases([("lane", [[c] for c in columns])], [out_name], [out_size],
                                   require_surjective=False)


def _in_warp_plan(src: LinearLayout, dst: LinearLayout, element_bits: int, plan: ConversionPlan) -> bool:
    gather = dst.invert_and_compose(src)
    # Replace the source warp/block by the destination's own.
    bases = []
    for name in HW_DIMS:
        vectors = []
        for k, basis in enumerate(dict(gather.bases)[name]):
            basis = list(basis)
            for out in ("warp", "block"):
                index = gather.get_out_dim_index(out)
                basis[index] = (1 << k) if name == out else 0
            vectors.append(basis)
        bases.append((name, vectors))
    gather = LinearLayout.from_bases(bases, list(gather.get_out_dim_names()),
                                     [s for _, s in gather.out_dims], require_surjective=False)
    if not gather.sublayout_is_zero(["warp", "block"], ["register", "lane"]):
        plan.reason = "data moves between warps"
        return False
    # Exhaustive check that the source really holds every destination element there.
    if not np.array_equal(_tab(src, gather), _tab_plain(dst)):
        plan.reason = "no in-warp source for some destination element"
        return False
    lane_bits = dst.get_in_dim_size_log2("lane")
    register_bits = dst.get_in_dim_size_log2("register")
    gr = _columns(gather, "register", "register")
    glr = _columns(gather, "register", "lane")
    grl = _columns(gather, "lane", "register")
    gl = _columns(gather, "lane", "lane")
    # Reader-side re-indexing A (lane -> destination register): in round k, lane l fills
    # destination register k ^ A(l). It makes the lane map Gl' = Gl + Glr A invertible.
    a_columns = _choose_reindexing(gl, glr, lane_bits, register_bits)
    if a_columns is None:
        plan.reason = "lanes that read from one lane need different registers of it"
        return False
    gl2 = [gl[b] ^ _apply_columns(glr, a_columns[b]) for b in range(lane_bits)]
    grl2 = [grl[b] ^ _apply_columns(gr, a_columns[b]) for b in range(lane_bits)]
    identity_lanes = gl2 == [1 << k for k in range(lane_bits)]
    h = _solve_h(gl2, grl2, lane_bits)
    if h is None:
        plan.reason = "lanes that read from one lane need different registers of it"
        return False
    h_basis, h_select = _select_layout(h)
    a_basis, a_select = _select_layout(a_columns)
    selects_per_element = ((1 << len(h_basis)) - 1) + ((1 << len(a_basis)) - 1)
    num_registers = dst.get_in_dim_size("register")
    rounds = []
    for k in range(num_registers):
        lane_xor = _apply_columns(glr, k)
        local = identity_lanes and lane_xor == 0
        base = _apply_columns(gr, k) ^ _apply_columns(h, lane_xor)
        rounds.append(Round(None if local else _lane_layout(gl2, "lane", 1 << lane_bits), lane_xor,
                            identity_lanes, base, h_select))
    if element_bits > 32 and any(r.source_lane is not None for r in rounds):
        plan.reason = f"{element_bits}-bit elements cannot be shuffled"
        return False
    plan.rounds = rounds
    plan.select_basis = h_basis
    plan.reader_basis = a_basis
    plan.reader_select = a_select
    plan.shuffles = sum(1 for r in rounds if r.source_lane is not None)
    plan.selects = num_registers * selects_per_element
    if not _check_rounds(src, dst, plan, gl2, h, a_columns):
        plan.reason = "internal error: the in-warp plan does not reproduce the destination"
        return False
    return True


def _choose_reindexing(gl: list[int], glr: list[int], lane_bits: int, register_bits: int) -> list[int] | None:
    """A (one destination register per lane bit) with Gl + Glr A invertible; A = 0 where possible."""
    span: list[int] = []
    columns = []
    for b in range(lane_bits):
        chosen = None
        for x in range(1 << register_bits):
            value = gl[b] ^ _apply_columns(glr, x)
            reduced = value
            for v in span:
                reduced = min(reduced, reduced ^ v)
            if reduced:
                chosen = x
                span.append(reduced)
                span.sort(reverse=True)
                break
        if chosen is None:
            # Gl + Glr A cannot gain rank at this bit: several readers share a source lane
            # (a broadcast destination); shuffle idx handles that, so keep A = 0 here.
            chosen = 0
        columns.append(chosen)
    return columns


def _select_layout(columns: list[int]) -> tuple[list[int], LinearLayout | None]:
    """(image basis, lane -> coordinates in that basis) of a linear map given by its columns."""
    basis = _rank(columns)
    if not basis:
        return [], None
    coordinates = []
    for column in columns:
        t, value = 0, column
        for k, b in enumerate(basis):
            if value ^ b < value:
                value ^= b
                t |= 1 << k
        coordinates.append(t)
    return basis, _lane_layout(coordinates, "register", 1 << len(basis))


def _span_value(basis: list[int], t: int) -> int:
    return _apply_columns(basis, t)


def _check_rounds(src, dst, plan, gl2, h, a_columns) -> bool:
    """Simulate the rounds on every (register, lane, warp, block) of dst and compare elements."""
    lanes = dst.get_in_dim_size("lane")
    others = {d: np.arange(dst.get_in_dim_size(d)) for d in ("warp", "block")}
    w, b = np.meshgrid(others["warp"], others["block"], indexing="ij")
    w, b = w.reshape(-1), b.reshape(-1)
    for i in range(dst.get_in_dim_size("register")):
        for lane in range(lanes):
            k = i ^ _apply_columns(a_columns, lane)
            r = plan.rounds[k]
            source_lane = lane if r.source_lane is None else _apply_columns(gl2, lane) ^ r.lane_xor
            register = r.register_base ^ _apply_columns(h, source_lane)
            n = len(w)
            want = dst.apply({"register": np.full(n, i), "lane": np.full(n, lane), "warp": w, "block": b})
            got = src.apply({"register": np.full(n, register), "lane": np.full(n, source_lane), "warp": w, "block": b})
            if any(not np.array_equal(np.asarray(want[d]), np.asarray(got[d])) for d in dst.get_out_dim_names()):
                return False
    return True


def _hw_points(layout: LinearLayout) -> dict[str, np.ndarray]:
    sizes = [layout.get_in_dim_size(d) for d in HW_DIMS]
    grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
    return {d: g.reshape(-1) for d, g in zip(HW_DIMS, grids)}


def _tab_plain(layout: LinearLayout) -> np.ndarray:
    out = layout.apply(_hw_points(layout))
    return np.stack([np.asarray(out[n]).reshape(-1) for n in layout.get_out_dim_names()])


def _tab(src: LinearLayout, gather: LinearLayout) -> np.ndarray:
    points = gather.apply(_hw_points(gather))
    out = src.apply({d: np.asarray(points[d]).reshape(-1) for d in HW_DIMS})
    return np.stack([np.asarray(out[n]).reshape(-1) for n in src.get_out_dim_names()])


def plan_conversion(src: LinearLayout, dst: LinearLayout, element_bits: int = 32) -> ConversionPlan:
    """The strategy for converting a tensor from layout `src` to layout `dst` (same shape); cached.

    Raises ValueError when the two layouts do not describe the same tensor on the same launch."""
    key = (src, dst, element_bits)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _plan_conversion(src, dst, element_bits)
    if isinstance(plan, ValueError):
        raise plan
    return plan


_PLANS: dict = {}


def _plan_conversion(src: LinearLayout, dst: LinearLayout, element_bits: int):
    try:
        return _plan_uncached(src, dst, element_bits)
    except ValueError as error:
        return error


def _plan_uncached(src: LinearLayout, dst: LinearLayout, element_bits: int = 32) -> ConversionPlan:
    """Decide with `conversion.plan_conversion`, then build what the emitter needs.

    Raises ValueError when the two layouts do not describe the same tensor on the same launch."""
    if src.out_dims != dst.out_dims:
        raise ValueError(f"the layouts cover different shapes: {dict(src.out_dims)} vs {dict(dst.out_dims)}")
    src, dst = _with_dims(src), _with_dims(dst)
    for dim in ("lane", "warp", "block"):
        if src.get_in_dim_size(dim) != dst.get_in_dim_size(dim):
            raise ValueError(f"the layouts use different numbers of {dim}s: "
                             f"{src.get_in_dim_size(dim)} vs {dst.get_in_dim_size(dim)}")
    try:
        strategy = _conversion.plan_conversion(src, dst, bitwidth=element_bits,
                                               threads_per_warp=src.get_in_dim_size("lane"))
    except AssertionError as error:  # a planner invariant broke: report it, never crash the pass
        raise ValueError(f"internal error in plan_conversion: {error}") from None
    src_r = src.remove_zero_bases_along_dim("register")
    dst_r = dst.remove_zero_bases_along_dim("register")
    plan = ConversionPlan(strategy.strategy, src_r, dst_r, strategy.conversion, reason=strategy.reason,
                          strategy=strategy, shared=strategy.shared)
    if strategy.strategy == "shared":
        return plan
    if _in_warp_plan(src_r, dst_r, element_bits, plan) and (strategy.strategy == "shuffle" or not plan.shuffles):
        if strategy.strategy != "noop":
            plan.kind = "shuffle" if plan.shuffles else "register"
        return plan
    why = plan.reason
    strategy = _conversion.plan_conversion(src, dst, bitwidth=element_bits,
                                           threads_per_warp=src.get_in_dim_size("lane"), in_warp=False)
    return ConversionPlan(strategy.strategy, src_r, dst_r, strategy.conversion,
                          reason=f"{strategy.reason}: the in-warp rounds fail ({why})",
                          strategy=strategy, shared=strategy.shared)
