"""`tt.dot` in SIMT form.

The FMA path (operands ``#ttg.dot_op<{opIdx, parent = #blocked}>``, result ``#blocked``): every
thread holds the whole K extent of its rows of A and columns of B, so each result register is a
chain of ``math.fma`` over ``k = 0 .. K - 1`` in the thread's own registers, in Triton's order
(``FMADotOpToLLVM``: one ``llvm.fmuladd`` per step, ``fma.rn`` in PTX); `planning.dot` finds
the registers. Only ``inputPrecision = ieee`` on f32 (and f16/f64 operands of the accumulator's
type) is lowered there; a dot whose operands are spread over threads along K (``#ttg.nvidia_mma``,
AMD's MFMA/WMMA) is a one-line error naming the op until its lowering lands.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import math, vector

from ..planning.dot import FmaDotPlan, plan_fma_dot
from ..planning.layouts import PlannerError
from .common import cast_to
from .kernel import Launch, LoweringError, hardware_layout, vector_type
from .simt_pattern import SimtPattern

__all__ = ["DOT"]

_IEEE = 2  # formats.ENUMS["precision"]["ieee"], tt.dot's default
_HARDWARE_DIMS = ("register", "lane", "warp", "block")


def _precision(op: ir.OpView) -> int:
    attributes = op.operation.attributes
    return attributes["inputPrecision"].value if "inputPrecision" in attributes else _IEEE


def _fma_plan(a: ir.Type, b: ir.Type, result: ir.Type, launch: Launch) -> FmaDotPlan:
    """The FMA chains, or LoweringError when the operands are not in-thread along K (an MMA dot:
    the encodings are linear layouts by now, so the layouts, not their names, decide)."""
    layouts = [hardware_layout(t, launch) for t in (a, b, result)]
    if any(layout.get_in_dim_names() != _HARDWARE_DIMS for layout in layouts):
        raise LoweringError("'tt.dot': operand layouts are not over register, lane, warp, block")
    try:
        return plan_fma_dot(*layouts)
    except PlannerError as error:
        raise LoweringError(
            f"'tt.dot' with operands spread over threads along K ({error}): only the FMA path (dot operands "
            "of a blocked parent) is lowered; #ttg.nvidia_mma (mma.sync) dots are not yet"
        ) from None


def _check(op: ir.OpView, launch: Launch) -> FmaDotPlan:
    a, b, c = (v.type for v in op.operation.operands)
    result = op.operation.results[0].type
    plan = _fma_plan(a, b, result, launch)
    elements = {t.element_type for t in (a, b, c, result)}
    if len(elements) != 1 or not isinstance(next(iter(elements)), ir.F16Type | ir.F32Type | ir.F64Type):
        raise LoweringError(
            f"'tt.dot' on the FMA path with {a.element_type} x {b.element_type} -> {result.element_type}: "
            "operands and accumulator must have one float type"
        )
    if _precision(op) != _IEEE:
        raise LoweringError("'tt.dot' on the FMA path: only inputPrecision = ieee is lowered")
    return plan


def _emit(op: ir.OpView, launch: Launch, plan: FmaDotPlan) -> list[ir.Value]:
    a, b, c = (cast_to(v, vector_type(v.type, launch)) for v in op.operation.operands)
    result = op.operation.results[0]
    target = vector_type(result.type, launch)
    chains = []
    for register, (a_row, b_column) in enumerate(zip(plan.a_registers, plan.b_registers)):
        accumulator = vector.extract(c, [], [register])
        for a_register, b_register in zip(a_row, b_column):
            accumulator = math.fma(vector.extract(a, [], [a_register]), vector.extract(b, [], [b_register]), accumulator)
        chains.append(accumulator)
    return [cast_to(vector.from_elements(target, chains), result.type)]


DOT = SimtPattern(("tt.dot",), _check, _emit)
