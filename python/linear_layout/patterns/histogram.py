"""`tt.histogram` in SIMT form, through shared memory: bins of width 1 from 0, values outside
`[0, bins)` (and masked-off ones) not counted, as Triton's interpreter (`np.histogram`).

Every thread stores its elements of the operand at their places of a scratch buffer (a masked-off
element as -1, which no bin counts), a `gpu.barrier`, then counts, for each of its result
registers, the stored values equal to that register's bin in an `scf.for` over the buffer.
(Triton counts with warp ballots and shared-memory atomics; this lowering does not use atomics on
shared memory, which the interpreter does not model.)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern

__all__ = ["HISTOGRAM", "HistogramPlan"]


@dataclass(frozen=True)
class HistogramPlan:
    elements: int  # the operand's (1-D) size: the scratch slots


def _plan(op: ir.OpView, launch: Launch) -> HistogramPlan:
    operation = op.operation
    source, result = operation.operands[0].type, operation.results[0].type
    if len(source.shape) != 1 or len(result.shape) != 1:
        raise LoweringError("tt.histogram of a tensor of rank other than 1 has no lowering")
    if not isinstance(source.element_type, ir.IntegerType) or source.element_type.width > 32:
        raise LoweringError("tt.histogram of other than integers up to 32 bits has no lowering")
    hardware_layout(source, launch)
    hardware_layout(result, launch)
    return HistogramPlan(source.shape[0])


def _emit(op: ir.OpView, launch: Launch, plan: HistogramPlan) -> list[ir.Value]:
    operation = op.operation
    source = operation.operands[0]
    builder = KernelBuilder(op, launch)
    index = buffer_index(op)
    if index is None:
        raise LoweringError("tt.histogram needs its workgroup buffer")
    buffer = workgroup_argument(op, index)
    i32, to_index = ir.IntegerType.get_signless(32), ir.IndexType.get()
    layout = hardware_layout(source.type, launch)
    values = cast_to(source, lowered_type(source.type, launch))
    mask = None
    if len(operation.operands) > 1:
        mask = cast_to(operation.operands[1], lowered_type(operation.operands[1].type, launch))
    for register in range(layout.get_in_dim_size("register")):
        place = builder.apply(layout, builder.hw_indices(register))["dim0"]
        value = vector.extract(values, [], [register])
        if value.type != i32:
            value = arith.extsi(i32, value)
        if mask is not None:
            value = arith.select(vector.extract(mask, [], [register]), value, builder.const_i32(-1))
        memref.store(value, buffer, [arith.index_castui(to_index, place)])
    gpu.barrier()
    result = operation.results[0]
    result_layout = hardware_layout(result.type, launch)
    element = result.type.element_type
    counts = []
    for register in range(result_layout.get_in_dim_size("register")):
        bin_index = builder.apply(result_layout, builder.hw_indices(register))["dim0"]
        zero = arith.constant(element, 0)
        loop = scf.ForOp(builder.const_index(0), builder.const_index(plan.elements), builder.const_index(1), [zero])
        with ir.InsertionPoint(loop.body):
            stored = memref.load(buffer, [loop.induction_variable])
            hit = arith.extui(element, arith.cmpi(arith.CmpIPredicate.eq, stored, bin_index))
            scf.yield_([arith.addi(loop.inner_iter_args[0], hit)])
        counts.append(loop.results[0])
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, counts), result.type)]


def _shared_use(op: ir.OpView, launch: Launch, plan: HistogramPlan) -> SharedUse:
    """One i32 slot per element of the operand (store | barrier | loads)."""
    return SharedUse(
        Scratch(ir.IntegerType.get_signless(32), plan.elements, pooled=True),
        (BufferAccess(Access.WRITE),),
        ends_with_reads=True,
    )


HISTOGRAM = SimtPattern(("tt.histogram",), _plan, _emit, shared=_shared_use)
