"""Lowering tensor-level kernels to the SIMT form: the patterns and the steps around them.

Every `func.func` with a body becomes a `gpu.func ... kernel` in a `gpu.module @kernels` of its
module (which gets `gpu.container_module`). Inside the kernel every tensor in a distributed
layout is one `vector<R x T>` per thread (R = the layout's register count, duplicates of
broadcast registers included). `lower_to_simt(op)` runs, as Triton's backend does:

1. `check_function` on every function: every op must have a lowering (nothing is changed
   when one has not: the errors are returned);
2. `outline_kernel`: the function becomes a kernel (its body moves; `func.return` becomes
   `gpu.return`; `known_block_size` records the launch; the thread indices `lane`, `warp`
   (and `block`) are computed once at the top, where the patterns find them);
3. `allocate_shared_memory` (Triton's AllocateSharedMemory): one workgroup buffer per element
   type of the shared-memory conversions (sized by the largest), one per `ttg.local_alloc`;
   each op that uses one names it with `ll.workgroup_buffer`;
4. `insert_barriers` (Triton's Membar): a `gpu.barrier` before each op whose shared accesses
   would race with what other warps did to the same buffer since the last barrier;
5. the patterns of `populate_to_simt_patterns`, one per op (`ll.load`/`ll.store`, elementwise
   `arith`/`math`, splat constants, `ttg.convert_layout`, `ttg.local_*`, `ll.apply`), applied with
   `walk_and_apply_patterns`. Tensor <-> vector boundaries are `unrealized_conversion_cast`s;
6. the upstream `reconcile-unrealized-casts` removes them;
7. `place_shared_memory`: the workgroup buffers are aligned to 128 bytes, and above the 48 KiB
   static limit of a CUDA module they become views of `gpu.dynamic_shared_memory`
   (`dynamic_shared_memory.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlir import ir
from mlir.dialects import arith, gpu
from mlir.passmanager import PassManager
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from ..dialects.ll import ApplyOp
from ..dialects.ttg import ConvertLayoutOp, LocalAllocOp, LocalLoadOp, LocalStoreOp
from ..ir.bridge import layout_of
from .convert_layout import CONVERT_LAYOUT, check_convert_layout, conversion_plan
from .kernel import (
    CHIP_ATTRIBUTE,
    MAX_THREADS_PER_BLOCK,
    Launch,
    LoweringError,
    emit_thread_indices,
    launch_attributes,
    memoized_kernel_facts,
    pad_to_launch,
)
from .dynamic_shared_memory import place_shared_memory
from .local_memory import LOCAL_ALLOC, LOCAL_LOAD, LOCAL_STORE
from .lower_apply import apply_lowering, populate_lower_apply_patterns
from .shared_memory import WORKGROUP_BUFFER, allocating_op, buffer_index, shared_buffer_of, workgroup_type
from .simt_pattern import SimtPattern
from .tensor_ops import CONSTANT, ELEMENTWISE, ELEMENTWISE_DIALECTS, TILE_LOAD, TILE_STORE
from .vectors import element_bits
from ..core.hardware import LANES_PER_WARP, MAX_REGISTERS_PER_THREAD

__all__ = [
    "SIMT_PATTERNS",
    "Launch",
    "LoweringError",
    "allocate_shared_memory",
    "check_function",
    "element_bits",
    "function_launch",
    "insert_barriers",
    "kernel_functions",
    "lower_checked_functions",
    "lower_to_simt",
    "outline_kernel",
    "pad_to_launch",
    "populate_to_simt_patterns",
]

SIMT_PATTERNS: tuple[SimtPattern, ...] = (
    TILE_LOAD,
    TILE_STORE,
    CONVERT_LAYOUT,
    LOCAL_ALLOC,
    LOCAL_STORE,
    LOCAL_LOAD,
    CONSTANT,
    ELEMENTWISE,
)


def populate_to_simt_patterns(patterns: RewritePatternSet, *, benefit: int = 1) -> None:
    """Add the tensor-to-SIMT patterns (and `ll.apply` -> arith) to `patterns`.

    They rewrite ops inside a `gpu.func` kernel made by `outline_kernel`, after
    `allocate_shared_memory` and `insert_barriers`; ops they cannot lower do not match."""
    for pattern in SIMT_PATTERNS:
        pattern.add_to(patterns, benefit)
    populate_lower_apply_patterns(patterns, benefit=benefit)


# ---------------------------------------------------------------------------- checks

_UNSUPPORTED = (
    "on tensors cannot be lowered to SIMT form (supported: ll.load, ll.store, ttg.convert_layout, "
    "elementwise arith/math ops, splat constants)"
)


def _check_apply(op: ApplyOp, launch: Launch) -> None:
    try:
        apply_lowering(op)
    except ValueError as error:
        raise LoweringError(str(error)) from None


def _check_return(op: ir.OpView, launch: Launch) -> None:
    if len(op.operands):
        raise LoweringError("a kernel cannot return values")


_CHECKS: dict[str, Callable[[Any, Launch], object]] = {
    **{
        name: pattern.check
        for pattern in (TILE_LOAD, TILE_STORE, LOCAL_ALLOC, LOCAL_STORE, LOCAL_LOAD)
        for name in pattern.names()
    },
    "ttg.convert_layout": check_convert_layout,
    "ll.apply": _check_apply,
    "func.return": _check_return,
}


def _touches_tensors(op: ir.Operation) -> bool:
    return any(isinstance(v.type, ir.RankedTensorType) for v in list(op.operands) + list(op.results))


_ELEMENT_TYPES = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type, ir.Float8E4M3FNType, ir.Float8E5M2Type, ir.IndexType)
_INTEGER_WIDTHS = (1, 8, 16, 32, 64)
SUPPORTED_ELEMENT_TYPES = "i1, i8, i16, i32, i64, index, f16, bf16, f32, f64, f8E4M3FN, f8E5M2"


def _check_tensor(t: ir.RankedTensorType) -> None:
    """LoweringError for an element type without a lowering or a tensor past the register budget."""
    element = t.element_type
    if not (
        isinstance(element, _ELEMENT_TYPES)
        or (isinstance(element, ir.IntegerType) and element.width in _INTEGER_WIDTHS)
    ):
        raise LoweringError(f"{t}: element type {element} cannot be lowered (supported: {SUPPORTED_ELEMENT_TYPES})")
    try:
        layout = layout_of(t)
    except (TypeError, ValueError):
        return  # the op's own check reports the encoding
    registers = (
        -(-layout.get_in_dim_size("register") * element_bits(element) // 32) if layout.has_in_dim("register") else 1
    )
    if registers > MAX_REGISTERS_PER_THREAD:
        raise LoweringError(
            f"{t} needs {registers} 32-bit registers per thread, more than the "
            f"{MAX_REGISTERS_PER_THREAD} a thread has (Triton would spill it to local memory); "
            "use more warps or a smaller tile"
        )


def _check_tensors(op: ir.OpView) -> None:
    for value in list(op.operation.results) + list(op.operation.operands):
        if isinstance(value.type, ir.RankedTensorType) and value.type.encoding is not None:
            _check_tensor(value.type)


def check_op(op: ir.OpView, launch: Launch) -> None:
    """LoweringError when `op` (in a function to become a kernel) has no SIMT lowering."""
    name = op.operation.name
    _check_tensors(op)
    if name in _CHECKS:
        _CHECKS[name](op, launch)
    elif name == "arith.constant" and _touches_tensors(op.operation):
        CONSTANT.check(op, launch)
    elif _touches_tensors(op.operation):
        if name.split(".")[0] not in ELEMENTWISE_DIALECTS or len(op.regions):
            raise LoweringError(f"'{name}' {_UNSUPPORTED}")
        ELEMENTWISE.check(op, launch)
    elif len(op.regions):
        raise LoweringError(f"'{name}' has regions; control flow cannot be lowered to SIMT form yet")


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


def function_launch(func_op: ir.OpView) -> Launch:
    """The launch of a function: the enclosing `"ttg.num-warps"`-style attributes; without a
    warp count, the most warps any of its layouts uses."""
    launch = launch_attributes(func_op.operation)
    if launch.num_warps is None:
        launch = Launch(_num_warps(func_op), launch.threads_per_warp, launch.num_ctas)
    return launch


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


def check_function(func_op: ir.OpView) -> list[tuple[ir.Location, str]]:
    """Why `func_op` cannot become a kernel: (location, message) of the first problem found in
    its signature, else of every op without a lowering."""
    try:
        launch = function_launch(func_op)
        _check_signature(func_op, launch)
    except LoweringError as error:
        return [(func_op.location, str(error))]
    errors = []
    for op in func_op.regions[0].blocks[0].operations:
        try:
            check_op(op, launch)
        except LoweringError as error:
            errors.append((op.location, str(error)))
    return errors[:1]


# ---------------------------------------------------------------------------- steps


def kernel_functions(root: ir.Operation) -> list[ir.OpView]:
    """The `func.func`s with a body under `root` (itself included), outside `gpu.module`s."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.module":
            return ir.WalkResult.SKIP
        if op.name == "func.func" and len(op.regions[0].blocks):
            found.append(op.opview)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _module_of(op: ir.Operation) -> ir.Operation:
    parent = op.operation.parent
    while parent.operation.name != "builtin.module":
        parent = parent.operation.parent
    return parent.operation


