"""The kernel a SIMT pattern rewrites in: its launch, the hardware layouts of its tensors, and a
per-rewrite builder for thread indices, constants and index math.

What the patterns need about the kernel is in the IR: the launch is the `known_block_size` of the
enclosing `gpu.func` (set when the function became a kernel) and the `"ttg.num-ctas"` of an
enclosing op; shared buffers are the workgroup attributions named by the op's
`ll.workgroup_buffer` attribute (see `shared_memory.py`). What is not in the IR, the target chip
and the memo of one pattern application, is a `PatternRun`: `populate_to_simt_patterns` makes
one and its patterns' callbacks close over it; it reaches the checks and emitters as
`Launch.run`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

from mlir import ir
from mlir.dialects import arith, gpu

from ..core.hardware import HW_DIMS, WARP_SIZE
from ..core.launch import pad_to_launch
from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from .apply_layout import emit_apply_layout
from .vectors import lowered_element

__all__ = [
    "MAX_THREADS_PER_BLOCK",
    "KernelBuilder",
    "KernelFacts",
    "Launch",
    "LoweringError",
    "PatternRun",
    "ThreadIndices",
    "emit_thread_indices",
    "enclosing_kernel",
    "find_thread_indices",
    "hardware_layout",
    "kernel_launch",
    "launch_attributes",
    "run_memo",
    "vector_type",
]

T = TypeVar("T")

MAX_THREADS_PER_BLOCK = 1024
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
    #: The pattern application this launch is read in (not part of the launch's value).
    run: PatternRun | None = dataclasses.field(default=None, compare=False, repr=False)

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


def kernel_launch(kernel: gpu.GPUFuncOp, chip: str | None = None, run: PatternRun | None = None) -> Launch:
    """The launch of a kernel made by `ll-to-simt`: warps from its `known_block_size`; the target
    `chip` and the pattern `run` as given."""
    attributes = launch_attributes(kernel.operation)
    threads = kernel.operation.attributes["known_block_size"][0]
    return Launch(threads // attributes.threads_per_warp, attributes.threads_per_warp, attributes.num_ctas, chip, run)


def hardware_layout(t: ir.Type, launch: Launch) -> LinearLayout:
    """The layout of tensor type `t` padded to `launch` (LoweringError when it has none, is not
    over hardware dimensions, does not fit the launch or does not cover its tensor)."""
    try:
        layout = layout_of(t)
    except (TypeError, ValueError) as error:
        raise LoweringError(f"cannot lower {t}: {error}") from None
    try:
        return _on_launch(layout, launch.threads_per_warp, launch.num_warps or 1, launch.num_ctas)
    except ValueError as error:
        raise LoweringError(f"{t}{error}") from None


@functools.lru_cache(maxsize=4096)
def _on_launch(layout: LinearLayout, threads_per_warp: int, num_warps: int, num_ctas: int) -> LinearLayout:
    """`layout` padded to `launch`; cached (layouts are immutable; errors are raised, not
    cached: their messages continue the tensor type's name)."""
    unknown = [n for n in layout.get_in_dim_names() if n not in HW_DIMS]
    if unknown:
        raise ValueError(f" is not distributed over hardware: input dimensions {unknown}")
    try:
        layout = pad_to_launch(layout, threads_per_warp, num_warps, num_ctas)
    except ValueError as error:
        raise ValueError(f": {error}") from None
    if not layout.is_surjective():
        raise ValueError(" does not cover its tensor")
    return layout


def vector_type(t: ir.RankedTensorType, launch: Launch) -> ir.VectorType:
    """The per-thread vector of a distributed tensor: one element per register."""
    return ir.VectorType.get([hardware_layout(t, launch).get_in_dim_size("register")], lowered_element(t.element_type))


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

    @property
    def last(self) -> ir.Operation:
        """The last index op (the rewrites put their constants right after it)."""
        owner = (self.block if self.block is not None else self.warp).owner
        return owner.operation if isinstance(owner, ir.OpView) else owner


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


def find_thread_indices(kernel: gpu.GPUFuncOp, launch: Launch) -> ThreadIndices | None:
    """The thread indices `emit_thread_indices` put at the top of `kernel` (by `outline_kernel`:
    two constants, then the indices, then at least one op); None when they are not there
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
    return ThreadIndices(ops[2], tid, lane, warp, block)


@dataclass(frozen=True)
class KernelFacts:
    """What every rewrite inside one kernel reads about it: its launch, its location (that of the
    constants) and its thread indices (None when they are not at its top)."""

    launch: Launch
    location: ir.Location
    indices: ThreadIndices | None


@dataclass(frozen=True)
class _KernelRun:
    """A pattern application over one kernel (`PatternRun.memoized`): the kernel's facts, its
    integer constants by (value, type) (a constant pool, as MLIR's OperationFolder keeps one, so
    that rewrites share them), and frozen values computed once (`run_memo`)."""

    facts: KernelFacts
    constants: dict[tuple[int, ir.Type], ir.Value]
    values: dict[Hashable, object]


class PatternRun:
    """One application of the SIMT patterns (made by `populate_to_simt_patterns`, closed over by
    its callbacks): the target `chip`, and per kernel inside `memoized(kernel)` the kernel's facts
    (read once: rewrites keep its launch and thread indices, they add ops after them only), its
    constant pool and its memo. Outside `memoized`, everything is read from the IR each time."""

    def __init__(self, chip: str | None = None) -> None:
        self.chip = chip
        # (kernel op, its run); not a dict: an op's hash changes with its attributes, `==`
        # compares the ops themselves.
        self._kernels: list[tuple[ir.Operation, _KernelRun]] = []
        # Exceptions raised by rewrites of this run: MLIR turns an exception in a pattern's
        # callback into a RuntimeError holding its traceback text; this keeps the original.
        self.failures: list[Exception] = []

    def original(self, error: Exception) -> Exception:
        """The exception a rewrite of this run raised (which MLIR turned into `error`), else `error`."""
        return self.failures[-1] if self.failures else error

    def kernel_run(self, kernel: gpu.GPUFuncOp | None) -> _KernelRun | None:
        if kernel is None or not self._kernels:
            return None
        operation = kernel.operation
        return next((run for op, run in self._kernels if op == operation), None)

    def read_facts(self, kernel: gpu.GPUFuncOp) -> KernelFacts:
        launch = kernel_launch(kernel, self.chip, self)
        return KernelFacts(launch, kernel.location, find_thread_indices(kernel, launch))

    def facts(self, kernel: gpu.GPUFuncOp) -> KernelFacts:
        """The facts of `kernel`: memoized while `memoized(kernel)` runs, else read from the IR."""
        run = self.kernel_run(kernel)
        return run.facts if run is not None else self.read_facts(kernel)

    @contextlib.contextmanager
    def memoized(self, kernel: gpu.GPUFuncOp) -> Iterator[KernelFacts]:
        """Read the facts of `kernel` once for the steps inside, and forget them afterwards."""
        entry = (kernel.operation, _KernelRun(self.read_facts(kernel), {}, {}))
        self._kernels.append(entry)
        try:
            yield entry[1].facts
        finally:
            self._kernels.remove(entry)


def run_memo(op: ir.OpView, launch: Launch, key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()` (a frozen value), computed once per `key` while the pattern run of `launch`
    memoizes the kernel of `op`, else each time; an exception it raises is not memoized."""
    run = launch.run.kernel_run(enclosing_kernel(op)) if launch.run is not None else None
    if run is None:
        return compute()
    if key not in run.values:
        run.values[key] = compute()
    return cast(T, run.values[key])


class KernelBuilder:
    """Emits the SIMT code of one op, before it, inside its kernel.

    It uses the kernel's thread indices (`find_thread_indices`; made before the op when they are
    not there). Integer constants go right after the kernel's thread indices (or before the ones
    made here), in the order the rewrite asks for them, with the kernel's location, so that they
    dominate everything the rewrite emits (also inside `scf.if`). While the pattern run of its
    launch memoizes the kernel (`PatternRun.memoized`), rewrites share its constant pool: a constant made by an
    earlier rewrite moves to where this one would have made it, which is the block order of one
    constant per rewrite after `canonicalize` merged them, without the copies.
    """

    def __init__(self, op: ir.OpView, launch: Launch) -> None:
        self.launch = launch
        self.num_warps = launch.num_warps or 1
        self.i32 = ir.IntegerType.get_signless(32)
        kernel = enclosing_kernel(op)
        run = launch.run.kernel_run(kernel) if launch.run is not None else None
        facts = (
            run.facts
            if run is not None
            else KernelFacts(launch, kernel.location, find_thread_indices(kernel, launch))
            if kernel is not None
            else None
        )
        self.constant_location = facts.location if facts is not None else op.location
        self.constants: dict[tuple[int, ir.Type], ir.Value] = {}
        self.thread_bases: dict[LinearLayout, tuple[ir.Value, ir.Value]] = {}
        self.predicates: dict[tuple, ir.Value | None] = {}
        found = facts.indices if facts is not None else None
        self.pool: dict[tuple[int, ir.Type], ir.Value] = {}
        self.last_constant: ir.Operation | None = None
        if found is not None:
            indices = found
            self.last_constant = found.last
            self.pool = run.constants if run is not None else self.pool
        else:
            indices = emit_thread_indices(launch, self._anchored_i32, ir.InsertionPoint(op))
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
        self.anchor = anchor  # the first constant goes before the thread indices made here
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
            self.constants[key] = self._place(key)
        return self.constants[key]

    def _place(self, key: tuple[int, ir.Type]) -> ir.Value:
        """The pool's constant `key` moved after this rewrite's last constant, or a new one there."""
        last = self.last_constant
        shared = self.pool.get(key)
        if shared is None:
            ip = ir.InsertionPoint(self.anchor) if last is None else ir.InsertionPoint.after(last)
            shared = self.pool[key] = arith.constant(key[1], key[0], ip=ip, loc=self.constant_location)
        else:
            shared.owner.operation.move_after(last)
        self.last_constant = shared.owner.operation
        return shared

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
