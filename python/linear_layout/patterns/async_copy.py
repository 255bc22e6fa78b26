"""Triton's software pipelines in SIMT form: `ttg.async_copy_global_to_local`,
`ttg.async_commit_group` and `ttg.async_wait` (upstream `nvvm.cp.async.shared.global`,
`nvvm.cp.async.commit.group`, `nvvm.cp.async.wait.group`), and the shared-memory views the
pipelined loops index: `ttg.memdesc_index`, `ttg.memdesc_subslice`, `ttg.memdesc_trans`,
`ttg.memdesc_reshape`.

A view is lowered to its i32 start (`shared_memory.lowered_view`): `memdesc_index` of buffer `i`
starts `i x` the buffer's elements further; a subslice, a transpose and a reshape keep the start
(the subslice's origin is the view's static XOR, the others' layouts are their result types').

An async copy is planned by `planning.async_copy.plan_async_copy` (a `ttg.local_store` of its
pointer tensor's layout, each vector store split into copies of `width` elements: the axis
info's, Triton's `getContiguity` of the pointers and `getMaskAlignment` of the mask, at most 16
bytes; at least 4, as cp.async needs), each one `cp.async` from the pointer of its first element
to its shared address; a mask is the copy's source size (0 bytes: the copy writes zeros, Triton's
`other = 0`). `.cg` for 16 bytes, `.ca` below (Triton's choice). Threads that repeat data (the
store predicate) do not copy. The copy writes its buffer (`SharedUse`) when it lands, at the
`ttg.async_wait` that retires it; the wait is `cp.async.wait.group num` then a barrier, as
Triton's Membar places one after every wait, so nothing is pending after it. Tokens are i32
zeros that nothing reads.
"""

from __future__ import annotations

import contextlib

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf, vector

from ..planning.async_copy import AsyncCopyPlan, plan_async_copy
from ..planning.layouts import PlannerError
from .common import CAST, cast_to
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import (
    ViewAddress,
    buffer_elements,
    in_allocation,
    lowered_view,
    memdesc_start,
    memdesc_view,
    reachable_bits,
    shared_buffer_of,
    shared_index,
    view_address,
    view_instructions,
)
from .simt_pattern import Access, BufferAccess, SharedUse, SimtPattern
from .triton_kernel import (
    VECTOR_ATTRIBUTE,
    access_memory,
    access_operands,
    check_access,
    element_offsets,
    global_pointers,
    lowered_operand,
)
from .vectors import element_bits, element_of

__all__ = [
    "ASYNC_COMMIT_GROUP",
    "ASYNC_COPY",
    "ASYNC_WAIT",
    "MEMDESC_VIEWS",
]


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def _zero_token(result_type: ir.Type) -> ir.Value:
    """A token: an i32 zero cast to the token type (nothing reads it)."""
    return cast_to(arith.constant(_i32(), 0), result_type)


# ---------------------------------------------------------------------------- views


def _check_view(op: ir.OpView, launch: Launch) -> None:
    operation = op.operation
    shared_buffer_of(operation.results[0].type)
    memdesc_view(operation.results[0])  # LoweringError: no ttg.local_alloc behind it, or a misaligned subslice


