"""The kernel a SIMT pattern rewrites in: its launch, the hardware layouts of its tensors, and a
per-rewrite builder for thread indices, constants and index math.

Patterns keep no state between ops: what they need about the kernel is in the IR. The launch is
the `known_block_size` of the enclosing `gpu.func` (set when the function became a kernel) and
the `"ttg.num-ctas"` of an enclosing op; shared buffers are the workgroup attributions named by
the op's `ll.workgroup_buffer` attribute (see `shared_memory.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu

from ..core.hardware import HW_DIMS, WARP_SIZE
from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from .apply_layout import emit_apply_layout

__all__ = [
    "CHIP_ATTRIBUTE",
    "MAX_THREADS_PER_BLOCK",
    "KernelBuilder",
    "Launch",
    "LoweringError",
    "ThreadIndices",
    "emit_thread_indices",
    "enclosing_kernel",
    "find_thread_indices",
    "hardware_layout",
    "kernel_launch",
    "launch_attributes",
    "pad_to_launch",
    "vector_type",
]

MAX_THREADS_PER_BLOCK = 1024
#: The target chip of a kernel being lowered (`ll-to-simt{chip=...}`), as a kernel attribute.
CHIP_ATTRIBUTE = "ll.chip"
_LAUNCH_ATTRIBUTES = {
    "ttg.num-warps": "num_warps",
    "ttg.threads-per-warp": "threads_per_warp",
    "ttg.num-ctas": "num_ctas",
}


class LoweringError(ValueError):
    """An op that cannot be lowered to SIMT form: the message says why."""


@dataclass(frozen=True)
class Launch:
    """The launch a kernel runs with. `num_warps` is None until known."""

    num_warps: int | None = None
    threads_per_warp: int = WARP_SIZE
    num_ctas: int = 1
    chip: str | None = None  # the target (`ll-to-simt{chip=sm_90}`); None: portable

    @property
    def threads(self) -> int:
        return (self.num_warps or 1) * self.threads_per_warp


def launch_attributes(op: ir.Operation) -> Launch:
    """The launch of the nearest enclosing `"ttg.num-warps"`-style attributes of `op` (each
    attribute from the nearest op that has it)."""
    values: dict[str, int] = {}
    current: ir.Operation | None = op.operation
    while current is not None:
        for name, field in _LAUNCH_ATTRIBUTES.items():
            attr = current.attributes.get(name, None)
            if field not in values and isinstance(attr, ir.IntegerAttr):
                values[field] = attr.value
        parent = current.parent
        current = parent.operation if parent is not None else None
    return Launch(values.get("num_warps"), values.get("threads_per_warp", WARP_SIZE), values.get("num_ctas", 1))


def enclosing_kernel(op: ir.Operation) -> gpu.GPUFuncOp | None:
    parent = op.operation.parent
    while parent is not None and parent.operation.name != "gpu.func":
        parent = parent.operation.parent
    return parent.opview if parent is not None else None


def kernel_launch(kernel: gpu.GPUFuncOp) -> Launch:
    """The launch of a kernel made by `ll-to-simt`: warps from its `known_block_size`."""
    attributes = launch_attributes(kernel.operation)
    threads = kernel.operation.attributes["known_block_size"][0]
    chip = kernel.operation.attributes[CHIP_ATTRIBUTE].value if CHIP_ATTRIBUTE in kernel.operation.attributes else None
    return Launch(threads // attributes.threads_per_warp, attributes.threads_per_warp, attributes.num_ctas, chip)


def pad_to_launch(layout: LinearLayout, threads_per_warp: int, num_warps: int, num_ctas: int = 1) -> LinearLayout:
    """`layout` as a kernel of that launch holds it: every hardware input dimension present, in
    the standard order, lanes/warps/blocks padded with broadcast (zero) bases to the launch size.

    Raises ValueError when the layout spreads over more lanes, warps or blocks than the launch has."""
    bases = dict(layout.bases)
    expected = {"lane": threads_per_warp, "warp": num_warps, "block": num_ctas}
    source = {"lane": "threads per warp", "warp": "warps", "block": "CTAs"}
    full = []
    for dim in HW_DIMS:
        vectors = [list(b) for b in bases.get(dim, ())]
        if dim != "register":
            size = 1 << len(vectors)
            if size > expected[dim]:
                raise ValueError(
                    f"too many {dim}s for the launch: the layout spreads over {size} {dim}s but the "
                    f"kernel has {expected[dim]} {source[dim]} (ttg.num-warps/threads-per-warp/num-ctas)"
                )
            while 1 << len(vectors) < expected[dim]:
                vectors.append([0] * layout.num_out_dims)
        full.append((dim, vectors))
    return LinearLayout.from_bases(
        full, list(layout.get_out_dim_names()), [s for _, s in layout.out_dims], require_surjective=False
    )


def hardware_layout(t: ir.Type, launch: Launch) -> LinearLayout:
    """The layout of tensor type `t` padded to `launch` (LoweringError when it has none, is not
    over hardware dimensions, does not fit the launch or does not cover its tensor)."""
    try:
        layout = layout_of(t)
    except (TypeError, ValueError) as error:
        raise LoweringError(f"cannot lower {t}: {error}") from None
    try:
        return _on_launch(layout, launch)
    except ValueError as error:
        raise LoweringError(f"{t}{error}") from None


@functools.lru_cache(maxsize=4096)
def _on_launch(layout: LinearLayout, launch: Launch) -> LinearLayout:
    """`layout` padded to `launch`; cached (layouts are immutable; errors are raised, not
    cached: their messages continue the tensor type's name)."""
    unknown = [n for n in layout.get_in_dim_names() if n not in HW_DIMS]
    if unknown:
        raise ValueError(f" is not distributed over hardware: input dimensions {unknown}")
    try:
        layout = pad_to_launch(layout, launch.threads_per_warp, launch.num_warps or 1, launch.num_ctas)
    except ValueError as error:
        raise ValueError(f": {error}") from None
    if not layout.is_surjective():
        raise ValueError(" does not cover its tensor")
    return layout


def vector_type(t: ir.RankedTensorType, launch: Launch) -> ir.VectorType:
    """The per-thread vector of a distributed tensor: one element per register."""
    return ir.VectorType.get([hardware_layout(t, launch).get_in_dim_size("register")], t.element_type)


@dataclass(frozen=True)
class ThreadIndices:
    """The thread indices of a kernel: `tid` (i32) from `gpu.thread_id x` (`anchor`; constants
    go before it), `lane = tid & (threads_per_warp - 1)`, `warp = tid >> log2(threads_per_warp)`
    (`& 31`, `>> 5` for 32-lane warps), and `block` from `gpu.block_id x` when
    the launch has several CTAs."""

    anchor: ir.Operation
    tid: ir.Value
    lane: ir.Value
    warp: ir.Value
    block: ir.Value | None


def emit_thread_indices(
    launch: Launch, constant: Callable[[int, ir.Operation], ir.Value], ip: ir.InsertionPoint
) -> ThreadIndices:
    """The thread indices at `ip`; `constant(value, anchor)` makes an i32 constant before `anchor`."""
    i32 = ir.IntegerType.get_signless(32)
    thread_id = gpu.thread_id(gpu.Dimension.x, ip=ip)
    anchor = thread_id.owner.operation
    tid = arith.index_cast(i32, thread_id, ip=ip)
    lanes = launch.threads_per_warp
    lane_mask, warp_shift = constant(lanes - 1, anchor), constant(lanes.bit_length() - 1, anchor)
    lane = arith.andi(tid, lane_mask, ip=ip)
    warp = arith.shrui(tid, warp_shift, ip=ip)
    block = arith.index_cast(i32, gpu.block_id(gpu.Dimension.x, ip=ip), ip=ip) if launch.num_ctas > 1 else None
    return ThreadIndices(anchor, tid, lane, warp, block)


def _defined_by(value: ir.Value, name: str, *operands: ir.Value) -> bool:
    owner = value.owner
    operation = owner.operation if isinstance(owner, ir.OpView) else owner
    return (
        isinstance(operation, ir.Operation)
        and operation.name == name
        and list(operation.operands)[: len(operands)] == list(operands)
    )


def find_thread_indices(kernel: gpu.GPUFuncOp, launch: Launch) -> tuple[ThreadIndices, ir.Operation] | None:
    """The thread indices `emit_thread_indices` put at the top of `kernel` (by `outline_kernel`:
    two constants, then the indices) and the first op after them; None when they are not there
    (e.g. erased as unused, or moved, by a greedy rewrite). Looks at the first 7 ops only (9
    with several CTAs): materialising an op's Python object is what this costs."""
    size = 8 if launch.num_ctas > 1 else 6
    ops = []
    for op in kernel.regions[0].blocks[0].operations:
        ops.append(op.operation)
        if len(ops) > size:
            break
    if (
        len(ops) <= size
        or ops[2].name != "gpu.thread_id"
        or ops[2].attributes["dimension"] != ir.Attribute.parse("#gpu<dim x>")
    ):
        return None
    tid, lane, warp = ops[3].result, ops[4].result, ops[5].result
    if not (
        _defined_by(tid, "arith.index_cast", ops[2].result)
        and _defined_by(lane, "arith.andi", tid)
        and _defined_by(warp, "arith.shrui", tid)
    ):
        return None
    block = None
    if launch.num_ctas > 1:
        if ops[6].name != "gpu.block_id" or not _defined_by(ops[7].result, "arith.index_cast", ops[6].result):
            return None
        block = ops[7].result
    return ThreadIndices(ops[2], tid, lane, warp, block), ops[size]


class KernelBuilder:
    """Emits the SIMT code of one op, before it, inside its kernel.

    It uses the kernel's thread indices (`find_thread_indices`; made before the op when they are
    not there). Integer constants are made once per rewrite, right after the kernel's thread
    indices (or before the ones made here), with the kernel's location, so that they dominate
    everything the rewrite emits (also inside `scf.if`); canonicalize merges what several
    rewrites share.
    """

    def __init__(self, op: ir.OpView, launch: Launch) -> None:
        self.launch = launch
        self.num_warps = launch.num_warps or 1
        self.i32 = ir.IntegerType.get_signless(32)
        kernel = enclosing_kernel(op)
        self.constant_location = kernel.location if kernel is not None else op.location
        self.constants: dict[tuple[int, ir.Type], ir.Value] = {}
        self.thread_bases: dict[LinearLayout, tuple[ir.Value, ir.Value]] = {}
        self.predicates: dict[tuple, ir.Value | None] = {}
        found = find_thread_indices(kernel, launch) if kernel is not None else None
        if found is not None:
            indices, after = found
            self.constant_ip = ir.InsertionPoint(after)
        else:
            indices = emit_thread_indices(launch, self._anchored_i32, ir.InsertionPoint(op))
            self.constant_ip = ir.InsertionPoint(indices.anchor)
        self.lane, self.warp, self.block = indices.lane, indices.warp, indices.block
        # known_block_size is threads_per_warp * num_warps threads, so tid < that and
        # lane | warp << log2(threads_per_warp) is tid itself: index math packing (lane, warp) uses tid.
        lane_bits = launch.threads_per_warp.bit_length() - 1
        self.packed: dict[tuple[tuple[str, int, ir.Value], ...], ir.Value] = (
            {(("lane", lane_bits, self.lane), ("warp", (self.num_warps - 1).bit_length(), self.warp)): indices.tid}
            if self.num_warps > 1
            else {}
        )

    def _anchored_i32(self, value: int, anchor: ir.Operation) -> ir.Value:
        self.constant_ip = ir.InsertionPoint(anchor)
        return self.const_i32(value)

    def layout(self, t: ir.RankedTensorType) -> LinearLayout:
        return hardware_layout(t, self.launch)

    def vector_type(self, t: ir.RankedTensorType) -> ir.VectorType:
        return vector_type(t, self.launch)

    def const_i32(self, value: int) -> ir.Value:
        return self._constant(self.i32, value)

    def const_index(self, value: int) -> ir.Value:
        return self._constant(ir.IndexType.get(), value)

    def _constant(self, t: ir.Type, value: int) -> ir.Value:
        key = (value, t)  # types hash and compare by their uniqued storage
        if key not in self.constants:
            self.constants[key] = arith.constant(t, value, ip=self.constant_ip, loc=self.constant_location)
        return self.constants[key]

    def apply(self, layout: LinearLayout, indices) -> dict[str, ir.Value]:
        """`emit_apply_layout` on i32 with this rewrite's constants and `tid = lane | warp << log2(lanes)`."""
        # lane < threads_per_warp, warp < num_warps and registers are constants below the register count.
        return emit_apply_layout(
            layout, indices, int_type=self.i32, constant=self.const_i32, packed=self.packed, in_range=True
        )

    def hw_indices(self, register: int = 0) -> dict:
        return {
            "register": register,
            "lane": self.lane,
            "warp": self.warp if self.num_warps > 1 else 0,
            "block": self.block if self.launch.num_ctas > 1 else 0,
        }

    def thread_offsets(self, thread_offset: LinearLayout) -> tuple[ir.Value, ir.Value]:
        """(i32, index) of the (lane, warp) part of a shared-memory access's offsets."""
        if thread_offset not in self.thread_bases:
            warp = self.warp if self.num_warps > 1 else 0
            base = self.apply(thread_offset, {"lane": self.lane, "warp": warp})["offset"]
            self.thread_bases[thread_offset] = (base, arith.index_castui(ir.IndexType.get(), base))
        return self.thread_bases[thread_offset]

    def store_predicate(self, predicate) -> ir.Value | None:
        """`all(index & mask == 0)` over the masks of `predicate` (dim -> mask); None: always."""
        key = tuple(sorted(predicate.items()))
        if key not in self.predicates:
            cond = None
            for dim, index in (("lane", self.lane), ("warp", self.warp), ("block", self.block)):
                mask = predicate.get(dim, 0)
                if mask and index is not None:
                    term = arith.cmpi(
                        arith.CmpIPredicate.eq, arith.andi(index, self.const_i32(mask)), self.const_i32(0)
                    )
                    cond = term if cond is None else arith.andi(cond, term)
            self.predicates[key] = cond
        return self.predicates[key]
