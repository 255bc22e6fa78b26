"""Whether a function can become a SIMT kernel: its signature, its launch, and for every op the
check of the pattern that lowers it (`to_simt.pattern_of`). An op no pattern claims is legal
only when it touches no tensor and has no regions (it stays as it is)."""

from __future__ import annotations

from mlir import ir

from ..core.hardware import LANES_PER_WARP, MAX_REGISTERS_PER_THREAD
from ..ir.bridge import layout_of, per_type
from ..ir.text import type_kind
from .kernel import MAX_THREADS_PER_BLOCK, Launch, LoweringError, launch_attributes
from .tensor_ops import on_tensors
from .to_simt import pattern_of
from .vectors import element_bits

__all__ = ["SUPPORTED_ELEMENT_TYPES", "check_function", "check_op", "function_launch"]

_ELEMENT_TYPES = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type, ir.Float8E4M3FNType, ir.Float8E5M2Type, ir.IndexType)
_INTEGER_WIDTHS = (1, 8, 16, 32, 64)
SUPPORTED_ELEMENT_TYPES = "i1, i8, i16, i32, i64, index, f16, bf16, f32, f64, f8E4M3FN, f8E5M2"


def _check_tensor(t: ir.RankedTensorType) -> None:
    """LoweringError for an element type without a lowering or a tensor past the register budget
    (checked once per type: `_tensor_problem`)."""
    problem = per_type(_tensor_problem, t)
    if problem is not None:
        raise LoweringError(problem)


def _tensor_problem(t: ir.RankedTensorType) -> str | None:
    """Why tensor type `t` cannot be lowered (`_check_tensor`), or None."""
    element = t.element_type
    if not (
        isinstance(element, _ELEMENT_TYPES)
        or (isinstance(element, ir.IntegerType) and element.width in _INTEGER_WIDTHS)
        or type_kind(element) == "tt.ptr"  # Triton's pointers: index offsets (triton_kernel.py)
    ):
        return f"{t}: element type {element} cannot be lowered (supported: {SUPPORTED_ELEMENT_TYPES})"
    try:
        layout = layout_of(t)
    except (TypeError, ValueError):
        return None  # the op's own check reports the encoding
    registers = (
        -(-layout.get_in_dim_size("register") * element_bits(element) // 32) if layout.has_in_dim("register") else 1
    )
    if registers > MAX_REGISTERS_PER_THREAD:
        return (
            f"{t} needs {registers} 32-bit registers per thread, more than the "
            f"{MAX_REGISTERS_PER_THREAD} a thread has (Triton would spill it to local memory); "
            "use more warps or a smaller tile"
        )
    return None


def _check_tensors(op: ir.OpView) -> None:
    for value in list(op.operation.results) + list(op.operation.operands):
        if isinstance(value.type, ir.RankedTensorType) and value.type.encoding is not None:
            _check_tensor(value.type)


def check_op(op: ir.OpView, launch: Launch) -> None:
    """LoweringError when `op` (in a function to become a kernel) has no SIMT lowering."""
    _check_tensors(op)
    pattern = pattern_of(op)
    if pattern is not None:
        pattern.check(op, launch)
    elif on_tensors(op):
        raise LoweringError(
            f"'{op.operation.name}' on tensors cannot be lowered to SIMT form: no registered "
            "pattern claims it (docs/triton-kernels.md, 'What lowers today')"
        )
    elif len(op.regions):
        raise LoweringError(f"'{op.operation.name}' has regions; control flow cannot be lowered to SIMT form yet")


def _num_warps(func_op: ir.OpView) -> int:
    """The warps a function's layouts spread over (the most of any tensor)."""
    warps = 1
    for op in func_op.regions[0].blocks[0].operations:
        for value in list(op.operation.results) + list(op.operation.operands):
            if isinstance(value.type, ir.RankedTensorType) and value.type.encoding is not None:
                try:
                    layout = layout_of(value.type)
                except (TypeError, ValueError) as error:
                    raise LoweringError(f"cannot lower {value.type}: {error}") from None
                warps = max(warps, layout.get_in_dim_size("warp") if layout.has_in_dim("warp") else 1)
    return warps


def function_launch(func_op: ir.OpView, chip: str | None = None) -> Launch:
    """The launch of a function for target `chip`: the enclosing `"ttg.num-warps"`-style
    attributes; without a warp count, the most warps any of its layouts uses."""
    launch = launch_attributes(func_op.operation)
    return Launch(
        launch.num_warps if launch.num_warps is not None else _num_warps(func_op),
        launch.threads_per_warp,
        launch.num_ctas,
        chip,
    )


def _check_signature(func_op: ir.OpView, launch: Launch) -> None:
    function_type = func_op.function_type.value
    name = func_op.sym_name.value
    if len(func_op.regions[0].blocks) != 1:
        raise LoweringError(f"'{name}': only single-block functions can be lowered")
    if function_type.results:
        raise LoweringError(
            f"'{name}': a kernel cannot return values (it returns {list(map(str, function_type.results))})"
        )
    for t in function_type.inputs:
        if isinstance(t, ir.RankedTensorType):
            raise LoweringError(f"'{name}': tensor arguments cannot be lowered ({t}); load tiles with ll.load")
    if launch.threads_per_warp not in LANES_PER_WARP:
        raise LoweringError(
            f"'{name}': only {' or '.join(map(str, LANES_PER_WARP))} threads per warp are supported, the kernel has "
            f"ttg.threads-per-warp = {launch.threads_per_warp}"
        )
    if launch.threads > MAX_THREADS_PER_BLOCK:
        raise LoweringError(
            f"'{name}': too many warps for the launch: {launch.num_warps} warps x {launch.threads_per_warp} threads = "
            f"{launch.threads} threads, more than the {MAX_THREADS_PER_BLOCK} threads of a block"
        )


def check_function(func_op: ir.OpView, chip: str | None = None) -> list[tuple[ir.Location, str]]:
    """Why `func_op` cannot become a kernel for target `chip`: (location, message) of the first
    problem found in its signature, else of the first op without a lowering."""
    try:
        launch = function_launch(func_op, chip)
        _check_signature(func_op, launch)
    except LoweringError as error:
        return [(func_op.location, str(error))]
    for op in func_op.regions[0].blocks[0].operations:
        try:
            check_op(op, launch)
        except LoweringError as error:
            return [(op.location, str(error))]
    return []
