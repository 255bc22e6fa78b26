"""`ttg.convert_layout` in SIMT form: one decision by the planner, one emitter per strategy.

`conversion_plan(op, launch)` asks the single planner (`linear_layout.planning.plan_conversion`: no-op, register permutation,
warp shuffles, shared memory, the packed or the matrix exchange; see docs/conversions.md) and `emitter_of(plan)` looks up
the emitter of the plan's strategy in one table (`EMITTERS`), as Triton's `ConvertLayoutOpToLLVM.cpp` picks:

- `emit_permutation`: the destination registers are source registers of the same thread (no-op
  and register plans): at most one `vector.shuffle`;
- `emit_in_warp`: the in-warp rounds: per destination register a `select` tree over source
  registers, a `gpu.shuffle` when it comes from another lane, and the reader's `select` tree;
- `emit_shared`: store, barrier, load per repetition (a barrier between repetitions)
  through the kernel's scratch buffer of that element type, then the copies of broadcast
  registers (one final `vector.shuffle`); the packed exchange adds its register transposes;
  each barrier is `nvvm.bar.warp.sync` where the exchange stays inside each warp (Triton's
  `isCvtWarpSync`: always with one warp), else `gpu.barrier`;
- `emit_matrix_plan`: `ldmatrix`/`stmatrix` (`patterns/matrix_memory.py`).

The repetition loop is unrolled, with static register selection: an `scf.for` carrying the
registers through iter_args costs a register rotation per round that the stock pipeline does
not unroll away (docs/passes.md has the measured PTX).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, gpu, vector

from ..core.gf2 import apply_columns
from ..core.layout import LinearLayout
from ..core.targets import is_amdgpu_chip
from ..dialects.ttg import ConvertLayoutOp
from ..planning import Strategy, StrategyPlan, plan_conversion
from ..planning.plan import InWarpConversion, MatrixConversion, PackedConversion, SharedConversion
from ..planning.shared import Access as PlannedAccess
from .common import cast_to
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout, run_memo
from .matrix_memory import emit_matrix
from .shared_memory import (
    assemble,
    buffer_index,
    emit_loads,
    emit_stores,
    emit_swaps,
    exchange_barrier,
    from_words,
    scratch_word_element,
    to_words,
    warp_synchronous,
    workgroup_argument,
)
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern
from .vectors import element_bits, lowered_element, select_tree, shuffle_casts

__all__ = ["CONVERT_LAYOUT", "EMITTERS", "check_convert_layout", "conversion_plan", "emitter_of"]


@functools.lru_cache(maxsize=4096)
def _plan(src: LinearLayout, dst: LinearLayout, bits: int, chip: str | None, lanes: int) -> StrategyPlan:
    """The planner's plan (frozen), cached per arguments (errors are raised, not cached)."""
    return plan_conversion(src, dst, bitwidth=bits, chip=chip, threads_per_warp=lanes)


def conversion_plan(op: ConvertLayoutOp, launch: Launch) -> StrategyPlan:
    """The planner's answer for `op` on `launch` (LoweringError when it has none); once per pair
    of types during a pattern run over the kernel of `op`."""
    src_type, dst_type = op.src.type, op.result.type
    return run_memo(op, launch, (src_type, dst_type, launch), lambda: _type_plan(src_type, dst_type, launch))


def _type_plan(src_type: ir.RankedTensorType, dst_type: ir.RankedTensorType, launch: Launch) -> StrategyPlan:
    src, dst = hardware_layout(src_type, launch), hardware_layout(dst_type, launch)
    try:
        return _plan(src, dst, element_bits(src_type.element_type), launch.chip, launch.threads_per_warp)
    except ValueError as error:
        raise LoweringError(f"cannot convert {src_type} to {dst_type}: {error}") from None


def _is_permutation(plan: InWarpConversion) -> bool:
    return plan.reader_select is None and all(r.source_lane is None and r.register_select is None for r in plan.rounds)


