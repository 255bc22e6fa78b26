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
from mlir.dialects import arith, llvm, math, vector

from ..core.layout import LinearLayout
from ..planning.dot import (
    MMA_TYPES,
    FmaDotPlan,
    MmaDotPlan,
    MmaStep,
    plan_fma_dot,
    plan_mma_dot,
    plan_operand_ldmatrix,
)
from ..planning.layouts import PlannerError
from ..planning.matrix import MatrixSide, matrix_instructions
from .common import cast_to
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout, vector_type
from .matrix_memory import MatrixRows, assemble_matrix, load_matrix
from .shared_memory import in_allocation, shared_buffer_of, view_address
from .simt_pattern import SimtPattern
from .vectors import element_bits

__all__ = ["DOT", "operand_ldmatrix_load", "operand_ldmatrix_side"]

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


def _check(op: ir.OpView, launch: Launch) -> FmaDotPlan | MmaDotPlan:
    a, b, c = (v.type for v in op.operation.operands)
    result = op.operation.results[0].type
    try:
        plan: FmaDotPlan | MmaDotPlan = _fma_plan(a, b, result, launch)
    except LoweringError as fma_error:
        return _mma_plan(a, b, result, launch, fma_error)
    elements = {t.element_type for t in (a, b, c, result)}
    if len(elements) != 1 or not isinstance(next(iter(elements)), ir.F16Type | ir.F32Type | ir.F64Type):
        raise LoweringError(
            f"'tt.dot' on the FMA path with {a.element_type} x {b.element_type} -> {result.element_type}: "
            "operands and accumulator must have one float type"
        )
    if _precision(op) != _IEEE:
        raise LoweringError("'tt.dot' on the FMA path: only inputPrecision = ieee is lowered")
    return plan


def _mma_plan(a: ir.Type, b: ir.Type, result: ir.Type, launch: Launch, fma_error: LoweringError) -> MmaDotPlan:
    """The mma.sync steps when the layouts place every lane's fragments (``#ttg.nvidia_mma``
    version 2); else the FMA path's error."""
    name = str(a.element_type)
    accumulator = str(result.element_type)
    accumulators = ("i32",) if name == "i8" else ("f32", "f16") if name == "f16" else ("f32",)
    if name not in MMA_TYPES or str(b.element_type) != name or accumulator not in accumulators:
        raise fma_error
    a_layout, b_layout, c_layout = (hardware_layout(t, launch) for t in (a, b, result))
    try:
        return plan_mma_dot(a_layout, b_layout, c_layout, MMA_TYPES[name][1], launch.threads_per_warp)
    except PlannerError as error:
        raise LoweringError(f"{fma_error}; not an mma.sync dot either: {error}") from None


def _emit(op: ir.OpView, launch: Launch, plan: FmaDotPlan | MmaDotPlan) -> list[ir.Value]:
    if isinstance(plan, MmaDotPlan):
        return _emit_mma(op, launch, plan)
    return _emit_fma(op, launch, plan)


def _emit_fma(op: ir.OpView, launch: Launch, plan: FmaDotPlan) -> list[ir.Value]:
    a, b, c = (cast_to(v, vector_type(v.type, launch)) for v in op.operation.operands)
    result = op.operation.results[0]
    target = vector_type(result.type, launch)
    chains = []
    for register, (a_row, b_column) in enumerate(zip(plan.a_registers, plan.b_registers)):
        accumulator = vector.extract(c, [], [register])
        for a_register, b_register in zip(a_row, b_column):
            accumulator = math.fma(
                vector.extract(a, [], [a_register]), vector.extract(b, [], [b_register]), accumulator
            )
        chains.append(accumulator)
    return [cast_to(vector.from_elements(target, chains), result.type)]


def _packed(source: ir.Value, registers: tuple[int, ...], ptx_type: str) -> ir.Value:
    """One 32-bit multiplicand register of mma.sync from the operand's ``registers``:
    ``vector<2xf16>`` for f16, else an i32 (bf16 pairs, s8 quadruples, one tf32)."""
    i32 = ir.IntegerType.get_signless(32)
    if ptx_type == "tf32":
        return arith.bitcast(i32, vector.extract(source, [], [registers[0]]))
    pieces = vector.shuffle(source, source, list(registers))
    if ptx_type == "f16":
        return pieces
    return vector.extract(vector.bitcast(ir.VectorType.get([1], i32), pieces), [], [0])


