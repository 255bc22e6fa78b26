"""`emit_ptx`: a lowered module to PTX with the stock `gpu-lower-to-nvvm-pipeline`."""

from __future__ import annotations

import ctypes
import os

from mlir import ir
from mlir.dialects import gpu

from ..core.targets import nvptx_target, ptx_features
from ..ir.upstream import source_position
from ..ir.walk import walk
from .base import build_pass_manager

__all__ = ["ROLLED", "SHORT_SHARED_POINTERS", "PtxError", "emit_ptx", "keep_loops_rolled", "use_short_shared_pointers"]


class PtxError(ValueError):
    """A module or target that cannot be compiled to PTX: the message says why."""


def _op_names(module: ir.Operation) -> set[str]:
    names: set[str] = set()

    def record(op: ir.Operation) -> ir.WalkResult:
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    walk(module, record, ir.WalkOrder.POST_ORDER)
    return names


def _check_gpu_modules_at_top(module: ir.Operation) -> None:
    """The stock NVVM pipeline compiles the gpu.modules of the top-level module only; one nested in
    an inner module is left half-converted and the bindings abort on the error it reports."""
    if not any(op.operation.name == "gpu.module" for op in module.regions[0].blocks[0].operations):
        raise PtxError("the module has no gpu.module (lower it first, e.g. with ll-lower)")
    nested: list[ir.Operation] = []

    def find(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.module" and op.parent != module:
            nested.append(op)
        return ir.WalkResult.ADVANCE

    walk(module, find, ir.WalkOrder.POST_ORDER)
    if nested:
        where = source_position(nested[0].location)
        raise PtxError(
            f"{where}: a gpu.module inside a nested module; "
            "--emit-ptx compiles the gpu.modules of the top-level module only"
        )


#: The loop annotation every `scf.for`/`scf.while` gets before the stock pipeline: no run-time
#: unrolling. Triton's LLVM optimizes without a target machine, so NVPTX's unrolling preferences
#: (partial and run-time unrolling) never apply and its loops with a run-time trip count stay
#: rolled; the stock `gpu-module-to-binary` optimizes with the NVPTX target machine and unrolled
#: `while_loop`'s `scf.while` 4 times (a remainder loop and the unrolled body: 92 instructions
#: against Triton's 52 with 4 warps). Full unrolling of constant trip counts is unaffected.
ROLLED = "#llvm.loop_annotation<unroll = <runtimeDisable = true>>"
#: The attribute name `scf-to-cf` carries onto the loop's back edge (it copies the loop's
#: LLVM-dialect attributes to the `cf.cond_br`/`cf.br`) and `convert-cf-to-llvm` onto `llvm.br`,
#: where `loop_annotation` is the inherent attribute LLVM's `!llvm.loop` is made from (a
#: `llvm.loop_annotation` name would arrive as a discardable attribute, ignored).
_LOOP_ANNOTATION = "loop_annotation"


def keep_loops_rolled(module: ir.Operation) -> int:
    """Annotate every `scf.for` and `scf.while` of `module` without a `loop_annotation` with
    `ROLLED` (as Triton's, no run-time unrolling) and return how many were annotated.

    Postcondition: every scf loop of `module` has a `loop_annotation`.
    Example: while_loop's one `scf.while` -> 1; its PTX loop stays rolled (52 instructions with
    4 warps at sm_80, Triton's 52)."""
    rolled = ir.Attribute.parse(ROLLED, module.context)
    annotated = [0]

    def annotate(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.for", "scf.while") and _LOOP_ANNOTATION not in op.attributes:
            op.attributes[_LOOP_ANNOTATION] = rolled
            annotated[0] += 1
        return ir.WalkResult.ADVANCE

    walk(module, annotate, ir.WalkOrder.POST_ORDER)
    return annotated[0]


#: The NVPTX option Triton's backend sets (`llvm.set_short_ptr()` in its `make_ptx`): pointers to
#: shared (and const and local) memory are 32-bit, the data layout's `p3:32:32`. Without it a
#: shared address is 64-bit: an element offset becomes a `mul.wide.u32` and an `add.s64` of the
#: buffer's `cvt.u64.u32` address where Triton has a `shl.b32` and an `add.s32`.
SHORT_SHARED_POINTERS = "-nvptx-short-ptr"
#: The LLVM options this process has set (LLVM's command line parser takes each option once per
#: process: a second `-nvptx-short-ptr` is an error that exits the process).
_LLVM_OPTIONS_SET: set[str] = set()


def use_short_shared_pointers() -> bool:
    """Set LLVM's `-nvptx-short-ptr` in this process, once, through LLVM's documented C API
    `LLVMParseCommandLineOptions` of the `libLLVM.so` the MLIR bindings load; return whether it is
    set. The NVPTX target machine reads it when it is created, so every later PTX compile of the
    process (every `emit_ptx`) gets 32-bit shared addresses, as Triton's.

    Postcondition: `SHORT_SHARED_POINTERS` is set when the loaded LLVM exports the C API.
    Example: `use_short_shared_pointers()` -> True; a shared store's address is then
    `add.s32 %r5, %r104, %r103` (a `mov.b32` of the buffer) instead of `add.s64`."""
    if SHORT_SHARED_POINTERS in _LLVM_OPTIONS_SET:
        return True
    try:  # the library the bindings already loaded (`libMLIRPythonCAPI.so` needs it), found by its name
        llvm = ctypes.CDLL("libLLVM.so", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        parse = llvm.LLVMParseCommandLineOptions
    except (OSError, AttributeError):
        return False
    parse.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p]
    parse.restype = None
    arguments = (ctypes.c_char_p * 2)(b"linear-layout", SHORT_SHARED_POINTERS.encode())
    parse(2, arguments, b"")
    _LLVM_OPTIONS_SET.add(SHORT_SHARED_POINTERS)
    return True


def emit_ptx(module: ir.Module | ir.Operation, chip: str, features: str | None = None) -> str:
    """The PTX of every kernel object of `module` (a lowered `builtin.module` with its
    `gpu.module`s at the top level), one after another, compiled for `chip` (e.g. "sm_90") by the
    stock `gpu-lower-to-nvvm-pipeline`. `features` (`+ptxNN`) defaults to the lowest PTX version
    the chip and the module's ops need (LLVM aborts without one). Shared-memory addresses are
    32-bit, as Triton's (`use_short_shared_pointers`).

    The module is compiled in place (it ends as `gpu.binary` ops). Raises PtxError (a ValueError)
    for a module without a top-level `gpu.module` or with a nested one, and TargetError (a
    ValueError) for an unknown chip or features older than needed.

    Example: `emit_ptx(lowered, "sm_90")` starts with `//\\n// Generated by LLVM NVPTX Back-End`."""
    operation = module.operation
    target = nvptx_target(chip)
    _check_gpu_modules_at_top(operation)
    needed = ptx_features(target, _op_names(operation), features)
    keep_loops_rolled(operation)
    use_short_shared_pointers()
    build_pass_manager(
        f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-chip={target.chip} cubin-features={needed} cubin-format=isa}})",
        operation.context,
    ).run(operation)
    texts: list[str] = []
    for op in operation.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.binary":
            texts.extend(gpu.ObjectAttr(o).object.decode() for o in op.attributes["objects"])
    return "".join(texts)
