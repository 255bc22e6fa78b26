"""`tt.reduce` in SIMT form, from the operand's layout, as Triton's `ReduceOpToLLVM`:

1. **within a thread**: the registers holding elements that differ only along the axis are
   combined in register order (a broadcast register, holding an element twice, counts once);
2. **within a warp**: for each lane basis that moves along the axis, a `gpu.shuffle xor` with
   that lane bit and a combine (lanes that hold copies, zero bases, are not combined);
3. **across warps**, when a warp basis moves along the axis: every thread stores its partial
   result at `(output element, warp position along the axis)` of a scratch buffer, a
   `gpu.barrier`, and every thread reads the partials of its output elements back and combines
   them in warp order.

The combine region is cloned once per combination, on scalars (several operands, argmax's
value and index, are combined together). The result is the operand's slice along the axis
(Triton's `#ttg.slice`): each of its registers takes the accumulator of its element, which the
thread holds; for a 1-D operand it is a scalar, the same in every thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from ..core.layout import LinearLayout
from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern
from .vectors import element_bits

__all__ = ["REDUCE", "ReducePlan", "combine_region", "operands_layout", "plan_reduce", "scratch_element"]

_THREAD_DIMS = ("lane", "warp", "block")


@dataclass(frozen=True)
class ReducePlan:
    """How one `tt.reduce` goes (see the module docstring).

    `groups[k]`: the operand registers combined into accumulator k (distinct elements, register
    order); `keys[k]`: accumulator k's element index without the axis (register part);
    `lane_bits`/`warp_bits`: the lane/warp bits moving along the axis; `outputs[r]`: the
    accumulator of result register r (one entry, 0, for a scalar result); `output_shape`: the
    result's shape (() for a scalar); `scratch_element`: the scratch type (None: no cross-warp
    step)."""

    axis: int
    groups: tuple[tuple[int, ...], ...]
    keys: tuple[tuple[int, ...], ...]
    lane_bits: tuple[int, ...]
    warp_bits: tuple[int, ...]
    outputs: tuple[int, ...]
    output_shape: tuple[int, ...]
    scratch_element: ir.Type | None

    @property
    def warp_positions(self) -> int:
        return 1 << len(self.warp_bits)

    @property
    def scratch_elements(self) -> int:
        elements = 1
        for size in self.output_shape:
            elements *= size
        return elements * self.warp_positions


def _coordinates(layout: LinearLayout, inputs: dict[str, int]) -> tuple[int, ...]:
    values = layout.apply({dim: inputs.get(dim, 0) for dim in layout.get_in_dim_names()})
    return tuple(values[dim] for dim in layout.get_out_dim_names())


def _drop(index: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return index[:axis] + index[axis + 1 :]


def _moving_bits(layout: LinearLayout, dim: str, axis: int) -> tuple[int, ...]:
    """The bits of hardware dimension `dim` whose basis moves along `axis` (LoweringError for a
    basis moving along the axis and another dimension at once)."""
    bits = []
    if not layout.has_in_dim(dim):
        return ()
    for bit in range(layout.get_in_dim_size_log2(dim)):
        basis = _coordinates(layout, {dim: 1 << bit})
        if basis[axis]:
            if any(_drop(basis, axis)):
                raise LoweringError(f"a {dim} basis moves along the reduced axis and another dimension at once")
            bits.append(bit)
    return tuple(bits)


def _register_groups(
    layout: LinearLayout, axis: int
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Accumulator keys (element index without the axis) and the distinct registers of each."""
    seen: set[tuple[int, ...]] = set()
    groups: dict[tuple[int, ...], list[int]] = {}
    for register in range(layout.get_in_dim_size("register")):
        element = _coordinates(layout, {"register": register})
        if element in seen:
            continue  # a broadcast register: the element is already counted
        seen.add(element)
        groups.setdefault(_drop(element, axis), []).append(register)
    keys = tuple(groups)
    return keys, tuple(tuple(groups[key]) for key in keys)


def _outputs(result: LinearLayout | None, layout: LinearLayout, axis: int, keys) -> tuple[int, ...]:
    """Per result register, its accumulator; the threads' parts must agree (the slice layout)."""
    if result is None:
        if len(keys) != 1:
            raise LoweringError("a scalar result needs one accumulator per thread")
        return (0,)
    for dim in _THREAD_DIMS:
        if not result.has_in_dim(dim):
            continue
        for bit in range(result.get_in_dim_size_log2(dim)):
            expected = _drop(_coordinates(layout, {dim: 1 << bit}), axis)
            if _coordinates(result, {dim: 1 << bit}) != expected:
                raise LoweringError("the result's layout is not the operand's slice along the axis")
    position = {key: k for k, key in enumerate(keys)}
    outputs = []
    for register in range(result.get_in_dim_size("register")):
        key = _coordinates(result, {"register": register})
        if key not in position:
            raise LoweringError("an element of the result is in no accumulator of its thread")
        outputs.append(position[key])
    return tuple(outputs)


