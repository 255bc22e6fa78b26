"""Rewrite patterns in the upstream style: populate functions that add this project's lowerings
to a `RewritePatternSet`, to be applied together with anyone else's.

    from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily
    from linear_layout.patterns import populate_lower_apply_patterns

    patterns = RewritePatternSet(context)
    populate_lower_apply_patterns(patterns)          # ll.apply -> arith
    patterns.add("my.op", my_rewrite)                # and your own
    apply_patterns_and_fold_greedily(module, patterns.freeze())

`populate_to_simt_patterns(patterns, target=...)` adds the tensor-to-SIMT lowering (one pattern
per op, `to_simt.SIMT_PATTERNS`); the steps it needs first are here too: `outline_kernel`
(`outline.py`), `allocate_shared_memory` (`allocation.py`) and `insert_barriers`
(`barriers.py`). The pass `ll-to-simt` (`linear_layout.passes.ll_to_simt`) runs them all.
"""

from .allocation import allocate_shared_memory
from .apply_layout import emit_apply_layout
from .barriers import insert_barriers
from .lower_apply import populate_lower_apply_patterns
from .outline import outline_kernel
from .to_simt import populate_to_simt_patterns

__all__ = [
    "allocate_shared_memory",
    "emit_apply_layout",
    "insert_barriers",
    "outline_kernel",
    "populate_lower_apply_patterns",
    "populate_to_simt_patterns",
]
