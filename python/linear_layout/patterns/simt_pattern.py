"""One op's SIMT lowering as a rewrite pattern: a check and an emitter.

The check raises `LoweringError` for an op it cannot lower; the pass runs every check before it
rewrites anything (so that a failure leaves the module unchanged), and the pattern does not
match such an op. Ops match only inside a `gpu.func` kernel, whose launch they read from the IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from mlir import ir
from mlir.rewrite import PatternRewriter, RewritePatternSet

from .common import rewrite_callback
from .kernel import Launch, LoweringError, enclosing_kernel, kernel_facts

__all__ = ["SimtPattern"]

Check = Callable[[ir.OpView, Launch], Any]
Emit = Callable[[ir.OpView, Launch, Any], Sequence[ir.Value]]


@dataclass(frozen=True)
class SimtPattern:
    """The SIMT lowering of the ops named `roots`: `check(op, launch)` raises LoweringError when
    `op` cannot be lowered, else returns what the emitter needs (a plan, or None);
    `emit(op, launch, plan)` builds the op's code before it (the insertion point and location
    are the op's) and returns the values replacing its results."""

    roots: tuple[type | str, ...]
    check: Check
    emit: Emit

    def rewrite(self, op: ir.OpView, rewriter: PatternRewriter) -> bool:
        kernel = enclosing_kernel(op)
        if kernel is None:
            return False
        launch = kernel_facts(kernel).launch
        try:
            plan = self.check(op, launch)
        except LoweringError:
            return False
        with ir.InsertionPoint(op), op.location:
            values = list(self.emit(op, launch, plan))
        rewriter.replace_op(op, values)
        return True

    def add_to(self, patterns: RewritePatternSet, benefit: int = 1) -> None:
        callback = rewrite_callback(self.rewrite)
        for root in self.roots:
            patterns.add(root, callback, benefit=benefit)

    def names(self) -> list[str]:
        return [root if isinstance(root, str) else cast(Any, root).OPERATION_NAME for root in self.roots]
