"""One op's SIMT lowering as a rewrite pattern: a check, an emitter, and what it does to shared memory.

The check raises `LoweringError` for an op it cannot lower; the pass runs every check before it
rewrites anything (so that a failure leaves the module unchanged), and the pattern does not
match such an op. Ops match only inside a `gpu.func` kernel, whose launch they read from the IR
(and the target chip and memo from the `PatternRun` the callbacks close over).

An op that uses shared memory says how with `shared(op, launch, plan) -> SharedUse`: the scratch
buffer it needs (read by the allocation, `allocation.py`) and the buffers it reads and writes
(read by the barrier insertion, `barriers.py`). Neither analysis knows any op: a new op with
scratch is a pattern with a `shared` function, and nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from mlir import ir
from mlir.rewrite import PatternRewriter, RewritePatternSet

from ..ir.walk import at_op
from .common import rewrite_callback
from .kernel import Launch, LoweringError, PatternRun, enclosing_kernel
from .shared_memory import WORKGROUP_BUFFER

__all__ = ["Access", "BufferAccess", "Scratch", "SharedUse", "SimtPattern"]

Check = Callable[[ir.OpView, Launch], Any]
Emit = Callable[[ir.OpView, Launch, Any], Sequence[ir.Value]]


class Access(enum.Enum):
    """How an op touches a shared buffer."""

    READ = "read"
    WRITE = "write"
    ASYNC_WRITE = "async write"  # a cp.async: it lands at its wait (whose barrier orders it)


@dataclass(frozen=True)
class Scratch:
    """A workgroup buffer an op needs: `elements` of type `element`. `pooled`: the op's own
    scratch, live during the op only (a conversion's, as Triton's scratch buffers), whose bytes
    other ops' buffers reuse; else an explicit allocation (a `ttg.local_alloc`), live to the
    last use of its memdesc (`allocation.py`)."""

    element: ir.Type
    elements: int
    pooled: bool


@dataclass(frozen=True)
class BufferAccess:
    """A read or write of a shared buffer: the op's own scratch (`memdesc` None), or the buffer of
    the `ttg.local_alloc` that made `memdesc`."""

    kind: Access
    memdesc: ir.Value | None = None


@dataclass(frozen=True)
class SharedUse:
    """What an op does to shared memory: its `scratch` (None: none), the `accesses` it makes,
    whether it has barriers inside that leave only its own reads pending after it
    (`ends_with_reads`: store | barrier | load), whether those barriers are warp barriers
    (`warp_synchronous`: `bar.warp.sync`, which orders nothing between warps), and whether it
    ends with a barrier that leaves nothing pending (`synchronizes`: `ttg.async_wait`, after
    which Triton's Membar always places one, since the copies it retires land as writes of their
    own warps)."""

    scratch: Scratch | None = None
    accesses: tuple[BufferAccess, ...] = ()
    ends_with_reads: bool = False
    warp_synchronous: bool = False
    synchronizes: bool = False


Shared = Callable[[ir.OpView, Launch, Any], SharedUse]


def _always(op: ir.OpView) -> bool:
    return True


@dataclass(frozen=True)
class SimtPattern:
    """The SIMT lowering of the ops named `roots`: `matches(op)` says whether the pattern is for
    this op at all (an elementwise pattern is for ops on tensors only); `check(op, launch)` raises
    LoweringError when `op` cannot be lowered, else returns what the emitter needs (a plan, or
    None); `emit(op, launch, plan)` builds the op's code before it (the insertion point and
    location are the op's) and returns the values replacing its results; `shared` (None: the op
    does not touch shared memory) declares its scratch and accesses. `in_kernel`: the op is
    lowered only inside a kernel (False for ops that need no launch, `ll.apply`). `label` names
    what it lowers in messages (default: its op names)."""

    roots: tuple[type | str, ...]
    check: Check
    emit: Emit
    matches: Callable[[ir.OpView], bool] = _always
    shared: Shared | None = None
    in_kernel: bool = True
    label: str | None = None

    def describe(self) -> str:
        return self.label or ", ".join(self.names())

    def launch_of(self, op: ir.OpView, run: PatternRun) -> Launch | None:
        """The launch `op` is lowered with; None when it needs a kernel and has none."""
        kernel = enclosing_kernel(op)
        if kernel is None:
            return None if self.in_kernel else Launch(chip=run.chip, run=run)
        return run.facts(kernel).launch

    def rewrite(self, op: ir.OpView, rewriter: PatternRewriter, run: PatternRun) -> bool:
        launch = self.launch_of(op, run)
        if launch is None or not self.matches(op):
            return False
        try:
            plan = self.check(op, launch)
            if not self.has_buffers(op, launch, plan):
                return False
        except LoweringError:
            return False
        with ir.InsertionPoint(op), op.location:
            values = list(self.emit(op, launch, plan))
        if len(values) != len(op.results):  # an edited op with more or fewer results: replace_op would abort
            raise LoweringError(f"'{op.name}' with {len(op.results)} results has no lowering (it gives {len(values)})")
        rewriter.replace_op(op, values)
        return True

    def shared_use(self, op: ir.OpView, launch: Launch, plan: Any) -> SharedUse | None:
        return None if self.shared is None else self.shared(op, launch, plan)

    def has_buffers(self, op: ir.OpView, launch: Launch, plan: Any) -> bool:
        """False when the op needs scratch that the allocation has not given it yet."""
        use = self.shared_use(op, launch, plan)
        return use is None or use.scratch is None or WORKGROUP_BUFFER in op.operation.attributes

    def add_to(self, patterns: RewritePatternSet, run: PatternRun, benefit: int = 1) -> None:
        rewrite = self.rewrite

        def bound(op: ir.OpView, rewriter: PatternRewriter) -> bool:
            try:
                return rewrite(op, rewriter, run)
            except Exception as error:  # MLIR keeps only its text: the run keeps the exception
                run.failures.append(error)
                at_op(error, op)
                raise

        bound.__name__ = f"lower_{self.names()[0].replace('.', '_')}"
        callback = rewrite_callback(bound)
        for root in self.roots:
            patterns.add(root, callback, benefit=benefit)

    def names(self) -> list[str]:
        return [root if isinstance(root, str) else cast(Any, root).OPERATION_NAME for root in self.roots]
