"""Shared-memory allocation (Triton's AllocateSharedMemory) for one kernel, from what each op's
pattern declares (`SimtPattern.shared` -> `SharedUse.scratch`); this module knows no op.

Every scratch is a buffer with a lifetime, in the order of the kernel's ops (pre-order, nested
ops included): an op's own scratch (`Scratch.pooled`: a conversion's, a reduction's, ...) lives
during that op only; a `ttg.local_alloc`'s from the allocation to its last use, through its
views and the loops that carry it (a use inside a loop that does not hold the allocation keeps
it live to the loop's end: the next iteration uses it again). Buffers are placed greedily,
largest first, each at the lowest 128-byte-aligned byte offset where it overlaps no placed buffer
whose lifetime meets its own (Triton's interval packing, `lib/Analysis/Allocation.cpp`), so a
dead buffer's bytes serve a later one. The kernel gets one workgroup attribution of bytes
(`memref<N x i8, #gpu.address_space<workgroup>>`), and each buffer a typed `memref.view` of it at
its offset, at the top of the kernel, carrying the buffer's index as `ll.workgroup_buffer`, as
does each op it serves. The barrier insertion (`barriers.py`) orders the reuse: an access to a
buffer races with what is pending on every buffer whose bytes it shares.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir
from mlir.dialects import arith, gpu, memref

from .kernel import Launch, kernel_launch
from .shared_memory import WORKGROUP_BUFFER, is_memdesc, memdesc_allocation, workgroup_type
from .simt_pattern import SharedUse
from .to_simt import shared_pattern_of
from .vectors import element_bits

__all__ = ["BUFFER_ALIGNMENT", "OpUse", "Placement", "allocate_shared_memory", "place_buffers", "shared_uses"]

#: An op of a kernel and what it does to shared memory.
OpUse = tuple[ir.OpView, SharedUse]
#: Every buffer starts at a multiple of 128 bytes (one wavefront), as the bank model assumes.
BUFFER_ALIGNMENT = 128


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


@dataclass(frozen=True)
class Placement:
    """A buffer: `bytes` at byte `offset` of the workgroup allocation, live from op position
    `first` to `last` (inclusive): a memref of `elements` of `element`."""

    element: ir.Type
    elements: int
    bytes: int
    first: int
    last: int
    offset: int = 0

    def meets(self, other: Placement) -> bool:
        """Whether both are live at some op and their bytes overlap."""
        lives = self.first <= other.last and other.first <= self.last
        return lives and self.offset < other.offset + other.bytes and other.offset < self.offset + self.bytes


def place_buffers(buffers: list[Placement]) -> list[Placement]:
    """`buffers` (in order) with their offsets: largest first (then earliest), each at the lowest
    multiple of `BUFFER_ALIGNMENT` where it meets no buffer placed before it.

    Postcondition: no two results `meets` each other.

    >>> a, b, c = Placement(None, 0, 256, 0, 5), Placement(None, 0, 256, 1, 5), Placement(None, 0, 512, 6, 6)
    >>> [p.offset for p in place_buffers([a, b, c])]
    [0, 256, 0]
    """
    order = sorted(range(len(buffers)), key=lambda k: (-buffers[k].bytes, buffers[k].first, k))
    placed: dict[int, Placement] = {}
    for k in order:
        buffer = buffers[k]
        candidates = sorted({0, *(_aligned(p.offset + p.bytes) for p in placed.values())})
        for offset in candidates:
            trial = replace(buffer, offset=offset)
            if not any(trial.meets(p) for p in placed.values()):
                placed[k] = trial
                break
    return [placed[k] for k in range(len(buffers))]


def _aligned(offset: int) -> int:
    return -(-offset // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT


@dataclass(frozen=True)
class _Span:
    """Where an op sits in the pre-order of the kernel: its position and that of its last nested op."""

    first: int
    last: int


def _spans(block: ir.Block, spans: dict, loops: dict, enclosing: tuple = ()) -> None:
    """Pre-order positions of every op under `block` (`spans`), and each op's enclosing loops,
    outermost first (`loops`; `enclosing`: those of `block`)."""
    for op in block.operations:
        operation = op.operation
        first = len(spans)
        spans[operation] = _Span(first, first)
        loops[operation] = enclosing
        inner = (*enclosing, operation) if operation.name in ("scf.for", "scf.while") else enclosing
        for region in op.regions:
            for nested in region.blocks:
                _spans(nested, spans, loops, inner)
        spans[operation] = _Span(first, len(spans) - 1)


def _last_uses(spans: dict, loops: dict) -> dict:
    """Each `ttg.local_alloc` op -> the last position its memdesc (or a view of it) is used,
    extended to the end of the outermost loop around a use that does not hold the allocation."""
    last: dict = {}
    for op, span in spans.items():
        for operand in op.operands:
            if not is_memdesc(operand.type):
                continue
            allocation = memdesc_allocation(operand)
            if allocation is None or allocation not in spans:
                continue
            start = spans[allocation].first
            end = span.last
            for loop in loops.get(op, ()):
                if not spans[loop].first <= start <= spans[loop].last:
                    end = max(end, spans[loop].last)
                    break
            last[allocation] = max(last.get(allocation, start), end)
    return last


def _placements(kernel: gpu.GPUFuncOp, uses: list[OpUse]) -> list[tuple[Placement, ir.OpView]]:
    """Each scratch with its lifetime (not yet placed), and the op it serves. Without an explicit
    allocation every lifetime is one op, and the order of `uses` (pre-order) is enough."""
    spans: dict = {}
    last_uses: dict = {}
    if all(use.scratch is None or use.scratch.pooled for _, use in uses):
        spans = {op.operation: _Span(k, k) for k, (op, _) in enumerate(uses)}
    else:
        loops: dict = {}
        _spans(kernel.regions[0].blocks[0], spans, loops)
        last_uses = _last_uses(spans, loops)
    found = []
    for op, use in uses:
        scratch = use.scratch
        if scratch is None:
            continue
        size = max(1, scratch.elements) * max(1, -(-element_bits(scratch.element) // 8))
        span = spans[op.operation]
        last = span.last if scratch.pooled else max(span.last, last_uses.get(op.operation, span.last))
        found.append((Placement(scratch.element, max(1, scratch.elements), size, span.first, last), op))
    return found


def allocate_shared_memory(
    kernel: gpu.GPUFuncOp, launch: Launch | None = None, uses: list[OpUse] | None = None
) -> None:
    """Triton's AllocateSharedMemory for one kernel: one workgroup attribution of bytes, a view of
    it per buffer, named on the ops. `uses` defaults to `shared_uses(kernel, launch)` (`launch`:
    the kernel's own, portable)."""
    if uses is None:
        uses = shared_uses(kernel, launch or kernel_launch(kernel))
    found = _placements(kernel, uses)
    if not found:
        return
    placed = place_buffers([buffer for buffer, _ in found])
    total = max(p.offset + p.bytes for p in placed)
    i64 = ir.IntegerType.get_signless(64)
    block = kernel.regions[0].blocks[0]
    arena = block.add_argument(workgroup_type(total, ir.IntegerType.get_signless(8)), kernel.location)
    kernel.operation.attributes["workgroup_attributions"] = ir.IntegerAttr.get(i64, 1)
    ip = ir.InsertionPoint.at_block_begin(block)
    with kernel.location:
        for index, (placement, (_, op)) in enumerate(zip(placed, found, strict=True)):
            op.operation.attributes[WORKGROUP_BUFFER] = ir.IntegerAttr.get(i64, index)
            shift = arith.constant(ir.IndexType.get(), placement.offset, ip=ip)
            view = memref.view(workgroup_type(placement.elements, placement.element), arena, shift, [], ip=ip)
            view.owner.attributes[WORKGROUP_BUFFER] = ir.IntegerAttr.get(i64, index)
