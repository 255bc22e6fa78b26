"""Shared-memory allocation (Triton's AllocateSharedMemory) for one kernel, from what each op's
pattern declares (`SimtPattern.shared` -> `SharedUse.scratch`); this module knows no op.

Pooled scratch (a conversion's, a reduction's, ...) gets one workgroup buffer per element type (the
patterns declare 32- and 64-bit data as i32 words, so those share one buffer), sized by the largest
request of that type; every other scratch (a `ttg.local_alloc`'s) a buffer of its own. Pooled
buffers come first (in the order their element types first appear), then the others in op
order. Each op gets the index of its buffer as `ll.workgroup_buffer`, and the kernel the buffers
as workgroup attributions.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import gpu

from .kernel import Launch, kernel_launch
from .shared_memory import WORKGROUP_BUFFER, workgroup_type
from .simt_pattern import SharedUse
from .to_simt import shared_pattern_of

__all__ = ["OpUse", "allocate_shared_memory", "shared_uses"]

#: An op of a kernel and what it does to shared memory.
OpUse = tuple[ir.OpView, SharedUse]


def shared_uses(kernel: gpu.GPUFuncOp, launch: Launch) -> list[OpUse]:
    """The ops of `kernel`'s body that touch shared memory, in order (those nested in the regions
    of `scf.for`/`scf.if` included, in pre-order), with their `SharedUse`."""
    found: list[OpUse] = []
    _collect_uses(kernel.regions[0].blocks[0], launch, found)
    return found


def _collect_uses(block: ir.Block, launch: Launch, found: list[OpUse]) -> None:
    for op in block.operations:
        pattern = shared_pattern_of(op)
        if pattern is None:
            for region in op.regions:
                for inner in region.blocks:
                    _collect_uses(inner, launch, found)
            continue
        use = pattern.shared_use(op, launch, pattern.check(op, launch))
        if use is not None and (use.scratch is not None or use.accesses or use.synchronizes):
            found.append((op, use))


def _buffers(uses: list[OpUse]) -> list[tuple[ir.MemRefType, list[ir.OpView]]]:
    """The workgroup buffers, each with the ops it serves."""
    pooled: dict[str, tuple[ir.Type, int, list[ir.OpView]]] = {}
    own: list[tuple[ir.MemRefType, list[ir.OpView]]] = []
    for op, use in uses:
        scratch = use.scratch
        if scratch is None:
            continue
        if scratch.pooled:
            key = str(scratch.element)
            _, most, users = pooled.get(key, (scratch.element, 0, []))
            pooled[key] = (scratch.element, max(most, scratch.elements), [*users, op])
        else:
            own.append((workgroup_type(scratch.elements, scratch.element), [op]))
    return [(workgroup_type(elements, element), users) for element, elements, users in pooled.values()] + own


def allocate_shared_memory(
    kernel: gpu.GPUFuncOp, launch: Launch | None = None, uses: list[OpUse] | None = None
) -> None:
    """Triton's AllocateSharedMemory for one kernel: workgroup attributions, named on the ops.
    `uses` defaults to `shared_uses(kernel, launch)` (`launch`: the kernel's own, portable)."""
    if uses is None:
        uses = shared_uses(kernel, launch or kernel_launch(kernel))
    buffers = _buffers(uses)
    if not buffers:
        return
    i64 = ir.IntegerType.get_signless(64)
    block = kernel.regions[0].blocks[0]
    for index, (t, users) in enumerate(buffers):
        for user in users:
            user.operation.attributes[WORKGROUP_BUFFER] = ir.IntegerAttr.get(i64, index)
        block.add_argument(t, kernel.location)
    kernel.operation.attributes["workgroup_attributions"] = ir.IntegerAttr.get(i64, len(buffers))
