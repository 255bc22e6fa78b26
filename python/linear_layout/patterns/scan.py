"""`tt.scan` in SIMT form, from the operand's layout: an inclusive scan along the axis, forward
or `reverse`, with any combine region and several operands.

The axis index of an element is the XOR of the register, lane and warp bases that move along the
axis (each one a power of two along it alone, in any order: a thread may hold elements far
apart). The scan doubles blocks bit by bit (Kogge-Stone over the index bits, lowest first):
every element keeps its prefix `P` inside its aligned block of 2^k and the block's total `T`;
merging the block with its partner (index ^ 2^k) gives the upper block `P = T' + P` and both
`T = T_lower + T_upper`. The partner's total comes from another register of the same thread
(a register bit), a `gpu.shuffle xor` (a lane bit), or shared memory (a warp bit `k`: the total
is the same across each aligned block of 2^k along the axis, so each block's total has one slot,
its element's row-major index with the axis coordinate shifted right by `k`; every thread stores
the totals of its registers that start a block, a barrier, and loads the partner block's at
`slot ^ stride`). Each warp step has its own region of the scratch, so no barrier separates one
step's loads from the next step's stores; the next op reusing the scratch gets its barrier from
Membar. With 2 warps along the axis of an 8x64 scan (32 lanes along it) the scratch is 16 slots,
Triton's "one total per warp" (`ScanOpToLLVM`'s `storeWarpAccumulator`), and one barrier.
A reverse scan swaps the roles of the halves.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from ..core.layout import LinearLayout
from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .reduce import combine_region, operands_layout, scratch_element
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern

__all__ = ["SCAN", "ScanPlan", "plan_scan"]


@dataclass(frozen=True)
class ScanPlan:
    """`steps`: per axis bit from the lowest, (hardware dimension, bit of it); `registers`: the
    operand's register count; `shape`: the tensor's; `scratch_element`: None without warp steps."""

    axis: int
    reverse: bool
    steps: tuple[tuple[str, int], ...]
    registers: int
    shape: tuple[int, ...]
    scratch_element: ir.Type | None

    @property
    def elements(self) -> int:
        elements = 1
        for size in self.shape:
            elements *= size
        return elements

    def block_slots(self, axis_bit: int) -> int:
        """The slots of the warp step at `axis_bit`: one per aligned block of 2^axis_bit."""
        return self.elements >> axis_bit

    def region(self, axis_bit: int, operands: int) -> int:
        """The first slot of the warp step at `axis_bit` (the earlier warp steps' regions first)."""
        return operands * sum(self.block_slots(k) for k, (dim, _) in enumerate(self.steps[:axis_bit]) if dim == "warp")

    def scratch_elements(self, operands: int) -> int:
        return self.region(len(self.steps), operands)

    def block_registers(self, axis_bit: int) -> int:
        """The register bits of the steps below `axis_bit`: registers differing only in them share a block."""
        return sum(1 << bit for dim, bit in self.steps[:axis_bit] if dim == "register")


def _basis(layout: LinearLayout, dim: str, bit: int) -> tuple[int, ...]:
    values = layout.apply({d: (1 << bit if d == dim else 0) for d in layout.get_in_dim_names()})
    return tuple(values[d] for d in layout.get_out_dim_names())


def _axis_steps(layout: LinearLayout, axis: int) -> tuple[tuple[str, int], ...]:
    """(dimension, bit) of each basis moving along `axis`, by the axis bit it sets, lowest first."""
    by_axis_bit: dict[int, tuple[str, int]] = {}
    for dim in layout.get_in_dim_names():
        for bit in range(layout.get_in_dim_size_log2(dim)):
            basis = _basis(layout, dim, bit)
            if not basis[axis]:
                continue
            if any(v for d, v in enumerate(basis) if d != axis) or basis[axis] & (basis[axis] - 1):
                raise LoweringError("a basis moves along the scanned axis and elsewhere: no lowering")
            if dim == "block":
                raise LoweringError("a scan across CTAs has no lowering")
            by_axis_bit[basis[axis].bit_length() - 1] = (dim, bit)
    if sorted(by_axis_bit) != list(range(len(by_axis_bit))):
        raise LoweringError("the layout does not cover the scanned axis")
    return tuple(by_axis_bit[k] for k in sorted(by_axis_bit))


def plan_scan(op: ir.OpView, launch: Launch) -> ScanPlan:
    operation = op.operation
    operands = list(operation.operands)
    axis, layout = operands_layout(op, launch)
    steps = _axis_steps(layout, axis)
    scratch = None
    if any(dim == "warp" for dim, _ in steps):
        scratch = scratch_element([v.type.element_type for v in operands])
    reverse = "reverse" in operation.attributes and ir.BoolAttr(operation.attributes["reverse"]).value
    return ScanPlan(axis, reverse, steps, layout.get_in_dim_size("register"), tuple(operands[0].type.shape), scratch)


# ---------------------------------------------------------------------------- emission


class _Exchange:
    """Where the partner totals of one step come from."""

    def __init__(self, op: ir.OpView, launch: Launch, plan: ScanPlan) -> None:
        self.op, self.launch, self.plan = op, launch, plan
        self.builder = KernelBuilder(op, launch)
        self.coordinates: list[dict[str, ir.Value]] = []

    def _coordinates(self) -> list[dict[str, ir.Value]]:
        """Per register, the coordinates of its element (i32), for the warp steps."""
        if not self.coordinates:
            layout = hardware_layout(self.op.operation.operands[0].type, self.launch)
            for register in range(self.plan.registers):
                self.coordinates.append(self.builder.apply(layout, self.builder.hw_indices(register)))
        return self.coordinates

    def _slot(self, register: int, axis_bit: int) -> ir.Value:
        """The block slot of `register`'s element: its row-major index with the axis coordinate
        shifted right by `axis_bit` (the axis `shape[axis] >> axis_bit` long), as an i32."""
        builder, coordinates = self.builder, self._coordinates()[register]
        index = builder.const_i32(0)
        for d, size in enumerate(self.plan.shape):
            coordinate = coordinates[f"dim{d}"]
            if d == self.plan.axis:
                size >>= axis_bit
                coordinate = arith.shrui(coordinate, builder.const_i32(axis_bit))
            index = arith.addi(arith.muli(index, builder.const_i32(size)), coordinate)
        return index

    def through_shared(self, totals: list[list[ir.Value]], axis_bit: int) -> list[list[ir.Value]]:
        builder, plan = self.builder, self.plan
        index = buffer_index(self.op)
        if index is None or plan.scratch_element is None:
            raise LoweringError("the warp steps of tt.scan need their workgroup buffer")
        buffer, element = workgroup_argument(self.op, index), plan.scratch_element
        stride = 1
        for size in plan.shape[plan.axis + 1 :]:
            stride *= size
        slots, region = plan.block_slots(axis_bit), plan.region(axis_bit, len(totals[0]))
        shared = plan.block_registers(axis_bit)
        starts = [r for r in range(plan.registers) if not r & shared]
        to_index = ir.IndexType.get()
        slot = {r: self._slot(r, axis_bit) for r in starts}
        for register in starts:
            for k, value in enumerate(totals[register]):
                place = arith.addi(
                    arith.index_castui(to_index, slot[register]), builder.const_index(region + k * slots)
                )
                memref.store(value if value.type == element else arith.bitcast(element, value), buffer, [place])
        gpu.barrier()
        loaded: dict[int, list[ir.Value]] = {}
        for register in starts:
            partner = arith.xori(slot[register], builder.const_i32(stride))
            loaded[register] = []
            for k, value in enumerate(totals[register]):
                place = arith.addi(arith.index_castui(to_index, partner), builder.const_index(region + k * slots))
                raw = memref.load(buffer, [place])
                loaded[register].append(raw if value.type == element else arith.bitcast(value.type, raw))
        return [loaded[r & ~shared] for r in range(plan.registers)]


def _upper(layout_bit: tuple[str, int], register: int, builder_bits) -> ir.Value | bool:
    """Whether the element of `register` is in the upper half of its block at this step: a
    constant for a register bit, the thread's lane/warp bit (i1) otherwise."""
    dim, bit = layout_bit
    if dim == "register":
        return bool(register >> bit & 1)
    return builder_bits(dim, bit)


def _emit(op: ir.OpView, launch: Launch, plan: ScanPlan) -> list[ir.Value]:
    operation = op.operation
    region = operation.regions[0]
    sources = [cast_to(v, lowered_type(v.type, launch)) for v in operation.operands]
    prefix = [[vector.extract(s, [], [r]) for s in sources] for r in range(plan.registers)]
    totals = [list(values) for values in prefix]
    exchange = _Exchange(op, launch, plan)
    builder = KernelBuilder(op, launch)
    i32 = ir.IntegerType.get_signless(32)
    width = arith.constant(i32, launch.threads_per_warp)

    def thread_bit(dim: str, bit: int) -> ir.Value:
        index = builder.lane if dim == "lane" else builder.warp
        set_bit = arith.andi(arith.shrui(index, builder.const_i32(bit)), builder.const_i32(1))
        return arith.cmpi(arith.CmpIPredicate.ne, set_bit, builder.const_i32(0))

    for axis_bit, (dim, bit) in enumerate(plan.steps):
        if dim == "register":
            partners = [totals[r ^ (1 << bit)] for r in range(plan.registers)]
        elif dim == "lane":
            offset = arith.constant(i32, 1 << bit)
            partners = [[gpu.ShuffleOp(v, offset, width, gpu.ShuffleMode.XOR).results[0] for v in t] for t in totals]
        else:
            partners = exchange.through_shared(totals, axis_bit)
        new_prefix, new_totals = [], []
        for register in range(plan.registers):
            upper = _upper((dim, bit), register, thread_bit)
            mine, theirs, own_prefix = totals[register], partners[register], prefix[register]
            # `takes`: this element's block comes after its partner's in the scan's direction
            if isinstance(upper, bool):
                takes = upper != plan.reverse
                new_prefix.append(combine_region(region, theirs, own_prefix) if takes else own_prefix)
                new_totals.append(
                    combine_region(region, theirs, mine) if takes else combine_region(region, mine, theirs)
                )
            else:
                flag = arith.xori(upper, arith.constant(ir.IntegerType.get_signless(1), 1)) if plan.reverse else upper
                with_partner = combine_region(region, theirs, own_prefix)
                new_prefix.append([arith.select(flag, a, b) for a, b in zip(with_partner, own_prefix)])
                after, before = combine_region(region, theirs, mine), combine_region(region, mine, theirs)
                new_totals.append([arith.select(flag, a, b) for a, b in zip(after, before)])
        prefix, totals = new_prefix, new_totals
    values = []
    for k, result in enumerate(operation.results):
        target = ir.VectorType(lowered_type(result.type, launch))
        values.append(cast_to(vector.from_elements(target, [p[k] for p in prefix]), result.type))
    return values


def _shared_use(op: ir.OpView, launch: Launch, plan: ScanPlan) -> SharedUse:
    """The warp steps' scratch: per warp step at axis bit `k`, one slot per aligned block of 2^k
    along the axis, per operand (store | barrier | load per step, each step in its own region)."""
    if plan.scratch_element is None:
        return SharedUse()
    scratch = Scratch(plan.scratch_element, plan.scratch_elements(len(op.operation.operands)), pooled=True)
    return SharedUse(scratch, (BufferAccess(Access.WRITE),), ends_with_reads=True)


SCAN = SimtPattern(("tt.scan",), plan_scan, _emit, shared=_shared_use)