def _register_vector(layout: LinearLayout, tensor_type: ir.RankedTensorType) -> ir.VectorType:
    """The per-thread vector of a tensor of the plan's (hardware) `layout`: one element per register."""
    return ir.VectorType.get([layout.get_in_dim_size("register")], lowered_element(tensor_type.element_type))


def emit_permutation(op: ConvertLayoutOp, launch: Launch, plan: InWarpConversion) -> ir.Value:
    value = cast_to(op.src, _register_vector(plan.src, op.src.type))
    src_full_of, dst_reduced_of = plan.src_registers.full_of, plan.dst_registers.reduced_of
    mask = [src_full_of[plan.rounds[dst_reduced_of[i]].register_base] for i in range(len(dst_reduced_of))]
    if mask != list(range(plan.src.get_in_dim_size("register"))):
        value = vector.shuffle(value, value, mask)
    return value


def _lane_bits(builder: KernelBuilder, select: LinearLayout, bits: int) -> list[ir.Value]:
    """`bit k of select(lane) != 0` for k < bits (`select`: lane -> register). A bit that
    depends on one lane bit j is `(lane & 1 << j) != 0`; the others come from the full product."""
    columns = [basis[0] for basis in dict(select.bases)["lane"]]
    product = None
    conds = []
    for k in range(bits):
        rows = [j for j, column in enumerate(columns) if column >> k & 1]
        if len(rows) == 1:
            masked = arith.andi(builder.lane, builder.const_i32(1 << rows[0]))
        else:
            if product is None:
                product = builder.apply(select, {"lane": builder.lane})["register"]
            masked = arith.andi(product, builder.const_i32(1 << k))
        conds.append(arith.cmpi(arith.CmpIPredicate.ne, masked, builder.const_i32(0)))
    return conds


class _InWarp:
    """The in-warp rounds of one conversion: what one rewrite shares between its rounds."""

    def __init__(self, op: ConvertLayoutOp, launch: Launch, plan: InWarpConversion) -> None:
        self.builder = KernelBuilder(op, launch)
        self.plan = plan
        self.src_full_of = plan.src_registers.full_of
        self.value = cast_to(op.src, _register_vector(plan.src, op.src.type))
        self.elements: dict[int, ir.Value] = {}
        self.source_lanes: dict[tuple, ir.Value] = {}
        self.lane_conditions: dict[tuple, list[ir.Value]] = {}
        self.to_shuffle, self.from_shuffle = shuffle_casts(op.src.type.element_type)
        self.width: ir.Value | None = None

    def register(self, j: int) -> ir.Value:
        if j not in self.elements:
            self.elements[j] = vector.extract(self.value, [], [self.src_full_of[j]])
        return self.elements[j]

    def conditions(self, select: LinearLayout | None, bits: int) -> list[ir.Value]:
        if select is None:
            return []
        if (select, bits) not in self.lane_conditions:
            self.lane_conditions[select, bits] = _lane_bits(self.builder, select, bits)
        return self.lane_conditions[select, bits]

    def source_lane(self, r) -> tuple[ir.Value, object]:
        builder = self.builder
        if r.xor_mode:
            return builder.const_i32(r.lane_xor), gpu.ShuffleMode.XOR
        key = (r.source_lane, r.lane_xor)
        if key not in self.source_lanes:
            offset = builder.apply(r.source_lane, {"lane": builder.lane})["lane"]
            if r.lane_xor:
                offset = arith.xori(offset, builder.const_i32(r.lane_xor))
            self.source_lanes[key] = offset
        return self.source_lanes[key], gpu.ShuffleMode.IDX

    def receive(self, r, provider_conds: list[ir.Value]) -> ir.Value:
        """What this thread receives in round `r`: the provided register, shuffled if needed."""
        basis = self.plan.select_basis
        candidates = [self.register(r.register_base ^ apply_columns(basis, t)) for t in range(1 << len(basis))]
        provided = select_tree(candidates, provider_conds)
        if r.source_lane is None:
            return provided
        self.width = self.width or self.builder.const_i32(self.builder.launch.threads_per_warp)
        offset, mode = self.source_lane(r)
        shuffled = gpu.ShuffleOp(self.to_shuffle(provided), offset, self.width, mode).results[0]
        return self.from_shuffle(shuffled)


