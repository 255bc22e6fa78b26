"""Python op classes and builders for the `ll` and `ttg` IRDL dialects, in the bindings' idiom.

    from mlir import ir
    from linear_layout.dialects import ll, load_dialects, ttg

    with ir.Context() as ctx, ir.Location.unknown():
        load_dialects(ctx)                       # idempotent
        ...
        row, col = ll.apply(layout, [register, lane, warp])
        y = ttg.convert_layout(result_type, x)

Every `ll.*` / `ttg.*` op that the bindings hand out (`block.operations`, `op.opview`, rewrite
pattern callbacks) is an instance of its class (`ll.ApplyOp`, `ttg.ConvertLayoutOp`, ...), with
typed accessors and `verify_rules()`; `verify(op)` checks a whole module.
"""

from ..ir._dialects import DIALECTS, dialect_file, load_dialects
from . import ll, ttg
from ._base import LayoutOp, ops_of
from .verifier import LaunchFacts, verify

__all__ = ["DIALECTS", "LaunchFacts", "LayoutOp", "dialect_file", "ll", "load_dialects", "ops_of", "ttg", "verify"]
