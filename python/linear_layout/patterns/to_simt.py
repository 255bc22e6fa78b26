"""The tensor-to-SIMT patterns: one `SimtPattern` per op, registered once in `SIMT_PATTERNS`.

`SIMT_PATTERNS` is every module-level `SimtPattern` of this package's modules (found where it is
defined: its emitter's module), so a new op lowering is a pattern in its module and nothing else.

`populate_to_simt_patterns(patterns, target=...)` adds them to a `RewritePatternSet`; the
legality check of `ll-to-simt` (`legality.py`), the allocation (`allocation.py`) and the barrier
insertion (`barriers.py`) all read the same registry (`pattern_of`), so an op is registered here
and nowhere else. The pipeline around the patterns (outlining, allocation, barriers, patterns,
cleanup) is the pass's: `linear_layout.passes.ll_to_simt`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from mlir import ir
from mlir.rewrite import RewritePatternSet

from .kernel import PatternRun
from .simt_pattern import SimtPattern

__all__ = ["SIMT_PATTERNS", "pattern_of", "populate_to_simt_patterns", "registered_patterns", "shared_pattern_of"]

#: The modules of this package that hold the pipeline's steps, not patterns (they read this one).
_STEPS = frozenset({"allocation", "barriers", "legality", "outline", "to_simt", "triton_ops"})


def _module_patterns() -> tuple[SimtPattern, ...]:
    """Every module-level `SimtPattern` of the modules of this package, found in the module of
    its emitter, in module-name order and then in definition order."""
    found: list[SimtPattern] = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name in _STEPS:
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, SimtPattern) and getattr(value.emit, "__module__", None) == module.__name__
        ]
    return tuple(found)


def registered_patterns(patterns: tuple[SimtPattern, ...]) -> dict[str, SimtPattern]:
    """op name -> its pattern; ValueError when two patterns claim one op."""
    registry: dict[str, SimtPattern] = {}
    for pattern in patterns:
        for name in pattern.names():
            if name in registry:
                raise ValueError(f"two SIMT patterns lower '{name}'")
            registry[name] = pattern
    return registry


#: Every SIMT lowering, one pattern per op (a pattern may lower several ops; no op has two).
SIMT_PATTERNS: tuple[SimtPattern, ...] = _module_patterns()
_REGISTRY = registered_patterns(SIMT_PATTERNS)


def shared_pattern_of(op: ir.OpView) -> SimtPattern | None:
    """The pattern lowering `op` when it declares shared-memory use (`SimtPattern.shared`), else None."""
    pattern = _REGISTRY.get(op.operation.name)
    return pattern if pattern is not None and pattern.shared is not None and pattern.matches(op) else None


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
