"""Outlining: a `func.func` with a body becomes a `gpu.func ... kernel` in the `gpu.module
@kernels` of its module (which gets `gpu.container_module`); `func.return` becomes `gpu.return`,
`known_block_size` records the launch, and the thread indices `lane`, `warp` (and `block`) are
computed once at the top, where the patterns find them (`kernel.find_thread_indices`)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu

from ..ir.walk import walk
from .kernel import Launch, emit_thread_indices

__all__ = ["kernel_functions", "outline_kernel"]


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

    walk(root, visit)
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
    terminator = block.operations[-1]
    with ir.InsertionPoint(terminator), terminator.location:
        gpu.return_([])
    terminator.operation.erase()
    func_op.operation.erase()
    with kernel.location:
        emit_thread_indices(launch, _constant_before, ir.InsertionPoint.at_block_begin(kernel.regions[0].blocks[0]))
    return kernel


def _constant_before(value: int, anchor: ir.Operation) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value, ip=ir.InsertionPoint(anchor))
