"""`tt.scan` in SIMT form, from the operand's layout: an inclusive scan along the axis, forward
or `reverse`, with any combine region and several operands.

The axis index of an element is the XOR of the register, lane and warp bases that move along the
axis (each one a power of two along it alone, in any order: a thread may hold elements far
apart). The scan doubles blocks bit by bit (Kogge-Stone over the index bits, lowest first):
every element keeps its prefix `P` inside its aligned block of 2^k and the block's total `T`;
merging the block with its partner (index ^ 2^k) gives the upper block `P = T' + P` and both
`T = T_lower + T_upper`. The partner's total comes from another register of the same thread
(a register bit), a `gpu.shuffle xor` (a lane bit), or shared memory (a warp bit: every thread
stores its totals at their elements' places, a barrier, the partner's are loaded, a barrier).
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
    def scratch_elements(self) -> int:
        elements = 1
        for size in self.shape:
            elements *= size
        return elements


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
        self.builder: KernelBuilder | None = None
        self.flat: list[ir.Value] = []

    def _flat_indices(self) -> list[ir.Value]:
        """Per register, the flat index of its element (i32), for the warp steps."""
        if not self.flat:
            self.builder = KernelBuilder(self.op, self.launch)
            layout = hardware_layout(self.op.operation.operands[0].type, self.launch)
            for register in range(self.plan.registers):
                coordinates = self.builder.apply(layout, self.builder.hw_indices(register))
                index = self.builder.const_i32(0)
                for d, size in enumerate(self.plan.shape):
                    index = arith.addi(arith.muli(index, self.builder.const_i32(size)), coordinates[f"dim{d}"])
                self.flat.append(index)
        return self.flat

    def through_shared(self, totals: list[list[ir.Value]], axis_bit: int) -> list[list[ir.Value]]:
        flat = self._flat_indices()
        builder = self.builder
        assert builder is not None
        index = buffer_index(self.op)
        if index is None or self.plan.scratch_element is None:
            raise LoweringError("the warp steps of tt.scan need their workgroup buffer")
        buffer, element = workgroup_argument(self.op, index), self.plan.scratch_element
        stride = 1
        for size in self.plan.shape[self.plan.axis + 1 :]:
            stride *= size
        slots = self.plan.scratch_elements
        to_index = ir.IndexType.get()
        for register, values in enumerate(totals):
            for k, value in enumerate(values):
                place = arith.addi(arith.index_castui(to_index, flat[register]), builder.const_index(k * slots))
                memref.store(value if value.type == element else arith.bitcast(element, value), buffer, [place])
        gpu.barrier()
        partners = []
        for register, values in enumerate(totals):
            partner = arith.xori(flat[register], builder.const_i32((1 << axis_bit) * stride))
            loaded = []
            for k, value in enumerate(values):
                place = arith.addi(arith.index_castui(to_index, partner), builder.const_index(k * slots))
                raw = memref.load(buffer, [place])
                loaded.append(raw if value.type == element else arith.bitcast(value.type, raw))
            partners.append(loaded)
        gpu.barrier()
        return partners


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
    """The warp steps' scratch: one slot per element of the tensor, per operand."""
    if plan.scratch_element is None:
        return SharedUse()
    scratch = Scratch(plan.scratch_element, plan.scratch_elements * len(op.operation.operands), pooled=True)
    return SharedUse(scratch, (BufferAccess(Access.WRITE),), ends_with_reads=True)


SCAN = SimtPattern(("tt.scan",), plan_scan, _emit, shared=_shared_use)
