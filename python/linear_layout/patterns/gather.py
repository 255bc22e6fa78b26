"""`tt.gather` in SIMT form, through shared memory: `out[..., i, ...] = src[..., idx[..., i, ...], ...]`
along the axis.

Every thread stores its elements of `src` at their row-major places of a scratch buffer (one slot
per element), a `gpu.barrier`, then loads, for each of its registers of `idx` (the result has
`idx`'s layout), the element whose index is its own with the axis coordinate replaced by the
index value. An index outside the axis is undefined in Triton; here the interpreter reports the
out-of-bounds access. (Triton keeps a gather inside a warp with shuffles when the layouts allow
it, `efficient_layout`; that path is not lowered here: every gather goes through shared memory.)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern

__all__ = ["GATHER", "GatherPlan"]


@dataclass(frozen=True)
class GatherPlan:
    axis: int
    source_shape: tuple[int, ...]
    element: ir.Type

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
    return GatherPlan(operation.attributes["axis"].value, tuple(source.type.shape), source.type.element_type)


def _flat(builder: KernelBuilder, coordinates: list[ir.Value], shape: tuple[int, ...]) -> ir.Value:
    index = builder.const_i32(0)
    for coordinate, size in zip(coordinates, shape):
        index = arith.addi(arith.muli(index, builder.const_i32(size)), coordinate)
    return arith.index_castui(ir.IndexType.get(), index)


def _emit(op: ir.OpView, launch: Launch, plan: GatherPlan) -> list[ir.Value]:
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
    i32 = ir.IntegerType.get_signless(32)
    loaded = []
    for register in range(index_layout.get_in_dim_size("register")):
        place = builder.apply(index_layout, builder.hw_indices(register))
        coordinates = [place[f"dim{d}"] for d in range(rank)]
        along = vector.extract(index_values, [], [register])
        if along.type != i32:
            along = arith.trunci(i32, along) if along.type.width > 32 else arith.extsi(i32, along)
        coordinates[plan.axis] = along
        loaded.append(memref.load(buffer, [_flat(builder, coordinates, plan.source_shape)]))
    result = operation.results[0]
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, loaded), result.type)]


def _shared_use(op: ir.OpView, launch: Launch, plan: GatherPlan) -> SharedUse:
    """One slot per element of the source (store | barrier | load, as a conversion)."""
    return SharedUse(
        Scratch(plan.element, plan.elements, pooled=True), (BufferAccess(Access.WRITE),), ends_with_reads=True
    )


GATHER = SimtPattern(("tt.gather",), _plan, _emit, shared=_shared_use)