def scratch_element(types: list[ir.Type]) -> ir.Type:
    """The scratch type of a combine over operands of `types` through shared memory: i32 for
    32-bit ones (floats bitcast: one pool with the conversions' words, as Triton's one scratch);
    the type of a single operand of another width; LoweringError otherwise."""
    if all(element_bits(t) == 32 for t in types):
        return ir.IntegerType.get_signless(32)
    if len(types) == 1:
        return types[0]
    raise LoweringError("a combine of several operands across warps needs 32-bit operands")


def operands_layout(op: ir.OpView, launch: Launch) -> tuple[int, LinearLayout]:
    """The axis of a `tt.reduce`/`tt.scan` and the layout all its operands share."""
    operation = op.operation
    operands = list(operation.operands)
    layout = hardware_layout(operands[0].type, launch)
    if any(hardware_layout(v.type, launch) != layout for v in operands[1:]):
        raise LoweringError(f"the operands of {operation.name} have different layouts")
    return operation.attributes["axis"].value, layout


def plan_reduce(op: ir.OpView, launch: Launch) -> ReducePlan:
    """The plan of `tt.reduce` `op` for `launch` (LoweringError when it has none)."""
    operation = op.operation
    operands = list(operation.operands)
    axis, layout = operands_layout(op, launch)
    keys, groups = _register_groups(layout, axis)
    result_type = operation.results[0].type
    result = hardware_layout(result_type, launch) if isinstance(result_type, ir.RankedTensorType) else None
    warp_bits = _moving_bits(layout, "warp", axis)
    if _moving_bits(layout, "block", axis):
        raise LoweringError("a reduction across CTAs has no lowering")
    return ReducePlan(
        axis=axis,
        groups=groups,
        keys=keys,
        lane_bits=_moving_bits(layout, "lane", axis),
        warp_bits=warp_bits,
        outputs=_outputs(result, layout, axis, keys),
        output_shape=tuple(result_type.shape) if result is not None else (),
        scratch_element=scratch_element([v.type.element_type for v in operands]) if warp_bits else None,
    )


# ---------------------------------------------------------------------------- emission


def combine_region(region: ir.Region, accumulators: list[ir.Value], values: list[ir.Value]) -> list[ir.Value]:
    """The combine region cloned here, on scalars: (acc..., value...) -> acc'..."""
    block = region.blocks[0]
    mapping = {argument: value for argument, value in zip(block.arguments, accumulators + values)}
    operations = list(block.operations)
    for op in operations[:-1]:
        clone = op.operation.clone(ip=ir.InsertionPoint.current)
        for index, operand in enumerate(clone.operands):
            if operand in mapping:
                clone.operands[index] = mapping[operand]
        for old, new in zip(op.operation.results, clone.results):
            mapping[old] = new
    return [mapping.get(value, value) for value in operations[-1].operation.operands]


def _to_scratch(value: ir.Value, element: ir.Type) -> ir.Value:
    return value if value.type == element else arith.bitcast(element, value)


def _from_scratch(value: ir.Value, element: ir.Type) -> ir.Value:
    return value if value.type == element else arith.bitcast(element, value)


