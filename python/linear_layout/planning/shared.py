r"""Planning ``convert_layout`` and analysing shared-memory bank conflicts (pure algebra, no ``mlir``).

Two entry points:

* :func:`plan_conversion` decides how a tensor moves from one distributed layout to another and,
  when shared memory is needed, derives the shared layout, the vector widths, the repetition
  loop, the scratch size and the exact wavefront counts of every store and load.
* :func:`bank_conflicts` counts the wavefronts of any distributed layout stored into (or loaded
  from) any shared layout, analytically.
* :func:`triton_scratch_bytes` models the scratch Triton 3.9 allocates for the same conversion;
  the shared plan never uses more (common register directions become repetitions as needed).

Both use the bank model of :mod:`linear_layout.simt` (32 banks x 4 bytes; an access of ``w``
bytes per thread is served in phases of ``128 / max(w, 4)`` consecutive lanes; a phase costs the
maximum over banks of the distinct 4-byte words it touches; the ideal is
``ceil(distinct words / 32)``), so predictions can be compared with the interpreter one to one.

Interface for code generation
=============================
``plan = plan_conversion(src, dst, shape, bitwidth)`` returns a frozen :class:`ConversionPlan`.
``plan.strategy`` is ``"noop"``, ``"register"``, ``"shuffle"`` or ``"shared"``. For
``"shared"``, ``plan.shared`` is a :class:`SharedPlan` and the emitter does, per CTA::

    base_st = plan.shared.store.thread_offset.apply(lane=, warp=)   # once per kernel (XOR/AND math)
    base_ld = plan.shared.load.thread_offset.apply(lane=, warp=)
    for rep in range(plan.shared.num_reps):                    # the repetition loop
        if rep: barrier                                        # WAR: previous loads are done
        if plan.shared.store.predicate holds:                  # broadcast copies are written once
            for ins in plan.shared.store.instructions if ins.rep == rep:
                vector.store [src regs ins.registers...] at smem[base_st ^ ins.offset]
        barrier
        for ins in plan.shared.load.instructions if ins.rep == rep:
            dst regs ins.registers... = vector.load smem[base_ld ^ ins.offset]
    for (r, s) in plan.shared.load.copies: dst reg r = dst reg s   # broadcast registers

* Offsets are in **elements** of ``bitwidth`` bits from the start of the scratch buffer
  (``plan.shared.scratch_bytes`` long, 128-byte aligned). ``ins.offset`` is a multiple of the
  access's vector length and has no bit in common with the thread offsets of its side only when
  ``ins.additive`` is true (then ``^`` is ``+``, an immediate offset); otherwise use ``xor``.
* ``ins.registers`` are indices into the thread's full register vector (the layout as given,
  broadcast registers included), in vector order: element ``k`` of the access is
  ``registers[k]``. Each access is ``len(registers) * bitwidth / 8`` bytes, at most 16, and is
  aligned to its own size (emit ``{alignment = that}``).
* ``store.predicate`` is ``{"lane": m, "warp": m, "block": m}``: a thread stores iff
  ``lane & m_lane == 0 and warp & m_warp == 0 and block & m_block == 0`` (Triton's
  free-variable masks; an all-zero mask means no predicate).
* ``store.offsets`` / ``load.offsets`` are the same maps as LinearLayouts
  ``(register, lane, warp, block) -> (offset, reps)``: ``src.invert_and_compose(smem)`` and
  ``dst.invert_and_compose(smem)`` with the shared in-dims flattened.

The shared layout ``plan.shared.smem`` is a LinearLayout with in-dims ``vector``, ``bank``,
``segment``, ``reps`` (and ``block`` when the CTA count is above one) onto the tensor's
``dim0..``. The offset of an element is ``vector | bank << v | segment << (v + b)``: the first
three in-dims flattened; ``reps`` is the loop index. ``vector`` holds the register bases common
to src and dst (the load and store vector); one side may vectorise further into the first bank
bases (``store.vector`` / ``load.vector`` give each side's width).

The decision tree, the swizzle derivation and a worked example are in ``docs/conversions.md``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping, Sequence


from ..core.layout import LinearLayout

__all__ = [
    "Access",
    "BankConflicts",
    "ConversionPlan",
    "Instruction",
    "SharedPlan",
    "bank_conflicts",
    "minimal_conversion",
    "plan_conversion",
    "plan_local_access",
    "triton_scratch_bytes",
    "warp_decomposition",
]

HW_DIMS = ("register", "lane", "warp", "block")
NUM_BANKS = 32
BANK_BYTES = 4
MAX_ACCESS_BYTES = 16


# ============================================================================ GF(2) on ints


def _reduce(rows: dict[int, int], v: int) -> int:
    while v:
        r = rows.get(v.bit_length() - 1)
        if r is None:
            return v
        v ^= r
    return 0


class _Span:
    """A subspace of GF(2)^n given by an echelon basis (vectors are Python ints)."""

    __slots__ = ("rows", "basis")

    def __init__(self, vectors: Sequence[int] = ()) -> None:
        self.rows: dict[int, int] = {}
        self.basis: list[int] = []  # the inserted independent vectors, in insertion order
        for v in vectors:
            self.add(v)

    def add(self, v: int) -> bool:
        r = _reduce(self.rows, v)
        if not r:
            return False
        self.rows[r.bit_length() - 1] = r
        self.basis.append(v)
        return True

    def __contains__(self, v: int) -> bool:
        return not _reduce(self.rows, v)

    def __len__(self) -> int:
        return len(self.basis)

    def copy(self) -> _Span:
        s = _Span()
        s.rows = dict(self.rows)
        s.basis = list(self.basis)
        return s


def _rank(vectors: Sequence[int]) -> int:
    return len(_Span(vectors))


def _intersect(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """A basis of span(a) ∩ span(b) (Zassenhaus)."""
    a, b = list(a), list(b)
    width = max([v.bit_length() for v in a + b] + [1])
    rows: dict[int, int] = {}
    for v in a:
        r = _reduce(rows, (v << width) | v)
        if r:
            rows[r.bit_length() - 1] = r
    for v in b:
        r = _reduce(rows, v << width)
        if r:
            rows[r.bit_length() - 1] = r
    return sorted(r for p, r in rows.items() if p < width)


def _extend(base: Sequence[int], candidates: Sequence[int], target: int | None = None,
            within: _Span | None = None) -> list[int]:
    """``base`` plus candidates independent of it (and inside ``within``), up to ``target`` vectors."""
    span = _Span(base)
    out = list(span.basis)
    for c in candidates:
        if target is not None and len(out) >= target:
            break
        if within is not None and c not in within:
            continue
        if span.add(c):
            out.append(c)
    return out


def _solve_in(basis: Sequence[int], v: int) -> int | None:
    """Coordinates (bit k = basis[k]) of ``v`` in an independent ``basis``, or None."""
    rows: dict[int, tuple[int, int]] = {}
    for k, b in enumerate(basis):
        comb = 1 << k
        while b:
            r = rows.get(b.bit_length() - 1)
            if r is None:
                rows[b.bit_length() - 1] = (b, comb)
                break
            b ^= r[0]
            comb ^= r[1]
    comb = 0
    while v:
        r = rows.get(v.bit_length() - 1)
        if r is None:
            return None
        v ^= r[0]
        comb ^= r[1]
    return comb


def _apply_cols(cols: Sequence[int], x: int) -> int:
    out = 0
    k = 0
    while x:
        if x & 1:
            out ^= cols[k]
        x >>= 1
        k += 1
    return out


def _log2(n: int) -> int:
    return n.bit_length() - 1


# ============================================================================ layouts


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_plan_arguments(shape: object, bitwidth: object, threads_per_warp: object, max_reps: object) -> None:
    """API boundary of :func:`plan_conversion`: a TypeError naming the argument and what it got."""
    for name, value in (("bitwidth", bitwidth), ("threads_per_warp", threads_per_warp)):
        if not _is_int(value):
            raise TypeError(f"plan_conversion: argument '{name}' must be an integer, got {type(value).__name__}")
    if max_reps is not None and not _is_int(max_reps):
        raise TypeError(f"plan_conversion: argument 'max_reps' must be an integer or None, got {type(max_reps).__name__}")
    if shape is not None and (isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence)
                              or not all(_is_int(size) for size in shape)):
        raise TypeError(f"plan_conversion: argument 'shape' must be a sequence of integers, got {shape!r:.60}")


def _as_layout(layout: Any, shape: Sequence[int] | None, what: str, in_dims=HW_DIMS) -> LinearLayout:
    if isinstance(layout, LinearLayout):
        ll = layout
    else:
        if not hasattr(layout, "to_linear_layout"):
            raise TypeError(f"{what} must be a LinearLayout or a linear_layout.encodings layout, got {layout!r}")
        if shape is None:
            raise ValueError(f"{what}: an encoding needs a shape")
        ll = layout.to_linear_layout(shape)
    names = ll.get_in_dim_names()
    extra = [n for n in names if n not in in_dims]
    if extra:
        raise ValueError(f"{what}: input dimensions {extra} are not among {list(in_dims)}")
    bases = dict(ll.bases)
    return LinearLayout.from_bases([(d, bases.get(d, ())) for d in in_dims], list(ll.get_out_dim_names()),
                                   [s for _, s in ll.out_dims], require_surjective=False)


def _cols(ll: LinearLayout) -> dict[str, list[int]]:
    """Per in-dim, the flattened (dim0 lowest) output of each basis."""
    flat = ll.flatten_outs()
    return {name: [b[0] if b else 0 for b in bases] for name, bases in flat.bases}


def _unflatten(v: int, out_dims) -> list[int]:
    coords = []
    for _, size in out_dims:
        coords.append(v & (size - 1))
        v >>= _log2(size)
    return coords


# ============================================================================ strategy


def minimal_conversion(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """Triton's ``minimalCvtLayout``: ``dst.invert_and_compose(src)`` with trailing trivial
    ``block``, ``warp``, ``lane`` dimensions quotiented away (register bases already reduced)."""
    cvt = dst.invert_and_compose(src)
    for dim in ("block", "warp", "lane"):
        q = cvt.quotient([dim])
        if q is None:
            break
        cvt = q
    return cvt


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


def warp_decomposition(src: LinearLayout, dst: LinearLayout, bitwidth: int = 32) -> WarpDecomposition | None:
    """Factor an in-warp conversion into register, lane and mixed bit permutations.

    ``src``/``dst`` have their zero register bases removed. Returns ``None`` when the
    register/lane conversion is not a bit permutation (Triton only handles permutation-like
    layouts here; we then fall back to shared memory)."""
    S, T = _cols(src), _cols(dst)
    nr = max(len(S["register"]), len(T["register"]))
    nl = max(len(S["lane"]), len(T["lane"]))
    s_cols = S["register"] + [0] * (nr - len(S["register"])) + S["lane"] + [0] * (nl - len(S["lane"]))
    t_cols = T["register"] + [0] * (nr - len(T["register"])) + T["lane"] + [0] * (nl - len(T["lane"]))
    p = []
    for s in s_cols:
        x = _solve_in([t for t in t_cols if t], s) if s else 0
        if x is None:
            return None
        # map back from nonzero-t index to global index
        idx = [k for k, t in enumerate(t_cols) if t]
        y = 0
        for j, k in enumerate(idx):
            if x >> j & 1:
                y |= 1 << k
        p.append(y)
    s_zero = [k for k, s in enumerate(s_cols) if not s]
    t_zero = [k for k, t in enumerate(t_cols) if not t]
    both = set(s_zero) & set(t_zero)
    for k in both:
        p[k] = 1 << k
    for a, b in zip([k for k in s_zero if k not in both], [k for k in t_zero if k not in both]):
        p[a] = 1 << b
    if any(v == 0 or v & (v - 1) for v in p) or len({v for v in p}) != len(p):
        return None
    nxt = [_log2(v) for v in p]
    reg = [0] * nr
    lane = [0] * nl
    mixed = []
    visited = [False] * (nr + nl)
    for start in range(nr + nl):
        if visited[start]:
            continue
        cur = start
        reg_start = lane_start = -1
        while True:
            visited[cur] = True
            n = nxt[cur]
            if cur < nr and n < nr:
                reg[cur] = n
            elif cur >= nr and n >= nr:
                lane[cur - nr] = n - nr
            elif cur < nr:
                reg_start, lane_start = cur, n - nr
            else:
                reg[reg_start] = n
                lane[cur - nr] = lane_start
                mixed.append((n, lane_start))
                reg_start = lane_start = -1
            cur = n
            if cur == start:
                break
    pack = min(_log2(max(1, min(4, 32 // max(bitwidth, 1)))), nr - len(mixed))
    return WarpDecomposition(tuple(reg), tuple(lane), tuple(mixed), max(pack, 0))


# ============================================================================ results


@dataclass(frozen=True)
class Instruction:
    """One vector access of every thread: registers (vector order) at ``thread offset ^ offset``."""

    rep: int
    registers: tuple[int, ...]
    offset: int
    additive: bool  # offset shares no bit with the thread offsets: ^ == + (an immediate)


@dataclass(frozen=True)
class Access:
    """The stores (or the loads) of a shared-memory conversion, per CTA."""

    vector: int  # elements per access
    instruction_bytes: int
    instructions: tuple[Instruction, ...]  # over all reps
    offsets: LinearLayout  # (register, lane, warp, block) -> (offset, reps)
    thread_offset: LinearLayout  # (lane, warp) -> offset: the runtime base
    predicate: Mapping[str, int]  # free-variable masks: a thread accesses iff all (dim & mask) == 0
    copies: tuple[tuple[int, int], ...]  # (register, register it copies) for broadcast registers
    wavefronts: int
    ideal_wavefronts: int
    phase_cost: int  # wavefronts per phase (2**dim(tile ∩ segment))

    @property
    def vector_bits(self) -> int:
        return self.instruction_bytes * 8

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts


@dataclass(frozen=True)
class SharedPlan:
    smem: LinearLayout  # (vector, bank, segment, reps[, block]) -> dim0..
    num_reps: int
    scratch_bytes: int
    store: Access
    load: Access
    barriers: int
    index_ops: int

    @property
    def vector(self) -> int:
        return self.smem.get_in_dim_size("vector")


@dataclass(frozen=True)
class ConversionPlan:
    strategy: str  # "noop" | "register" | "shuffle" | "shared"
    reason: str
    src: LinearLayout  # as given, all hardware in-dims present
    dst: LinearLayout
    conversion: LinearLayout  # minimal conversion (reduced registers)
    bitwidth: int
    shared: SharedPlan | None = None
    decomposition: WarpDecomposition | None = None
    shuffles: int = 0

    # flat views (zero when not applicable) -----------------------------------------
    @property
    def scratch_bytes(self) -> int:
        return self.shared.scratch_bytes if self.shared else 0

    @property
    def barriers(self) -> int:
        return self.shared.barriers if self.shared else 0

    @property
    def bank_conflicts(self) -> int:
        return self.shared.store.bank_conflicts + self.shared.load.bank_conflicts if self.shared else 0

    @property
    def store_wavefronts(self) -> int:
        return self.shared.store.wavefronts if self.shared else 0

    @property
    def load_wavefronts(self) -> int:
        return self.shared.load.wavefronts if self.shared else 0

    @property
    def index_ops(self) -> int:
        return self.shared.index_ops if self.shared else 0

    def summary(self) -> str:
        if not self.shared:
            extra = f", {self.shuffles} shuffles" if self.strategy == "shuffle" else ""
            return f"{self.strategy}{extra} ({self.reason})"
        s = self.shared
        return (f"shared: {s.scratch_bytes} B scratch, {s.num_reps} rep(s), {s.barriers} barrier(s); "
                f"store {len(s.store.instructions)} x {s.store.instruction_bytes} B "
                f"({s.store.wavefronts} wavefronts, ideal {s.store.ideal_wavefronts}); "
                f"load {len(s.load.instructions)} x {s.load.instruction_bytes} B "
                f"({s.load.wavefronts} wavefronts, ideal {s.load.ideal_wavefronts}); "
                f"{s.index_ops} index ops")


# ============================================================================ bank model


def _phase_cost(lane_cols: Sequence[int], vector_bits: int, bitwidth: int, elem_offset_bits: int | None = None):
    """(cost per phase, ideal per phase, lanes per phase log2) for an access whose active phase
    lanes have offsets spanning ``lane_cols`` (elements) and whose vector covers offsets
    ``[0, 2**vector_bits)``."""
    elem_bytes = max(1, bitwidth // 8)
    width = (1 << vector_bits) * elem_bytes
    # word space: project offsets (elements) to 4-byte word indices
    span = list(lane_cols) + [1 << i for i in range(vector_bits)]
    words = []
    if elem_bytes >= BANK_BYTES:
        s = _log2(elem_bytes // BANK_BYTES)
        words = [v << s for v in span] + [1 << i for i in range(s)]
    else:
        t = _log2(BANK_BYTES // elem_bytes)
        words = [v >> t for v in span]
    u = _Span(words)
    dim_u = len(u)
    dim_bank = _rank([w & (NUM_BANKS - 1) for w in u.basis])
    cost = 1 << (dim_u - dim_bank)
    ideal = -(-(1 << dim_u) // NUM_BANKS)
    return cost, ideal, width


def _threads_per_phase_log2(width: int) -> int:
    return _log2(NUM_BANKS * BANK_BYTES // max(width, BANK_BYTES))


def _count_wavefronts(lane_offs: Sequence[int], lane_active: Sequence[bool], warp_active: Sequence[bool],
                      vector_bits: int, bitwidth: int, num_instructions: int):
    width = (1 << vector_bits) * max(1, bitwidth // 8)
    p = min(_threads_per_phase_log2(width), len(lane_offs))
    phase_cols = [c for k, c in enumerate(lane_offs[:p]) if lane_active[k]]
    cost, ideal, _ = _phase_cost(phase_cols, vector_bits, bitwidth)
    phases = 1 << sum(1 for k in range(p, len(lane_offs)) if lane_active[k])
    warps = 1 << sum(1 for a in warp_active if a)
    n = num_instructions * phases * warps
    return cost * n, ideal * n, cost


# ============================================================================ index-op model


def _matvec_ops(cols: Sequence[int], in_bits: int) -> int:
    """Ops of Triton's matrixVectorProd for ``x -> M x`` with ``M``'s columns ``cols``
    (``x`` has ``in_bits`` bits): one ``and`` per diagonal (skipped when the mask keeps all of
    ``x``), one shift per non-zero diagonal, and ``terms - 1`` ``or``/``xor`` to combine."""
    diagonals: dict[int, int] = {}
    for i, c in enumerate(cols):
        j = 0
        while c:
            if c & 1:
                diagonals[j - i] = diagonals.get(j - i, 0) | (1 << i)
            c >>= 1
            j += 1
    ops = 0
    full = (1 << in_bits) - 1
    for d, mask in diagonals.items():
        ops += (mask != full) + (d != 0)
    return ops + max(0, len(diagonals) - 1)


# ============================================================================ shared planning


@dataclass
class _Side:
    reg: list[int]  # flattened images per register bit (full register dim)
    lane: list[int]
    warp: list[int]
    free: dict[str, int]


def _side(ll: LinearLayout) -> _Side:
    c = _cols(ll)
    return _Side(c["register"], c["lane"], c["warp"], ll.get_free_variable_masks())


def _active(cols: Sequence[int], mask: int) -> list[int]:
    return [c for k, c in enumerate(cols) if not mask >> k & 1]


def _unit_candidates(n: int) -> list[int]:
    return [1 << i for i in range(n)]


def _build_smem(src: LinearLayout, dst: LinearLayout, bitwidth: int, config: tuple, max_reps: int | None,
                vec_cap: int | None = None):
    """One candidate shared layout. Returns the ordered bases dict or None if infeasible.

    ``vec_cap`` limits how many common register directions go into the vector; the others
    become repetitions (smaller scratch, narrower common vector)."""
    ext_side, fill_pref, bank_from = config
    S, D = _side(src), _side(dst)
    n_bits = src.get_total_out_dim_size_log2()
    s_reg = _active(S.reg, S.free["register"])
    s_thr = _active(S.lane, S.free["lane"]) + _active(S.warp, S.free["warp"])
    d_reg = _active(D.reg, D.free["register"])
    d_thr = [c for c in D.lane + D.warp if c]
    Ts, Td = _Span(s_thr), _Span(d_thr)
    T = _Span(s_thr + d_thr)
    V0 = _intersect(s_reg, d_reg)
    V0span = _Span(V0)
    max_vec = _log2(MAX_ACCESS_BYTES * 8 // bitwidth) if bitwidth <= MAX_ACCESS_BYTES * 8 else 0

    def v_ok(V, E, R=()):
        # (V + R) ∩ (T + E) = 0 and V, E, R independent
        base = _Span(list(T.basis) + list(E))
        return len(_Span(list(V) + list(R) + list(base.basis))) == len(V) + len(R) + len(base) and \
            _rank(list(V) + list(E) + list(R)) == len(V) + len(E) + len(R)

    V: list[int] = []
    v_max = max_vec if vec_cap is None else min(max_vec, vec_cap)
    for c in [r for r in s_reg if r in V0span] + V0:
        if len(V) >= v_max:
            break
        if v_ok(V + [c], []):
            V.append(c)
    # asymmetric extension of one side's vector into the first bank bases
    E: list[int] = []
    if ext_side is not None and len(V) < max_vec:
        own_reg, own_thr, other_thr = (s_reg, Ts, Td) if ext_side == "store" else (d_reg, Td, Ts)
        other_lanes = _Span(_active(D.lane, 0) if ext_side == "store" else _active(S.lane, S.free["lane"]))
        cands = [r for r in own_reg if r in other_lanes] + list(own_reg)
        for c in cands:
            if len(V) + len(E) >= max_vec:
                break
            if c in _Span(V + E) or c in V0span:
                continue
            if _rank(list(own_thr.basis) + V + E + [c]) != len(own_thr) + len(V) + len(E) + 1:
                continue
            if v_ok(V, E + [c]):
                E.append(c)
        if not E:
            return None
    # repetitions: common register directions outside the vector
    R: list[int] = []
    for c in [r for r in s_reg if r in V0span] + V0:
        if max_reps is not None and len(R) >= max_reps:
            break
        if c in _Span(V + E + R):
            continue
        if v_ok(V, E, R + [c]):
            R.append(c)
    # per-CTA space and H (the swizzled part): H ⊇ threads of the extended side (or both)
    X = _Span(s_reg + s_thr)
    if len(X) != len(_Span(d_reg + d_thr)) or any(c not in X for c in d_reg + d_thr):
        raise ValueError("the source and destination do not cover the same elements per CTA")
    own = Ts if ext_side in (None, "store") else Td
    # H1 = own threads plus a complement of (own threads + E) inside T + E
    H1 = list(own.basis)
    core = _Span(list(own.basis) + E)
    for g in list(T.basis):
        if core.add(g):
            H1.append(g)
    lowspan = _Span(V + E + R)
    H: list[int] = []
    hspan = _Span()
    for c in H1 + _unit_candidates(n_bits) + list(X.basis):
        if c not in X:
            continue
        if len(_Span(list(lowspan.basis) + hspan.basis + [c])) == len(lowspan) + len(hspan) + 1:
            hspan.add(c)
            H.append(c)
    if len(V) + len(E) + len(R) + len(H) != len(X):
        return None
    Hs = _Span(H)
    # offsets: the tiles of both sides
    elem_bytes = max(1, bitwidth // 8)
    st_vec = V + (E if ext_side == "store" else [])
    ld_vec = V + (E if ext_side == "load" else [])

    def phase_lanes(lanes, free_lane, vec):
        width = (1 << len(vec)) * elem_bytes
        p = _threads_per_phase_log2(min(width, MAX_ACCESS_BYTES))
        return [c for k, c in enumerate(lanes[:p]) if not free_lane >> k & 1 and c]

    Ys = st_vec + phase_lanes(S.lane, S.free["lane"], st_vec)
    Yd = ld_vec + phase_lanes(D.lane, 0, ld_vec)
    iw = max(0, _log2(BANK_BYTES // elem_bytes)) if elem_bytes < BANK_BYTES else 0
    rb = _log2(NUM_BANKS * BANK_BYTES // elem_bytes) if elem_bytes <= NUM_BANKS * BANK_BYTES else 0
    basis_all = V + E + R + H

    def proj_h(vectors):
        out = []
        for y in vectors:
            comb = _solve_in(basis_all, y)
            if comb is None:
                return None
            h = 0
            for k in range(len(V) + len(E) + len(R), len(basis_all)):
                if comb >> k & 1:
                    h ^= basis_all[k]
            out.append(h)
        return out

    ph_s, ph_d = proj_h(Ys), proj_h(Yd)
    if ph_s is None or ph_d is None:
        return None
    ph_s = [h for h in ph_s if h]
    ph_d = [h for h in ph_d if h]
    f = max(0, iw - len(V) - len(E))
    both = _intersect(ph_s, ph_d)
    order = {"both": both + ph_s + ph_d, "store": ph_s + both + ph_d, "load": ph_d + both + ph_s}[fill_pref]
    F = _extend([], order + H, target=f, within=Hs)[:f]
    IW = (V + E + F)[:iw]
    b = max(0, min(len(H), rb - len(V) - len(E)))
    # the tiles' parts inside H (their V/E components never conflict: they are the low bits)
    A_s = _Span(proj_h(_Span(Ys + IW).basis) or []).basis
    A_d = _Span(proj_h(_Span(Yd + IW).basis) or []).basis
    A_s = [a for a in A_s if a]
    A_d = [a for a in A_d if a]
    units_h = [u for u in _unit_candidates(n_bits) if u in Hs]
    As2 = _extend(F, A_s, target=b)
    Ad2 = _extend(F, A_d, target=b)
    As2 = _extend(As2, Ad2 + units_h + H, target=b)
    Ad2 = _extend(Ad2, As2 + units_h + H, target=b)
    inter = _intersect(As2, Ad2)
    A1 = _extend(inter, As2)[len(inter):]
    B1 = _extend(inter, Ad2)[len(inter):]
    assert len(A1) == len(B1)
    D_ = _extend(As2 + Ad2, units_h + H)[len(_Span(As2 + Ad2)):]
    seg = sorted(a ^ bb for a, bb in zip(A1, B1)) + sorted(D_)
    bank_src = As2 if bank_from == "store" else Ad2
    bank = F + sorted(x for x in bank_src if x not in F)
    bank = _extend(F, bank)
    if len(bank) + len(seg) != len(H):
        return None
    return dict(vector=V, bank=E + bank, segment=seg, reps=R, ext=ext_side, st_vec=len(st_vec), ld_vec=len(ld_vec))


def _smem_layout(bases: dict, src: LinearLayout) -> LinearLayout:
    out_dims = src.out_dims
    c = _cols(src)
    items = [(name, [_unflatten(v, out_dims) for v in bases[name]]) for name in ("vector", "bank", "segment", "reps")]
    if c["block"]:
        items.append(("block", [_unflatten(v, out_dims) for v in c["block"]]))
    return LinearLayout.from_bases(items, list(src.get_out_dim_names()), [s for _, s in out_dims],
                                   require_surjective=False)


def _access(ll: LinearLayout, smem_bases: dict, vec_bits: int, bitwidth: int, is_store: bool) -> Access:
    """Offsets, instructions and wavefronts of one side."""
    side = _side(ll)
    block_cols = _cols(ll)["block"]
    order = smem_bases["vector"] + smem_bases["bank"] + smem_bases["segment"]
    n_off = len(order)
    reps = smem_bases["reps"]
    basis = order + reps + [c for c in block_cols if c]
    n_rep = len(reps)

    def split(v):
        comb = _solve_in(basis, v)
        if comb is None:
            raise AssertionError("layout element outside the shared layout")
        return comb & ((1 << n_off) - 1), (comb >> n_off) & ((1 << n_rep) - 1)

    reg = [split(c) for c in side.reg]
    lane = [split(c) for c in side.lane]
    warp = [split(c) for c in side.warp]
    blk = [split(c) for c in block_cols]
    if any(r for _, r in lane + warp):
        raise AssertionError("thread offsets must not select repetitions")
    lane_off = [o for o, _ in lane]
    warp_off = [o for o, _ in warp]
    vmask = (1 << vec_bits) - 1
    free = side.free
    pred = {"lane": free["lane"], "warp": free["warp"], "block": free["block"]} if is_store else \
        {"lane": 0, "warp": 0, "block": 0}
    if any((o & vmask) for k, o in enumerate(lane_off) if not pred["lane"] >> k & 1) or \
            any((o & vmask) for k, o in enumerate(warp_off) if not pred["warp"] >> k & 1):
        raise AssertionError("thread offsets must be aligned to the vector")
    thread_bits = 0
    for o in lane_off + warp_off:
        thread_bits |= o
    # registers: skip free ones (store: written once; load: copies of an earlier register)
    nreg = len(side.reg)
    rfree = free["register"]
    groups: dict[tuple[int, int], dict[int, int]] = {}
    copies = []
    first_of: dict[tuple[int, int], int] = {}
    for r in range(1 << nreg):
        o = r_ = 0
        for k in range(nreg):
            if r >> k & 1:
                o ^= reg[k][0]
                r_ ^= reg[k][1]
        if r & rfree:
            if not is_store:
                copies.append((r, first_of[(o, r_)]))
            continue
        first_of[(o, r_)] = r
        groups.setdefault((r_, o & ~vmask), {})[o & vmask] = r
    instructions = []
    for (rep, base), members in sorted(groups.items()):
        if len(members) != 1 << vec_bits:
            raise AssertionError("registers do not fill whole vectors")
        instructions.append(Instruction(rep, tuple(members[k] for k in range(1 << vec_bits)), base,
                                        not (base & thread_bits)))
    lane_active = [not pred["lane"] >> k & 1 for k in range(len(lane_off))]
    warp_active = [not pred["warp"] >> k & 1 for k in range(len(warp_off))]
    wave, ideal, cost = _count_wavefronts(lane_off, lane_active, warp_active, vec_bits, bitwidth, len(instructions))
    offsets = LinearLayout.from_bases(
        [(d, [[o, r] for o, r in cols]) for d, cols in (("register", reg), ("lane", lane), ("warp", warp), ("block", blk))],
        ["offset", "reps"], [1 << n_off, 1 << n_rep], require_surjective=False)
    thread_offset = LinearLayout.from_bases([("lane", [[o] for o in lane_off]), ("warp", [[o] for o in warp_off])],
                                            ["offset"], [1 << n_off], require_surjective=False)
    return Access(vector=1 << vec_bits, instruction_bytes=(1 << vec_bits) * bitwidth // 8,
                  instructions=tuple(instructions), offsets=offsets, thread_offset=thread_offset,
                  predicate=pred, copies=tuple(copies), wavefronts=wave, ideal_wavefronts=ideal, phase_cost=cost)


def _index_ops(store: Access, load: Access, lane_bits: int, warp_bits: int) -> int:
    ops = 2  # lane = tid & (W-1), warp = tid >> log2(W)
    for acc in (store, load):
        cols = [b[0] for b in dict(acc.thread_offset.bases)["lane"]] + \
               [b[0] for b in dict(acc.thread_offset.bases)["warp"]]
        ops += _matvec_ops(cols, lane_bits + warp_bits)
        ops += sum(1 for ins in acc.instructions if ins.offset and not ins.additive)
    for m in store.predicate.values():
        if m:
            ops += 2  # and + compare
    return ops


def _plan_shared(src: LinearLayout, dst: LinearLayout, bitwidth: int, max_reps: int | None) -> SharedPlan:
    """The best candidate shared layout.

    Candidates: extension side x in-word fill x bank source (:func:`_build_smem`), first with
    as many common register directions in the vector as fit in 16 bytes, then with fewer (the
    others become repetitions). Scratch is bounded by Triton's (:func:`triton_scratch_bytes`):
    among the candidates within the bound, the winner has the fewest (bank conflicts,
    wavefronts, instructions, index ops, scratch); the vector is narrowed only while no
    candidate is within the bound. When none ever is (``max_reps`` forbids the repetitions),
    the smallest scratch wins, then the same key."""
    s_cols, d_cols = _cols(src), _cols(dst)
    if s_cols["block"] != d_cols["block"]:
        raise ValueError("unsupported: the conversion moves data between CTAs (distributed shared memory)")
    bound = triton_scratch_bytes(src, dst, bitwidth)
    max_vec = _log2(MAX_ACCESS_BYTES * 8 // bitwidth) if bitwidth <= MAX_ACCESS_BYTES * 8 else 0
    configs = [(e, f, b) for e in (None, "store", "load") for f in ("both", "store", "load") for b in ("store", "load")]
    best = within = None
    for cap in range(max_vec, -1, -1):
        for config in configs:
            bases = _build_smem(src, dst, bitwidth, config, max_reps, None if cap == max_vec else cap)
            if bases is None:
                continue
            if cap < max_vec and len(bases["vector"]) != cap:
                continue  # same candidate as a wider cap
            smem = _smem_layout(bases, src)
            store = _access(src, bases, bases["st_vec"], bitwidth, True)
            load = _access(dst, bases, bases["ld_vec"], bitwidth, False)
            reps = 1 << len(bases["reps"])
            index_ops = _index_ops(store, load, src.get_in_dim_size_log2("lane"), src.get_in_dim_size_log2("warp"))
            scratch = max(1, (1 << (len(bases["vector"]) + len(bases["bank"]) + len(bases["segment"])))
                          * bitwidth // 8)
            plan = SharedPlan(smem=smem, num_reps=reps, scratch_bytes=scratch, store=store, load=load,
                              barriers=2 * reps - 1, index_ops=index_ops)
            key = (store.bank_conflicts + load.bank_conflicts, store.wavefronts + load.wavefronts,
                   len(store.instructions) + len(load.instructions), index_ops, scratch)
            if scratch <= bound and (within is None or key < within[0]):
                within = (key, plan)
            if best is None or (scratch,) + key < best[0]:
                best = ((scratch,) + key, plan)
        if within is not None:
            return within[1]
    if best is None:
        raise AssertionError("no shared layout found")
    return best[1]


def plan_conversion(src: Any, dst: Any, shape: Sequence[int] | None = None, bitwidth: int = 32, *,
                    threads_per_warp: int = 32, max_reps: int | None = None, in_warp: bool = True) -> ConversionPlan:
    """Plan ``convert_layout`` from ``src`` to ``dst`` (encodings or distributed LinearLayouts).

    Strategy (Triton's decision): zero register bases are removed from both layouts;
    ``cvt = dst.invert_and_compose(src)`` with trailing trivial ``block``, ``warp``, ``lane``
    quotiented away. ``block`` or ``warp`` left: shared memory. ``lane`` left: warp shuffles when
    the out-dims are exactly ``(register, lane)`` and the conversion factors into fewer than two
    mixed register/lane transpositions (:func:`warp_decomposition`), else shared memory.
    ``register`` left: register permutation; nothing: no-op.

    ``max_reps`` limits how many common register directions become repetitions (``None``: all,
    the smallest scratch; ``0``: one round, the fewest barriers). ``in_warp=False`` sends the
    conversions that would use warp shuffles to shared memory instead (for an emitter that cannot
    realise a particular shuffle plan); the other branches are unchanged.

    Raises ValueError when the layouts do not describe the same tensor on the same launch.
    """
    _check_plan_arguments(shape, bitwidth, threads_per_warp, max_reps)
    if bitwidth < 8 or bitwidth & (bitwidth - 1):
        raise ValueError(f"bitwidth must be a power of two >= 8, got {bitwidth}")
    src_ll = _as_layout(src, shape, "src")
    dst_ll = _as_layout(dst, shape, "dst")
    if src_ll.out_dims != dst_ll.out_dims:
        raise ValueError(f"the layouts cover different shapes: {list(src_ll.out_dims)} vs {list(dst_ll.out_dims)}")
    for d in ("lane", "warp", "block"):
        if src_ll.get_in_dim_size(d) != dst_ll.get_in_dim_size(d):
            raise ValueError(f"the layouts use different numbers of {d}s: "
                             f"{src_ll.get_in_dim_size(d)} vs {dst_ll.get_in_dim_size(d)}")
    if src_ll.get_in_dim_size("lane") != threads_per_warp:
        raise ValueError(f"the layouts have {src_ll.get_in_dim_size('lane')} lanes, expected {threads_per_warp}")
    if not src_ll.is_surjective() or not dst_ll.is_surjective():
        raise ValueError("both layouts must cover the whole tensor")
    src_r = src_ll.remove_zero_bases_along_dim("register")
    dst_r = dst_ll.remove_zero_bases_along_dim("register")
    cvt = minimal_conversion(src_r, dst_r)
    names = cvt.get_in_dim_names()
    common = dict(src=src_ll, dst=dst_ll, conversion=cvt, bitwidth=bitwidth)
    if "block" in names or "warp" in names:
        return ConversionPlan("shared", "data moves between warps", shared=_plan_shared(src_ll, dst_ll, bitwidth, max_reps), **common)
    if "lane" in names:
        if not in_warp:
            why = "in-warp exchange not realisable by the emitter"
        elif tuple(cvt.get_out_dim_names()) == ("register", "lane"):
            dec = warp_decomposition(src_r, dst_r, 32)
            if dec is not None and len(dec.mixed) < 2:
                dec = warp_decomposition(src_r, dst_r, bitwidth)
                nreg = len(dec.register_perm)
                return ConversionPlan("shuffle", f"{len(dec.mixed)} mixed transposition(s)", decomposition=dec,
                                      shuffles=1 << max(0, nreg - dec.pack), **common)
            why = "not a bit permutation" if dec is None else f"{len(dec.mixed)} mixed transpositions"
        else:
            why = "lanes exchange data with warps"
        return ConversionPlan("shared", f"in-warp exchange too costly ({why})",
                              shared=_plan_shared(src_ll, dst_ll, bitwidth, max_reps), **common)
    if "register" in names and not cvt.is_trivial_over(["register"]):
        return ConversionPlan("register", "registers move within each thread", **common)
    return ConversionPlan("noop", "the layouts agree", **common)



# ============================================================================ Triton's scratch (model)


def _tt_intersection(b1: Sequence[int], b2: Sequence[int]) -> list[int]:
    """Triton's ``intersectionBasis``: exact membership (order of ``b1``) for unit vectors, else
    the span intersection."""
    if all(b and not b & (b - 1) for b in list(b1) + list(b2)):
        s2 = set(b2)
        return [b for b in b1 if b and b in s2]
    return _intersect([b for b in b1 if b], [b for b in b2 if b])


def _tt_segment(bank_src: Sequence[int], bank_dst: Sequence[int], dim: int, length: int) -> list[int]:
    """Triton's ``computeSegment``."""
    ss, sd = set(bank_src) - {0}, set(bank_dst) - {0}
    seg = [1 << b for b in range(dim) if (1 << b) not in ss and (1 << b) not in sd]
    if len(seg) >= length:
        return seg[:max(length, 0)]
    a = sorted(v for v in ss if v not in sd)
    b = sorted(v for v in sd if v not in ss)
    if len(a) > len(b):
        a, b = b, a
    k = min(max(0, length - len(a) - len(seg)), len(a))
    seg += [a[i] ^ b[i] for i in range(k, len(a))] + a[:k] + b[:k]
    return seg[:length]


def _tt_swizzle(reg_s, reg_d, bitwidth, vbasis, tile_s, tile_d, dim, leave_reps):
    """Triton's ``optimalSwizzling`` + ``buildReps`` reduced to (segment without reps, reps)."""
    len_b = min(_log2(max(1, 1024 // ((1 << len(vbasis)) * bitwidth))), dim - len(vbasis))
    len_s = dim - len_b - len(vbasis)
    seg = _tt_segment(list(vbasis) + list(tile_s), list(vbasis) + list(tile_d), dim, len_s)
    rs, rd = set(reg_s), set(reg_d)
    keep, reps = [], 0
    for s in seg:
        if s in rs and s in rd:
            if leave_reps > 0:
                leave_reps -= 1
                keep.append(s)
            else:
                reps += 1
        else:
            keep.append(s)
    return keep, reps


def _tt_vbasis(reg_s, reg_d, lane_s, lane_d, bitwidth):
    """Triton's ``getVbasis``."""
    vb = _tt_intersection(reg_s, reg_d)[:_log2(max(1, 128 // bitwidth))]
    per_bank = 0 if bitwidth > 32 else _log2(32 // bitwidth)
    ls, ld = set(lane_s), set(lane_d)

    def after_bank0(regs, vb, other):
        out = []
        cap = _log2(128 // max(bitwidth, 32))
        for r in regs:
            if r in vb:
                continue
            if r in other:
                out.append(r)
            if len(out) == cap:
                break
        return out

    vec_src = True
    if (1 << len(vb)) * bitwidth < 32:
        def prefix(p, regs):
            return list(regs[:len(p)]) == list(p)
        sp, dp = prefix(vb, reg_s), prefix(vb, reg_d)
        if vb and not sp and not dp:
            reg_s = vb + [r for r in reg_s if r not in vb]
            reg_d = vb + [r for r in reg_d if r not in vb]
            sp = dp = True

        def fill(regs, vb):
            return list(vb) + [regs[i] for i in range(len(vb), min(per_bank, len(regs)))]
        if sp and dp:
            vs = after_bank0(reg_s, fill(reg_s, vb), ld)
            vd = after_bank0(reg_d, fill(reg_d, vb), ls)
            sp, dp = len(vs) >= len(vd), len(vd) > len(vs)
        vec_src = sp
        vb = fill(reg_s if vec_src else reg_d, vb)
    return vb + (after_bank0(reg_s, vb, ld) if vec_src else after_bank0(reg_d, vb, ls))


def triton_scratch_bytes(src: Any, dst: Any, bitwidth: int, shape: Sequence[int] | None = None, *,
                         ldmatrix: bool = True, stmatrix: bool = True) -> int:
    """The scratch bytes Triton 3.9 allocates for a shared-memory ``convert_layout`` (a model of
    ``optimalSwizzling`` over its instruction tiles, ``buildReps`` and
    ``getNumScratchElemsSwizzledCvt``; sm_90 has ``ldmatrix`` and ``stmatrix``, sm_80 only
    ``ldmatrix``). :func:`plan_conversion` keeps its scratch at or below this."""
    s_ll = _as_layout(src, shape, "src").remove_zero_bases_along_dim("register")
    d_ll = _as_layout(dst, shape, "dst").remove_zero_bases_along_dim("register")
    S, D = _cols(s_ll), _cols(d_ll)
    reg_s, reg_d, lane_s, lane_d = S["register"], D["register"], S["lane"], D["lane"]
    dim = s_ll.get_total_out_dim_size_log2()
    blocks = _log2(s_ll.get_in_dim_size("block"))
    total = _log2(max(1, 128 // bitwidth))
    tiles_s = [((), (0, 1, 2))]
    tiles_d = [((), (0, 1, 2))]
    if bitwidth <= 32:
        if stmatrix:
            tiles_s.append(((0, 1), (2, 3, 4)))
        if ldmatrix:
            tiles_d.append(((0, 1), (2, 3, 4)))
        if bitwidth == 16:
            if stmatrix:
                tiles_s.append(((2, 3, 4), (0, 1)))
            if ldmatrix:
                tiles_d.append(((2, 3, 4), (0, 1)))

    def coords(a, v):
        """(register bits, lane bits) of flattened ``v`` in ``a``'s hardware coordinates (the
        earliest independent bases, as ``invertAndCompose``'s minimum-norm choice)."""
        A = _cols(a)
        span, cols, where = _Span(), [], []
        for name in ("register", "lane", "warp", "block"):
            for k, c in enumerate(A[name]):
                if c and span.add(c):
                    cols.append(c)
                    where.append((name, k))
        comb = _solve_in(cols, v) or 0
        reg = lane = 0
        for k, (name, idx) in enumerate(where):
            if comb >> k & 1:
                if name == "register":
                    reg |= 1 << idx
                elif name == "lane":
                    lane |= 1 << idx
        return reg, lane

    def tile_vbasis(a, b, n_a, n_b, ids_a, ids_b):
        if n_a < n_b:
            return tile_vbasis(b, a, n_b, n_a, ids_b, ids_a)
        A, B_ = _cols(a), _cols(b)
        vb = _tt_intersection(A["register"], B_["register"])
        if len(vb) < n_b:
            return None
        vb = vb[:n_b]
        la, lb = [A["lane"][i] for i in ids_a], [B_["lane"][i] for i in ids_b]
        if any(x == 0 for x in la + lb):
            return None
        for i in range(n_a - n_b):
            if not coords(a, B_["lane"][ids_b[i]])[0]:
                return None
        for ia, ib in zip(ids_a, list(ids_b)[len(ids_b) - len(ids_a):]):
            if coords(a, B_["lane"][ib])[1] != 1 << ia:
                return None
        return vb + lb

    def get_tile(addr, regs, lanes, vb):
        need = 3 - len(addr)
        tile = []
        for r in regs:
            if need == 0:
                break
            if r not in vb:
                tile.append(r)
                need -= 1
        if need > 0:
            return None
        return tile + [lanes[i] for i in addr]

    best = None
    for ts in tiles_s:
        for td in tiles_d:
            vb = tile_vbasis(s_ll, d_ll, total - len(ts[0]), total - len(td[0]), ts[0], td[0])
            if vb is None:
                continue
            tile_s = get_tile(ts[1], reg_s, lane_s, vb)
            tile_d = get_tile(td[1], reg_d, lane_d, vb)
            if tile_s is None or tile_d is None:
                continue
            leave = min(len(ts[0]) + len(ts[1]) - 3, len(td[0]) + len(td[1]) - 3)
            seg, reps = _tt_swizzle(reg_s, reg_d, bitwidth, vb, tile_s, tile_d, dim, leave)
            conflicts = (1 << len(_tt_intersection(seg, tile_s))) + (1 << len(_tt_intersection(seg, tile_d))) - 2
            if best is None or conflicts < best[0] or (conflicts == best[0] and reps > best[1]):
                best = (conflicts, reps)
    if best is None:
        vb = _tt_vbasis(reg_s, reg_d, lane_s, lane_d, bitwidth)

        def vec_size(regs):
            i = 0
            for v in vb:
                if i < len(regs) and regs[i] == v:
                    i += 1
                else:
                    return i
            return len(vb)
        tile_s, tile_d = list(lane_s), list(lane_d)
        for side in ("s", "d"):
            n = vec_size(reg_s if side == "s" else reg_d)
            if (1 << n) * bitwidth > 32:
                drop = _log2((1 << n) * bitwidth // 32)
                if side == "s":
                    tile_s = tile_s[:len(tile_s) - drop]
                else:
                    tile_d = tile_d[:len(tile_d) - drop]
        tile_s = [b for b in tile_s if b not in vb]
        tile_d = [b for b in tile_d if b not in vb]
        _, reps = _tt_swizzle(reg_s, reg_d, bitwidth, vb, tile_s, tile_d, dim, 0)
        best = (0, reps)
    return max(1, (1 << (dim - best[1] - blocks)) * bitwidth // 8)


# ============================================================================ bank_conflicts


@dataclass(frozen=True)
class BankConflicts:
    wavefronts: int
    ideal_wavefronts: int
    instructions: int  # per thread
    vector: int  # elements per access
    instruction_bytes: int
    phase_cost: int  # wavefronts per phase; phase_cost - 1 is Gluon's bank_conflicts

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts


def _access_layouts(distributed: Any, shared: Any, shape: Sequence[int] | None, kind: str):
    """The (distributed, shared) LinearLayouts of a register <-> shared-memory access."""
    if kind not in ("load", "store"):
        raise ValueError("kind must be 'load' or 'store'")
    reg = _as_layout(distributed, shape, "distributed")
    smem = _as_layout(shared, shape, "shared", in_dims=("offset", "block"))
    if reg.out_dims != smem.out_dims:
        raise ValueError(f"the layouts cover different shapes: {list(reg.out_dims)} vs {list(smem.out_dims)}")
    return reg, smem


def bank_conflicts(distributed: Any, shared: Any, bitwidth: int, shape: Sequence[int] | None = None, *,
                   kind: str = "load") -> BankConflicts:
    """Wavefronts of ``ld.shared``/``st.shared`` moving a distributed tensor to/from a shared layout.

    ``distributed``: encoding or LinearLayout (register, lane, warp, block); ``shared``: encoding
    or LinearLayout (offset[, block]). Each thread accesses its registers at
    ``distributed.invert_and_compose(shared)``, vectorised over the largest set of registers at
    offsets ``1, 2, 4, ...`` (at most 16 bytes) that lane and warp offsets do not touch.
    ``kind="store"`` skips broadcast copies (free lanes/warps do not store, Triton's predicate);
    ``kind="load"`` counts every thread. Numbers are per CTA, under the bank model of
    :mod:`linear_layout.simt`.
    """
    reg, smem = _access_layouts(distributed, shared, shape, kind)
    elem_bytes = max(1, bitwidth // 8)
    cvt = reg.invert_and_compose(smem)
    oc = {name: [b[cvt.get_out_dim_index("offset")] for b in bases] for name, bases in cvt.bases}
    free = reg.get_free_variable_masks()
    reg_free = free["register"]
    lane_mask = free["lane"] if kind == "store" else 0
    warp_mask = free["warp"] if kind == "store" else 0
    lane_off = oc["lane"]
    warp_off = oc["warp"]
    thread_bits = 0
    for k, o in enumerate(lane_off):
        if not lane_mask >> k & 1:
            thread_bits |= o
    for k, o in enumerate(warp_off):
        if not warp_mask >> k & 1:
            thread_bits |= o
    regs = [o for k, o in enumerate(oc["register"]) if not reg_free >> k & 1]
    rs = set(regs)
    v = 0
    while (1 << v) in rs and not thread_bits & ((2 << v) - 1) and (2 << v) * elem_bytes <= MAX_ACCESS_BYTES:
        v += 1
    n_instr = (1 << len(regs)) >> v
    lane_active = [not lane_mask >> k & 1 for k in range(len(lane_off))]
    warp_active = [not warp_mask >> k & 1 for k in range(len(warp_off))]
    wave, ideal, cost = _count_wavefronts(lane_off, lane_active, warp_active, v, bitwidth, n_instr)
    return BankConflicts(wave, ideal, n_instr, 1 << v, (1 << v) * elem_bytes, cost)


def plan_local_access(distributed: Any, shared: Any, bitwidth: int, shape: Sequence[int] | None = None, *,
                      kind: str = "load") -> Access:
    """The accesses of ``ttg.local_store`` (``kind="store"``) or ``ttg.local_load`` (``"load"``)
    between a distributed layout and an explicit shared layout (``offset[, block] -> dim0..``).

    The per-element offsets are ``distributed.invert_and_compose(shared)``; the vector is the
    largest run of registers at offsets ``1, 2, 4, ...`` that thread offsets do not touch (at most
    16 bytes), the rule of :func:`bank_conflicts`, whose wavefronts it reproduces. The result is an
    :class:`Access` read exactly like a side of a :class:`SharedPlan` (one rep): stores under
    ``predicate`` (free lanes/warps do not store), loads followed by ``copies``.
    The shared layout must map offsets one-to-one onto the tensor (per CTA)."""
    reg, smem = _access_layouts(distributed, shared, shape, kind)
    offset_cols = _cols(smem)["offset"]
    n_bits = reg.get_total_out_dim_size_log2()
    if len(offset_cols) != n_bits or _rank(offset_cols) != n_bits:
        raise ValueError("the shared layout must map its offsets one-to-one onto the tensor")
    free = reg.get_free_variable_masks()
    side = _side(reg)
    to_off = [_solve_in(offset_cols, c) for c in side.reg + side.lane + side.warp]
    nr, nl = len(side.reg), len(side.lane)
    reg_off = [o for k, o in enumerate(to_off[:nr]) if not free["register"] >> k & 1]
    lane_mask = free["lane"] if kind == "store" else 0
    warp_mask = free["warp"] if kind == "store" else 0
    thread_bits = 0
    for k, o in enumerate(to_off[nr:nr + nl]):
        if not lane_mask >> k & 1:
            thread_bits |= o
    for k, o in enumerate(to_off[nr + nl:]):
        if not warp_mask >> k & 1:
            thread_bits |= o
    elem_bytes = max(1, bitwidth // 8)
    rs = set(reg_off)
    v = 0
    while (1 << v) in rs and not thread_bits & ((2 << v) - 1) and (2 << v) * elem_bytes <= MAX_ACCESS_BYTES:
        v += 1
    bases = {"vector": [], "bank": [], "segment": offset_cols, "reps": []}
    return _access(reg, bases, v, bitwidth, kind == "store")
