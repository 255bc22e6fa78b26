"""`tt.atomic_rmw` and `tt.atomic_cas` on a tensor of pointers in SIMT form: one
`memref.atomic_rmw` (an `llvm.cmpxchg` on the element's global pointer, for `tt.atomic_cas`:
one `atom.cas`) per element.

Each element is updated once, by one thread: the layout's free variables (`get_free_variable_masks`:
registers, lanes and warps that only hold copies) are skipped, the registers by number and the
threads by a predicate, as Triton's `AtomicRMWOpToLLVM` masks duplicated threads. Each update sits
in an `scf.if` under its mask and the thread predicate. The op's result is the value each
element had before; a thread holding a copy of an element gets zero (Triton's result for copies is
that of the thread that performed the update). `sem` and `scope` are not kept: the stock
pipeline lowers `memref.atomic_rmw` to `llvm.atomicrmw ... acq_rel` (sequentially consistent at
the system scope at least as strong as every `sem`/`scope` Triton prints).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, memref, scf, vector
from mlir.dialects.arith import AtomicRMWKind

from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .simt_pattern import SimtPattern
from .triton_kernel import (
    access_memory,
    access_operands,
    check_access,
    element_offsets,
    global_pointer,
    lowered_operand,
)

__all__ = ["ATOMIC_CAS", "ATOMIC_RMW", "atomic_kind"]

#: Triton's `RMWOp` values (`formats.ENUMS["rmw_op"]`) -> the `arith.AtomicRMWKind` for integer
#: and for float elements (None: no such atomic).
_KINDS = {
    1: ("andi", None),
    2: ("ori", None),
    3: ("xori", None),
    4: ("addi", None),
    5: (None, "addf"),
    6: ("maxs", "maximumf"),
    7: ("mins", "minimumf"),
    8: ("maxu", None),
    9: ("minu", None),
    10: ("assign", "assign"),
}


def atomic_kind(rmw_op: int, element: ir.Type) -> AtomicRMWKind:
    """The upstream kind of Triton's `atomic_rmw_op` on `element` (LoweringError if none)."""
    integer, floating = _KINDS.get(rmw_op, (None, None))
    name = integer if isinstance(element, ir.IntegerType) else floating
    if name is None:
        raise LoweringError(f"tt.atomic_rmw {rmw_op} on {element} has no lowering")
    return getattr(AtomicRMWKind, name)


def _check(op: ir.OpView, launch: Launch) -> AtomicRMWKind:
    check_access(op, launch)
    value = access_operands(op.operation).value
    value_type = value.type if value is not None else None
    if not isinstance(value_type, ir.RankedTensorType):
        raise LoweringError("tt.atomic_rmw on a scalar pointer has no lowering")
    return atomic_kind(op.operation.attributes["atomic_rmw_op"].value, value_type.element_type)


def _emit(op: ir.OpView, launch: Launch, kind: AtomicRMWKind) -> list[ir.Value]:
    return _per_element(
        op, launch, lambda value, compare, memory, index: memref.atomic_rmw(kind, value, memory, [index])
    )


def _compare_and_swap(value: ir.Value, compare: ir.Value, memory: ir.Value, index: ir.Value) -> ir.Value:
    """One `llvm.cmpxchg` (`atom.cas`, as Triton's) at element `index` of `memory`, writing
    `value` where the element's bits equal `compare`'s (floats compared as their bits),
    returning the element's old value."""
    element = value.type
    bits = element if isinstance(element, ir.IntegerType) else ir.IntegerType.get_signless(element.width)
    pointer = global_pointer(memory, index, element)
    swapped = llvm.cmpxchg(
        pointer,
        compare if bits == element else arith.bitcast(bits, compare),
        value if bits == element else arith.bitcast(bits, value),
        llvm.AtomicOrdering.acq_rel,
        llvm.AtomicOrdering.monotonic,
    )
    old = llvm.extractvalue(bits, swapped, [0])
    return old if bits == element else arith.bitcast(element, old)


def _emit_cas(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    return _per_element(op, launch, _compare_and_swap)


def _per_element(op: ir.OpView, launch: Launch, update) -> list[ir.Value]:
    """`update(value, compare, memory, index) -> old` once per distinct element of the op's
    value (copies skipped by the layout's free variables), under its mask; the old values."""
    operation = op.operation
    operands = access_operands(operation)
    assert operands.value is not None  # checked by _check
    value_type = operands.value.type
    element = value_type.element_type
    layout = hardware_layout(value_type, launch)
    free = layout.get_free_variable_masks()
    builder = KernelBuilder(op, launch)
    thread = builder.store_predicate({dim: free.get(dim, 0) for dim in ("lane", "warp", "block")})
    memory, _ = access_memory(op)
    offsets = element_offsets(operands, launch)
    values = cast_to(operands.value, lowered_type(value_type, launch))
    compares = lowered_operand(operands.compare, launch)
    mask = lowered_operand(operands.mask, launch)
    zero = arith.constant(element, ir.IntegerAttr.get(element, 0) if isinstance(element, ir.IntegerType) else 0.0)
    olds: dict[int, ir.Value] = {}
    registers = layout.get_in_dim_size("register")
    for register in range(registers):
        if register & free.get("register", 0):
            continue
        condition = thread
        if mask is not None:
            own = vector.extract(mask, [], [register])
            condition = own if condition is None else arith.andi(condition, own)
        index = vector.extract(offsets, [], [register])
        value = vector.extract(values, [], [register])
        compare = None if compares is None else vector.extract(compares, [], [register])
        if condition is None:
            olds[register] = update(value, compare, memory, index)
            continue
        if_op = scf.IfOp(condition, [element], has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            scf.yield_([update(value, compare, memory, index)])
        with ir.InsertionPoint(if_op.else_block):
            scf.yield_([zero])
        olds[register] = if_op.results[0]
    register_mask = free.get("register", 0)
    result = operation.results[0]
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, [olds[r & ~register_mask] for r in range(registers)]), result.type)]


def _check_cas(op: ir.OpView, launch: Launch) -> None:
    check_access(op, launch)
    value = access_operands(op.operation).value
    if value is None or not isinstance(value.type, ir.RankedTensorType):
        raise LoweringError("tt.atomic_cas on a scalar pointer has no lowering")


ATOMIC_RMW = SimtPattern(("tt.atomic_rmw", "amdg.buffer_atomic_rmw"), _check, _emit)
ATOMIC_CAS = SimtPattern(("tt.atomic_cas",), _check_cas, _emit_cas)
