"""Rewrite patterns in the upstream style: populate functions that add this project's lowerings
to a `RewritePatternSet`, to be applied together with anyone else's.

    from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily
    from linear_layout.patterns import populate_lower_apply_patterns

    patterns = RewritePatternSet(context)
    populate_lower_apply_patterns(patterns)          # ll.apply -> arith
    patterns.add("my.op", my_rewrite)                # and your own
    apply_patterns_and_fold_greedily(module, patterns.freeze())

`populate_to_simt_patterns` adds the tensor-to-SIMT lowering (one pattern per op); the steps it
needs first (kernel outlining, shared-memory allocation, barriers) are in `to_simt`.
"""

from .apply_layout import emit_apply_layout
from .lower_apply import populate_lower_apply_patterns
from .to_simt import allocate_shared_memory, insert_barriers, lower_to_simt, outline_kernel, populate_to_simt_patterns

__all__ = [
    "allocate_shared_memory",
    "emit_apply_layout",
    "insert_barriers",
    "lower_to_simt",
    "outline_kernel",
    "populate_lower_apply_patterns",
    "populate_to_simt_patterns",
]
