"""Barrier insertion (Triton's Membar) for one kernel, from what each op's pattern declares
(`SharedUse.accesses`, `ends_with_reads`, `synchronizes`); this module knows no op.

A `gpu.barrier` goes before an op whose access to a buffer would race with what other warps did
to it since the last barrier: a read or write after a write (RAW, WAW), a write after a read
(WAR). An op with barriers inside (`ends_with_reads`: store | barrier | load) leaves only its
own reads pending after it; one whose inside barriers are warp barriers (`warp_synchronous`, a
conversion that stays inside each warp) adds its reads to what is pending, as Triton's Membar
does not clear the pending accesses for a warp-synchronous `convert_layout`.

Buffers whose lifetimes do not overlap may share bytes (`allocation.py`): an access to a buffer
races with what is pending on every buffer whose bytes it shares (`buffer_ranges`), as Membar
compares the allocation's byte intervals, so the reuse of a dead buffer's bytes waits for the
barrier that orders its last accesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu

from .allocation import OpUse, shared_uses
from .kernel import LoweringError, kernel_launch
from .shared_memory import buffer_index, buffer_ranges, memdesc_view
from .simt_pattern import Access, BufferAccess

__all__ = ["insert_barriers"]


def _buffer(op: ir.OpView, access: BufferAccess) -> int | None:
    """The index of the workgroup buffer `access` of `op` touches; None before allocation."""
    if access.memdesc is None:
        return buffer_index(op)
    try:  # through views (ttg.memdesc_index, ...) and loop arguments to its ttg.local_alloc
        buffer = memdesc_view(access.memdesc).buffer
    except LoweringError:
        return None
    return buffer if buffer >= 0 else None


def _races(pending: set[Access], kind: Access) -> bool:
    if kind is Access.ASYNC_WRITE:  # copies in flight are unordered: a barrier between two orders nothing
        return bool(pending - {Access.ASYNC_WRITE})
    writes = Access.WRITE in pending or Access.ASYNC_WRITE in pending
    return writes or (kind is Access.WRITE and Access.READ in pending)


Pending = dict[int, set[Access]]
_LOOP_PASSES = 4  # the pending set at a loop's head grows monotonically: a few passes reach its fixpoint


def insert_barriers(kernel: gpu.GPUFuncOp, uses: list[OpUse] | None = None) -> None:
    """Triton's Membar for one kernel (after `allocate_shared_memory`). `uses` defaults to
    `shared_uses` of the kernel on its own (portable) launch. Ops nested in `scf.if` branches
    start from what is pending before the `scf.if` and leave the union of both; an `scf.for` or
    `scf.while` body starts from what is pending before the loop joined with what its own end
    leaves (the back edge), to a fixpoint, as Membar does on the CFG."""
    if uses is None:
        uses = shared_uses(kernel, kernel_launch(kernel))
    by_op = {op.operation: use for op, use in uses}
    ranges = buffer_ranges(kernel) if any(use.scratch is not None for _, use in uses) else {}
    _walk(kernel.regions[0].blocks[0], _Kernel(by_op, _aliases(ranges)), {}, insert=True)


@dataclass(frozen=True)
class _Kernel:
    """What the walk reads: each op's `SharedUse`, and each buffer's aliases (the buffers whose
    bytes it shares, itself included)."""

    by_op: dict
    aliases: dict[int, frozenset[int]]

    def pending_on(self, pending: Pending, index: int) -> set[Access]:
        """What is pending on the bytes of buffer `index`."""
        kinds: set[Access] = set()
        for other in self.aliases.get(index, frozenset((index,))):
            kinds |= pending.get(other, set())
        return kinds


def _aliases(ranges: dict[int, range]) -> dict[int, frozenset[int]]:
    return {
        index: frozenset(
            other for other, bytes_ in ranges.items() if bytes_.start < span.stop and span.start < bytes_.stop
        )
        for index, span in ranges.items()
    }


def _join(a: Pending, b: Pending) -> Pending:
    return {index: a.get(index, set()) | b.get(index, set()) for index in set(a) | set(b)}


def _walk(block: ir.Block, kernel: _Kernel, pending: Pending, insert: bool) -> Pending:
    """The pending accesses after `block`, from `pending` before it; barriers are inserted when
    `insert` (else only simulated: a needed barrier clears what is pending)."""
    pending = {index: set(kinds) for index, kinds in pending.items()}
    for op in block.operations:
        use = kernel.by_op.get(op.operation)
        if use is None:
            if len(op.regions):
                pending = _walk_regions(op, kernel, pending, insert)
            continue
        if use.synchronizes:  # a barrier of its own (after ttg.async_wait): nothing is pending
            pending.clear()
            continue
        accesses = [(index, access.kind) for access in use.accesses if (index := _buffer(op, access)) is not None]
        if not accesses:
            continue
        if any(_races(kernel.pending_on(pending, index), kind) for index, kind in accesses):
            if insert:
                with ir.InsertionPoint(op), op.location:
                    gpu.barrier()
            pending.clear()
        if use.ends_with_reads and use.warp_synchronous:  # its warp barriers order no other warp
            for index, _ in accesses:
                pending.setdefault(index, set()).add(Access.READ)
        elif use.ends_with_reads:
            pending = {index: {Access.READ} for index, _ in accesses}
        else:
            for index, kind in accesses:
                pending.setdefault(index, set()).add(kind)
    return pending


def _walk_regions(op: ir.OpView, kernel: _Kernel, pending: Pending, insert: bool) -> Pending:
    blocks = [block for region in op.regions for block in region.blocks]
    if op.operation.name in ("scf.for", "scf.while"):
        entry = pending
        for _ in range(_LOOP_PASSES):
            end = pending
            for block in blocks:
                end = _walk(block, kernel, end if block is not blocks[0] else entry, insert=False)
            joined = _join(pending, end)
            if joined == entry:
                break
            entry = joined
        end = entry
        for block in blocks:
            end = _walk(block, kernel, end, insert)
        return _join(entry, end)  # the loop may run no iteration
    after: Pending = {}
    for block in blocks:  # scf.if: each branch from what is pending before it
        after = _join(after, _walk(block, kernel, pending, insert))
    return _join(after, pending) if len(blocks) < 2 else after