def _kernel_module(module: ir.Operation) -> gpu.GPUModuleOp:
    """The `gpu.module @kernels` of `module`, made on first use."""
    body = module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "gpu.module" and op.operation.attributes["sym_name"].value == "kernels":
            return op.opview
    with ir.InsertionPoint(body), module.location:
        kernels = gpu.GPUModuleOp("kernels")
    kernels.regions[0].blocks.append()
    module.attributes["gpu.container_module"] = ir.UnitAttr.get()
    return kernels


def outline_kernel(func_op: ir.OpView, launch: Launch) -> gpu.GPUFuncOp:
    """Move the body of `func_op` into a new `gpu.func` kernel of its module and erase it."""
    function_type = func_op.function_type.value
    kernels = _kernel_module(_module_of(func_op))
    with ir.InsertionPoint(kernels.regions[0].blocks[0]), func_op.location:
        kernel = gpu.GPUFuncOp(
            ir.TypeAttr.get(ir.FunctionType.get(list(function_type.inputs), [])),
            sym_name=func_op.sym_name.value,
            kernel=True,
            known_block_size=[launch.threads, 1, 1],
        )
    block = func_op.regions[0].blocks[0]
    block.append_to(kernel.regions[0])
    terminator = list(block.operations)[-1]
    with ir.InsertionPoint(terminator), terminator.location:
        gpu.return_([])
    terminator.operation.erase()
    func_op.operation.erase()
    with kernel.location:
        emit_thread_indices(launch, _constant_before, ir.InsertionPoint.at_block_begin(kernel.regions[0].blocks[0]))
    return kernel


