"""`tt.histogram` in SIMT form, counting with atomics on shared memory as Triton's
`HistogramOpToLLVM`: bins of width 1 from 0, values outside `[0, bins)` (and masked-off ones) not
counted, as Triton's interpreter (`np.histogram`).

One i32 slot per bin in a scratch buffer: every thread zeroes the bins of its result registers
(threads holding the same bin store the same 0), a `gpu.barrier`, then adds, for each of its
operand's registers, `1` to the slot of its value with `memref.atomic_rmw addi` (an element
outside the bins, masked off, or held by another thread or register too whose free bits are 0,
adds `0` to slot `value & (bins - 1)`: no branch, every atomic in bounds, each element counted
once), a `gpu.barrier`, and each result register loads its bin. Scratch `bins * 4` bytes,
two barriers.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from ..core.layout import LinearLayout
from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern

__all__ = ["HISTOGRAM", "HistogramPlan"]


@dataclass(frozen=True)
class HistogramPlan:
    bins: int  # the result's (1-D) size: the scratch slots


def _plan(op: ir.OpView, launch: Launch) -> HistogramPlan:
    operation = op.operation
    source, result = operation.operands[0].type, operation.results[0].type
    if len(source.shape) != 1 or len(result.shape) != 1:
        raise LoweringError("tt.histogram of a tensor of rank other than 1 has no lowering")
    if not isinstance(source.element_type, ir.IntegerType) or source.element_type.width > 32:
        raise LoweringError("tt.histogram of other than integers up to 32 bits has no lowering")
    if result.element_type != ir.IntegerType.get_signless(32):
        raise LoweringError("tt.histogram into other than i32 counts has no lowering")
    hardware_layout(source, launch)
    hardware_layout(result, launch)
    return HistogramPlan(result.shape[0])


def _counted(builder: KernelBuilder, value: ir.Value, keep: ir.Value | None, bins: int) -> tuple[ir.Value, ir.Value]:
    """(slot, increment) of one element: its bin and 1 when it counts, else `value & (bins - 1)` and 0."""
    i32 = ir.IntegerType.get_signless(32)
    if value.type != i32:
        value = arith.extsi(i32, value)
    counts = arith.cmpi(arith.CmpIPredicate.ult, value, builder.const_i32(bins))  # negatives are large unsigned
    if keep is not None:
        counts = arith.andi(counts, keep)
    slot = arith.andi(value, builder.const_i32(bins - 1))
    return arith.index_castui(ir.IndexType.get(), slot), arith.extui(i32, counts)


def _counted_registers(layout: LinearLayout) -> list[int]:
    """The registers that count their element: one of each set holding the same element."""
    free = layout.get_free_variable_masks().get("register", 0)
    return [register for register in range(layout.get_in_dim_size("register")) if not register & free]


def _owner(builder: KernelBuilder, layout: LinearLayout) -> ir.Value | None:
    """Whether this thread counts its elements (i1): the one of the lanes and warps holding the
    same elements whose free bits are 0; None when no lane or warp repeats an element."""
    masks = layout.get_free_variable_masks()
    bits = [(index, masks.get(dim, 0)) for dim, index in (("lane", builder.lane), ("warp", builder.warp))]
    owner = None
    for index, free in bits:
        if free:
            zero = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(index, builder.const_i32(free)), builder.const_i32(0))
            owner = zero if owner is None else arith.andi(owner, zero)
    return owner


def _emit(op: ir.OpView, launch: Launch, plan: HistogramPlan) -> list[ir.Value]:
    operation = op.operation
    source, result = operation.operands[0], operation.results[0]
    builder = KernelBuilder(op, launch)
    index = buffer_index(op)
    if index is None:
        raise LoweringError("tt.histogram needs its workgroup buffer")
    buffer = workgroup_argument(op, index)
    to_index = ir.IndexType.get()
    result_layout = hardware_layout(result.type, launch)
    bins = [
        arith.index_castui(to_index, builder.apply(result_layout, builder.hw_indices(register))["dim0"])
        for register in range(result_layout.get_in_dim_size("register"))
    ]
    for place in bins:
        memref.store(builder.const_i32(0), buffer, [place])
    gpu.barrier()
    layout = hardware_layout(source.type, launch)
    values = cast_to(source, lowered_type(source.type, launch))
    mask = None
    if len(operation.operands) > 1:
        mask = cast_to(operation.operands[1], lowered_type(operation.operands[1].type, launch))
    owner = _owner(builder, layout)
    for register in _counted_registers(layout):
        keep = vector.extract(mask, [], [register]) if mask is not None else None
        if owner is not None:
            keep = owner if keep is None else arith.andi(keep, owner)
        slot, increment = _counted(builder, vector.extract(values, [], [register]), keep, plan.bins)
        memref.atomic_rmw(arith.AtomicRMWKind.addi, increment, buffer, [slot])
    gpu.barrier()
    counts = [memref.load(buffer, [place]) for place in bins]
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, counts), result.type)]


def _shared_use(op: ir.OpView, launch: Launch, plan: HistogramPlan) -> SharedUse:
    """One i32 slot per bin (zero | barrier | atomics | barrier | loads)."""
    return SharedUse(
        Scratch(ir.IntegerType.get_signless(32), plan.bins, pooled=True),
        (BufferAccess(Access.WRITE),),
        ends_with_reads=True,
    )


HISTOGRAM = SimtPattern(("tt.histogram",), _plan, _emit, shared=_shared_use)
