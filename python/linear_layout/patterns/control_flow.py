"""SIMT patterns of structured control flow that carries tensors: `scf.if`, `scf.for` and
`scf.while` (whose `scf.condition` passes per-thread values on like `scf.yield`); and `tt.assert`,
dropped (no instruction, as Triton without `debug`).

A tensor result, loop-carried value or yielded value becomes its per-thread vector (as every
tensor of a kernel); the op is rebuilt with those types, its blocks' operations move into the new
op, block arguments are cast back to tensors for the ops not yet lowered, and each `scf.yield`
yields vectors. A condition or bound is a scalar, the same in every thread of a Triton kernel
(`tt.func` control flow is uniform), so the branches and trips need no masks.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from .common import cast_to
from .kernel import Launch, vector_type
from .simt_pattern import SimtPattern

__all__ = ["ASSERT", "SCF_FOR", "SCF_IF", "SCF_WHILE", "lowered_type"]


def lowered_type(t: ir.Type, launch: Launch) -> ir.Type:
    """The per-thread type of a value of type `t`: a distributed tensor's `vector<R x T>` (its
    `!tt.ptr` elements as `index` offsets), any other type unchanged."""
    return vector_type(t, launch) if isinstance(t, ir.RankedTensorType) else t


def _carries_tensors(op: ir.OpView) -> bool:
    return any(isinstance(v.type, ir.RankedTensorType) for v in op.operation.results)


def _check(op: ir.OpView, launch: Launch) -> None:
    for value in op.operation.results:
        lowered_type(value.type, launch)  # LoweringError when a layout does not fit the launch


def _move_block(old: ir.Block, new: ir.Block, replacements: list[ir.Value], launch: Launch) -> None:
    """Move the operations of `old` to the end of `new`, its arguments replaced, and rewrite its
    `scf.yield` (or `scf.condition`) to pass per-thread values on."""
    for argument, value in zip(old.arguments, replacements):
        argument.replace_all_uses_with(value)
    ip = ir.InsertionPoint(new)
    for op in list(old.operations):
        ip.insert(op.operation.detach_from_parent())
    terminator = list(new.operations)[-1]
    with ir.InsertionPoint(terminator), terminator.location:
        values = [cast_to(v, lowered_type(v.type, launch)) for v in terminator.operands]
        if terminator.name == "scf.condition":
            scf.condition(values[0], values[1:])
        else:
            scf.yield_(values)
    terminator.operation.erase()


def _emit_if(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    results = [lowered_type(r.type, launch) for r in operation.results]
    has_else = len(operation.regions[1].blocks) > 0
    new = scf.IfOp(operation.operands[0], results, has_else=has_else)
    _move_block(operation.regions[0].blocks[0], new.then_block, [], launch)
    if has_else:
        _move_block(operation.regions[1].blocks[0], new.else_block, [], launch)
    return [cast_to(value, old.type) for value, old in zip(new.results, operation.results)]


def _emit_for(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    lower, upper, step, *inits = operation.operands
    new = scf.ForOp(lower, upper, step, [cast_to(v, lowered_type(v.type, launch)) for v in inits])
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
    new = scf.WhileOp(results, [cast_to(v, lowered_type(v.type, launch)) for v in operation.operands])
    for k in range(2):
        _rebuilt_block(operation.regions[k].blocks[0], new.regions[k], launch)
    return [cast_to(value, old.type) for value, old in zip(new.results, operation.results)]


def _while_carries_tensors(op: ir.OpView) -> bool:
    return _carries_tensors(op) or any(isinstance(v.type, ir.RankedTensorType) for v in op.operation.operands)


SCF_IF = SimtPattern(("scf.if",), _check, _emit_if, matches=_carries_tensors)
SCF_FOR = SimtPattern(("scf.for",), _check, _emit_for, matches=_carries_tensors)
SCF_WHILE = SimtPattern(("scf.while",), _check, _emit_while, matches=_while_carries_tensors)


# ---------------------------------------------------------------------------- tt.assert


def _no_check(op: ir.OpView, launch: Launch) -> None:
    return None


def _drop_assert(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.assert` is dropped: no instruction, as Triton itself compiles it without `debug`
    (with `debug` Triton prints and traps; the stock pipeline has no device printf to match)."""
    return []


ASSERT = SimtPattern(("tt.assert",), _no_check, _drop_assert)
