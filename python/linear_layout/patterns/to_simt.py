"""The tensor-to-SIMT patterns: one `SimtPattern` per op, registered once in `SIMT_PATTERNS`.

`populate_to_simt_patterns(patterns, target=...)` adds them to a `RewritePatternSet`; the
legality check of `ll-to-simt` (`legality.py`), the allocation (`allocation.py`) and the barrier
insertion (`barriers.py`) all read the same registry (`pattern_of`), so an op is registered here
and nowhere else. The pipeline around the patterns (outlining, allocation, barriers, patterns,
cleanup) is the pass's: `linear_layout.passes.ll_to_simt`.
"""

from __future__ import annotations

from mlir import ir
from mlir.rewrite import RewritePatternSet

from .atomics import ATOMIC_RMW
from .control_flow import SCF_FOR, SCF_IF
from .convert_layout import CONVERT_LAYOUT
from .kernel import PatternRun
from .local_memory import LOCAL_ALLOC, LOCAL_LOAD, LOCAL_STORE
from .lower_apply import APPLY
from .gather import GATHER
from .histogram import HISTOGRAM
from .reduce import REDUCE
from .scan import SCAN
from .simt_pattern import SimtPattern
from .tensor_ops import CONSTANT, ELEMENTWISE, TILE_LOAD, TILE_STORE
from .triton_kernel import TRITON_PATTERNS

__all__ = ["SIMT_PATTERNS", "pattern_of", "populate_to_simt_patterns", "registered_patterns"]

#: Every SIMT lowering, one pattern per op (a pattern may lower several ops; no op has two).
SIMT_PATTERNS: tuple[SimtPattern, ...] = (
    TILE_LOAD,
    TILE_STORE,
    CONVERT_LAYOUT,
    LOCAL_ALLOC,
    LOCAL_STORE,
    LOCAL_LOAD,
    CONSTANT,
    ELEMENTWISE,
    APPLY,
    *TRITON_PATTERNS,  # Triton's own kernels (tt.func): triton_kernel.py
    REDUCE,
    SCAN,
    GATHER,
    ATOMIC_RMW,
    HISTOGRAM,
    SCF_IF,
    SCF_FOR,
)


def registered_patterns(patterns: tuple[SimtPattern, ...]) -> dict[str, SimtPattern]:
    """op name -> its pattern; ValueError when two patterns claim one op."""
    registry: dict[str, SimtPattern] = {}
    for pattern in patterns:
        for name in pattern.names():
            if name in registry:
                raise ValueError(f"two SIMT patterns lower '{name}'")
            registry[name] = pattern
    return registry


_REGISTRY = registered_patterns(SIMT_PATTERNS)


def pattern_of(op: ir.OpView) -> SimtPattern | None:
    """The pattern lowering `op`, or None when no pattern is for it (`SimtPattern.matches`)."""
    pattern = _REGISTRY.get(op.operation.name)
    return pattern if pattern is not None and pattern.matches(op) else None


def populate_to_simt_patterns(
    patterns: RewritePatternSet, *, target: str | None = None, benefit: int = 1
) -> PatternRun:
    """Add the tensor-to-SIMT patterns (and `ll.apply` -> arith) to `patterns`, for the target
    chip `target` (e.g. "sm_90"; None: portable code).

    They rewrite ops inside a `gpu.func` kernel made by `outline_kernel`, after
    `allocate_shared_memory` and `insert_barriers`; ops they cannot lower do not match. Returns
    the `PatternRun` the patterns close over: `run.memoized(kernel)` reads a kernel's facts once
    and shares plans and constants between the rewrites inside it."""
    run = PatternRun(target)
    for pattern in SIMT_PATTERNS:
        pattern.add_to(patterns, run, benefit)
    return run
