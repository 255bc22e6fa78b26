"""What every rewrite pattern of this package shares: the callback convention of the bindings
and the tensor <-> vector boundary casts."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.rewrite import PatternRewriter

__all__ = ["CAST", "Rewrite", "cast_to", "rewrite_callback"]

#: The op that keeps a type-changing lowering valid between patterns; the upstream
#: `reconcile-unrealized-casts` pass removes the pairs once both sides are lowered.
CAST = "builtin.unrealized_conversion_cast"

#: A rewrite: takes the matched op (its OpView) and the rewriter; returns True when it rewrote
#: the op, False when the op does not match.
Rewrite = Callable[[ir.OpView, PatternRewriter], bool]


def rewrite_callback(rewrite: Rewrite) -> Callable[[ir.OpView, PatternRewriter], bool]:
    """`rewrite` as a callback for `RewritePatternSet.add`.

    The bindings use an inverted convention: a callback returns a false value when the pattern
    matched and a true one when it did not. This is the one place that knows it."""

    def callback(op: ir.OpView, rewriter: PatternRewriter) -> bool:
        return not rewrite(op, rewriter)

    callback.__name__ = callback.__qualname__ = getattr(rewrite, "__name__", "rewrite")
    return callback


def cast_to(value: ir.Value, target: ir.Type) -> ir.Value:
    """`value` as type `target`: the input of the cast that produced `value` when that cast came
    from `target` (so no cast pairs pile up), else a new `unrealized_conversion_cast`."""
    if value.type == target:
        return value
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    if (
        isinstance(owner, ir.Operation)
        and owner.name == CAST
        and len(owner.operands) == 1
        and owner.operands[0].type == target
    ):
        return owner.operands[0]
    return ir.Operation.create(CAST, results=[target], operands=[value]).result