def _bit_runs(bits: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(first bit, length, packed position) of each run of consecutive `bits`.
    Example: (0, 1, 3) -> [(0, 2, 0), (3, 1, 2)]."""
    runs: list[tuple[int, int, int]] = []
    for packed, bit in enumerate(bits):
        if runs and runs[-1][0] + runs[-1][1] == bit:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, runs[-1][2])
        else:
            runs.append((bit, 1, packed))
    return runs


def _warp_position(builder: KernelBuilder, warp_bits: tuple[int, ...]) -> ir.Value:
    """The warp's index along the axis: its `warp_bits`, packed, one shift and mask per run of
    consecutive bits (no mask where the run reaches the warp's top bit: the warp is below
    `num_warps`), so that with the axis over every warp the position is the warp itself.
    Example: 4 warps, bits (0, 1) -> `warp` (not `(warp & 1) | ((warp >> 1) & 1) << 1`, whose
    `or` LLVM splits into two address adds when shared pointers are 32-bit)."""
    position = None
    warp_top = builder.num_warps.bit_length() - 1
    for first, length, packed in _bit_runs(warp_bits):
        piece = builder.warp if first == 0 else arith.shrui(builder.warp, builder.const_i32(first))
        if first + length < warp_top:
            piece = arith.andi(piece, builder.const_i32((1 << length) - 1))
        if packed:
            piece = arith.shli(piece, builder.const_i32(packed))
        position = piece if position is None else arith.ori(position, piece)
    return position if position is not None else builder.const_i32(0)


def _flat_index(builder: KernelBuilder, coordinates: dict[str, ir.Value], shape: tuple[int, ...]) -> ir.Value:
    index = builder.const_i32(0)
    for dim, size in zip(sorted(coordinates, key=lambda name: int(name[3:])), shape):
        index = arith.addi(arith.muli(index, builder.const_i32(size)), coordinates[dim])
    return index


def _across_warps(
    op: ir.OpView, launch: Launch, plan: ReducePlan, results: list[list[ir.Value]]
) -> list[list[ir.Value]]:
    """Step 3: `results[r]` (the operands' partials of result register r) through the scratch."""
    operation = op.operation
    builder = KernelBuilder(op, launch)
    index, element = buffer_index(op), plan.scratch_element
    if index is None or element is None:
        raise LoweringError("the cross-warp step of tt.reduce needs its workgroup buffer")
    buffer = workgroup_argument(op, index)
    slots = plan.scratch_elements
    position = _warp_position(builder, plan.warp_bits)
    result_type = operation.results[0].type
    result_layout = hardware_layout(result_type, launch) if plan.output_shape else None
    addresses = []
    for register in range(len(plan.outputs)):
        if result_layout is not None:
            flat = _flat_index(builder, builder.apply(result_layout, builder.hw_indices(register)), plan.output_shape)
        else:
            flat = builder.const_i32(0)
        base = arith.muli(flat, builder.const_i32(plan.warp_positions))
        addresses.append(base)
        slot = arith.index_castui(ir.IndexType.get(), arith.addi(base, position))
        for k, value in enumerate(results[register]):
            offset = arith.addi(slot, builder.const_index(k * slots))
            memref.store(_to_scratch(value, element), buffer, [offset])
    gpu.barrier()
    combined = []
    for register, base in enumerate(addresses):
        partials = []
        for warp in range(plan.warp_positions):
            slot = arith.index_castui(ir.IndexType.get(), arith.addi(base, builder.const_i32(warp)))
            partials.append(
                [
                    _from_scratch(memref.load(buffer, [arith.addi(slot, builder.const_index(k * slots))]), r.type)
                    for k, r in enumerate(results[register])
                ]
            )
        accumulators = partials[0]
        for values in partials[1:]:
            accumulators = combine_region(operation.regions[0], accumulators, values)
        combined.append(accumulators)
    return combined


def _emit(op: ir.OpView, launch: Launch, plan: ReducePlan) -> list[ir.Value]:
    operation = op.operation
    region = operation.regions[0]
    sources = [cast_to(v, lowered_type(v.type, launch)) for v in operation.operands]
    accumulators = []
    for group in plan.groups:  # step 1
        acc = [vector.extract(source, [], [group[0]]) for source in sources]
        for register in group[1:]:
            acc = combine_region(region, acc, [vector.extract(source, [], [register]) for source in sources])
        accumulators.append(acc)
    i32 = ir.IntegerType.get_signless(32)
    width = arith.constant(i32, launch.threads_per_warp)
    for bit in reversed(plan.lane_bits):  # step 2
        offset = arith.constant(i32, 1 << bit)
        accumulators = [
            combine_region(region, acc, [gpu.ShuffleOp(v, offset, width, gpu.ShuffleMode.XOR).results[0] for v in acc])
            for acc in accumulators
        ]
    per_register = [accumulators[k] for k in plan.outputs]
    if plan.warp_bits:  # step 3
        per_register = _across_warps(op, launch, plan, per_register)
    if not plan.output_shape:
        return per_register[0]
    values = []
    for k, result in enumerate(operation.results):
        target = ir.VectorType(lowered_type(result.type, launch))
        values.append(cast_to(vector.from_elements(target, [acc[k] for acc in per_register]), result.type))
    return values


def _shared_use(op: ir.OpView, launch: Launch, plan: ReducePlan) -> SharedUse:
    """The cross-warp step's scratch: the partials of every output element for every warp
    position along the axis, per operand (store | barrier | load, as a conversion)."""
    if plan.scratch_element is None:
        return SharedUse()
    scratch = Scratch(plan.scratch_element, plan.scratch_elements * len(op.operation.operands), pooled=True)
    return SharedUse(scratch, (BufferAccess(Access.WRITE),), ends_with_reads=True)


REDUCE = SimtPattern(("tt.reduce",), plan_reduce, _emit, shared=_shared_use)
