"""Shared memory in SIMT kernels: workgroup buffers and the emitters of planned accesses.

A shared buffer is a workgroup attribution of the `gpu.func` (`memref<N x T,
#gpu.address_space<workgroup>>`). Which one an op uses is written on the op, as Triton's
`allocation.offset`: the `ll.workgroup_buffer` attribute holds the index of the attribution
among the kernel's workgroup attributions (set by `allocate_shared_memory` in `allocation.py`).
A lowered `ttg.local_alloc` is an `unrealized_conversion_cast` of its buffer to the memdesc type.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, nvvm, scf, vector

from ..core.layout import LinearLayout
from ..ir.bridge import MemDesc, from_attribute, memdesc_of
from .common import CAST
from .kernel import KernelBuilder, LoweringError
from .vectors import concat, concat_units, element_bits, from_units, gather, to_units, unit

__all__ = [
    "WORKGROUP_BUFFER",
    "SharedBuffer",
    "assemble",
    "emit_loads",
    "emit_stores",
    "emit_swaps",
    "exchange_barrier",
    "from_words",
    "scratch_word_element",
    "shared_buffer_of",
    "to_words",
    "warp_synchronous",
    "workgroup_argument",
    "workgroup_type",
]

#: The attribute naming an op's workgroup buffer (the index among the workgroup attributions).
WORKGROUP_BUFFER = "ll.workgroup_buffer"


def workgroup_type(elements: int, element: ir.Type) -> ir.MemRefType:
    return ir.MemRefType.get(
        [max(1, elements)], element, memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>")
    )


@dataclass(frozen=True)
class SharedBuffer:
    """A `!ttg.memdesc`: its parameters and its layout (input dimensions offset, block)."""

    memdesc: MemDesc
    layout: LinearLayout


def shared_buffer_of(t: ir.Type) -> SharedBuffer:
    """The memdesc type `t` as a buffer (LoweringError when its layout is not a linear shared
    layout of one CTA)."""
    try:
        memdesc = memdesc_of(t)
        encoding = from_attribute(memdesc.encoding)
        shared = encoding if isinstance(encoding, LinearLayout) else encoding.to_linear_layout(list(memdesc.shape))
    except (TypeError, ValueError, AttributeError) as error:
        raise LoweringError(f"cannot lower {t}: {error}") from None
    if not shared.has_in_dim("offset") or any(n not in ("offset", "block") for n in shared.get_in_dim_names()):
        raise LoweringError(f"cannot lower {t}: {memdesc.encoding} is not a linear shared layout (offset, block)")
    if shared.has_in_dim("block") and shared.get_in_dim_size("block") > 1:
        raise LoweringError(f"cannot lower {t}: shared buffers spread over several CTAs are not supported")
    return SharedBuffer(memdesc, shared)


def workgroup_argument(op: ir.OpView, index: int) -> ir.Value:
    """Workgroup attribution `index` of the kernel enclosing `op`."""
    kernel = op.operation.parent
    while kernel.operation.name != "gpu.func":
        kernel = kernel.operation.parent
    kernel = kernel.opview
    inputs = len(kernel.function_type.value.inputs)
    return kernel.regions[0].blocks[0].arguments[inputs + index]


def buffer_index(op: ir.OpView) -> int | None:
    attributes = op.operation.attributes
    return attributes[WORKGROUP_BUFFER].value if WORKGROUP_BUFFER in attributes else None


def allocating_op(memdesc_value: ir.Value) -> ir.Operation | None:
    """The `ttg.local_alloc` (or, once lowered, the cast of its buffer) defining a memdesc value."""
    owner = memdesc_value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name in ("ttg.local_alloc", CAST):
        return owner
    return None


def buffer_of(memdesc_value: ir.Value) -> ir.Value:
    """The workgroup memref behind a memdesc value (LoweringError when it has none)."""
    owner = allocating_op(memdesc_value)
    if owner is not None and owner.name == CAST:
        return owner.operands[0]
    index = buffer_index(owner.opview) if owner is not None else None
    if owner is None or index is None:
        raise LoweringError("the shared buffer does not come from a ttg.local_alloc of this function")
    return workgroup_argument(owner.opview, index)


# ---------------------------------------------------------------------------- emitters


def _address(builder: KernelBuilder, base: tuple[ir.Value, ir.Value], offset: int, additive: bool) -> ir.Value:
    """`base ^ offset` as an index: an immediate `addi` when the offset shares no bit with
    the base (`additive`), else an `xori` on i32."""
    if offset == 0:
        return base[1]
    if additive:
        return arith.addi(base[1], builder.const_index(offset))
    return arith.index_castui(ir.IndexType.get(), arith.xori(base[0], builder.const_i32(offset)))


def emit_stores(
    builder: KernelBuilder, buffer: ir.Value, value: ir.Value, access, instructions, base: tuple[ir.Value, ir.Value]
) -> None:
    """The planned stores of `value`'s registers, predicated (`scf.if`) when the plan says so."""
    cond = builder.store_predicate(access.predicate)
    if not instructions:
        return
    if_op = scf.IfOp(cond) if cond is not None else None
    with ir.InsertionPoint(if_op.then_block) if if_op is not None else contextlib.nullcontext():
        for ins in instructions:
            index = _address(builder, base, ins.offset, ins.additive)
            if access.vector == 1:
                memref.store(vector.extract(value, [], [ins.registers[0]]), buffer, [index])
            else:
                piece = gather(value, list(ins.registers), ir.VectorType(value.type).element_type)
                vector.store(piece, buffer, [index], alignment=access.instruction_bytes)
        if if_op is not None:
            scf.YieldOp([])


