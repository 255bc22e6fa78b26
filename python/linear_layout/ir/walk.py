"""`Operation.walk` with a callback that may raise.

MLIR calls a walk's callback from C++: an exception raised there comes back as a `RuntimeError`
whose message is the whole traceback, and the exception itself is lost. `walk` stops at the
first exception instead and re-raises it as it was, with the location of the op being visited
(`op_location(error)`), so that a caller can report a bad type or attribute at its op and a bug
as a bug. Every walk of the package goes through here.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

__all__ = ["at_op", "op_location", "op_name", "ops_where", "walk"]

_AT_OP = "_linear_layout_at_op"


def at_op(error: BaseException, op: ir.Operation | ir.OpView) -> BaseException:
    """`error`, marked as raised while handling `op` (the innermost op wins)."""
    if getattr(error, _AT_OP, None) is None:
        setattr(error, _AT_OP, (op.location, op.operation.name))
    return error


def op_location(error: BaseException) -> ir.Location | None:
    """The location of the op `error` was raised at (`at_op`), or None."""
    marked = getattr(error, _AT_OP, None)
    return None if marked is None else marked[0]


def op_name(error: BaseException) -> str | None:
    """The name of the op `error` was raised at (`at_op`), or None."""
    marked = getattr(error, _AT_OP, None)
    return None if marked is None else marked[1]


def walk(
    root: ir.Operation | ir.OpView | ir.Module,
    visit: Callable[[ir.Operation], ir.WalkResult],
    order: ir.WalkOrder = ir.WalkOrder.PRE_ORDER,
) -> None:
    """`root.operation.walk(visit, order)`; an exception `visit` raises stops the walk and is
    re-raised unchanged (marked with the op's location)."""
    failures: list[Exception] = []

    def guarded(op: ir.Operation) -> ir.WalkResult:
        try:
            return visit(op)
        except Exception as error:
            failures.append(error)
            at_op(error, op)
            return ir.WalkResult.INTERRUPT

    root.operation.walk(guarded, order)
    if failures:
        raise failures[0]


def ops_where(
    root: ir.Operation | ir.OpView | ir.Module,
    predicate: Callable[[ir.Operation], bool],
    order: ir.WalkOrder = ir.WalkOrder.PRE_ORDER,
) -> list[ir.Operation]:
    """The ops under `root` (itself included) for which `predicate` holds, in walk `order`
    (through `walk`: an exception `predicate` raises is re-raised at its op).

    Example: ``ops_where(kernel, lambda op: op.name == "tt.call")``."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if predicate(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    walk(root, visit, order)
    return found
