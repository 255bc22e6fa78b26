"""Lowering Triton's own kernels (`tt.func` in TTGIR) to SIMT form: the kernel ABI, the steps
around the patterns, and one pattern per `tt` op.

The kernel ABI (docs/triton-kernels.md):

- each `tt.func` becomes a `gpu.func ... kernel` of `gpu.module @kernels`, with
  `known_block_size = [num_warps * threads_per_warp, 1, 1]` from the module's `ttg.num-warps`;
- a `!tt.ptr<T>` argument becomes a global `memref<?xT>` (one pointer with the NVVM pipeline's
  `kernel-bare-ptr-calling-convention=true`); its `tt.divisibility` is what the accesses'
  `alignment` attributes promise; integer and float scalars stay as they are;
- the grid is the launch grid: `tt.get_program_id x|y|z` is `gpu.block_id`, and
  `tt.get_num_programs` is `gpu.grid_dim`.

Inside the kernel a pointer is an element offset (`index`) from the argument it derives from,
and a tensor of pointers is one `vector<R x index>` per thread (R: its layout's registers); which
argument an access goes through is found before anything is rewritten (`ll.pointer_argument`
on each `tt.load`/`tt.store`), with the access width from the axis-info analysis (`ll.vector`):
a pointer of unknown provenance (a `select` between two arguments, a loop-carried pointer) is
a lowering error. Each access of `vec` registers is one `vector.load`/`vector.store` with
`alignment = vec * element bytes`. Under a mask (uniform over the `vec` registers: the axis
info's constancy) it is one predicated `ld.global`/`st.global` of the same width in
`llvm.inline_asm` (`ir/ptx_asm.py`, as Triton's: no branch), and a masked-off load yields `other`
(zero when the op has none), so no masked-off address is touched; an access of sub-byte elements stays a `vector.load`/`vector.store` in an `scf.if`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, scf, vector

from ..core.layout import LinearLayout
from ..core.targets import is_amdgpu_chip
from ..ir.ptx_asm import FORMS, MAD_WIDE_BYTES, mad_wide, predicated_load, predicated_store
from ..ir.text import pointee_type as pointee_of
from ..ir.text import type_kind
from ..ir.walk import ops_where
from .axis_info import analyze_axis_info
from .common import CAST, cast_to
from .control_flow import lowered_type
from .kernel import (
    KernelBuilder,
    Launch,
    LoweringError,
    emit_thread_indices,
    enclosing_kernel,
    hardware_layout,
    launch_attributes,
)
from .outline import _kernel_module, _module_of
from .simt_pattern import SimtPattern
from .vectors import concat, element_of

__all__ = [
    "POINTER_ARGUMENT",
    "TRITON_PATTERNS",
    "VECTOR_ATTRIBUTE",
    "AccessOperands",
    "access_memory",
    "access_operands",
    "global_pointer",
    "element_offsets",
    "global_pointers",
    "lowered_operand",
    "annotate_accesses",
    "check_access",
    "check_accesses",
    "outline_triton_kernel",
    "pointer_memory",
    "register_renaming",
    "shuffled",
    "triton_kernel_launch",
]

#: On `tt.load`/`tt.store`: the number of the kernel argument the pointer derives from.
POINTER_ARGUMENT = "ll.pointer_argument"
#: The pointer casts, annotated with the argument of their pointer side as the accesses are.
_POINTER_CASTS = ("tt.ptr_to_int", "tt.int_to_ptr")
#: On `tt.load`/`tt.store`: elements per access (axis info, as Triton's getVectorSize).
VECTOR_ATTRIBUTE = "ll.vector"


def pointee_type(pointer_type: ir.Type) -> ir.Type:
    """T of `!tt.ptr<T>` (LoweringError for any other type)."""
    pointee = pointee_of(pointer_type)
    if pointee is None:
        raise LoweringError(f"expected a !tt.ptr, got {pointer_type}")
    return pointee


def _is_pointer(t: ir.Type) -> bool:
    element = t.element_type if isinstance(t, ir.RankedTensorType) else t
    return type_kind(element) == "tt.ptr"


def triton_kernel_launch(kernel: ir.Operation, chip: str | None = None) -> Launch:
    """The launch of a `tt.func` for target `chip`: the `ttg.num-warps`/`ttg.threads-per-warp`
    around it (LoweringError without a warp count)."""
    launch = launch_attributes(kernel)
    if launch.num_warps is None:
        raise LoweringError('a tt.func kernel needs the "ttg.num-warps" of its module')
    return Launch(launch.num_warps, launch.threads_per_warp, launch.num_ctas, chip)


@dataclass(frozen=True)
class AccessOperands:
    """The operands of a global access, whichever op makes it: `pointer` (a tensor of pointers,
    or for AMD's buffer ops the scalar base), `offsets` (buffer ops: the i32 element offsets from
    the base), `value` (stored or combined), `compare` (`tt.atomic_cas`), `mask` and `other` (None: absent),
    `destination` (the shared buffer of `ttg.async_copy_global_to_local`)."""

    pointer: ir.Value
    destination: ir.Value | None = None
    offsets: ir.Value | None = None
    value: ir.Value | None = None
    compare: ir.Value | None = None
    mask: ir.Value | None = None
    other: ir.Value | None = None


#: Per access op, its operands' roles in ODS order (`?`: optional, one operand segment each).
_ACCESS_OPS = {
    "tt.load": ("pointer", "mask?", "other?"),
    "tt.store": ("pointer", "value", "mask?"),
    "tt.atomic_rmw": ("pointer", "value", "mask?"),
    "tt.atomic_cas": ("pointer", "compare", "value"),
    "amdg.buffer_load": ("pointer", "offsets", "stride?", "mask?", "other?"),
    "amdg.buffer_store": ("value", "pointer", "offsets", "stride?", "mask?"),
    "amdg.buffer_atomic_rmw": ("pointer", "offsets", "value", "stride?", "mask?"),
    "ttg.async_copy_global_to_local": ("pointer", "destination", "mask?", "other?"),
}


def access_operands(op: ir.Operation) -> AccessOperands:
    """The roles of the operands of access op `op` (operand segments read when there are any)."""
    operation = op.operation
    roles = _ACCESS_OPS[operation.name]
    operands = list(operation.operands)
    segments = operation.attributes.get("operandSegmentSizes")
    sizes = list(segments) if segments is not None else [1] * len(operands) + [0] * (len(roles) - len(operands))
    found: dict[str, ir.Value] = {}
    position = 0
    for role, size in zip(roles, sizes):
        if size:
            found[role.rstrip("?")] = operands[position]
        position += size
    found.pop("stride", None)
    return AccessOperands(**found)


def check_accesses(kernel: ir.Operation) -> list[tuple[ir.Location, str]]:
    """The first access of `kernel` whose pointer is a scalar without offsets, of unknown
    provenance (the patterns need the argument it goes through) or has a buffer stride."""
    arguments = list(kernel.regions[0].blocks[0].arguments)
    for op in _accesses(kernel):
        operands = access_operands(op)
        if operands.offsets is None and not isinstance(operands.pointer.type, ir.RankedTensorType):
            return [(op.location, f"'{op.name}' of a scalar pointer has no lowering to SIMT form")]
        roles, segments = _ACCESS_OPS[op.name], op.attributes.get("operandSegmentSizes")
        if "stride?" in roles and segments is not None and list(segments)[roles.index("stride?")]:
            return [(op.location, f"'{op.name}' with a stride has no lowering to SIMT form")]
        try:
            _pointer_argument(operands.pointer, arguments)
        except LoweringError as error:
            return [(op.location, f"'{op.name}': {error}")]
    for op in _accesses(kernel, _POINTER_CASTS):
        try:
            _pointer_argument(_cast_pointer(op), arguments)
        except LoweringError as error:
            return [(op.location, f"'{op.name}': {error}")]
    return []


def _cast_pointer(op: ir.Operation) -> ir.Value:
    """The pointer side of a pointer cast: the operand of `tt.ptr_to_int`, the result of `tt.int_to_ptr`."""
    return op.operands[0] if op.name == "tt.ptr_to_int" else op.results[0]


# ---------------------------------------------------------------------------- checks


def _pointer_argument(value: ir.Value, arguments: list[ir.Value]) -> int:
    """The kernel argument `value` (a pointer or tensor of pointers) derives from."""
    while True:
        if isinstance(value, ir.BlockArgument):
            for index, argument in enumerate(arguments):
                if argument == value:
                    return index
            raise LoweringError("a pointer carried by a loop or a region has no known provenance")
        owner = value.owner
        name = owner.name
        if name in ("tt.splat", "tt.addptr", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout"):
            value = owner.operands[0]
        elif name == "tt.int_to_ptr":
            value = _address_origin(owner.operands[0], arguments)
        else:
            raise LoweringError(f"a pointer made by '{name}' has no known provenance")


def _address_origin(address: ir.Value, arguments: list[ir.Value], budget: int = 4096) -> ir.Value:
    """The pointer operand of the `tt.ptr_to_int`s the integer `address` is computed from, through
    any ops (`(p + offs).to(int64) + 4`); LoweringError unless they all derive from one argument."""
    origins: dict[int, ir.Value] = {}
    pending = [address]
    while pending:
        budget -= 1
        if budget < 0:
            raise LoweringError("an integer turned into a pointer is computed by too many ops to trace")
        value = pending.pop()
        if isinstance(value, ir.BlockArgument):
            continue
        owner = value.owner
        if owner.name == "tt.ptr_to_int":
            origins.setdefault(_pointer_argument(owner.operands[0], arguments), owner.operands[0])
        else:
            pending.extend(owner.operands)
    if len(origins) != 1:
        raise LoweringError(
            f"an integer turned into a pointer ('tt.int_to_ptr') derives from {len(origins)} pointer arguments, "
            "not exactly one"
        )
    return next(iter(origins.values()))


def _accesses(kernel: ir.Operation, names: Collection[str] = tuple(_ACCESS_OPS)) -> list[ir.Operation]:
    return ops_where(kernel, lambda op: op.name in names)


# ---------------------------------------------------------------------------- steps


def annotate_accesses(kernel: ir.Operation) -> None:
    """Write on each `tt.load`/`tt.store` its pointer's argument and its access width (from the
    axis info of the still-unlowered kernel), which the patterns read."""
    facts = analyze_axis_info(kernel)
    arguments = list(kernel.regions[0].blocks[0].arguments)
    i32 = ir.IntegerType.get_signless(32)
    for op in _accesses(kernel, _POINTER_CASTS):  # the argument of the pointer each one reads or makes
        op.attributes[POINTER_ARGUMENT] = ir.IntegerAttr.get(i32, _pointer_argument(_cast_pointer(op), arguments))
    for op in _accesses(kernel):
        operands = access_operands(op)
        op.attributes[POINTER_ARGUMENT] = ir.IntegerAttr.get(i32, _pointer_argument(operands.pointer, arguments))
        # buffer ops and atomics: one element each
        vectorised = op.name in ("tt.load", "tt.store", "ttg.async_copy_global_to_local")
        vector_size = facts.vector_size(operands.pointer, operands.mask) if vectorised else 1
        op.attributes[VECTOR_ATTRIBUTE] = ir.IntegerAttr.get(i32, vector_size)


def _argument_type(t: ir.Type) -> ir.Type:
    if _is_pointer(t):
        return ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], pointee_type(t))
    return t


def outline_triton_kernel(kernel: ir.Operation, launch: Launch) -> gpu.GPUFuncOp:
    """Move the body of `tt.func` `kernel` into a new `gpu.func` kernel (the ABI above) and
    erase it: pointer arguments become memrefs, used in the body as the offset 0 (cast to the
    pointer type), and `tt.return` becomes `gpu.return`."""
    block = kernel.regions[0].blocks[0]
    arguments = list(block.arguments)
    inputs = [_argument_type(a.type) for a in arguments]
    gpu_module = _kernel_module(_module_of(kernel))
    with ir.InsertionPoint(gpu_module.regions[0].blocks[0]), kernel.location:
        new = gpu.GPUFuncOp(
            ir.TypeAttr.get(ir.FunctionType.get(inputs, [])),
            sym_name=ir.StringAttr(kernel.attributes["sym_name"]).value,
            kernel=True,
            known_block_size=[launch.threads, 1, 1],
        )
    block.append_to(new.regions[0])
    with kernel.location:
        zero = arith.constant(ir.IndexType.get(), 0, ip=ir.InsertionPoint.at_block_begin(block))
        for argument, t in zip(arguments, inputs):
            if t != argument.type:
                pointer = ir.Operation.create(
                    CAST, results=[argument.type], operands=[zero], ip=ir.InsertionPoint.after(zero.owner)
                ).result
                argument.replace_all_uses_with(pointer)
                argument.set_type(t)
    terminator = block.operations[-1]
    with ir.InsertionPoint(terminator), terminator.location:
        gpu.return_([])
    terminator.operation.erase()
    kernel.erase()
    with new.location:
        emit_thread_indices(launch, _constant_before, ir.InsertionPoint.at_block_begin(new.regions[0].blocks[0]))
    return new


def _constant_before(value: int, anchor: ir.Operation) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value, ip=ir.InsertionPoint(anchor))


# ---------------------------------------------------------------------------- patterns


def _vector_of(t: ir.RankedTensorType, launch: Launch) -> ir.VectorType:
    """The per-thread vector of tensor type `t` (pointers: their `index` offsets)."""
    return ir.VectorType(lowered_type(t, launch))


def _scalar_of(t: ir.Type) -> ir.Type:
    return ir.IndexType.get() if _is_pointer(t) else t


def _check_tensor_result(op: ir.OpView, launch: Launch) -> None:
    for value in list(op.operation.operands) + list(op.operation.results):
        if isinstance(value.type, ir.RankedTensorType):
            _vector_of(value.type, launch)  # LoweringError when the layout does not fit the launch


_DIMENSIONS = (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z)


def _emit_grid_index(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.get_program_id` / `tt.get_num_programs`: `gpu.block_id` / `gpu.grid_dim`, as i32."""
    dimension = _DIMENSIONS[op.operation.attributes["axis"].value]
    make = gpu.block_id if op.operation.name == "tt.get_program_id" else gpu.grid_dim
    return [arith.index_cast(ir.IntegerType.get_signless(32), make(dimension))]


