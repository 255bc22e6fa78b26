"""Which ops of a Triton kernel (`tt.func`, as Triton 3.9 prints TTGIR) the SIMT lowering covers.

`LOWERED_TRITON_OPS` is the closed list of Triton-dialect ops (`tt`, `ttg`, `ttng`, `amdg`) that
have a lowering inside a `tt.func` kernel (`triton_kernel.py`: the kernel outline for `tt.func`
and `tt.return`, one pattern for each other); it grows by one name with each pattern.
`unlowered_triton_ops` makes `ll-to-simt` (hence `ll-lower`) fail on every `tt.func` holding any
other Triton op, with one line naming the first such op and its location (for TTGIR: the Python
source line and column of the `@triton.jit` function), instead of exiting 0 with the Triton ops
left in place. Nothing is written when it fails.

    >>> # tests/ttgir_corpus/matmul_f16.sm80.ttgir with ll-lower:
    >>> # generate.py:48:15: error: 'tt.dot' has no lowering to SIMT form (in @matmul_kernel)
"""

from __future__ import annotations

from mlir import ir

from ..ir.walk import ops_where, walk
from .kernel import LoweringError
from .legality import check_op
from .to_simt import SIMT_PATTERNS, registered_patterns
from .triton_kernel import check_accesses, triton_kernel_launch

__all__ = [
    "LOWERED_TRITON_OPS",
    "LOWERED_WITH_PARENT",
    "TRITON_OP_DIALECTS",
    "check_triton_kernels",
    "triton_kernels",
    "unlowered_triton_ops",
]

#: The dialects of Triton's own ops (Triton's upstream-dialect ops, arith/math/scf, are not here).
TRITON_OP_DIALECTS = ("tt", "ttg", "ttng", "amdg", "nvg", "nvws", "gluon", "proton", "ttg_unregistered")


def _is_triton_name(name: str) -> bool:
    return name.split(".", 1)[0] in TRITON_OP_DIALECTS


#: Ops lowered with the op that holds them: the kernel outline's and the combine regions'; and
#: `tt.call`, inlined before anything is checked (`calls.inline_calls`).
LOWERED_WITH_PARENT = frozenset({"tt.func", "tt.return", "tt.reduce.return", "tt.scan.return", "tt.call"})

#: Triton ops with a lowering inside a `tt.func` kernel: `LOWERED_WITH_PARENT` and those with a
#: pattern in the one registry (`to_simt.SIMT_PATTERNS`).
LOWERED_TRITON_OPS: frozenset[str] = frozenset(
    LOWERED_WITH_PARENT | {name for name in registered_patterns(SIMT_PATTERNS) if _is_triton_name(name)}
)


def triton_kernels(root: ir.Operation) -> list[ir.Operation]:
    """The `tt.func`s under `root` (itself included), outside `gpu.module`s."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.module":
            return ir.WalkResult.SKIP
        if op.name == "tt.func":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return found


def _unlowered_in(kernel: ir.Operation) -> list[ir.Operation]:
    """The Triton ops of `kernel` (itself included) without a lowering, in pre-order."""
    return ops_where(kernel, lambda op: _is_triton_name(op.name) and op.name not in LOWERED_TRITON_OPS)


def _symbol(kernel: ir.Operation) -> str:
    name = kernel.attributes.get("sym_name")
    return f"@{ir.StringAttr(name).value}" if name is not None else "a tt.func"


def unlowered_triton_ops(root: ir.Operation) -> list[tuple[ir.Location, str]]:
    """One (location, message) per `tt.func` under `root` that holds an op without a lowering:
    at the first such op inside its body (else at the `tt.func`), naming it and the others.

    Postcondition: empty exactly when every Triton op of every `tt.func` is in
    `LOWERED_TRITON_OPS`."""
    problems = []
    for kernel in triton_kernels(root):
        unlowered = _unlowered_in(kernel)
        if not unlowered:
            continue
        first = next((op for op in unlowered if op != kernel), unlowered[0])
        names = sorted({op.name for op in unlowered})
        rest = f", {len(unlowered)} ops without one: {', '.join(names)}" if len(unlowered) > 1 else ""
        problems.append((first.location, f"'{first.name}' has no lowering to SIMT form (in {_symbol(kernel)}{rest})"))
    return problems


def _check_ops(kernel: ir.Operation, chip: str | None) -> list[tuple[ir.Location, str]]:
    """The first op of `kernel` (every Triton op of which has a pattern) that its pattern's check,
    or the legality of an op no pattern claims, rejects."""
    try:
        launch = triton_kernel_launch(kernel, chip)
    except LoweringError as error:
        return [(kernel.location, str(error))]
    problems: list[tuple[ir.Location, str]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op == kernel or op.name in ("scf.yield", "scf.condition", "tt.return"):
            return ir.WalkResult.ADVANCE  # the outline's and the region patterns' own
        try:
            check_op(op.opview, launch)
        except LoweringError as error:
            problems.append((op.location, str(error)))
            return ir.WalkResult.INTERRUPT
        # a combine region is cloned on scalars by its op's pattern
        return ir.WalkResult.SKIP if op.name in ("tt.reduce", "tt.scan") else ir.WalkResult.ADVANCE

    walk(kernel, visit, ir.WalkOrder.PRE_ORDER)
    return problems


def check_triton_kernels(root: ir.Operation, chip: str | None = None) -> list[tuple[ir.Location, str]]:
    """Why the `tt.func` kernels under `root` cannot be lowered for `chip`: a Triton op without
    a pattern (`unlowered_triton_ops`), else per kernel the first op its pattern rejects or an
    access whose pointer has no known provenance. Nothing is changed."""
    problems = unlowered_triton_ops(root)
    if problems:
        return problems
    for kernel in triton_kernels(root):
        problems += _check_ops(kernel, chip) or check_accesses(kernel)
    return problems
