"""`tt.atomic_rmw` and `tt.atomic_cas` on a tensor of pointers in SIMT form: one atomic per
element: a predicated `atom.global` (below), else a `memref.atomic_rmw`, and for `tt.atomic_cas`
an `llvm.cmpxchg` on the element's global pointer (one `atom.cas`).

Each element is updated once, by one thread: the layout's free variables (`get_free_variable_masks`:
registers, lanes and warps that only hold copies) are skipped, the registers by number and the
threads by a predicate, as Triton's `AtomicRMWOpToLLVM` masks duplicated threads.

- A `tt.atomic_rmw` on 32- or 64-bit integers (every `RMWOp`) or f32/f64 (`fadd`) is Triton's
  instruction: ``mov.b32 $0, 0; @$3 atom.global.gpu.acq_rel.add.u32 $0, [ $1 + 0 ], $2;`` in
  `llvm.inline_asm` (`ir/ptx_asm.predicated_atomic`), under the mask and the thread predicate
  (no branch), with the op's own `sem` (relaxed, acquire, release, acq_rel) and `scope` (cta,
  gpu, sys) exactly as Triton prints them; a masked-off element's old value is 0.
- Any other (`amdg.buffer_atomic_rmw`, f16/bf16, float max/min) and `tt.atomic_cas` sit in an
  `scf.if` under the mask and the thread predicate; there `sem` and `scope` are not kept: the
  stock pipeline lowers `memref.atomic_rmw` to `llvm.atomicrmw ... acq_rel` (sequentially
  consistent at the system scope, at least as strong as every `sem`/`scope` Triton prints).

The op's result is the value each element had before (zero where masked off), in every copy of
the element as Triton's: where the result is used and lanes or warps hold copies, the updating
threads store their old values at the element's (row-major) place of a scratch buffer, a
`gpu.barrier`, and every thread loads its registers' values back (register copies take the value
of their representative register).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, scf, vector
from mlir.dialects.arith import AtomicRMWKind

from ..core.targets import is_amdgpu_chip
from ..ir.ptx_asm import PredicatedAtomic, predicated_atomic
from ..ttgir.formats import ENUMS
from .common import cast_to
from .control_flow import lowered_type
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout
from .shared_memory import buffer_index, workgroup_argument
from .simt_pattern import Access, BufferAccess, Scratch, SharedUse, SimtPattern
from .triton_kernel import (
    access_memory,
    access_operands,
    check_access,
    element_offsets,
    global_pointer,
    lowered_operand,
)

__all__ = ["ATOMIC_CAS", "ATOMIC_RMW", "AtomicPlan", "atomic_kind"]


@dataclass(frozen=True)
class AtomicPlan:
    """`kind`: the upstream kind of a `tt.atomic_rmw` (None for `tt.atomic_cas`); `broadcast`:
    the elements of the scratch through which the old values reach the lanes and warps holding
    copies (0: none needed, the result is unused or no thread holds a copy)."""

    kind: AtomicRMWKind | None
    broadcast: int


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


def _check(op: ir.OpView, launch: Launch) -> AtomicPlan:
    check_access(op, launch)
    value = access_operands(op.operation).value
    value_type = value.type if value is not None else None
    if not isinstance(value_type, ir.RankedTensorType):
        raise LoweringError("tt.atomic_rmw on a scalar pointer has no lowering")
    kind = atomic_kind(op.operation.attributes["atomic_rmw_op"].value, value_type.element_type)
    return AtomicPlan(kind, _broadcast_elements(op, value_type, launch))


def _broadcast_elements(op: ir.OpView, value_type: ir.RankedTensorType, launch: Launch) -> int:
    """The scratch elements the old values need to reach the copies (0: none)."""
    free = hardware_layout(value_type, launch).get_free_variable_masks()
    used = any(True for _ in op.operation.results[0].uses)
    if not used or not (free.get("lane", 0) or free.get("warp", 0)):
        return 0
    elements = 1
    for size in value_type.shape:
        elements *= size
    return elements


#: Triton's `RMWOp` values -> the PTX operation and type letter of its predicated `atom` on an
#: integer and on a float element (None: not one `atom`, the `memref.atomic_rmw` path).
_PTX_ATOMS = {
    1: (("and", "b"), None),
    2: (("or", "b"), None),
    3: (("xor", "b"), None),
    4: (("add", "u"), None),
    5: (None, ("add", "f")),
    6: (("max", "s"), None),
    7: (("min", "s"), None),
    8: (("max", "u"), None),
    9: (("min", "u"), None),
    10: (("exch", "b"), None),
}
_SEMANTICS = {number: name for name, number in ENUMS["sem"].items()}
_SCOPES = {number: name for name, number in ENUMS["scope"].items()}


def ptx_atomic(op: ir.OpView, element: ir.Type) -> PredicatedAtomic | None:
    """The predicated `atom` of a `tt.atomic_rmw` on 32- or 64-bit `element`s, with the op's own
    `sem` and `scope`; None where there is none (other widths, float max/min, `amdg` ops)."""
    if op.operation.name != "tt.atomic_rmw" or not isinstance(element, ir.IntegerType | ir.F32Type | ir.F64Type):
        return None
    bits = element.width
    integer, floating = _PTX_ATOMS.get(op.operation.attributes["atomic_rmw_op"].value, (None, None))
    form = integer if isinstance(element, ir.IntegerType) else floating
    if form is None or bits not in (32, 64):
        return None
    sem = _SEMANTICS[op.operation.attributes["sem"].value]
    scope = _SCOPES[op.operation.attributes["scope"].value]
    return PredicatedAtomic(form[0], form[1], bits, sem, scope)


def _emit(op: ir.OpView, launch: Launch, plan: AtomicPlan) -> list[ir.Value]:
    kind = plan.kind
    value_type = access_operands(op.operation).value.type  # type: ignore[union-attr]
    atomic = None if is_amdgpu_chip(launch.chip) else ptx_atomic(op, value_type.element_type)
    if atomic is not None:

        def predicated(condition: ir.Value | None, value: ir.Value, memory: ir.Value, index: ir.Value) -> ir.Value:
            pointer = global_pointer(memory, index, value.type, ptx=True)
            if condition is None:  # every thread updates: no predicate, no `mov` of the default 0
                bare = predicated_atomic(replace(atomic, predicated=False))
                return llvm.inline_asm(value.type, [pointer, value], *bare, has_side_effects=True)
            asm = predicated_atomic(atomic)
            return llvm.inline_asm(value.type, [pointer, value, condition], *asm, has_side_effects=True)

        return _per_element(op, launch, plan, None, predicated)
    return _per_element(
        op, launch, plan, lambda value, compare, memory, index: memref.atomic_rmw(kind, value, memory, [index])
    )


def _compare_and_swap(value: ir.Value, compare: ir.Value, memory: ir.Value, index: ir.Value, *, ptx: bool) -> ir.Value:
    """One `llvm.cmpxchg` (`atom.cas`, as Triton's) at element `index` of `memory`, writing
    `value` where the element's bits equal `compare`'s (floats compared as their bits),
    returning the element's old value (``ptx``: the target takes PTX)."""
    element = value.type
    bits = element if isinstance(element, ir.IntegerType) else ir.IntegerType.get_signless(element.width)
    pointer = global_pointer(memory, index, element, ptx=ptx)
    swapped = llvm.cmpxchg(
        pointer,
        compare if bits == element else arith.bitcast(bits, compare),
        value if bits == element else arith.bitcast(bits, value),
        llvm.AtomicOrdering.acq_rel,
        llvm.AtomicOrdering.monotonic,
    )
    old = llvm.extractvalue(bits, swapped, [0])
    return old if bits == element else arith.bitcast(element, old)


def _emit_cas(op: ir.OpView, launch: Launch, plan: AtomicPlan) -> list[ir.Value]:
    ptx = not is_amdgpu_chip(launch.chip)
    return _per_element(
        op,
        launch,
        plan,
        lambda value, compare, memory, index: _compare_and_swap(value, compare, memory, index, ptx=ptx),
    )


def _all_true(mask: ir.Value) -> bool:
    """Whether `mask` is a splat `true` constant."""
    owner = getattr(mask.owner, "operation", mask.owner)  # an OpView's operation
    if not isinstance(owner, ir.Operation) or owner.name != "arith.constant":
        return False
    value = owner.attributes["value"]
    return isinstance(value, ir.DenseElementsAttr) and value.is_splat and bool(value.get_splat_value().value)


def _per_element(op: ir.OpView, launch: Launch, plan: AtomicPlan, update, predicated=None) -> list[ir.Value]:
    """`update(value, compare, memory, index) -> old` once per distinct element of the op's
    value (copies skipped by the layout's free variables), under its mask in an `scf.if`, or
    `predicated(condition, value, memory, index) -> old` (one predicated instruction, no branch;
    the condition None where nothing is masked); the old values."""
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
    if mask is not None and _all_true(mask):
        mask = None  # masks nothing
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
        if predicated is not None:
            olds[register] = predicated(condition, value, memory, index)
            continue
        if condition is None:
            olds[register] = update(value, compare, memory, index)
            continue
        if_op = scf.IfOp(condition, [element], has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            scf.yield_([update(value, compare, memory, index)])
        with ir.InsertionPoint(if_op.else_block):
            scf.yield_([zero])
        olds[register] = if_op.results[0]
    if plan.broadcast:
        olds = _broadcast(op, builder, layout, thread, olds)
    register_mask = free.get("register", 0)
    result = operation.results[0]
    target = ir.VectorType(lowered_type(result.type, launch))
    return [cast_to(vector.from_elements(target, [olds[r & ~register_mask] for r in range(registers)]), result.type)]


def _broadcast(
    op: ir.OpView, builder: KernelBuilder, layout, owner: ir.Value | None, olds: dict[int, ir.Value]
) -> dict[int, ir.Value]:
    """The old values in every thread: the updating threads (`owner`) store each at its element's
    place of the op's scratch, a barrier, and every thread loads them back (as Triton, whose
    copies of an element get the old value of the thread that updated it)."""
    index = buffer_index(op)
    if index is None:
        raise LoweringError(f"{op.operation.name} needs its workgroup buffer")
    buffer = workgroup_argument(op, index)
    flat = layout.transpose_outs(list(reversed(layout.get_out_dim_names()))).flatten_outs()  # row-major
    to_index = ir.IndexType.get()
    places = {
        register: arith.index_castui(
            to_index, builder.apply(flat, builder.hw_indices(register))[flat.get_out_dim_names()[0]]
        )
        for register in olds
    }
    if owner is None:
        for register, old in olds.items():
            memref.store(old, buffer, [places[register]])
    else:
        if_op = scf.IfOp(owner)
        with ir.InsertionPoint(if_op.then_block):
            for register, old in olds.items():
                memref.store(old, buffer, [places[register]])
            scf.yield_([])
    gpu.barrier()
    return {register: memref.load(buffer, [place]) for register, place in places.items()}


def _shared_use(op: ir.OpView, launch: Launch, plan: AtomicPlan) -> SharedUse:
    """The broadcast's scratch, one slot per element (store | barrier | loads); none without it."""
    if not plan.broadcast:
        return SharedUse()
    element = op.operation.results[0].type.element_type
    return SharedUse(Scratch(element, plan.broadcast, pooled=True), (BufferAccess(Access.WRITE),), ends_with_reads=True)


def _check_cas(op: ir.OpView, launch: Launch) -> AtomicPlan:
    check_access(op, launch)
    value = access_operands(op.operation).value
    if value is None or not isinstance(value.type, ir.RankedTensorType):
        raise LoweringError("tt.atomic_cas on a scalar pointer has no lowering")
    return AtomicPlan(None, _broadcast_elements(op, value.type, launch))


ATOMIC_RMW = SimtPattern(("tt.atomic_rmw", "amdg.buffer_atomic_rmw"), _check, _emit, shared=_shared_use)
ATOMIC_CAS = SimtPattern(("tt.atomic_cas",), _check_cas, _emit_cas, shared=_shared_use)
