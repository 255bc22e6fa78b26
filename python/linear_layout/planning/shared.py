r"""The shared-memory strategy: instructions, offsets and costs of both sides (pure).

Given a candidate shared layout (:mod:`linear_layout.planning.swizzle`), each side becomes an
:class:`Access`: its vector instructions (registers in vector order at ``thread offset ^
offset``), the runtime thread offset ``(lane, warp) -> offset``, the store predicate (broadcast
copies are written once), the load copies (broadcast registers) and its exact wavefronts under
the bank model (:mod:`linear_layout.planning.banks`). :func:`plan_shared` keeps the best
candidate whose scratch is within Triton's (:mod:`linear_layout.planning.triton_scratch`).
:func:`plan_local_access` plans the accesses of ``ttg.local_load``/``local_store`` against an
explicit shared layout with the same machinery.

Offsets are in elements from the start of the scratch buffer; see
:class:`linear_layout.planning.ConversionPlan` for how an emitter reads a plan.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..core.gf2 import EchelonBasis, rank
from ..core.layout import LinearLayout
from .banks import access_layouts, active_offset_bits, count_wavefronts, widest_vector
from .layouts import LayoutLike, PlannerError, SideColumns, flat_columns, side_columns, unflatten
from .swizzle import CANDIDATE_CONFIGS, SmemBases, max_vector_bits, smem_bases
from .triton_scratch import triton_scratch_bytes

__all__ = [
    "Access",
    "Instruction",
    "SharedPlan",
    "offset_xors",
    "plan_local_access",
    "plan_shared",
    "reachable_bits",
]


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
    predicate: Mapping[str, int]  # free-variable masks: a thread accesses iff all (dim & mask) == 0 (read-only)
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
    """A shared-memory exchange: the shared layout, the repetition loop and both sides."""

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


# ---------------------------------------------------------------------------- one side


@dataclass(frozen=True)
class SharedCoordinates:
    """Each hardware basis of one side as ``(offset, rep)`` in the shared layout."""

    registers: tuple[tuple[int, int], ...]
    lanes: tuple[tuple[int, int], ...]
    warps: tuple[tuple[int, int], ...]
    blocks: tuple[tuple[int, int], ...]
    offset_bits: int
    rep_bits: int

    @property
    def lane_offsets(self) -> list[int]:
        return [o for o, _ in self.lanes]

    @property
    def warp_offsets(self) -> list[int]:
        return [o for o, _ in self.warps]


def _shared_coordinates(
    layout: LinearLayout, side: SideColumns, offset_bases: Sequence[int], rep_bases: Sequence[int]
) -> SharedCoordinates:
    blocks = flat_columns(layout)["block"]
    echelon = EchelonBasis()
    for index, column in enumerate([*offset_bases, *rep_bases, *(c for c in blocks if c)]):
        echelon.insert(column, index)
    n_offset, n_rep = len(offset_bases), len(rep_bases)

    def split(vector: int) -> tuple[int, int]:
        combination = echelon.solve(vector)
        if combination is None:
            raise PlannerError("the shared layout does not hold every element of the tensor")
        return combination & ((1 << n_offset) - 1), (combination >> n_offset) & ((1 << n_rep) - 1)

    coordinates = SharedCoordinates(
        tuple(map(split, side.registers)),
        tuple(map(split, side.lanes)),
        tuple(map(split, side.warps)),
        tuple(map(split, blocks)),
        n_offset,
        n_rep,
    )
    if any(rep for _, rep in coordinates.lanes + coordinates.warps):
        raise PlannerError("thread offsets must not select repetitions")
    return coordinates


def _predicate(side: SideColumns, is_store: bool) -> Mapping[str, int]:
    if is_store:
        return MappingProxyType({"lane": side.free_lane, "warp": side.free_warp, "block": side.free_block})
    return MappingProxyType({"lane": 0, "warp": 0, "block": 0})


def _check_alignment(coordinates: SharedCoordinates, predicate: Mapping[str, int], vector_bits: int) -> None:
    mask = (1 << vector_bits) - 1
    for dim, offsets in (("lane", coordinates.lane_offsets), ("warp", coordinates.warp_offsets)):
        if any(o & mask for k, o in enumerate(offsets) if not predicate[dim] >> k & 1):
            raise PlannerError(f"{dim} offsets must be aligned to the {1 << vector_bits}-element vector")


@dataclass(frozen=True)
class RegisterGroups:
    """The registers of one side grouped into vector instructions, and the broadcast copies."""

    instructions: tuple[Instruction, ...]
    copies: tuple[tuple[int, int], ...]


def _register_groups(
    coordinates: SharedCoordinates, free_register: int, vector_bits: int, thread_bits: int, is_store: bool
) -> RegisterGroups:
    """Skip free registers (store: written once; load: copies of an earlier register), group the
    others by ``(rep, offset without the vector bits)``."""
    vector_mask = (1 << vector_bits) - 1
    groups: dict[tuple[int, int], dict[int, int]] = {}
    copies = []
    first_of: dict[tuple[int, int], int] = {}
    for register in range(1 << len(coordinates.registers)):
        offset = rep = 0
        for k, (o, r) in enumerate(coordinates.registers):
            if register >> k & 1:
                offset ^= o
                rep ^= r
        if register & free_register:
            if not is_store:
                copies.append((register, first_of[(offset, rep)]))
            continue
        first_of[(offset, rep)] = register
        groups.setdefault((rep, offset & ~vector_mask), {})[offset & vector_mask] = register
    instructions = []
    for (rep, base), members in sorted(groups.items()):
        if len(members) != 1 << vector_bits:
            raise PlannerError(f"the registers do not fill whole {1 << vector_bits}-element vectors")
        instructions.append(
            Instruction(rep, tuple(members[k] for k in range(1 << vector_bits)), base, not (base & thread_bits))
        )
    return RegisterGroups(tuple(instructions), tuple(copies))


def _offset_layouts(coordinates: SharedCoordinates) -> tuple[LinearLayout, LinearLayout]:
    """``(register, lane, warp, block) -> (offset, reps)`` and ``(lane, warp) -> offset``."""
    sizes = [1 << coordinates.offset_bits, 1 << coordinates.rep_bits]
    offsets = LinearLayout.from_bases(
        [
            (d, [[o, r] for o, r in cols])
            for d, cols in (
                ("register", coordinates.registers),
                ("lane", coordinates.lanes),
                ("warp", coordinates.warps),
                ("block", coordinates.blocks),
            )
        ],
        ["offset", "reps"],
        sizes,
        require_surjective=False,
    )
    thread_offset = LinearLayout.from_bases(
        [("lane", [[o] for o in coordinates.lane_offsets]), ("warp", [[o] for o in coordinates.warp_offsets])],
        ["offset"],
        sizes[:1],
        require_surjective=False,
    )
    return offsets, thread_offset


def plan_access(
    layout: LinearLayout,
    offset_bases: Sequence[int],
    rep_bases: Sequence[int],
    vector_bits: int,
    bitwidth: int,
    is_store: bool,
) -> Access:
    """Offsets, instructions and wavefronts of one side: ``layout`` moving to (``is_store``) or
    from a shared layout with flattened offset bases ``offset_bases`` (low bits first) and
    repetition bases ``rep_bases``, with ``2**vector_bits``-element vectors.

    Raises :class:`PlannerError` when the shared layout cannot serve the access."""
    side = side_columns(layout)
    coordinates = _shared_coordinates(layout, side, offset_bases, rep_bases)
    predicate = _predicate(side, is_store)
    _check_alignment(coordinates, predicate, vector_bits)
    thread_bits = 0
    for offset in coordinates.lane_offsets + coordinates.warp_offsets:
        thread_bits |= offset
    groups = _register_groups(coordinates, side.free_register, vector_bits, thread_bits, is_store)
    lane_active = [not predicate["lane"] >> k & 1 for k in range(len(coordinates.lanes))]
    warp_active = [not predicate["warp"] >> k & 1 for k in range(len(coordinates.warps))]
    waves = count_wavefronts(
        coordinates.lane_offsets,
        lane_active,
        warp_active,
        vector_bits,
        bitwidth,
        len(groups.instructions),
        kind="store" if is_store else "load",
    )
    offsets, thread_offset = _offset_layouts(coordinates)
    return Access(
        vector=1 << vector_bits,
        instruction_bytes=(1 << vector_bits) * bitwidth // 8,
        instructions=groups.instructions,
        offsets=offsets,
        thread_offset=thread_offset,
        predicate=predicate,
        copies=groups.copies,
        wavefronts=waves.wavefronts,
        ideal_wavefronts=waves.ideal_wavefronts,
        phase_cost=waves.phase_cost,
    )


# ---------------------------------------------------------------------------- index-op model


def _matvec_ops(columns: Sequence[int], in_bits: int) -> int:
    """Ops of Triton's matrixVectorProd for ``x -> M x`` with ``M``'s columns ``columns``
    (``x`` has ``in_bits`` bits): one ``and`` per diagonal (skipped when the mask keeps all of
    ``x``), one shift per non-zero diagonal, and ``terms - 1`` ``or``/``xor`` to combine."""
    diagonals: dict[int, int] = {}
    for i, column in enumerate(columns):
        j = 0
        while column:
            if column & 1:
                diagonals[j - i] = diagonals.get(j - i, 0) | (1 << i)
            column >>= 1
            j += 1
    full = (1 << in_bits) - 1
    ops = sum((mask != full) + (d != 0) for d, mask in diagonals.items())
    return ops + max(0, len(diagonals) - 1)


def reachable_bits(layout: LinearLayout) -> int:
    """The OR of every basis of ``layout`` (one output dim): the bits its values may set.

    >>> reachable_bits(LinearLayout.from_bases([("lane", [[8], [16]])], ["offset"], [64], require_surjective=False))
    24
    """
    bits = 0
    for _, bases in layout.bases:
        for basis in bases:
            bits |= basis[0]
    return bits


def offset_xors(access: Access) -> int:
    """The ``xor`` ops of ``access``'s instruction offsets, as the emitter
    (``patterns/shared_memory.shared_index``) and Triton's ``lowerLdSt`` build them: the part of
    each offset on the bits the thread offsets may set is XORed into the thread base, the rest is
    an immediate; equal XORs are one op (CSE).

    Formula: ``|{ins.offset & reachable_bits(thread_offset)} - {0}|``.
    Postcondition: at most the number of non-additive instructions.
    Example: thread bits ``0b11000``, offsets 72, 104 and 64: one ``xor`` (``base ^ 8``), then the
    immediates 64, 96 and 64.
    """
    thread_bits = reachable_bits(access.thread_offset)
    return len({ins.offset & thread_bits for ins in access.instructions} - {0})


def _index_ops(store: Access, load: Access, lane_bits: int, warp_bits: int) -> int:
    """The predicted integer ops of a shared exchange's addresses: the lane and warp ids, each
    side's thread offset (Triton's ``matrixVectorProd``), each side's :func:`offset_xors` and the
    store predicate (``and`` + compare per mask)."""
    ops = 2  # lane = tid & (W-1), warp = tid >> log2(W)
    for access in (store, load):
        bases = dict(access.thread_offset.bases)
        ops += _matvec_ops([b[0] for b in bases["lane"]] + [b[0] for b in bases["warp"]], lane_bits + warp_bits)
        ops += offset_xors(access)
    ops += sum(2 for mask in store.predicate.values() if mask)  # and + compare
    return ops


# ---------------------------------------------------------------------------- the plan


def _smem_layout(bases: SmemBases, src: LinearLayout) -> LinearLayout:
    out_dims = src.out_dims
    items = [
        (name, [unflatten(v, out_dims) for v in vectors])
        for name, vectors in (
            ("vector", bases.vector),
            ("bank", bases.bank),
            ("segment", bases.segment),
            ("reps", bases.reps),
        )
    ]
    blocks = flat_columns(src)["block"]
    if blocks:
        items.append(("block", [unflatten(v, out_dims) for v in blocks]))
    return LinearLayout.from_bases(
        items, list(src.get_out_dim_names()), [s for _, s in out_dims], require_surjective=False
    )


def _candidate_plan(src: LinearLayout, dst: LinearLayout, bitwidth: int, bases: SmemBases) -> SharedPlan:
    store = plan_access(src, bases.offset_bases, bases.reps, bases.store_vector_bits, bitwidth, True)
    load = plan_access(dst, bases.offset_bases, bases.reps, bases.load_vector_bits, bitwidth, False)
    reps = 1 << len(bases.reps)
    index_ops = _index_ops(store, load, src.get_in_dim_size_log2("lane"), src.get_in_dim_size_log2("warp"))
    scratch = max(1, (1 << len(bases.offset_bases)) * bitwidth // 8)
    return SharedPlan(
        smem=_smem_layout(bases, src),
        num_reps=reps,
        scratch_bytes=scratch,
        store=store,
        load=load,
        barriers=2 * reps - 1,
        index_ops=index_ops,
    )


def _cost(plan: SharedPlan) -> tuple[int, int, int, int, int]:
    """(bank conflicts, wavefronts, instructions, index ops, scratch): smaller is better."""
    store, load = plan.store, plan.load
    return (
        store.bank_conflicts + load.bank_conflicts,
        store.wavefronts + load.wavefronts,
        len(store.instructions) + len(load.instructions),
        plan.index_ops,
        plan.scratch_bytes,
    )


def plan_shared(
    src: LinearLayout,
    dst: LinearLayout,
    bitwidth: int,
    max_reps: int | None,
    *,
    word: Sequence[int] = (),
    bound: int | None = None,
) -> SharedPlan:
    """The best candidate shared layout for converting ``src`` to ``dst`` (hardware layouts).

    Candidates: extension side x in-word fill x bank source (:data:`CANDIDATE_CONFIGS`), first
    with as many common register directions in the vector as fit in 16 bytes, then with fewer
    (the others become repetitions). Scratch is bounded by Triton's
    (:func:`triton_scratch_bytes`): among the candidates within the bound, the winner has the
    fewest (bank conflicts, wavefronts, instructions, index ops, scratch); the vector is narrowed
    only while no candidate is within the bound. When none ever is (``max_reps`` forbids the
    repetitions), the smallest scratch wins, then the same key.

    ``word`` (the packed exchange, :mod:`linear_layout.planning.packed`): common register
    directions forced into the vector's first bases (the vector never narrows below them);
    ``bound``: the scratch bound when it is not ``src -> dst``'s own (a packed exchange plans
    swapped layouts under the original conversion's bound).

    Raises :class:`PlannerError` for conversions between CTAs and when no candidate exists."""
    if flat_columns(src)["block"] != flat_columns(dst)["block"]:
        raise PlannerError("unsupported: the conversion moves data between CTAs (distributed shared memory)")
    if bound is None:
        bound = triton_scratch_bytes(src, dst, bitwidth)
    max_bits = max(max_vector_bits(bitwidth), len(word))
    best: tuple[tuple[int, ...], SharedPlan] | None = None
    planned: dict[SmemBases, SharedPlan] = {}  # configs often give equal bases: each is planned once
    for cap in range(max_bits, len(word) - 1, -1):
        within: tuple[tuple[int, ...], SharedPlan] | None = None
        for config in CANDIDATE_CONFIGS:
            bases = smem_bases(src, dst, bitwidth, config, max_reps, None if cap == max_bits else cap, word)
            if bases is None or (cap < max_bits and len(bases.vector) != cap):
                continue  # infeasible, or the same candidate as a wider cap
            if bases not in planned:
                planned[bases] = _candidate_plan(src, dst, bitwidth, bases)
            plan = planned[bases]
            key = _cost(plan)
            if plan.scratch_bytes <= bound and (within is None or key < within[0]):
                within = (key, plan)
            if best is None or (plan.scratch_bytes, *key) < best[0]:
                best = ((plan.scratch_bytes, *key), plan)
        if within is not None:
            return within[1]
    if best is None:
        raise PlannerError("no shared layout serves both sides of this conversion")
    return best[1]


#: The most registers per thread a local access is planned for: far past any kernel Triton
#: compiles (matmul_f32 for gfx1100 loads 1024), far below a 2**31-row tensor (hours).
MAX_ACCESS_REGISTERS = 2**16


def plan_local_access(
    distributed: LayoutLike,
    shared: LayoutLike,
    bitwidth: int,
    shape: Sequence[int] | None = None,
    *,
    kind: str = "load",
) -> Access:
    """The accesses of ``ttg.local_store`` (``kind="store"``) or ``ttg.local_load`` (``"load"``)
    between a distributed layout and an explicit shared layout (``offset[, block] -> dim0..``).

    The per-element offsets are ``distributed.invert_and_compose(shared)``; the vector is the
    largest run of registers at offsets ``1, 2, 4, ...`` that thread offsets do not touch (at most
    16 bytes), the rule of :func:`~linear_layout.planning.bank_conflicts`, whose wavefronts it
    reproduces. The result is an :class:`Access` read exactly like a side of a
    :class:`SharedPlan` (one rep): stores under ``predicate`` (free lanes/warps do not store),
    loads followed by ``copies``.

    Requires: the shared layout maps offsets one-to-one onto the tensor (per CTA); otherwise
    raises :class:`PlannerError`. Planned once per distinct access (a lowering asks for each
    access in its check, its allocation and its rewrite)."""
    registers, smem = access_layouts(distributed, shared, shape, kind)
    return _local_access(registers, smem, int(bitwidth), kind)


@functools.lru_cache(maxsize=4096)  # accesses are immutable; a PlannerError is raised, never cached
def _local_access(registers: LinearLayout, smem: LinearLayout, bitwidth: int, kind: str) -> Access:
    """`plan_local_access` on the layouts `access_layouts` made."""
    if registers.get_in_dim_size("register") > MAX_ACCESS_REGISTERS:  # the per-register grouping would run for hours
        raise PlannerError(
            f"{registers.get_in_dim_size('register')} registers per thread, more than the access planner's "
            f"limit of {MAX_ACCESS_REGISTERS}"
        )
    offset_columns = flat_columns(smem)["offset"]
    n_bits = registers.get_total_out_dim_size_log2()
    if len(offset_columns) != n_bits or rank(offset_columns) != n_bits:
        raise PlannerError("the shared layout must map its offsets one-to-one onto the tensor")
    side = side_columns(registers)
    echelon = EchelonBasis()
    for index, column in enumerate(offset_columns):
        echelon.insert(column, index)
    to_offset = [echelon.solve(c) or 0 for c in side.registers + side.lanes + side.warps]
    n_registers, n_lanes = len(side.registers), len(side.lanes)
    register_offsets = [o for k, o in enumerate(to_offset[:n_registers]) if not side.free_register >> k & 1]
    lane_mask = side.free_lane if kind == "store" else 0
    warp_mask = side.free_warp if kind == "store" else 0
    thread_bits = active_offset_bits(to_offset[n_registers : n_registers + n_lanes], lane_mask) | active_offset_bits(
        to_offset[n_registers + n_lanes :], warp_mask
    )
    vector_bits = widest_vector(register_offsets, thread_bits, bitwidth)
    return plan_access(registers, offset_columns, (), vector_bits, bitwidth, kind == "store")
