"""`emit_ptx`: a lowered module to PTX with the stock `gpu-lower-to-nvvm-pipeline`."""

from __future__ import annotations

import ctypes
import os

from mlir import ir
from mlir.dialects import gpu

from ..core.targets import nvptx_target, ptx_features
from ..ir.upstream import source_position
from ..ir.walk import ops_where, walk
from .base import build_pass_manager

__all__ = ["ROLLED", "SHORT_SHARED_POINTERS", "PtxError", "emit_ptx", "keep_loops_rolled", "set_short_shared_pointers"]


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
    nested = ops_where(module, lambda op: op.name == "gpu.module" and op.parent != module, ir.WalkOrder.POST_ORDER)
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


#: The NVPTX option Triton's backend sets (`get_llvm_flags()` of `backends/nvidia/compiler.py`): pointers to
#: shared (and const and local) memory are 32-bit, the data layout's `p3:32:32`. Without it a
#: shared address is 64-bit: an element offset becomes a `mul.wide.u32` and an `add.s64` of the
#: buffer's `cvt.u64.u32` address where Triton has a `shl.b32` and an `add.s32`.
SHORT_SHARED_POINTERS = "nvptx-short-ptr"
#: The value this process has given `SHORT_SHARED_POINTERS` (LLVM's default: off).
_short_pointers = [False]


def set_short_shared_pointers(enabled: bool) -> None:
    """Give LLVM's `-nvptx-short-ptr` the value `enabled` for the PTX compiles that follow in this
    process, through LLVM's C API `LLVMParseCommandLineOptions` (`llvm-c/Support.h`) of the
    `libLLVM.so` the MLIR bindings load. The NVPTX target machine reads the option when
    `gpu-module-to-binary` creates it, so the setting holds per compile; it is process-wide state
    (as every LLVM option), changed only when it differs.

    Raises PtxError when the loaded LLVM does not export the C API.
    Postcondition: the next `emit_ptx` gets 32-bit shared addresses iff `enabled`.
    Example: `set_short_shared_pointers(True)`; a shared store's address is then
    `add.s32 %r5, %r104, %r103` (a `mov.b32` of the buffer) instead of an `add.s64`."""
    if _short_pointers[0] == enabled:
        return
    try:  # the library the bindings already loaded (`libMLIRPythonCAPI.so` needs it), by its name
        parse = ctypes.CDLL("libLLVM.so", mode=os.RTLD_NOLOAD | os.RTLD_LAZY).LLVMParseCommandLineOptions
    except (OSError, AttributeError) as error:
        raise PtxError(f"cannot set LLVM's -{SHORT_SHARED_POINTERS}: {error}") from None
    parse.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p]
    parse.restype = None
    option = f"-{SHORT_SHARED_POINTERS}={'true' if enabled else 'false'}".encode()
    parse(2, (ctypes.c_char_p * 2)(b"linear-layout", option), b"")
    _short_pointers[0] = enabled


def emit_ptx(
    module: ir.Module | ir.Operation, chip: str, features: str | None = None, short_pointers: bool = False
) -> str:
    """The PTX of every kernel object of `module` (a lowered `builtin.module` with its
    `gpu.module`s at the top level), one after another, compiled for `chip` (e.g. "sm_90") by the
    stock `gpu-lower-to-nvvm-pipeline`. `features` (`+ptxNN`) defaults to the lowest PTX version
    the chip and the module's ops need (LLVM aborts without one). `short_pointers`: 32-bit
    shared-memory addresses, as Triton's (`set_short_shared_pointers`; off by default: LLVM's
    InstCombine then splits a one-use address sum into one add per term, which costs more than
    the 64-bit `mul.wide` in some kernels, see docs/triton-kernels.md).

    The module is compiled in place (it ends as `gpu.binary` ops). Raises PtxError (a ValueError)
    for a module without a top-level `gpu.module` or with a nested one, and TargetError (a
    ValueError) for an unknown chip or features older than needed.

    Example: `emit_ptx(lowered, "sm_90")` starts with `//\\n// Generated by LLVM NVPTX Back-End`."""
    operation = module.operation
    target = nvptx_target(chip)
    _check_gpu_modules_at_top(operation)
    needed = ptx_features(target, _op_names(operation), features)
    keep_loops_rolled(operation)
    set_short_shared_pointers(short_pointers)
    build_pass_manager(
        f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-chip={target.chip} cubin-features={needed} cubin-format=isa}})",
        operation.context,
    ).run(operation)
    texts: list[str] = []
    for op in operation.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.binary":
            texts.extend(gpu.ObjectAttr(o).object.decode() for o in op.attributes["objects"])
    return "".join(texts)
