"""`ttg.local_alloc` / `ttg.local_store` / `ttg.local_load` / `ttg.local_dealloc` in SIMT form.

A buffer with an explicit shared encoding is a view of the kernel's workgroup bytes (its
`ll.workgroup_buffer`, `allocation.py`); the accesses are those of `plan_local_access` (offsets
`distributed.invert_and_compose(shared)`), emitted like the two halves of a shared-memory
conversion. The barriers the buffer's read/write history needs are inserted before the ops by
`insert_barriers` (`barriers.py`) from what each pattern declares (`SharedUse`), not here.
"""

from __future__ import annotations

from mlir import ir

from ..dialects.ttg import LocalAllocOp, LocalLoadOp, LocalStoreOp
from ..planning import plan_local_access
from .common import cast_to
from .dot import operand_ldmatrix_load
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import (
    ViewAddress,
    assemble,
    buffer_elements,
    buffer_index,
    emit_loads,
    emit_stores,
    in_allocation,
    memdesc_view,
    shared_buffer_of,
    view_address,
    view_instructions,
    workgroup_argument,
)
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern
from .vectors import element_bits

__all__ = [
    "LOCAL_ALLOC",
    "LOCAL_DEALLOC",
    "LOCAL_LOAD",
    "LOCAL_STORE",
    "local_access",
]


def local_access(op: ir.OpView, tensor_type: ir.RankedTensorType, memdesc_type: ir.Type, kind: str, launch: Launch):
    """The planned accesses of a local store or load (LoweringError when there is no plan)."""
    distributed = in_allocation(hardware_layout(tensor_type, launch), memdesc_type)
    shared = shared_buffer_of(memdesc_type).layout
    try:
        return plan_local_access(distributed, shared, element_bits(tensor_type.element_type), kind=kind)
    except ValueError as error:  # PlannerError
        raise LoweringError(f"cannot lower {op.operation.name} of {tensor_type}: {error}") from None


def _emit_store(op: ir.OpView, tensor: ir.Value, where: ViewAddress, memdesc_type: ir.Type, launch: Launch) -> None:
    access = local_access(op, tensor.type, memdesc_type, "store", launch)
    builder = KernelBuilder(op, launch)
    value = cast_to(tensor, builder.vector_type(tensor.type))
    base, instructions = view_instructions(builder, access, where)
    emit_stores(builder, where.buffer, value, access, instructions, base)


def _check_alloc(op: LocalAllocOp, launch: Launch) -> None:
    shared_buffer_of(op.result.type)
    if op.src is not None:
        local_access(op, op.src.type, op.result.type, "store", launch)


def _emit_alloc(op: LocalAllocOp, launch: Launch, plan: None) -> list[ir.Value]:
    index = buffer_index(op)
    if index is None:
        raise LoweringError("a ttg.local_alloc needs its workgroup buffer: run allocate_shared_memory")
    buffer = workgroup_argument(op, index)
    if op.src is not None:
        _emit_store(op, op.src, ViewAddress(buffer, None, 0), op.result.type, launch)
    return [cast_to(buffer, op.result.type)]


def _check_buffer(memdesc_value: ir.Value) -> None:
    memdesc_view(memdesc_value)  # LoweringError when it does not come from a ttg.local_alloc


def _check_store(op: LocalStoreOp, launch: Launch) -> None:
    _check_buffer(op.dst)
    local_access(op, op.src.type, op.dst.type, "store", launch)


def _emit_local_store(op: LocalStoreOp, launch: Launch, plan: None) -> list[ir.Value]:
    _emit_store(op, op.src, view_address(op, op.dst), op.dst.type, launch)
    return []


def _check_load(op: LocalLoadOp, launch: Launch) -> None:
    _check_buffer(op.src)
    local_access(op, op.result.type, op.src.type, "load", launch)


def _emit_load(op: LocalLoadOp, launch: Launch, plan: None) -> list[ir.Value]:
    matrix = operand_ldmatrix_load(op, launch)  # ldmatrix where Triton uses it (dot operands)
    if matrix is not None:
        return [cast_to(matrix, op.result.type)]
    access = local_access(op, op.result.type, op.src.type, "load", launch)
    builder = KernelBuilder(op, launch)
    element = op.result.type.element_type
    where = view_address(op, op.src)
    base, instructions = view_instructions(builder, access, where)
    pieces = emit_loads(builder, where.buffer, element, access, instructions, base)
    return [cast_to(assemble(access, pieces, element, builder.vector_type(op.result.type)), op.result.type)]


def _alloc_use(op: LocalAllocOp, launch: Launch, plan: None) -> SharedUse:
    """A buffer of its own (one per leading index of a multi-buffered allocation, `N x` the
    shared layout's offsets), written when the alloc has a source."""
    element = shared_buffer_of(op.result.type).memdesc.element_type
    scratch = Scratch(element, buffer_elements(op.result.type), pooled=False)
    return SharedUse(scratch, (BufferAccess(Access.WRITE),) if op.src is not None else ())


def _store_use(op: LocalStoreOp, launch: Launch, plan: None) -> SharedUse:
    return SharedUse(accesses=(BufferAccess(Access.WRITE, op.dst),))


def _load_use(op: LocalLoadOp, launch: Launch, plan: None) -> SharedUse:
    return SharedUse(accesses=(BufferAccess(Access.READ, op.src),))


LOCAL_ALLOC = SimtPattern((LocalAllocOp,), _check_alloc, _emit_alloc, shared=_alloc_use)
LOCAL_STORE = SimtPattern((LocalStoreOp,), _check_store, _emit_local_store, shared=_store_use)
LOCAL_LOAD = SimtPattern((LocalLoadOp,), _check_load, _emit_load, shared=_load_use)


def _check_dealloc(op: ir.OpView, launch: Launch) -> None:
    _check_buffer(op.operation.operands[0])


def _emit_dealloc(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """Nothing: a `ttg.local_alloc`'s buffer lives to its last use, this dealloc among them
    (`allocation.py`), after which its bytes may serve another buffer; the barrier insertion
    orders that reuse. Triton's Membar places no barrier at a dealloc either (it reads and
    writes nothing)."""
    return []


LOCAL_DEALLOC = SimtPattern(("ttg.local_dealloc",), _check_dealloc, _emit_dealloc)