def _constant_before(value: int, anchor: ir.Operation) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value, ip=ir.InsertionPoint(anchor))


def _workgroup_buffers(kernel: gpu.GPUFuncOp, launch: Launch) -> list[ir.MemRefType]:
    """Mark each op that needs shared memory with its buffer; return the buffers' types."""
    scratch: dict[str, tuple[ir.Type, int, list[ir.OpView]]] = {}
    local: list[tuple[ir.OpView, ir.MemRefType]] = []
    for op in kernel.regions[0].blocks[0].operations:
        if isinstance(op, ConvertLayoutOp):
            plan = conversion_plan(op, launch)
            if plan.strategy.uses_shared_memory:
                element = op.src.type.element_type
                elements = plan.scratch_bytes * 8 // element_bits(element)  # the matrix plan's, if any
                _, most, users = scratch.get(str(element), (element, 0, []))
                scratch[str(element)] = (element, max(most, elements), [*users, op])
        elif isinstance(op, LocalAllocOp):
            buffer = shared_buffer_of(op.result.type)
            local.append((op, workgroup_type(buffer.layout.get_in_dim_size("offset"), buffer.memdesc.element_type)))
    types: list[ir.MemRefType] = []
    i64 = ir.IntegerType.get_signless(64)
    for element, elements, users in scratch.values():
        for user in users:
            user.operation.attributes[WORKGROUP_BUFFER] = ir.IntegerAttr.get(i64, len(types))
        types.append(workgroup_type(elements, element))
    for op, t in local:
        op.operation.attributes[WORKGROUP_BUFFER] = ir.IntegerAttr.get(i64, len(types))
        types.append(t)
    return types