def _mma_attributes(ptx_type: str, k: int, c_registers: int) -> dict[str, ir.Attribute]:
    attributes = {
        "layoutA": ir.Attribute.parse("#nvvm.mma_layout<row>"),
        "layoutB": ir.Attribute.parse("#nvvm.mma_layout<col>"),
        "multiplicandAPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{ptx_type}>"),
        "multiplicandBPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{ptx_type}>"),
        "shape": ir.Attribute.parse(f"#nvvm.shape<m = 16, n = 8, k = {k}>"),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([4, 2, c_registers]),
    }
    if ptx_type == "s8":
        attributes["intOverflowBehavior"] = ir.Attribute.parse("#nvvm.mma_int_overflow<satfinite>")
    return attributes


def _mma_step(a: ir.Value, b: ir.Value, accumulators: list[ir.Value], step: MmaStep, ptx_type: str, k: int) -> list:
    """One ``nvvm.mma.sync``; its four accumulator elements in and out (f16 ones travel as two
    ``vector<2xf16>`` registers, elements 0, 1 and 2, 3)."""
    element = accumulators[0].type
    halves = isinstance(element, ir.F16Type)
    pair = ir.VectorType.get([2], element)
    if halves:
        c_operands = [vector.from_elements(pair, accumulators[2 * r : 2 * r + 2]) for r in range(2)]
    else:
        c_operands = accumulators
    register_types = [str(pair)] * 2 if halves else [str(element)] * 4
    struct = ir.Type.parse(f"!llvm.struct<({', '.join(register_types)})>")
    operands = [_packed(a, registers, ptx_type) for registers in step.a]
    operands += [_packed(b, registers, ptx_type) for registers in step.b]
    attributes = _mma_attributes(ptx_type, k, len(c_operands))
    mma = ir.Operation.create("nvvm.mma.sync", results=[struct], operands=operands + c_operands, attributes=attributes)
    if not halves:
        return [llvm.extractvalue(element, mma.result, [i]) for i in range(4)]
    words = [llvm.extractvalue(pair, mma.result, [r]) for r in range(2)]
    return [vector.extract(words[i // 2], [], [i % 2]) for i in range(4)]


def _emit_mma(op: ir.OpView, launch: Launch, plan: MmaDotPlan) -> list[ir.Value]:
    """Per step one ``nvvm.mma.sync``; each C register is carried from step to step."""
    a, b, c = (cast_to(v, vector_type(v.type, launch)) for v in op.operation.operands)
    result = op.operation.results[0]
    target = vector_type(result.type, launch)
    ptx_type = MMA_TYPES[str(op.operation.operands[0].type.element_type)][0]
    registers = ir.VectorType(target).shape[0]
    values = {r: vector.extract(c, [], [r]) for r in range(registers)}
    for step in plan.steps:
        outputs = _mma_step(a, b, [values[r] for r in step.c], step, ptx_type, plan.k)
        for register, value in zip(step.c, outputs):
            values[register] = value
    return [cast_to(vector.from_elements(target, [values[r] for r in range(registers)]), result.type)]


DOT = SimtPattern(("tt.dot",), _check, _emit)


# ---- dot operands loaded with ldmatrix


def operand_ldmatrix_side(
    result: LinearLayout, memdesc_type: ir.Type, element: ir.Type, num_warps: int, chip: str | None
) -> MatrixSide | None:
    """The ``ldmatrix`` side of a ``ttg.local_load`` of a dot operand (`planning.dot.plan_operand_ldmatrix`:
    Triton's choice: 16-bit operands, and the A operand of tf32 and i8 dots), or None where the chip
    has no ldmatrix, the elements are not 8, 16 or 32-bit or the element offsets do not fit. ``result``: the loaded tensor's layout padded to the launch;
    ``memdesc_type``: the buffer it reads. The lowering and the report both ask this."""
    bits = element_bits(element)
    if "ldmatrix" not in matrix_instructions(chip) or bits not in (8, 16, 32):
        return None
    to_offset = result.invert_and_compose(shared_buffer_of(memdesc_type).layout)
    return plan_operand_ldmatrix(to_offset, num_warps or 1, bits)


def operand_ldmatrix_load(op: ir.OpView, launch: Launch) -> ir.Value | None:
    """A ``ttg.local_load`` of a dot operand as ``nvvm.ldmatrix`` where the chip has it and the
    element offsets fit (:func:`operand_ldmatrix_side`); the loaded per-thread vector, or None
    (the caller uses plain shared loads)."""
    result_type = op.operation.results[0].type
    element = result_type.element_type
    memdesc = op.operation.operands[0]
    layout = in_allocation(hardware_layout(result_type, launch), memdesc.type)  # a subslice: its allocation's
    side = operand_ldmatrix_side(layout, memdesc.type, element, launch.num_warps or 1, launch.chip)
    if side is None:
        return None
    builder = KernelBuilder(op, launch)
    rows = MatrixRows(builder, view_address(op, memdesc), side, element)
    pieces = [piece for ins in side.instructions for piece in load_matrix(rows, ins)]
    return assemble_matrix(side, pieces, element, builder.vector_type(result_type))