def _emit_view(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """The view's start (see the module docstring), cast to its memdesc type."""
    operation = op.operation
    source, result = operation.operands[0], operation.results[0]
    start = memdesc_start(source)
    if operation.name == "ttg.memdesc_index":
        step = arith.muli(operation.operands[1], arith.constant(_i32(), buffer_elements(result.type)))
        start = step if start is None else arith.addi(start, step)
    if start is None:
        start = arith.constant(_i32(), 0)
    return [lowered_view(start, memdesc_view(result), result.type)]


MEMDESC_VIEWS = SimtPattern(
    ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape"),
    _check_view,
    _emit_view,
)


# ---------------------------------------------------------------------------- cp.async


def _fast_dim(layout) -> int:
    """The tensor dim of the layout's first register basis (its order[0]; the last dim without one)."""
    for _, bases in layout.bases[:1]:
        for basis in bases:
            nonzero = [axis for axis, value in enumerate(basis) if value]
            if nonzero:
                return nonzero[0]
    return len(layout.get_out_dim_names()) - 1


def _zero_other(other: ir.Value | None) -> bool:
    if other is None:
        return True
    owner = other.owner
    while isinstance(owner, ir.OpView) and owner.operation.name == CAST:  # once lowered: a vector constant
        owner = owner.operation.operands[0].owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return False
    value = owner.operation.attributes["value"]
    if not isinstance(value, ir.DenseElementsAttr) or not value.is_splat:
        return False
    splat = value.get_splat_value()
    return isinstance(splat, (ir.FloatAttr, ir.IntegerAttr)) and splat.value == 0


def _global_width(operation: ir.Operation, element: ir.Type) -> int:
    """Elements one copy may read: Triton's `contiguity` attribute and, once `annotate_accesses`
    ran, the axis info's width (`ll.vector`: contiguity, alignment and the mask's constancy)."""
    width = 128 // element_bits(element)
    if "contiguity" in operation.attributes:
        width = min(width, ir.IntegerAttr(operation.attributes["contiguity"]).value)
    if VECTOR_ATTRIBUTE in operation.attributes:
        width = min(width, ir.IntegerAttr(operation.attributes[VECTOR_ATTRIBUTE]).value)
    return max(width, 1)


def _destination(operation: ir.Operation) -> ir.Value:
    destination = access_operands(operation).destination
    if destination is None:
        raise LoweringError("an async copy without its shared destination")
    return destination


def _check_copy(op: ir.OpView, launch: Launch) -> AsyncCopyPlan:
    check_access(op, launch)
    operation = op.operation
    operands = access_operands(operation)
    destination = _destination(operation)
    if not _zero_other(operands.other):
        raise LoweringError("an async copy's 'other' must be zero (cp.async fills masked elements with zeros)")
    memdesc_type = destination.type
    memdesc_view(destination)
    pointers = hardware_layout(operands.pointer.type, launch)
    distributed = in_allocation(pointers, memdesc_type)
    element = shared_buffer_of(memdesc_type).memdesc.element_type
    global_width = _global_width(operation, element)
    try:
        return plan_async_copy(
            distributed,
            shared_buffer_of(memdesc_type).layout,
            element_bits(element),
            global_width,
            _fast_dim(pointers),
        )
    except (ValueError, PlannerError) as error:
        raise LoweringError(f"cannot lower ttg.async_copy_global_to_local: {error}") from None


class _Pointers:
    """The shared and global pointers of one async copy."""

    def __init__(self, op: ir.OpView, where: ViewAddress, element: ir.Type) -> None:
        i64 = ir.IntegerType.get_signless(64)
        self.element = element
        self.shared_type = ir.Type.parse("!llvm.ptr<3>")
        self.global_type = ir.Type.parse("!llvm.ptr<1>")
        start = arith.index_cast(i64, memref.extract_aligned_pointer_as_index(where.buffer))
        self.shared_base = llvm.inttoptr(self.shared_type, start)

    def shared(self, index: ir.Value) -> ir.Value:
        i64 = ir.IntegerType.get_signless(64)
        offset = arith.index_cast(i64, index)
        return llvm.getelementptr(
            self.shared_type, self.shared_base, [offset], [-(2**31)], self.element, llvm.GEPNoWrapFlags.none
        )


def _emit_copy(op: ir.OpView, launch: Launch, plan: AsyncCopyPlan) -> list[ir.Value]:
    operation = op.operation
    operands = access_operands(operation)
    builder = KernelBuilder(op, launch)
    destination = _destination(operation)
    where = view_address(op, destination)
    element = shared_buffer_of(destination.type).memdesc.element_type
    access = plan.access
    base, instructions = view_instructions(builder, access, where)
    offsets = element_offsets(operands, launch)
    mask = lowered_operand(operands.mask, launch)
    pointers = _Pointers(op, where, element)
    firsts = [ins.registers[first] for ins in instructions for first in range(0, access.vector, plan.width)]
    scalars: dict = {}
    memory, _ = access_memory(op)
    sources = dict(zip(firsts, global_pointers(memory, [element_of(offsets, r, scalars) for r in firsts], element)))
    modifier = ir.Attribute.parse(f"#nvvm<load_cache_modifier {'cg' if plan.copy_bytes == 16 else 'ca'}>")
    full, empty = arith.constant(_i32(), plan.copy_bytes), arith.constant(_i32(), 0)
    thread_bits = reachable_bits(access.thread_offset)
    cond = builder.store_predicate(access.predicate)
    if_op = scf.IfOp(cond) if cond is not None else None
    with ir.InsertionPoint(if_op.then_block) if if_op is not None else contextlib.nullcontext():
        for ins in instructions:
            for first in range(0, access.vector, plan.width):
                register = ins.registers[first]
                index = shared_index(builder, base, ins.offset + first, thread_bits)
                source = sources[register]
                size = None
                if mask is not None:
                    size = arith.select(vector.extract(mask, [], [register]), full, empty)
                nvvm.cp_async_shared_global(pointers.shared(index), source, plan.copy_bytes, modifier, cp_size=size)
        if if_op is not None:
            scf.YieldOp([])
    return [_zero_token(operation.results[0].type)]


def _copy_use(op: ir.OpView, launch: Launch, plan: AsyncCopyPlan) -> SharedUse:
    """An async write of the destination buffer: after the reads and writes other warps made of
    it since the last barrier (WAR, WAW), but not after other copies in flight (a barrier orders
    no copy: each lands at its `ttg.async_wait`, whose barrier orders it for the other warps)."""
    return SharedUse(accesses=(BufferAccess(Access.ASYNC_WRITE, _destination(op.operation)),))


ASYNC_COPY = SimtPattern(("ttg.async_copy_global_to_local",), _check_copy, _emit_copy, shared=_copy_use)


# ---------------------------------------------------------------------------- groups


def _no_check(op: ir.OpView, launch: Launch) -> None:
    return None


def _emit_commit(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    nvvm.cp_async_commit_group()
    return [_zero_token(op.operation.results[0].type)]


_WAITS = ("ttg.async_wait", "nvvm.cp.async.wait.group")


def _followed_by_a_wait(op: ir.Operation) -> bool:
    """Whether the op after `op` in its block is another wait (lowered or not)."""
    following = ir.InsertionPoint.after(op).ref_operation  # the next op, None after the last: no list of the block
    return following is not None and following.operation.name in _WAITS


def _emit_wait(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`cp.async.wait.group num` (all but the `num` most recent groups land), then the barrier
    Triton's Membar puts after a wait, once after consecutive waits (the last one's)."""
    nvvm.cp_async_wait_group(ir.IntegerAttr(op.operation.attributes["num"]).value)
    if not _followed_by_a_wait(op.operation):
        gpu.barrier()
    return [_zero_token(op.operation.results[0].type)]


def _wait_use(op: ir.OpView, launch: Launch, plan: None) -> SharedUse:
    return SharedUse(synchronizes=True)


ASYNC_COMMIT_GROUP = SimtPattern(("ttg.async_commit_group",), _no_check, _emit_commit)
ASYNC_WAIT = SimtPattern(("ttg.async_wait",), _no_check, _emit_wait, shared=_wait_use)
