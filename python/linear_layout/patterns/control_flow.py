"""SIMT patterns of structured control flow that carries tensors: `scf.if`, `scf.for` and
`scf.while` (whose `scf.condition` passes per-thread values on like `scf.yield`); and `tt.assert`,
dropped (no instruction, as Triton without `debug`).

A tensor result, loop-carried value or yielded value becomes its per-thread vector (as every
tensor of a kernel); the op is rebuilt with those types, its blocks' operations move into the new
op, block arguments are cast back to tensors for the ops not yet lowered, and each `scf.yield`
yields vectors. A condition or bound is a scalar, the same in every thread of a Triton kernel
(`tt.func` control flow is uniform), so the branches and trips need no masks.

`scf.for` also carries the shared-memory views and async tokens of Triton's pipelined loops: a
memdesc as its i32 start (its buffer and XOR recorded on the loop, `shared_memory.CARRIED_MEMDESCS`,
the same on entry and on every back edge), a `!ttg.async_token` as an i32 that nothing reads.
`scf.if` yields a memdesc the same way: its i32 start, the buffer and XOR recorded on the `if`,
the same in both branches (two buffers of one multi-buffered allocation differ by their start
only; two allocations, or two subslice origins, are an error at the `scf.if`). `scf.while`
carries no memdesc (an error at the op).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..ir.text import type_kind
from .common import cast_to
from .kernel import Launch, LoweringError, vector_type
from .shared_memory import CARRIED_MEMDESCS, MemdescView, is_memdesc, memdesc_origin, memdesc_start
from .simt_pattern import SimtPattern

__all__ = ["ASSERT", "SCF_FOR", "SCF_IF", "SCF_WHILE", "lowered_type"]


def lowered_type(t: ir.Type, launch: Launch) -> ir.Type:
    """The per-thread type of a value of type `t`: a distributed tensor's `vector<R x T>` (its
    `!tt.ptr` elements as `index` offsets), a memdesc's start and an async token as i32, any
    other type unchanged."""
    if isinstance(t, ir.RankedTensorType):
        return vector_type(t, launch)
    if _is_carried_scalar(t):
        return ir.IntegerType.get_signless(32)
    return t


def _is_carried_scalar(t: ir.Type) -> bool:
    return is_memdesc(t) or type_kind(t) == "ttg.async_token"


def lowered_value(value: ir.Value, launch: Launch) -> ir.Value:
    """`value` as its `lowered_type`: a memdesc's start (`memdesc_start`, 0 for an allocation)."""
    if is_memdesc(value.type):
        start = memdesc_start(value)
        return start if start is not None else arith.constant(ir.IntegerType.get_signless(32), 0)
    return cast_to(value, lowered_type(value.type, launch))


def _carries_tensors(op: ir.OpView) -> bool:
    return any(isinstance(v.type, ir.RankedTensorType) or _is_carried_scalar(v.type) for v in op.operation.results)


def _check(op: ir.OpView, launch: Launch) -> None:
    for value in op.operation.results:
        lowered_type(value.type, launch)  # LoweringError when a layout does not fit the launch
        if op.operation.name == "scf.while" and is_memdesc(value.type):
            raise LoweringError(f"a shared-memory view carried by '{op.operation.name}' is not lowered")


def _one_view(values: list[ir.Value]) -> MemdescView | None:
    """The buffer and XOR memdescs `values` share, or None where they differ: in buffer, XOR,
    or (before the allocation numbers the buffers) in the `ttg.local_alloc` they come from."""
    (view, origin), *others = [memdesc_origin(value) for value in values]
    for other_view, other_origin in others:
        if other_view != view or (view.buffer < 0 and other_origin != origin):
            return None
    return view


def _check_if(op: ir.OpView, launch: Launch) -> list[int]:
    """The `CARRIED_MEMDESCS` pairs of an `scf.if`: each memdesc result's buffer and XOR, the
    same in both branches (LoweringError otherwise).

    Example: `buf[0]` in one branch and `buf[1]` in the other (one two-buffer allocation) are
    one buffer and XOR 0; the result's i32 start says which."""
    _check(op, launch)
    operation = op.operation
    yields = [list(region.blocks[0].operations)[-1].operands for region in operation.regions if region.blocks]
    pairs: list[int] = []
    for position, value in enumerate(operation.results):
        if not is_memdesc(value.type):
            pairs += [-1, 0]
            continue
        view = _one_view([branch[position] for branch in yields])
        if view is None:
            raise LoweringError("an scf.if yields views of different shared buffers or subslices")
        pairs += [view.buffer, view.xor]
    return pairs


