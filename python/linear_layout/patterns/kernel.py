"""The kernel a SIMT pattern rewrites in: its launch, the hardware layouts of its tensors, and a
per-rewrite builder for thread indices, constants and index math.

Patterns keep no state between ops: what they need about the kernel is in the IR. The launch is
the `known_block_size` of the enclosing `gpu.func` (set when the function became a kernel) and
the `"ttg.num-ctas"` of an enclosing op; shared buffers are the workgroup attributions named by
the op's `ll.workgroup_buffer` attribute (see `shared_memory.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu

from ..core.hardware import HW_DIMS, WARP_SIZE
from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from .apply_layout import emit_apply_layout

__all__ = [
    "CHIP_ATTRIBUTE", "MAX_THREADS_PER_BLOCK", "KernelBuilder", "Launch", "LoweringError", "enclosing_kernel", "hardware_layout",
    "kernel_launch", "launch_attributes", "pad_to_launch", "vector_type",
]

MAX_THREADS_PER_BLOCK = 1024
#: The target chip of a kernel being lowered (`ll-to-simt{chip=...}`), as a kernel attribute.
CHIP_ATTRIBUTE = "ll.chip"
_LAUNCH_ATTRIBUTES = {"ttg.num-warps": "num_warps", "ttg.threads-per-warp": "threads_per_warp",
                      "ttg.num-ctas": "num_ctas"}


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
    return Launch(**values)


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
                raise ValueError(f"too many {dim}s for the launch: the layout spreads over {size} {dim}s but the "
                                 f"kernel has {expected[dim]} {source[dim]} (ttg.num-warps/threads-per-warp/num-ctas)")
            while 1 << len(vectors) < expected[dim]:
                vectors.append([0] * layout.num_out_dims)
        full.append((dim, vectors))
    return LinearLayout.from_bases(full, list(layout.get_out_dim_names()), [s for _, s in layout.out_dims],
                                   require_surjective=False)


def hardware_layout(t: ir.Type, launch: Launch) -> LinearLayout:
    """The layout of tensor type `t` padded to `launch` (LoweringError when it has none, is not
    over hardware dimensions, does not fit the launch or does not cover its tensor)."""
    try:
        layout = layout_of(t)
    except (TypeError, ValueError) as error:
        raise LoweringError(f"cannot lower {t}: {error}") from None
    unknown = [n for n in layout.get_in_dim_names() if n not in HW_DIMS]
    if unknown:
        raise LoweringError(f"{t} is not distributed over hardware: input dimensions {unknown}")
    try:
        layout = pad_to_launch(layout, launch.threads_per_warp, launch.num_warps or 1, launch.num_ctas)
    except ValueError as error:
        raise LoweringError(f"{t}: {error}") from None
    if not layout.is_surjective():
        raise LoweringError(f"{t} does not cover its tensor")
    return layout


def vector_type(t: ir.RankedTensorType, launch: Launch) -> ir.VectorType:
    """The per-thread vector of a distributed tensor: one element per register."""
    return ir.VectorType.get([hardware_layout(t, launch).get_in_dim_size("register")], t.element_type)


class KernelBuilder:
    """Emits the SIMT code of one op, before it, inside its kernel.

    The thread indices come first (`lane = tid & 31`, `warp = tid >> 5` from `gpu.thread_id x`,
    `block` from `gpu.block_id x` with several CTAs); integer constants are made once per rewrite
    and placed before them, with the kernel's location, so that they dominate everything the
    rewrite emits (also inside `scf.if`). CSE and canonicalize merge what several rewrites share.
    """

    def __init__(self, op: ir.OpView, launch: Launch) -> None:
        self.launch = launch
        self.num_warps = launch.num_warps or 1
        self.i32 = ir.IntegerType.get_signless(32)
        kernel = enclosing_kernel(op)
        self.constant_location = kernel.location if kernel is not None else op.location
        self.constants: dict[tuple[int, str], ir.Value] = {}
        self.thread_bases: dict[LinearLayout, tuple[ir.Value, ir.Value]] = {}
        self.predicates: dict[tuple, ir.Value | None] = {}
        thread_id = gpu.thread_id(gpu.Dimension.x)
        self.constant_ip = ir.InsertionPoint(thread_id.owner)
        tid = arith.index_cast(self.i32, thread_id)
        self.lane = arith.andi(tid, self.const_i32(WARP_SIZE - 1))
        self.warp = arith.shrui(tid, self.const_i32(WARP_SIZE.bit_length() - 1))
        # known_block_size is 32 * num_warps threads, so tid < 32 * num_warps and
        # lane | warp << 5 is tid itself: index math packing (lane, warp) uses tid.
        self.packed = {(("lane", 5, self.lane), ("warp", (self.num_warps - 1).bit_length(), self.warp)): tid} \
            if self.num_warps > 1 else {}
        self.block = arith.index_cast(self.i32, gpu.block_id(gpu.Dimension.x)) if launch.num_ctas > 1 else None

    def layout(self, t: ir.RankedTensorType) -> LinearLayout:
        return hardware_layout(t, self.launch)

    def vector_type(self, t: ir.RankedTensorType) -> ir.VectorType:
        return vector_type(t, self.launch)

    def const_i32(self, value: int) -> ir.Value:
        return self._constant(self.i32, value)

    def const_index(self, value: int) -> ir.Value:
        return self._constant(ir.IndexType.get(), value)

    def _constant(self, t: ir.Type, value: int) -> ir.Value:
        key = (value, str(t))
        if key not in self.constants:
            self.constants[key] = arith.constant(t, value, ip=self.constant_ip, loc=self.constant_location)
        return self.constants[key]

    def apply(self, layout: LinearLayout, indices) -> dict[str, ir.Value]:
        """`emit_apply_layout` on i32 with this rewrite's constants and `tid = lane | warp << 5`."""
        # lane < 32, warp < num_warps and registers are constants below the register count.
        return emit_apply_layout(layout, indices, int_type=self.i32, constant=self.const_i32, packed=self.packed,
                                 in_range=True)

    def hw_indices(self, register: int = 0) -> dict:
        return {"register": register, "lane": self.lane, "warp": self.warp if self.num_warps > 1 else 0,
                "block": self.block if self.launch.num_ctas > 1 else 0}

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
                    term = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(index, self.const_i32(mask)),
                                      self.const_i32(0))
                    cond = term if cond is None else arith.andi(cond, term)
            self.predicates[key] = cond
        return self.predicates[key]