def allocate_shared_memory(kernel: gpu.GPUFuncOp, launch: Launch) -> None:
    """Triton's AllocateSharedMemory for one kernel: workgroup attributions, named on the ops."""
    types = _workgroup_buffers(kernel, launch)
    if not types:
        return
    block = kernel.regions[0].blocks[0]
    for t in types:
        block.add_argument(t, kernel.location)
    kernel.operation.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), len(types)
    )


def _shared_access(op: ir.OpView) -> tuple[int, str] | None:
    """(buffer, "read"/"write") of a tensor op's shared-memory access, or None."""
    if isinstance(op, ConvertLayoutOp | LocalAllocOp):
        index = buffer_index(op)
        if index is None or (isinstance(op, LocalAllocOp) and op.src is None):
            return None
        return index, "write"
    if isinstance(op, LocalStoreOp | LocalLoadOp):
        memdesc = op.dst if isinstance(op, LocalStoreOp) else op.src
        owner = allocating_op(memdesc)
        index = buffer_index(owner.opview) if owner is not None else None
        return None if index is None else (index, "write" if isinstance(op, LocalStoreOp) else "read")
    return None


def insert_barriers(kernel: gpu.GPUFuncOp) -> None:
    """Triton's Membar for one kernel: a `gpu.barrier` before an access to a buffer that another
    warp wrote (RAW, WAW) or read (WAR) since the last barrier. A shared-memory conversion has
    barriers inside (store | barrier | load): after it, only its own loads are pending."""
    pending: dict[int, set[str]] = {}
    for op in kernel.regions[0].blocks[0].operations:
        access = _shared_access(op)
        if access is None:
            continue
        index, kind = access
        done = pending.get(index, set())
        if "write" in done or (kind == "write" and "read" in done):
            with ir.InsertionPoint(op), op.location:
                gpu.barrier()
            pending.clear()
        if isinstance(op, ConvertLayoutOp):
            pending = {index: {"read"}}
        else:
            pending.setdefault(index, set()).add(kind)


def _reconcile_casts(op: ir.Operation) -> None:
    PassManager.parse("gpu.func(reconcile-unrealized-casts)", op.context).run(op)


def lower_to_simt(root: ir.Operation, chip: str | None = None) -> list[tuple[ir.Location, str]]:
    """Lower every function under `root` into a kernel; return the errors (then nothing changed)."""
    functions = kernel_functions(root)
    errors = [error for func_op in functions for error in check_function(func_op)]
    if not errors:
        lower_checked_functions(root.context, functions, chip)
    return errors


def lower_checked_functions(context: ir.Context, functions: list[ir.OpView], chip: str | None = None) -> None:
    """Lower functions that `check_function` accepted into kernels (steps 2-6)."""
    patterns = RewritePatternSet(context)
    populate_to_simt_patterns(patterns)
    frozen = patterns.freeze()
    for func_op in functions:
        found = function_launch(func_op)
        launch = Launch(found.num_warps, found.threads_per_warp, found.num_ctas, chip)
        kernel = outline_kernel(func_op, launch)
        if launch.chip:  # what the patterns read (kernel_launch); removed once they ran
            kernel.operation.attributes[CHIP_ATTRIBUTE] = ir.StringAttr.get(launch.chip)
        with memoized_kernel_facts(kernel):
            allocate_shared_memory(kernel, launch)
            insert_barriers(kernel)
            walk_and_apply_patterns(kernel, frozen)
        _reconcile_casts(kernel.operation)
        place_shared_memory(kernel)
        if launch.chip:
            del kernel.operation.attributes[CHIP_ATTRIBUTE]