def emit_in_warp(op: ConvertLayoutOp, launch: Launch, plan: InWarpConversion) -> ir.Value:
    rounds = _InWarp(op, launch, plan)
    provider_conds = rounds.conditions(plan.rounds[0].register_select, len(plan.select_basis))
    reader_conds = rounds.conditions(plan.reader_select, len(plan.reader_basis))
    received = [rounds.receive(r, provider_conds) for r in plan.rounds]
    reader = plan.reader_basis
    outputs = [
        select_tree([received[i ^ apply_columns(reader, t)] for t in range(1 << len(reader))], reader_conds)
        for i in range(len(plan.rounds))
    ]
    dst_reduced_of = plan.dst_registers.reduced_of
    return vector.from_elements(
        _register_vector(plan.dst, op.result.type), [outputs[dst_reduced_of[i]] for i in range(len(dst_reduced_of))]
    )


def _as_words(access: PlannedAccess) -> PlannedAccess:
    """`access` of 64-bit elements as pairs of 32-bit words (low word first): the same bytes at
    the same addresses, so that 64-bit conversions share the pooled i32 scratch (Triton's one
    scratch for every conversion) instead of a buffer of their own."""

    def words(registers: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(word for r in registers for word in (2 * r, 2 * r + 1))

    return dataclasses.replace(
        access,
        vector=2 * access.vector,
        instructions=tuple(
            dataclasses.replace(i, registers=words(i.registers), offset=2 * i.offset) for i in access.instructions
        ),
        copies=tuple(pair for r, s in access.copies for pair in ((2 * r, 2 * s), (2 * r + 1, 2 * s + 1))),
    )


def _word_base(builder: KernelBuilder, base: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
    doubled = arith.shli(base[0], builder.const_i32(1))
    return doubled, arith.index_castui(ir.IndexType.get(), doubled)


def emit_shared(op: ConvertLayoutOp, launch: Launch, plan: StrategyPlan) -> ir.Value:
    """Store, barrier, load per repetition (a barrier between repetitions), then the copies; 32-bit
    elements move as i32 words, 64-bit ones as pairs of them (`_as_words`)."""
    assert isinstance(plan, (SharedConversion, PackedConversion)), plan.strategy
    builder = KernelBuilder(op, launch)
    element = lowered_element(op.src.type.element_type)
    index, shared = buffer_index(op), plan.shared
    if index is None or shared is None:
        raise LoweringError("a shared-memory conversion needs its plan and its workgroup buffer")
    buffer = workgroup_argument(op, index)
    value = cast_to(op.src, builder.vector_type(op.src.type))
    if plan.packed is not None:  # the packed exchange: the source's register transposes first
        value = emit_swaps(builder, value, plan.packed.src_steps)
    store, load = shared.store, shared.load
    base_st = builder.thread_offsets(store.thread_offset)
    base_ld = builder.thread_offsets(load.thread_offset)
    result_type = builder.vector_type(op.result.type)
    words = scratch_word_element(element) != element
    if words and element_bits(element) == 64:
        store, load = _as_words(store), _as_words(load)
        base_st, base_ld = _word_base(builder, base_st), _word_base(builder, base_ld)
    if words:
        value, element = to_words(value), scratch_word_element(element)
    pieces: list[ir.Value] = []
    warp_only = _warp_barriers(plan, launch)
    for rep in range(shared.num_reps):
        if rep:
            exchange_barrier(warp_only)  # the previous repetition's loads are done (WAR)
        emit_stores(builder, buffer, value, store, [i for i in store.instructions if i.rep == rep], base_st)
        exchange_barrier(warp_only)
        pieces += emit_loads(builder, buffer, element, load, [i for i in load.instructions if i.rep == rep], base_ld)
    # pieces are in instruction order per rep; instructions are sorted by rep already
    if words:
        word_type = ir.VectorType.get([result_type.shape[0] * element_bits(result_type.element_type) // 32], element)
        result = from_words(assemble(load, pieces, element, word_type), result_type)
    else:
        result = assemble(load, pieces, element, result_type)
    return result if plan.packed is None else emit_swaps(builder, result, plan.packed.dst_steps[::-1])


def emit_registers(op: ConvertLayoutOp, launch: Launch, plan: StrategyPlan) -> ir.Value:
    """A plan inside a warp: one `vector.shuffle` when every destination register is a source
    register of the same thread, else the in-warp rounds."""
    assert isinstance(plan, InWarpConversion), plan.strategy
    return emit_permutation(op, launch, plan) if _is_permutation(plan) else emit_in_warp(op, launch, plan)


def emit_matrix_plan(op: ConvertLayoutOp, launch: Launch, plan: StrategyPlan) -> ir.Value:
    """`ldmatrix`/`stmatrix` instead of the vector accesses (patterns/matrix_memory.py)."""
    assert isinstance(plan, MatrixConversion), plan.strategy
    return emit_matrix(op, launch, plan.matrix, warp_synchronous(plan.src, plan.dst))


Emitter = Callable[[ConvertLayoutOp, Launch, StrategyPlan], ir.Value]

#: The one dispatch table: a strategy to its emitter.
EMITTERS: dict[Strategy, Emitter] = {
    Strategy.NOOP: emit_registers,
    Strategy.REGISTER: emit_registers,
    Strategy.SHUFFLE: emit_registers,
    Strategy.SHARED: emit_shared,
    Strategy.PACKED: emit_shared,
    Strategy.MATRIX: emit_matrix_plan,
}


def emitter_of(plan: StrategyPlan) -> Emitter:
    """The one emitter for the planner's decision."""
    return EMITTERS[plan.strategy]


def check_convert_layout(op: ConvertLayoutOp, launch: Launch) -> StrategyPlan:
    """The plan of `op`; LoweringError when the planner has none, or its element type cannot be shuffled."""
    plan = conversion_plan(op, launch)
    if isinstance(plan, InWarpConversion) and any(r.source_lane is not None for r in plan.rounds):
        try:
            shuffle_casts(op.src.type.element_type)
        except ValueError as error:
            raise LoweringError(f"cannot convert {op.src.type} to {op.result.type}: {error}") from None
    return plan


def _emit(op: ConvertLayoutOp, launch: Launch, plan: StrategyPlan) -> list[ir.Value]:
    return [cast_to(emitter_of(plan)(op, launch, plan), op.result.type)]


def _warp_barriers(plan: StrategyPlan, launch: Launch) -> bool:
    """Whether the exchange's barriers are warp barriers (`warp_synchronous`): NVIDIA's
    `bar.warp.sync`; for an AMD chip, which has none, every barrier is the workgroup's."""
    return warp_synchronous(plan.src, plan.dst) and not is_amdgpu_chip(launch.chip)


def _shared_use(op: ConvertLayoutOp, launch: Launch, plan: StrategyPlan) -> SharedUse:
    """A shared-memory plan's scratch (the matrix plan's size, if any), written then read back
    with barriers inside (store | barrier | load)."""
    if not plan.strategy.uses_shared_memory:
        return SharedUse()
    element = lowered_element(op.src.type.element_type)
    if plan.strategy is not Strategy.MATRIX or element_bits(element) == 32:
        element = scratch_word_element(element)
    scratch = Scratch(element, plan.scratch_bytes * 8 // element_bits(element), pooled=True)
    warp_only = _warp_barriers(plan, launch)
    return SharedUse(scratch, (BufferAccess(Access.WRITE),), ends_with_reads=True, warp_synchronous=warp_only)


CONVERT_LAYOUT = SimtPattern((ConvertLayoutOp,), check_convert_layout, _emit, shared=_shared_use)
