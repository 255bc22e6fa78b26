"""Barrier insertion (Triton's Membar) for one kernel, from what each op's pattern declares
(`SharedUse.accesses`, `ends_with_reads`); this module knows no op.

A `gpu.barrier` goes before an op whose access to a buffer would race with what other warps did
to it since the last barrier: a read or write after a write (RAW, WAW), a write after a read
(WAR). An op with barriers inside (`ends_with_reads`: store | barrier | load) leaves only its
own reads pending after it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import gpu

from .allocation import OpUse, shared_uses
from .kernel import kernel_launch
from .shared_memory import allocating_op, buffer_index
from .simt_pattern import Access, BufferAccess

__all__ = ["insert_barriers"]


def _buffer(op: ir.OpView, access: BufferAccess) -> int | None:
    """The index of the workgroup buffer `access` of `op` touches; None before allocation."""
    if access.memdesc is None:
        return buffer_index(op)
    owner = allocating_op(access.memdesc)
    return buffer_index(owner.opview) if owner is not None else None


def _races(pending: set[Access], kind: Access) -> bool:
    return Access.WRITE in pending or (kind is Access.WRITE and Access.READ in pending)


def insert_barriers(kernel: gpu.GPUFuncOp, uses: list[OpUse] | None = None) -> None:
    """Triton's Membar for one kernel (after `allocate_shared_memory`). `uses` defaults to
    `shared_uses` of the kernel on its own (portable) launch."""
    if uses is None:
        uses = shared_uses(kernel, kernel_launch(kernel))
    pending: dict[int, set[Access]] = {}
    for op, use in uses:
        accesses = [(index, access.kind) for access in use.accesses if (index := _buffer(op, access)) is not None]
        if not accesses:
            continue
        if any(_races(pending.get(index, set()), kind) for index, kind in accesses):
            with ir.InsertionPoint(op), op.location:
                gpu.barrier()
            pending.clear()
        if use.ends_with_reads:
            pending = {index: {Access.READ} for index, _ in accesses}
        else:
            for index, kind in accesses:
                pending.setdefault(index, set()).add(kind)