def _check_for(op: ir.OpView, launch: Launch) -> list[int]:
    """The `CARRIED_MEMDESCS` pairs of the loop: each memdesc argument's buffer and XOR, the same
    entering the loop and on its back edge (LoweringError otherwise)."""
    _check(op, launch)
    operation = op.operation
    terminator = operation.regions[0].blocks[0].operations[-1]  # no list: the body may hold hundreds of ops
    pairs: list[int] = []
    for init, yielded in zip(list(operation.operands)[3:], terminator.operands):
        if not is_memdesc(init.type):
            pairs += [-1, 0]
            continue
        entry = _one_view([init, yielded])
        if entry is None:
            raise LoweringError("a loop-carried shared-memory view changes its buffer or subslice on the back edge")
        pairs += [entry.buffer, entry.xor]
    return pairs


def _move_block(old: ir.Block, new: ir.Block, replacements: list[ir.Value], launch: Launch) -> None:
    """Move the operations of `old` to the end of `new`, its arguments replaced, and rewrite its
    `scf.yield` (or `scf.condition`) to pass per-thread values on."""
    for argument, value in zip(old.arguments, replacements):
        argument.replace_all_uses_with(value)
    ip = ir.InsertionPoint(new)
    for op in list(old.operations):
        ip.insert(op.operation.detach_from_parent())
    terminator = new.operations[-1]
    with ir.InsertionPoint(terminator), terminator.location:
        values = [lowered_value(v, launch) for v in terminator.operands]
        if terminator.name == "scf.condition":
            scf.condition(values[0], values[1:])
        else:
            scf.yield_(values)
    terminator.operation.erase()


def _emit_if(op: ir.OpView, launch: Launch, plan: list[int]) -> list[ir.Value]:
    operation = op.operation
    results = [lowered_type(r.type, launch) for r in operation.results]
    has_else = len(operation.regions[1].blocks) > 0
    new = scf.IfOp(operation.operands[0], results, has_else=has_else)
    if any(index >= 0 for index in plan[::2]):
        new.operation.attributes[CARRIED_MEMDESCS] = ir.DenseI64ArrayAttr.get(plan)
    _move_block(operation.regions[0].blocks[0], new.then_block, [], launch)
    if has_else:
        _move_block(operation.regions[1].blocks[0], new.else_block, [], launch)
    return [cast_to(value, old.type) for value, old in zip(new.results, operation.results)]


def _emit_for(op: ir.OpView, launch: Launch, plan: list[int]) -> list[ir.Value]:
    operation = op.operation
    lower, upper, step, *inits = operation.operands
    new = scf.ForOp(lower, upper, step, [lowered_value(v, launch) for v in inits])
    if any(index >= 0 for index in plan[::2]):
        new.operation.attributes[CARRIED_MEMDESCS] = ir.DenseI64ArrayAttr.get(plan)
    old_body = operation.regions[0].blocks[0]
    with ir.InsertionPoint(new.body), operation.location:
        carried = [
            cast_to(arg, old.type) for arg, old in zip(list(new.body.arguments)[1:], list(old_body.arguments)[1:])
        ]
    _move_block(old_body, new.body, [new.induction_variable, *carried], launch)
    return [cast_to(value, old.type) for value, old in zip(new.results, operation.results)]


def _rebuilt_block(old: ir.Block, region: ir.Region, launch: Launch) -> None:
    """A block of `region` with the per-thread types of `old`'s arguments, holding its ops."""
    types = [lowered_type(a.type, launch) for a in old.arguments]
    new = region.blocks.append(*types, arg_locs=[a.location for a in old.arguments])
    with ir.InsertionPoint(new), ir.Location.unknown():
        replacements = [cast_to(a, o.type) for a, o in zip(new.arguments, old.arguments)]
    _move_block(old, new, replacements, launch)


def _emit_while(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    results = [lowered_type(r.type, launch) for r in operation.results]
    new = scf.WhileOp(results, [lowered_value(v, launch) for v in operation.operands])
    for k in range(2):
        _rebuilt_block(operation.regions[k].blocks[0], new.regions[k], launch)
    return [cast_to(value, old.type) for value, old in zip(new.results, operation.results)]


def _while_carries_tensors(op: ir.OpView) -> bool:
    return _carries_tensors(op) or any(
        isinstance(v.type, ir.RankedTensorType) or _is_carried_scalar(v.type) for v in op.operation.operands
    )


SCF_IF = SimtPattern(("scf.if",), _check_if, _emit_if, matches=_carries_tensors)
SCF_FOR = SimtPattern(("scf.for",), _check_for, _emit_for, matches=_carries_tensors)
SCF_WHILE = SimtPattern(("scf.while",), _check, _emit_while, matches=_while_carries_tensors)


# ---------------------------------------------------------------------------- tt.assert


def _no_check(op: ir.OpView, launch: Launch) -> None:
    return None


def _drop_assert(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.assert` is dropped: no instruction, as Triton itself compiles it without `debug`
    (with `debug` Triton prints and traps; the stock pipeline has no device printf to match)."""
    return []


ASSERT = SimtPattern(("tt.assert",), _no_check, _drop_assert)