def emit_loads(
    builder: KernelBuilder, buffer: ir.Value, element: ir.Type, access, instructions, base: tuple[ir.Value, ir.Value]
) -> list[ir.Value]:
    pieces = []
    piece_type = ir.VectorType.get([access.vector], element)
    for ins in instructions:
        index = _address(builder, base, ins.offset, ins.additive)
        if access.vector == 1:
            pieces.append(memref.load(buffer, [index]))
        else:
            pieces.append(vector.load(piece_type, buffer, [index], alignment=access.instruction_bytes))
    return pieces


def _positions(access) -> dict[int, int]:
    position = {}
    for k, ins in enumerate(access.instructions):
        for j, r in enumerate(ins.registers):
            position[r] = k * access.vector + j
    for r, s in access.copies:
        position[r] = position[s]
    return position


def assemble(access, pieces: list[ir.Value], element: ir.Type, result_type: ir.VectorType) -> ir.Value:
    """The destination vector from the loaded pieces (instruction order) and the copies."""
    position = _positions(access)
    count = result_type.shape[0]
    mask = [position[r] for r in range(count)]
    if access.vector == 1:
        value = vector.from_elements(ir.VectorType.get([len(pieces)], element), pieces)
        if mask != list(range(count)) or len(pieces) != count:
            value = vector.shuffle(value, value, mask)
        return value
    size = unit([mask, range(access.vector)], element)
    if size > 1:  # keep the loaded units packed through the concatenation and the shuffle
        value = concat_units([to_units(piece, size, element) for piece in pieces])
        units = [m // size for m in mask[::size]]
        if units != list(range(len(units))) or len(pieces) * access.vector != count:
            value = vector.shuffle(value, value, units)
        return from_units(value, size, element)
    value = concat(pieces)
    if mask != list(range(count)) or len(pieces) * access.vector != count:
        value = vector.shuffle(value, value, mask)
    return value


def scratch_word_element(element: ir.Type) -> ir.Type:
    """The element of a conversion's pooled scratch: i32 words for 32- and 64-bit elements (one
    pool for f32, i32 and pointer offsets, as Triton's one scratch), else the element itself."""
    return ir.IntegerType.get_signless(32) if element_bits(element) in (32, 64) else element


def to_words(value: ir.Value) -> ir.Value:
    """vector<R x 32- or 64-bit> -> vector<R or 2R x i32> (an `index` vector through i64)."""
    vector_type = ir.VectorType(value.type)
    count, element = vector_type.shape[0], vector_type.element_type
    if isinstance(element, ir.IndexType):
        value = arith.index_cast(ir.VectorType.get([count], ir.IntegerType.get_signless(64)), value)
    words = count * element_bits(element) // 32
    return vector.bitcast(ir.VectorType.get([words], ir.IntegerType.get_signless(32)), value)


def from_words(words: ir.Value, target: ir.VectorType) -> ir.Value:
    element = target.element_type
    wide = ir.IntegerType.get_signless(64) if isinstance(element, ir.IndexType) else element
    value = vector.bitcast(ir.VectorType.get(target.shape, wide), words)
    return arith.index_cast(target, value) if isinstance(element, ir.IndexType) else value


def warp_synchronous(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether a conversion from `src` to `dst` through shared memory exchanges data only inside
    each warp, so that a warp barrier (`bar.warp.sync`) orders its store and load: Triton's
    `isCvtWarpSync`, `dst.invert_and_compose(src)` is the identity on the warps and neither
    layout repeats data over warps. Always true with one warp.

    >>> from linear_layout.core.layout import LinearLayout
    >>> rows = LinearLayout.from_bases([("register", []), ("lane", [[1], [2]]), ("warp", [[4]])], ["dim0"])
    >>> cols = LinearLayout.from_bases([("register", []), ("lane", [[2], [1]]), ("warp", [[4]])], ["dim0"])
    >>> warp_swap = LinearLayout.from_bases([("register", []), ("lane", [[1], [4]]), ("warp", [[2]])], ["dim0"])
    >>> warp_synchronous(rows, cols), warp_synchronous(rows, warp_swap)
    (True, False)
    """
    if not src.has_in_dim("warp"):
        return True
    composed = dst.invert_and_compose(src)
    free_src, free_dst = src.get_free_variable_masks(), dst.get_free_variable_masks()
    return composed.is_trivial_over(["warp"]) and not free_src.get("warp", 0) and not free_dst.get("warp", 0)


def exchange_barrier(warp_only: bool) -> None:
    """The barrier between a conversion's shared stores and loads (and between its repetitions):
    `nvvm.bar.warp.sync -1` when the exchange stays inside each warp (`warp_synchronous`), as
    Triton's `targetInfo.warpSync`, else `gpu.barrier`."""
    if warp_only:
        nvvm.SyncWarpOp(arith.constant(ir.IntegerType.get_signless(32), -1))
    else:
        gpu.barrier()


# ---------------------------------------------------------------------------- packed exchange


def _swap(builder: KernelBuilder, value: ir.Value, step, element: ir.Type) -> ir.Value:
    """One 2x2 register transpose with the partner lane (``planning/packed.py``): with
    ``t`` = lane bit ``step.lane``, ``lo``/``hi`` the registers whose bit ``step.register`` is
    0/1 (packed into i32 words): ``send = t ? lo : hi``, ``recv`` = the partner's ``send``
    (`gpu.shuffle xor`), ``lo' = t ? recv : lo``, ``hi' = t ? hi : recv``."""
    count = ir.VectorType(value.type).shape[0]
    lows = [r for r in range(count) if not r >> step.register & 1]
    highs = [r | 1 << step.register for r in lows]
    bits = len(lows) * element_bits(element)
    word = ir.IntegerType.get_signless(min(bits, 32))  # fewer than 32 bits move zero-extended
    words = ir.VectorType.get([max(1, bits // 32)], word)
    low = vector.bitcast(words, gather(value, lows, element))
    high = vector.bitcast(words, gather(value, highs, element))
    zero, width = builder.const_i32(0), builder.const_i32(builder.launch.threads_per_warp)
    upper = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(builder.lane, builder.const_i32(1 << step.lane)), zero)
    send = arith.select(upper, low, high)
    offset = builder.const_i32(1 << step.lane)
    received = [_shuffle_xor(vector.extract(send, [], [k]), offset, width) for k in range(words.shape[0])]
    received_words = vector.from_elements(words, received)
    halves = ir.VectorType.get([len(lows)], element)
    new_low = vector.bitcast(halves, arith.select(upper, received_words, low))
    new_high = vector.bitcast(halves, arith.select(upper, high, received_words))
    position = {r: k for k, r in enumerate(lows + highs)}
    return gather(concat_units([new_low, new_high]), [position[r] for r in range(count)], element)


def _shuffle_xor(value: ir.Value, offset: ir.Value, width: ir.Value) -> ir.Value:
    """`gpu.shuffle xor` of an integer of at most 32 bits (zero-extended to i32 and back)."""
    narrow = value.type
    if ir.IntegerType(narrow).width == 32:
        return gpu.ShuffleOp(value, offset, width, gpu.ShuffleMode.XOR).results[0]
    wide = arith.extui(ir.IntegerType.get_signless(32), value)
    return arith.trunci(narrow, gpu.ShuffleOp(wide, offset, width, gpu.ShuffleMode.XOR).results[0])


def emit_swaps(builder: KernelBuilder, value: ir.Value, steps) -> ir.Value:
    """The register transposes ``steps`` (``planning.packed.Swap``) applied in order to
    ``value``, the thread's register vector."""
    element = ir.VectorType(value.type).element_type
    for step in steps:
        value = _swap(builder, value, step, element)
    return value
