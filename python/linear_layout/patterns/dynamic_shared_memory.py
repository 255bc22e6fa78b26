"""Where a kernel's workgroup buffers live: aligned static arrays, or dynamic shared memory above 48 KiB.

A CUDA module cannot declare more than 48 KiB of static `.shared` memory
(:data:`~linear_layout.core.hardware.MAX_STATIC_SHARED_BYTES`): the driver refuses to load it.
Above that, the memory must be *dynamic*: one `.extern .shared` array whose size the launch
gives (`cuLaunchKernel`'s `sharedMemBytes`, after raising the function's
`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), as Triton's kernels do (`global_smem`).

`place_shared_memory(kernel)` runs on every lowered kernel. Within the limit the workgroup
attributions stay (static `.shared` arrays) and get `workgroup_attrib_attrs = [{llvm.align =
128}, ...]`: without it the stock lowering aligns an array to its element only (`.shared .align 2
.b8 __wg_cvt_0[2048]` for f16), too little for the 16-byte vector and `ldmatrix`/`stmatrix` rows
it serves, and the bank model (the interpreter's too) counts banks from 128-byte-aligned bases.
A kernel whose attributions need more than the limit is rewritten:

* each attribution becomes a `memref.view` of `gpu.dynamic_shared_memory` at a 128-byte-aligned
  byte offset (in attribution order; the views never overlap), and the attributions are removed;
* the `gpu.module` gets `llvm.mlir.global external @ll_dynamic_shared() {addr_space = 3,
  alignment = 16} : !llvm.array<0 x i8>`. The stock `convert-gpu-to-nvvm` reuses an existing
  zero-sized shared global of that alignment for `gpu.dynamic_shared_memory`; its own global is
  `internal`, which the NVPTX back end demotes to a one-byte static `.shared` variable (checked
  with MLIR 22.1.8), while an `external` one prints as
  `.extern .shared .align 16 .b8 ll_dynamic_shared[];`;
* the kernel gets `ll.dynamic_shared_memory = N : i64`, the bytes the launch must provide.

Both forms place buffer ``i`` at a multiple of 128 bytes.

Example: the 128x128 f32 transpose of `benchmarks/bench_codegen.py` (8 warps) needs a 64 KiB
scratch: `%0 = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>`,
`memref.view %0[%c0][] : ... to memref<16384xf32, #gpu.address_space<workgroup>>`,
`ll.dynamic_shared_memory = 65536`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, memref

from ..core.hardware import MAX_STATIC_SHARED_BYTES
from .vectors import element_bits

__all__ = [
    "DYNAMIC_SHARED_ATTRIBUTE",
    "DYNAMIC_SHARED_SYMBOL",
    "dynamic_shared_bytes",
    "place_shared_memory",
    "workgroup_offsets",
]

#: The kernel attribute holding the dynamic shared bytes a launch must provide.
DYNAMIC_SHARED_ATTRIBUTE = "ll.dynamic_shared_memory"
#: The `.extern .shared` array of the kernels' module.
DYNAMIC_SHARED_SYMBOL = "ll_dynamic_shared"
#: Every buffer starts at a multiple of 128 bytes (one wavefront), as the interpreter's bank model assumes.
_BUFFER_ALIGNMENT = 128


def _buffer_bytes(t: ir.MemRefType) -> int:
    elements = 1
    for size in t.shape:
        elements *= size
    return elements * element_bits(t.element_type) // 8


def workgroup_offsets(sizes: list[int]) -> tuple[list[int], int]:
    """(byte offset of each buffer, total bytes) for buffers of ``sizes`` bytes, in order, each
    128-byte aligned.

    >>> workgroup_offsets([100, 64])
    ([0, 128], 192)
    """
    offsets, top = [], 0
    for size in sizes:
        top = -(-top // _BUFFER_ALIGNMENT) * _BUFFER_ALIGNMENT
        offsets.append(top)
        top += size
    return offsets, top


def dynamic_shared_bytes(kernel: ir.Operation) -> int:
    """The dynamic shared bytes a launch of `kernel` (a `gpu.func`) must provide: 0 when its
    buffers are static."""
    attributes = kernel.operation.attributes
    return attributes[DYNAMIC_SHARED_ATTRIBUTE].value if DYNAMIC_SHARED_ATTRIBUTE in attributes else 0


def _declare_symbol(kernel: gpu.GPUFuncOp) -> None:
    """`llvm.mlir.global external @ll_dynamic_shared` in the kernel's `gpu.module`, once."""
    module_block = kernel.operation.parent.regions[0].blocks[0]
    for op in module_block.operations:
        if (
            op.operation.name == "llvm.mlir.global"
            and op.operation.attributes["sym_name"].value == DYNAMIC_SHARED_SYMBOL
        ):
            return
    declaration = ir.Operation.parse(
        f"llvm.mlir.global external @{DYNAMIC_SHARED_SYMBOL}() {{addr_space = 3 : i32, alignment = 16 : i64}} "
        ": !llvm.array<0 x i8>"
    )
    ir.InsertionPoint.at_block_begin(module_block).insert(declaration)


def _align_static(kernel: gpu.GPUFuncOp, count: int) -> None:
    if count:
        aligned = ir.Attribute.parse(f"{{llvm.align = {_BUFFER_ALIGNMENT} : i64}}")
        kernel.operation.attributes["workgroup_attrib_attrs"] = ir.ArrayAttr.get([aligned] * count)


def _replace_by_views(block: ir.Block, attributions: list, offsets: list[int]) -> None:
    """Each attribution's uses read a `memref.view` of `gpu.dynamic_shared_memory` at its offset
    instead (made at the top of the kernel, under the caller's location)."""
    workgroup = ir.Attribute.parse("#gpu.address_space<workgroup>")
    bytes_type = ir.MemRefType.get(
        [ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8), memory_space=workgroup
    )
    ip = ir.InsertionPoint.at_block_begin(block)
    base = gpu.dynamic_shared_memory(bytes_type, ip=ip)
    for argument, offset in zip(attributions, offsets, strict=True):
        shift = arith.constant(ir.IndexType.get(), offset, ip=ip)
        argument.replace_all_uses_with(memref.view(argument.type, base, shift, [], ip=ip))


def place_shared_memory(kernel: gpu.GPUFuncOp) -> int:
    """Align the workgroup attributions of `kernel` to 128 bytes, or move them into dynamic shared
    memory when they need more than the static limit (see the module docstring); return the
    dynamic bytes (0: static)."""
    block = kernel.regions[0].blocks[0]
    inputs = len(kernel.function_type.value.inputs)
    attributions = list(block.arguments)[inputs:]
    offsets, total = workgroup_offsets([_buffer_bytes(a.type) for a in attributions])
    if total <= MAX_STATIC_SHARED_BYTES:
        _align_static(kernel, len(attributions))
        return 0
    _declare_symbol(kernel)
    with kernel.location:
        _replace_by_views(block, attributions, offsets)
    for index in reversed(range(inputs, inputs + len(attributions))):
        block.erase_argument(index)
    i64 = ir.IntegerType.get_signless(64)
    kernel.operation.attributes["workgroup_attributions"] = ir.IntegerAttr.get(i64, 0)
    kernel.operation.attributes[DYNAMIC_SHARED_ATTRIBUTE] = ir.IntegerAttr.get(i64, total)
    return total
