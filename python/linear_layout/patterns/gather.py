"""`tt.gather` in SIMT form: `out[..., i, ...] = src[..., idx[..., i, ...], ...]` along the axis.

Inside each warp where the layouts allow (`planning.layout_ops.warp_local_gather`, Triton's
`isWarpLocal`/`emitWarpLocalGather`): the source's axis is spread over the registers and lanes of
a warp only, and the source and index layouts agree off the axis; for each index register, the
source lane is the thread's lane with its axis bits replaced by the index's, one `gpu.shuffle
idx` per candidate source register (the register bits along the axis), and a `select` tree by
the index's register bits. No shared memory.

Otherwise through shared memory: every thread stores its elements of `src` at their row-major places of a scratch buffer (one slot
per element), a `gpu.barrier`, then loads, for each of its registers of `idx` (the result has
`idx`'s layout), the element whose index is its own with the axis coordinate replaced by the
index value. An index outside the axis is undefined in Triton; here the interpreter reports the
out-of-bounds access.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from ..planning.layout_ops import WarpLocalGather, warp_local_gather
from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern
from .vectors import select_tree, shuffle_casts

__all__ = ["GATHER", "GatherPlan"]


@dataclass(frozen=True)
class GatherPlan:
    axis: int
    source_shape: tuple[int, ...]
    element: ir.Type
    warp_local: WarpLocalGather | None = None

    @property
    def elements(self) -> int:
        total = 1
        for size in self.source_shape:
            total *= size
        return total


def _plan(op: ir.OpView, launch: Launch) -> GatherPlan:
    operation = op.operation
    source, indices = operation.operands
    for value in (source, indices, operation.results[0]):
        hardware_layout(value.type, launch)  # LoweringError when a layout does not fit the launch
    if hardware_layout(operation.results[0].type, launch) != hardware_layout(indices.type, launch):
        raise LoweringError("tt.gather: the result and the indices have different layouts")
    axis = operation.attributes["axis"].value
    local = warp_local_gather(hardware_layout(source.type, launch), hardware_layout(indices.type, launch), axis)
    return GatherPlan(axis, tuple(source.type.shape), source.type.element_type, local)


def _flat(builder: KernelBuilder, coordinates: list[ir.Value], shape: tuple[int, ...]) -> ir.Value:
    index = builder.const_i32(0)
    for coordinate, size in zip(coordinates, shape):
        index = arith.addi(arith.muli(index, builder.const_i32(size)), coordinate)
    return arith.index_castui(ir.IndexType.get(), index)


def _index_i32(value: ir.Value) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    if value.type == i32:
        return value
    return arith.trunci(i32, value) if value.type.width > 32 else arith.extsi(i32, value)


def _bit_to(builder: KernelBuilder, value: ir.Value, bit: int, to: int) -> ir.Value:
    """Bit `bit` of `value` moved to bit `to` (i32)."""
    masked = arith.andi(value, builder.const_i32(1 << bit))
    if to > bit:
        return arith.shli(masked, builder.const_i32(to - bit))
    return arith.shrui(masked, builder.const_i32(bit - to)) if to < bit else masked


def _shuffled(value: ir.Value, lane: ir.Value, width: ir.Value) -> ir.Value:
    """`gpu.shuffle idx` of any element type (narrow ones through i32)."""
    if value.type.width < 32:
        to, back = shuffle_casts(value.type)
        return back(gpu.ShuffleOp(to(value), lane, width, gpu.ShuffleMode.IDX).results[0])
    return gpu.ShuffleOp(value, lane, width, gpu.ShuffleMode.IDX).results[0]


def _emit_warp_local(op: ir.OpView, launch: Launch, local: WarpLocalGather) -> list[ir.Value]:
    operation = op.operation
    source, indices = operation.operands
    builder = KernelBuilder(op, launch)
    values = cast_to(source, lowered_type(source.type, launch))
    index_values = cast_to(indices, lowered_type(indices.type, launch))
    registers = hardware_layout(indices.type, launch).get_in_dim_size("register")
    width = builder.const_i32(launch.threads_per_warp)
    own_lane = arith.andi(builder.lane, builder.const_i32(~local.lane_mask))
    gathered = []
    for register in range(registers):
        along = _index_i32(vector.extract(index_values, [], [register]))
        lane = own_lane
        for axis_bit, lane_bit in local.lane_steps:
            lane = arith.ori(lane, _bit_to(builder, along, axis_bit, lane_bit))
        first = register & ~local.register_mask
        candidates = []
        for choice in range(1 << len(local.register_steps)):
            source_register = first | sum(
                1 << bit for k, (_, bit) in enumerate(local.register_steps) if choice >> k & 1
            )
            candidates.append(_shuffled(vector.extract(values, [], [source_register]), lane, width))
        conds = [
            arith.cmpi(arith.CmpIPredicate.ne, _bit_to(builder, along, axis_bit, 0), builder.const_i32(0))
            for axis_bit, _ in local.register_steps
        ]
        gathered.append(select_tree(candidates, conds))
    target = ir.VectorType(lowered_type(operation.results[0].type, launch))
    return [cast_to(vector.from_elements(target, gathered), operation.results[0].type)]


def _emit(op: ir.OpView, launch: Launch, plan: GatherPlan) -> list[ir.Value]:
    if plan.warp_local is not None:
        return _emit_warp_local(op, launch, plan.warp_local)
    operation = op.operation
    source, indices = operation.operands
    builder = KernelBuilder(op, launch)
    index = buffer_index(op)
    if index is None:
        raise LoweringError("tt.gather needs its workgroup buffer")
    buffer = workgroup_argument(op, index)
    source_layout = hardware_layout(source.type, launch)
    values = cast_to(source, lowered_type(source.type, launch))
    rank = len(plan.source_shape)
    for register in range(source_layout.get_in_dim_size("register")):
        place = builder.apply(source_layout, builder.hw_indices(register))
        coordinates = [place[f"dim{d}"] for d in range(rank)]
        memref.store(vector.extract(values, [], [register]), buffer, [_flat(builder, coordinates, plan.source_shape)])
    gpu.barrier()
    index_layout = hardware_layout(indices.type, launch)
    index_values = cast_to(indices, lowered_type(indices.type, launch))
    loaded = []
    for register in range(index_layout.get_in_dim_size("register")):
        place = builder.apply(index_layout, builder.hw_indices(register))
        coordinates = [place[f"dim{d}"] for d in range(rank)]
        coordinates[plan.axis] = _index_i32(vector.extract(index_values, [], [register]))
        loaded.append(memref.load(buffer, [_flat(builder, coordinates, plan.source_shape)]))
    result = operation.results[0]
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, loaded), result.type)]


def _shared_use(op: ir.OpView, launch: Launch, plan: GatherPlan) -> SharedUse:
    """One slot per element of the source (store | barrier | load, as a conversion); none inside a warp."""
    if plan.warp_local is not None:
        return SharedUse()
    return SharedUse(
        Scratch(plan.element, plan.elements, pooled=True), (BufferAccess(Access.WRITE),), ends_with_reads=True
    )


GATHER = SimtPattern(("tt.gather",), _plan, _emit, shared=_shared_use)
