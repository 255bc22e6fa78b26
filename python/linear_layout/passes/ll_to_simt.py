"""`ll-to-simt`: lower tensor-level kernels to per-thread SIMT code in upstream dialects.

The pass owns the lowering pipeline. Every `func.func` with a body, and every `tt.func` of TTGIR
(Triton's own kernels: `patterns.triton_kernel`, docs/triton-kernels.md), goes through these
steps, as Triton's backend does:

0. `materialize`: the ops of other dialects that the TTGIR reader carried as text
   (`ttgir.foreign`: `math.exp`, ...) become the upstream ops MLIR 22 parses from that text (the
   same ops; the only change this step makes before the check, and only to their form); one MLIR 22
   cannot parse is an error at the op;
1. `check`: every function's signature and launch, and every op's pattern check
   (`patterns.legality`); when one fails nothing is changed and the errors are reported;
2. `outline`: the function becomes a `gpu.func ... kernel` (`patterns.outline`; a `tt.func`
   first gets its accesses' argument and width from the axis info, `annotate_accesses`, then
   `outline_triton_kernel`);
3. `allocate`: Triton's AllocateSharedMemory, from the scratch each pattern declares
   (`patterns.allocation`);
4. `insert_barriers`: Triton's Membar, from the accesses each pattern declares
   (`patterns.barriers`);
5. `apply_patterns`: the patterns of `populate_to_simt_patterns(patterns, target=chip)`, one
   per op, with `walk_and_apply_patterns`; tensor <-> vector boundaries are
   `unrealized_conversion_cast`s;
6. `cleanup`: the upstream `reconcile-unrealized-casts` removes them, and
   `place_shared_memory` aligns the workgroup buffers (or moves them to dynamic shared memory
   above the 48 KiB static limit);
7. for a `tt.func`, `scalarize_extracts`: lanes taken out of integer vectors are rebuilt on
   scalars (masks become `i1` predicates, offsets scalars; `patterns/vectors.py`).

`docs/passes.md` has the closed list of ops it emits. A failure (an unsupported op, mismatched
layouts, too many warps for the launch) is reported at the op and leaves the module unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import gpu
from mlir.passmanager import PassManager
from mlir.rewrite import FrozenRewritePatternSet, RewritePatternSet, walk_and_apply_patterns

from ..core.targets import TargetError, is_amdgpu_chip, lowering_chip
from ..dialects.verifier import module_chip, target_holder
from ..patterns.allocation import allocate_shared_memory, shared_uses
from ..patterns.barriers import insert_barriers
from ..patterns.calls import inline_calls
from ..patterns.dynamic_shared_memory import place_shared_memory
from ..patterns.kernel import PatternRun
from ..patterns.legality import check_function, function_launch
from ..patterns.outline import kernel_functions, outline_kernel
from ..patterns.to_simt import populate_to_simt_patterns
from ..patterns.triton_kernel import annotate_accesses, outline_triton_kernel, triton_kernel_launch
from ..patterns.triton_ops import check_triton_kernels, triton_kernels
from ..patterns.vectors import scalarize_extracts
from ..ttgir.foreign import materialize
from . import Pass, PipelineError

__all__ = ["ChipOption", "LLToSimt", "lower_checked", "lower_to_simt", "problems", "target_problems"]

CHIP_HELP = (
    "target chip, e.g. sm_90: shared-memory conversions of 8/16-bit data use ldmatrix (sm_75+) and "
    "stmatrix (sm_90+) where they reach the bandwidth floor; an AMD chip (gfx942) gives the AMD form of "
    "masked accesses; empty (the default): the chip of a TTGIR module's ttg.target (ll-to-simt: its AMD chip only), "
    "else portable"
)


def problems(root: ir.Operation, chip: str | None = None) -> list[tuple[ir.Location, str]]:
    """Steps 0-1: why the functions under `root` cannot become kernels (nothing is changed but
    the form of the foreign ops, step 0)."""
    foreign = materialize(root)
    if foreign:
        return [(error.location, str(error)) for error in foreign]
    wrong_target = target_problems(root)
    if wrong_target:
        return wrong_target
    chip = chip or _hip_chip_of(root)
    triton = check_triton_kernels(root, chip)
    return triton + [error for func_op in kernel_functions(root) for error in check_function(func_op, chip)]


def _lower_kernel(func_op: ir.OpView, chip: str | None, run: PatternRun, patterns: FrozenRewritePatternSet) -> None:
    """Steps 2-6 on one function that `check_function` accepted."""
    _lower_outlined(outline_kernel(func_op, function_launch(func_op, chip)), run, patterns)


def _lower_triton_kernel(
    tt_func: ir.Operation, chip: str | None, run: PatternRun, patterns: FrozenRewritePatternSet
) -> None:
    """Steps 2-7 on one `tt.func` that `check_triton_kernels` accepted."""
    annotate_accesses(tt_func)
    kernel = outline_triton_kernel(tt_func, triton_kernel_launch(tt_func, chip))
    _lower_outlined(kernel, run, patterns)
    scalarize_extracts(kernel.operation)


def target_problems(op: ir.Operation) -> list[tuple[ir.Location, str]]:
    """The error of a `ttg.target` around `op` that names no known chip, at the op holding it
    (the driver and the report place it at the attribute's line:col); [] otherwise."""
    try:
        module_chip(op)
    except TargetError as error:
        holder = target_holder(op)
        assert holder is not None  # module_chip raises only for a target it found
        return [(holder.location, str(error))]
    return []


def _hip_chip_of(op: ir.Operation) -> str | None:
    """The AMD chip of the `ttg.target` around `op` (`"hip:gfx942"` -> `"gfx942"`), else None: a
    TTGIR module compiled for AMD lowers to the AMD form without a `chip` option (an NVIDIA
    target lowers portably unless the option names a chip). Requires: `target_problems` found none."""
    chip = module_chip(op)
    return chip if is_amdgpu_chip(chip) else None


def _lower_outlined(kernel: gpu.GPUFuncOp, run: PatternRun, patterns: FrozenRewritePatternSet) -> None:
    """Steps 3-6 on one outlined kernel."""
    with run.memoized(kernel) as facts:
        uses = shared_uses(kernel, facts.launch)
        allocate_shared_memory(kernel, facts.launch, uses)
        insert_barriers(kernel, uses)
        try:
            walk_and_apply_patterns(kernel, patterns)
        except RuntimeError as error:
            raise run.original(error) from None
    _cleanup(kernel)


def _cleanup(kernel: gpu.GPUFuncOp) -> None:
    PassManager.parse("gpu.func(reconcile-unrealized-casts)", kernel.context).run(kernel.operation)
    place_shared_memory(kernel)


def lower_to_simt(root: ir.Operation, chip: str | None = None) -> list[tuple[ir.Location, str]]:
    """Lower every function under `root` into a kernel for target `chip`; return the errors
    (then nothing changed)."""
    errors = problems(root, chip)
    if not errors:
        lower_checked(root, chip)
    return errors


def lower_checked(root: ir.Operation, chip: str | None = None) -> None:
    """Steps 2-6 on every function under `root` (after `problems` found none), its `tt.call`s
    inlined first."""
    inline_calls(root)
    chip = chip or _hip_chip_of(root)
    patterns = RewritePatternSet(root.context)
    run = populate_to_simt_patterns(patterns, target=chip)
    frozen = patterns.freeze()
    for func_op in kernel_functions(root):
        _lower_kernel(func_op, chip, run, frozen)
    for tt_func in triton_kernels(root):
        _lower_triton_kernel(tt_func, chip, run, frozen)


@dataclasses.dataclass(frozen=True)
class ChipOption:
    """The `chip` option of the passes and pipelines that lower conversions, checked when the pass
    is configured: a chip that is neither one of LLVM's NVPTX chips nor a known AMD chip is a
    PipelineError."""

    argument: ClassVar[str]
    chip: str = dataclasses.field(default="", metadata={"help": CHIP_HELP})

    def __post_init__(self) -> None:
        if self.chip:
            try:
                lowering_chip(self.chip)
            except TargetError as error:
                raise PipelineError(
                    f"bad value '{self.chip}' for option 'chip' of pass '{self.argument}': {error}"
                ) from None

    @property
    def target_chip(self) -> str | None:
        """The chip, or None for portable code (the option left empty)."""
        return self.chip or None


@dataclasses.dataclass(frozen=True)
class LLToSimt(ChipOption, Pass):
    argument = "ll-to-simt"
    summary = "Lower tensor kernels (ll.load/store, elementwise, convert_layout, local_*) to gpu.func SIMT code"
    op_name = "builtin.module"  # the kernels go into a gpu.module of the module: never nested in func.func

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        with op.context, op.location:
            return problems(op, self.target_chip)

    def apply(self, op: ir.Operation) -> None:
        with op.context, op.location:
            lower_checked(op, self.target_chip)


PASS = LLToSimt