def _register_constants(layout: LinearLayout) -> list[int]:
    """Per register r, the index L(register = r) along the tensor's one dimension."""
    zero = {dim: 0 for dim in layout.get_in_dim_names() if dim != "register"}
    out = layout.get_out_dim_names()[0]
    return [layout.apply({"register": r, **zero})[out] for r in range(layout.get_in_dim_size("register"))]


def _i32_vector(values: list[int]) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    t = ir.VectorType.get([len(values)], i32)
    return arith.constant(t, ir.DenseElementsAttr.get([ir.IntegerAttr.get(i32, v) for v in values], type=t))


def _bits_of(layout: LinearLayout, in_dims: tuple[str, ...]) -> int:
    """The output bits any basis of `in_dims` sets (1-D layout): OR of L(d = 2**k)."""
    found = 0
    for dim in in_dims:
        for position in range(layout.get_in_dim_size_log2(dim)):
            found |= layout.get_basis(dim, position)[0]
    return found


#: `overflow<nsw, nuw>`: an add of non-negative terms with disjoint bits wraps in neither sense.
_NO_WRAP = "#arith.overflow<nsw, nuw>"


def _emit_make_range(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.make_range`: start + L(register, lane, warp) = start + (L(lane, warp) ^ L(register)),
    the thread's part from the layout's index math, the register part as constants.

    Where the register bases and the thread bases set disjoint bits (every blocked layout), the
    XOR is an add that wraps in no sense, `L(lane, warp) + L(register)`, emitted as
    `arith.addi overflow<nsw, nuw>` with `start`: each register is then the thread's one base
    plus a constant, which the access folds into an immediate offset, as Triton's."""
    t = op.operation.results[0].type
    layout = hardware_layout(t, launch)
    builder = KernelBuilder(op, launch)
    thread_part = builder.apply(layout, builder.hw_indices(0))[layout.get_out_dim_names()[0]]
    target = _vector_of(t, launch)
    value = vector.broadcast(target, thread_part)
    constants = _register_constants(layout)
    start = op.operation.attributes["start"].value
    thread_dims = tuple(d for d in layout.get_in_dim_names() if d != "register")
    if any(constants) and _bits_of(layout, ("register",)) & _bits_of(layout, thread_dims):
        value = arith.xori(value, _i32_vector(constants))
        constants = [0] * len(constants)
    if any(constants) or start:
        flags = ir.Attribute.parse(_NO_WRAP)
        value = arith.addi(value, _i32_vector([c + start for c in constants]), overflow_flags=flags)
    return [cast_to(value, t)]


def _emit_splat(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    t = op.operation.results[0].type
    source = op.operation.operands[0]
    scalar = cast_to(source, _scalar_of(source.type))
    return [cast_to(vector.broadcast(_vector_of(t, launch), scalar), t)]


def _emit_addptr(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    """`tt.addptr`: the offsets (in elements, sign-extended as Triton's GEP) added to the index."""
    pointer, offset = op.operation.operands
    t = op.operation.results[0].type
    if isinstance(t, ir.RankedTensorType):
        target = _vector_of(t, launch)
        offsets = cast_to(offset, _vector_of(offset.type, launch))
        moved = arith.addi(cast_to(pointer, target), arith.index_cast(target, offsets))
    else:
        index = ir.IndexType.get()
        moved = arith.addi(cast_to(pointer, index), arith.index_cast(index, offset))
    return [cast_to(moved, t)]


def access_memory(op: ir.OpView) -> tuple[ir.Value, int]:
    """The memref argument and the access width written by `annotate_accesses`."""
    return pointer_memory(op), op.operation.attributes[VECTOR_ATTRIBUTE].value


def pointer_memory(op: ir.OpView) -> ir.Value:
    """The memref argument the pointers of `op` are element offsets into (`annotate_accesses`)."""
    operation = op.operation
    kernel = operation.parent
    while kernel.name != "gpu.func":
        kernel = kernel.parent
    return kernel.regions[0].blocks[0].arguments[operation.attributes[POINTER_ARGUMENT].value]


def check_access(op: ir.OpView, launch: Launch) -> None:
    """The layouts fit the launch; inside a kernel, `annotate_accesses` has run."""
    operation = op.operation
    if enclosing_kernel(operation) is not None and POINTER_ARGUMENT not in operation.attributes:
        raise LoweringError(f"'{operation.name}' was not annotated by annotate_accesses")
    _check_tensor_result(op, launch)


def _element_bytes(t: ir.Type) -> int:
    return max(1, t.width // 8)


def _guarded(condition: ir.Value | None, then, otherwise=None, result: ir.Type | None = None):
    """`then()` (returning a value or None) under `condition`; `otherwise()` where it is false."""
    if condition is None:
        return then()
    if_op = scf.IfOp(condition, [result] if result is not None else [], has_else=otherwise is not None)
    with ir.InsertionPoint(if_op.then_block):
        value = then()
        scf.yield_([value] if result is not None else [])
    if otherwise is not None:
        with ir.InsertionPoint(if_op.else_block):
            scf.yield_([otherwise()])
    return if_op.results[0] if result is not None else None


def element_offsets(operands: AccessOperands, launch: Launch) -> ir.Value:
    """The per-thread `vector<R x index>` of element offsets an access goes to: the pointer
    tensor's, or a buffer op's base plus its offsets (sign-extended)."""
    if operands.offsets is None:
        return cast_to(operands.pointer, _vector_of(operands.pointer.type, launch))
    offsets = cast_to(operands.offsets, _vector_of(operands.offsets.type, launch))
    target = ir.VectorType.get(ir.VectorType(offsets.type).shape, ir.IndexType.get())
    base = vector.broadcast(target, cast_to(operands.pointer, ir.IndexType.get()))
    return arith.addi(base, arith.index_cast(target, offsets))


def lowered_operand(value: ir.Value | None, launch: Launch) -> ir.Value | None:
    """The per-thread vector of an optional tensor operand."""
    return None if value is None else cast_to(value, _vector_of(value.type, launch))


def _emit_load(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    t = operation.results[0].type
    element, registers = t.element_type, _vector_of(t, launch).shape[0]
    memory, vec = access_memory(op)
    operands = access_operands(operation)
    offsets = element_offsets(operands, launch)
    mask, other = lowered_operand(operands.mask, launch), lowered_operand(operands.other, launch)
    if other is not None and _is_zero(other):
        other = None  # the predicated load's own `mov $k, 0`, as Triton's
    piece_type = ir.VectorType.get([vec], element)
    bits = _predicated_bits(element, vec, mask, launch)
    pieces: list[ir.Value] = []
    for access in _register_accesses(memory, offsets, mask, registers, vec, element, ptx=bits is not None):
        first, index, condition = access.first, access.index, access.condition
        registers_here = list(range(first, first + vec))
        if bits is not None and condition is not None and access.address is not None:
            others = vector.shuffle(other, other, registers_here) if other is not None else None
            pieces.append(_predicated_load(condition, access.address, others, piece_type, bits))
            continue

        def load(index=index) -> ir.Value:
            return vector.load(piece_type, memory, [index], alignment=vec * _element_bytes(element))

        def fallback(registers_here=registers_here) -> ir.Value:
            if other is not None:
                return vector.shuffle(other, other, registers_here)
            return arith.constant(piece_type, ir.DenseElementsAttr.get_splat(piece_type, _zero(element)))

        pieces.append(_guarded(condition, load, fallback, piece_type))
    return [cast_to(_concat(pieces, element), t)]


def _is_zero(value: ir.Value) -> bool:
    """Whether `value` is a constant vector of zero bits (0, or +0.0)."""
    operation = _defining(value)
    if operation is None or operation.name != "arith.constant":
        return False
    attribute = operation.attributes["value"]
    if not isinstance(attribute, ir.DenseElementsAttr) or not attribute.is_splat:
        return False
    splat = attribute.get_splat_value()
    if isinstance(splat, ir.FloatAttr):
        return splat.value == 0.0 and math.copysign(1.0, splat.value) > 0
    return isinstance(splat, ir.IntegerAttr) and splat.value == 0


@dataclass(frozen=True)
class _RegisterAccess:
    """The access of registers [first, first + vec): its element index, its mask bit (None
    without a mask) and, where it is one predicated instruction, its address."""

    first: int
    index: ir.Value
    condition: ir.Value | None
    address: _Address | None


def _register_accesses(
    memory: ir.Value,
    offsets: ir.Value,
    mask: ir.Value | None,
    registers: int,
    vec: int,
    element: ir.Type,
    *,
    ptx: bool,
) -> list[_RegisterAccess]:
    """One access per `vec` registers: the index and mask bit as scalars (`element_of`) and,
    for a masked access with a predicated PTX form (``ptx``: the target takes PTX and the access
    has one), Triton's address (`_addresses`)."""
    scalars: dict = {}
    firsts = range(0, registers, vec)
    indices = [element_of(offsets, first, scalars) for first in firsts]
    conditions = [element_of(mask, first, scalars) if mask is not None else None for first in firsts]
    predicated = ptx and mask is not None and _word_bits(element, vec) is not None
    addresses: list[_Address | None] = [None] * len(indices)
    if predicated:
        addresses = list(_addresses(_base_address(memory), indices, element, ptx=True))
    return [_RegisterAccess(*parts) for parts in zip(firsts, indices, conditions, addresses)]


def _word_bits(element: ir.Type, vec: int) -> int | None:
    """Bits per word of a predicated access of `vec` elements, as Triton packs them (32-bit
    words, 64-bit for 64-bit elements, one 16- or 8-bit word below 32 bits); None when the
    access has no predicated form (sub-byte or non-scalar elements).

    Formula: min(vec * width, max(32, width)). Example: f16 x 8 -> 32 (four words)."""
    if not isinstance(element, (ir.IntegerType, ir.FloatType)) or element.width % 8:
        return None
    total = vec * element.width
    bits = min(total, max(32, element.width))
    if total % bits or (total // bits, bits) not in FORMS:
        return None
    return bits


def _predicated_bits(element: ir.Type, vec: int, mask: ir.Value | None, launch: Launch) -> int | None:
    """Bits per word of the predicated PTX form of a masked access (`_word_bits`); None without a
    mask, and for an AMD chip, where a masked access is the portable `scf.if` around a plain
    vector access (AMDGCN has no predicated loads; LLVM's AMDGPU back end turns the branch into
    `s_and_saveexec`, as Triton's AMD loads)."""
    if mask is None or is_amdgpu_chip(launch.chip):
        return None
    return _word_bits(element, vec)


def _base_address(memory: ir.Value) -> ir.Value:
    return memref.extract_aligned_pointer_as_index(memory)


def _defining(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _constant_int(value: ir.Value) -> int | None:
    operation = _defining(value)
    if operation is None or operation.name != "arith.constant":
        return None
    attribute = operation.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def _split_constant(value: ir.Value, memo: dict) -> tuple[ir.Value | None, int]:
    """(rest, c) with value = rest + c and c >= 0 an integer folded out of `addi`s and signed
    `index_cast`s (None: no rest). Exact for every offset an access may use: moving c >= 0 out
    of a sign extension changes the value only where `rest + c` overflows to a negative offset,
    which is out of every argument (a predicated-off access does not read its address). `memo`
    gives one rest per value."""
    if value not in memo:
        memo[value] = _build_split(value, memo)
    return memo[value]


def _build_split(value: ir.Value, memo: dict) -> tuple[ir.Value | None, int]:
    constant = _constant_int(value)
    if constant is not None and constant >= 0:
        return None, constant
    operation = _defining(value)
    if operation is not None and operation.name == "arith.index_cast":
        rest, constant = _split_constant(operation.operands[0], memo)
        if constant and isinstance(operation.operands[0].type, ir.IntegerType):
            return (None if rest is None else arith.index_cast(value.type, rest)), constant
    if operation is not None and operation.name == "arith.addi":
        (rest_a, a), (rest_b, b) = (_split_constant(o, memo) for o in operation.operands)
        if a or b:
            rests = [r for r in (rest_a, rest_b) if r is not None]
            return (arith.addi(*rests) if len(rests) == 2 else (rests[0] if rests else None)), a + b
    return value, 0


def _terms(index: ir.Value) -> list[ir.Value]:
    """The summands of an `index` offset (its `arith.addi` tree on `index`)."""
    operation = _defining(index)
    if operation is not None and operation.name == "arith.addi" and isinstance(index.type, ir.IndexType):
        return [term for operand in operation.operands for term in _terms(operand)]
    return [index]


@dataclass(frozen=True)
class _Address:
    """A global address as a `!llvm.ptr<1>` register plus an immediate byte offset."""

    register: ir.Value
    offset: int

    def at(self) -> ir.Value:
        """The address as one pointer (the offset as a byte `getelementptr`)."""
        if not self.offset:
            return self.register
        i8 = ir.IntegerType.get_signless(8)
        return llvm.getelementptr(self.register.type, self.register, [], [self.offset], i8, llvm.GEPNoWrapFlags.none)


#: A global pointer: the address operand of the predicated accesses, as Triton's.
GLOBAL_POINTER = "!llvm.ptr<1>"
_DYNAMIC = -(2**31)  # llvm.getelementptr: the index is an operand


def _gep_index(term: ir.Value) -> ir.Value:
    """The `getelementptr` index of an offset summand: the i32 of a signed `index_cast` (the
    GEP sign-extends it, as Triton's), else the summand as i64."""
    operation = _defining(term)
    if operation is not None and operation.name == "arith.index_cast":
        source = operation.operands[0]
        if isinstance(source.type, ir.IntegerType) and source.type.width <= 64:
            return source
    return arith.index_cast(ir.IntegerType.get_signless(64), term)


def global_pointer(memory: ir.Value, index: ir.Value, element: ir.Type, *, ptx: bool) -> ir.Value:
    """The `!llvm.ptr<1>` of element `index` (an `index`) of the global memref `memory` (``ptx``:
    the target takes PTX, so an i32 step may be a `mad.wide.s32`)."""
    return _addresses(_base_address(memory), [index], element, ptx=ptx)[0].at()


def global_pointers(memory: ir.Value, indices: list[ir.Value], element: ir.Type) -> list[ir.Value]:
    """The `!llvm.ptr<1>` of elements `indices` (scalar `index`es) of the global memref `memory`
    on a PTX target, Triton's way (`_addresses`: each shared summand one `mad.wide.s32` step,
    once; each constant a byte `getelementptr`, the access's immediate).
    Example: the 8 copies of a thread of matmul_f16_s3 share one step per summand."""
    return [address.at() for address in _addresses(_base_address(memory), indices, element, ptx=True)]


def _addresses(base: ir.Value, indices: list[ir.Value], element: ir.Type, *, ptx: bool) -> list[_Address]:
    """The addresses of elements `indices` of the argument at `base` (an `index` address),
    Triton's way: one `getelementptr` per summand of the index, the summands most accesses
    share first (so that the registers of a thread share one address register), and the
    constant part of each index as the immediate byte offset.

    Postcondition: register + offset == base + index * element bytes."""
    split: list[tuple[list[ir.Value], int]] = []
    memo: dict = {}
    for index in indices:
        rests, constant = [], 0
        for term in _terms(index):
            rest, c = _split_constant(term, memo)
            constant += c
            if rest is not None:
                rests.append(rest)
        split.append((rests, constant))
    counts: dict = {}
    for rests, _ in split:
        for rest in rests:
            counts[rest] = counts.get(rest, 0) + 1
    pointer_type = ir.Type.parse(GLOBAL_POINTER)
    start = llvm.inttoptr(pointer_type, arith.index_cast(ir.IntegerType.get_signless(64), base))
    found = []
    steps: dict = {}  # (pointer, summand) -> the pointer one step further: shared prefixes once
    for rests, constant in split:
        pointer = start
        for rest in sorted(rests, key=lambda r: -counts[r]):
            if (pointer, rest) not in steps:
                steps[pointer, rest] = _step(pointer, _gep_index(rest), element, ptx=ptx)
            pointer = steps[pointer, rest]
        found.append(_Address(pointer, constant * _element_bytes(element)))
    return found


def _step(pointer: ir.Value, index: ir.Value, element: ir.Type, *, ptx: bool) -> ir.Value:
    """`pointer` advanced by `index` elements: one `mad.wide.s32` (`ir/ptx_asm.py`, Triton's
    address instruction) for an i32 index of a 1- to 16-byte element on a PTX target, else a
    `getelementptr`."""
    size = _element_bytes(element)
    if ptx and isinstance(index.type, ir.IntegerType) and index.type.width == 32 and size in MAD_WIDE_BYTES:
        return llvm.inline_asm(pointer.type, [index, pointer], *mad_wide(size))
    return llvm.getelementptr(pointer.type, pointer, [index], [_DYNAMIC], element, llvm.GEPNoWrapFlags.none)


def _words(piece: ir.Value, bits: int) -> list[ir.Value]:
    """The `bits`-bit words of the vector `piece` (a bitcast, then one extract per word)."""
    width = ir.VectorType(piece.type).shape[0] * ir.VectorType(piece.type).element_type.width
    word = ir.IntegerType.get_signless(bits)
    packed = vector.bitcast(ir.VectorType.get([width // bits], word), piece)
    return [vector.extract(packed, [], [k]) for k in range(width // bits)]


def _predicated_load(
    condition: ir.Value, address: _Address, others: ir.Value | None, piece_type: ir.Type, bits: int
) -> ir.Value:
    """One predicated `ld.global` of `piece_type` at `address`; `others` (or 0) where off."""
    piece = ir.VectorType(piece_type)
    words = piece.shape[0] * piece.element_type.width // bits
    word = ir.IntegerType.get_signless(bits)
    other_words = _words(others, bits) if others is not None else []
    asm, constraints = predicated_load(words, bits, others is not None, address.offset)
    result = word if words == 1 else llvm.StructType.get_literal([word] * words)
    loaded = llvm.inline_asm(result, [condition, address.register, *other_words], asm, constraints)
    values = [loaded] if words == 1 else [llvm.extractvalue(word, loaded, [k]) for k in range(words)]
    packed = vector.from_elements(ir.VectorType.get([words], word), values)
    return vector.bitcast(piece_type, packed)


def _predicated_store(condition: ir.Value, address: _Address, piece: ir.Value, bits: int) -> None:
    """One predicated `st.global` of the vector `piece` at `address`."""
    words = _words(piece, bits)
    asm, constraints = predicated_store(len(words), bits, address.offset)
    llvm.inline_asm(None, [*words, condition, address.register], asm, constraints, has_side_effects=True)


def _zero(element: ir.Type) -> ir.Attribute:
    if isinstance(element, ir.IntegerType):
        return ir.IntegerAttr.get(element, 0)
    return ir.FloatAttr.get(element, 0.0)


def _concat(pieces: list[ir.Value], element: ir.Type) -> ir.Value:
    if len(pieces) > 1 and ir.VectorType(pieces[0].type).shape[0] == 1:
        scalars = [vector.extract(piece, [], [0]) for piece in pieces]
        return vector.from_elements(ir.VectorType.get([len(pieces)], element), scalars)
    return concat(pieces)


def _emit_store(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    operands = access_operands(operation)
    assert operands.value is not None  # a store's value operand is not optional
    value_type = operands.value.type
    element, registers = value_type.element_type, _vector_of(value_type, launch).shape[0]
    memory, vec = access_memory(op)
    offsets = element_offsets(operands, launch)
    value = cast_to(operands.value, _vector_of(value_type, launch))
    mask = lowered_operand(operands.mask, launch)
    bits = _predicated_bits(element, vec, mask, launch)
    for access in _register_accesses(memory, offsets, mask, registers, vec, element, ptx=bits is not None):
        first, index, condition = access.first, access.index, access.condition
        piece = value if vec == registers else vector.shuffle(value, value, list(range(first, first + vec)))
        if bits is not None and condition is not None and access.address is not None:
            _predicated_store(condition, access.address, piece, bits)
            continue

        def store(index=index, piece=piece) -> None:
            vector.store(piece, memory, [index], alignment=vec * _element_bytes(element))

        _guarded(condition, store)
    return []


# ---------------------------------------------------------------------------- layout ops

_THREAD_DIMS = ("lane", "warp", "block")


def _coordinates(layout: LinearLayout, inputs: dict[str, int]) -> tuple[int, ...]:
    values = layout.apply({dim: inputs.get(dim, 0) for dim in layout.get_in_dim_names()})
    return tuple(values[dim] for dim in layout.get_out_dim_names())


def _xor(a: tuple[int, tuple[int, ...]], b: tuple[int, tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    return a[0] ^ b[0], tuple(x ^ y for x, y in zip(a[1], b[1]))


def register_renaming(sources: list[LinearLayout], result: LinearLayout, project) -> list[int]:
    """For each register of `result`, the register holding (in the same thread) the element
    `project` maps its element to, among the registers of all `sources` in order (operand k's
    register r is number `r + registers of the operands before k`); LoweringError when the
    threads' parts differ (the op would move data between threads: a layout conversion).

    `project(index) -> (k, operand index)`: the operand and its element of a result element, an
    affine map over GF(2) (`tt.split`'s second result adds a constant).
    Formula: for every lane/warp/block basis b and every operand k, project(result(b)) ^
    project(0) == (0, source_k(b)) (the thread part selects no operand); then register r of
    `result` is the register r' of operand k with source_k(r') == index, (k, index) =
    project(result(r))."""
    origin = project(_coordinates(result, {}))
    for dim in _THREAD_DIMS:
        if not result.has_in_dim(dim):
            continue
        for bit in range(result.get_in_dim_size_log2(dim)):
            moved = _xor(project(_coordinates(result, {dim: 1 << bit})), origin)
            if any(moved != (0, _coordinates(source, {dim: 1 << bit})) for source in sources):
                raise LoweringError(f"the {dim}s hold different elements before and after: not a register renaming")
    held: dict[tuple[int, tuple[int, ...]], int] = {}
    first = 0
    for k, source in enumerate(sources):
        for register in range(source.get_in_dim_size("register")):
            held.setdefault((k, _coordinates(source, {"register": register})), first + register)
        first += source.get_in_dim_size("register")
    renaming = []
    for register in range(result.get_in_dim_size("register")):
        target = project(_coordinates(result, {"register": register}))
        if target not in held:
            raise LoweringError("an element of the result is in no register of the operand's thread")
        renaming.append(held[target])
    return renaming


def shuffled(operands: list[ir.Value], renaming: list[int]) -> ir.Value:
    """The registers `renaming` of the concatenated per-thread vectors `operands` (one or two):
    no instruction when it is the identity of one operand, else one `vector.shuffle`."""
    first = operands[0]
    if len(operands) == 1 and renaming == list(range(ir.VectorType(first.type).shape[0])):
        return first
    return vector.shuffle(first, operands[-1], renaming)


def _projection_key(op: ir.OpView) -> tuple:
    """What `_projection` depends on: the op's name and its axis, order or operand shape."""
    operation = op.operation
    if operation.name == "tt.expand_dims":
        return (operation.name, operation.attributes["axis"].value)
    if operation.name == "tt.trans":
        return (operation.name, tuple(int(v) for v in operation.attributes["order"]))
    return (operation.name, tuple(operation.operands[0].type.shape))


def _projection(key: tuple):
    """How an element index of the result maps to the operand's (tt.expand_dims: drop the new
    axis; tt.broadcast: 0 along the broadcast dimensions; tt.trans: the inverse permutation),
    for the op of `_projection_key` `key`."""
    name, parameter = key
    if name == "tt.expand_dims":
        axis = parameter
        return lambda index: index[:axis] + index[axis + 1 :]
    if name == "tt.trans":  # result dimension k is operand dimension order[k]
        order = parameter

        def untranspose(index: tuple[int, ...]) -> tuple[int, ...]:
            source = [0] * len(order)
            for k, dim in enumerate(order):
                source[dim] = index[k]
            return tuple(source)

        return untranspose
    source_shape = parameter
    return lambda index: tuple(0 if size == 1 else i for i, size in zip(index, source_shape))


def _check_renaming(op: ir.OpView, launch: Launch) -> list[int]:
    operation = op.operation
    source = hardware_layout(operation.operands[0].type, launch)
    result = hardware_layout(operation.results[0].type, launch)
    return list(_renaming(_projection_key(op), source, result))


@functools.lru_cache(maxsize=4096)  # the check and the rewrite both ask; a LoweringError is not cached
def _renaming(key: tuple, source: LinearLayout, result: LinearLayout) -> tuple[int, ...]:
    """`register_renaming` of one operand `source` to `result` under the projection of `key`."""
    project = _projection(key)
    return tuple(register_renaming([source], result, lambda index: (0, project(index))))


def _emit_renaming(op: ir.OpView, launch: Launch, renaming: list[int]) -> list[ir.Value]:
    """`tt.expand_dims`/`tt.broadcast`/`tt.trans` as a register renaming: no instruction when it
    is the identity, else one `vector.shuffle`."""
    operation = op.operation
    value = cast_to(operation.operands[0], _vector_of(operation.operands[0].type, launch))
    return [cast_to(shuffled([value], renaming), operation.results[0].type)]


def _no_plan(op: ir.OpView, launch: Launch) -> None:
    _check_tensor_result(op, launch)


GRID_INDEX = SimtPattern(("tt.get_program_id", "tt.get_num_programs"), _no_plan, _emit_grid_index)
MAKE_RANGE = SimtPattern(("tt.make_range",), _no_plan, _emit_make_range)
SPLAT = SimtPattern(("tt.splat",), _no_plan, _emit_splat)
ADDPTR = SimtPattern(("tt.addptr",), _no_plan, _emit_addptr)
LOAD = SimtPattern(("tt.load", "amdg.buffer_load"), check_access, _emit_load)
STORE = SimtPattern(("tt.store", "amdg.buffer_store"), check_access, _emit_store)
RENAMING = SimtPattern(("tt.expand_dims", "tt.broadcast", "tt.trans"), _check_renaming, _emit_renaming)

#: The patterns of this module, one per Triton op (tt.func and tt.return are the kernel outline's).
TRITON_PATTERNS: tuple[SimtPattern, ...] = (GRID_INDEX, MAKE_RANGE, SPLAT, ADDPTR, LOAD, STORE, RENAMING)
