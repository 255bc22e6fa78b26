"""Shared memory in SIMT kernels: workgroup buffers and the emitters of planned accesses.

The kernel's shared memory is one workgroup attribution of the `gpu.func`, bytes
(`memref<N x i8, #gpu.address_space<workgroup>>`), and each shared buffer a typed `memref.view`
of it at a byte offset (`memref<M x T, #gpu.address_space<workgroup>>`), made at the top of the
kernel by `allocate_shared_memory` (`allocation.py`); buffers whose lifetimes do not overlap
share bytes, as Triton's. Which buffer an op uses is written on the op, as Triton's
`allocation.offset`: the `ll.workgroup_buffer` attribute holds the buffer's index, which its view
carries too (`workgroup_argument` finds the view). A lowered `ttg.local_alloc` is an
`unrealized_conversion_cast` of its buffer to the memdesc type.

**Views** (`ttg.memdesc_index`, `memdesc_subslice`, `memdesc_trans`, `memdesc_reshape`, and
memdescs carried through `scf.for` and yielded by `scf.if`): a memdesc is its allocation's buffer (static: found by
`memdesc_view`, through the views and the loops), a dynamic element `start` (an i32: the first
element of one buffer of a multi-buffered allocation, a multiple of the buffer's size, so it adds
to any offset inside it) and a static `xor`: a subslice at origin `o` of a buffer whose shared
layout is `S` reads its element `x` at `S^-1(o) ^ S^-1(x)` (Triton's `toLinearLayout` of a
subslice), so every address of the view is XORed with `S^-1(o)`. A lowered view is the cast of
its i32 start to the memdesc type, with `ll.memdesc = array<i64: buffer, xor>`; a lowered
`scf.for` carries a memdesc as its i32 start, with `ll.carried_memdescs` (buffer and xor per
iteration argument, -1 for the others) on the loop; a lowered `scf.if` yields it so, with
`ll.carried_memdescs` per result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, nvvm, scf, vector

from ..core.layout import LinearLayout
from ..ir.bridge import MemDesc, from_attribute, memdesc_of, memdesc_parameters, per_type
from ..ir.text import type_kind
from ..planning.shared import reachable_bits  # one definition, shared with the planner's index-op model
from .common import CAST, cast_to
from .kernel import KernelBuilder, LoweringError
from .vectors import concat, concat_units, element_bits, from_units, gather, to_units, unit

__all__ = [
    "CARRIED_MEMDESCS",
    "MEMDESC_VIEW",
    "WORKGROUP_BUFFER",
    "MemdescView",
    "SharedBuffer",
    "ViewAddress",
    "assemble",
    "buffer_elements",
    "buffer_ranges",
    "emit_loads",
    "emit_stores",
    "emit_swaps",
    "exchange_barrier",
    "from_words",
    "in_allocation",
    "is_memdesc",
    "memdesc_allocation",
    "memdesc_origin",
    "memdesc_start",
    "memdesc_view",
    "scratch_word_element",
    "shared_buffer_of",
    "shared_index",
    "to_words",
    "view_address",
    "view_base",
    "view_instructions",
    "warp_synchronous",
    "workgroup_argument",
    "workgroup_type",
]

#: The attribute naming an op's workgroup buffer (the index among the workgroup attributions).
WORKGROUP_BUFFER = "ll.workgroup_buffer"
#: On a lowered memdesc view (the cast of its i32 start): `array<i64: buffer, xor>`.
MEMDESC_VIEW = "ll.memdesc"
#: On a lowered `scf.for`: `array<i64: buffer, xor, ...>`, a pair per iteration argument (-1, 0
#: for one that is not a memdesc); on a lowered `scf.if`, a pair per result.
CARRIED_MEMDESCS = "ll.carried_memdescs"


def workgroup_type(elements: int, element: ir.Type) -> ir.MemRefType:
    return ir.MemRefType.get(
        [max(1, elements)], element, memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>")
    )


@dataclass(frozen=True)
class SharedBuffer:
    """A `!ttg.memdesc` type and its layout (input dimensions offset, block); `memdesc`: its
    parameters, read when asked (most users need only the layout)."""

    memdesc_type: ir.Type
    layout: LinearLayout

    @property
    def memdesc(self) -> MemDesc:
        return memdesc_of(self.memdesc_type)


def buffer_elements(memdesc_type: ir.Type) -> int:
    """Elements of `memdesc_type`: its leading dims (those its shared layout does not map) times
    the layout's offsets. Example: `!ttg.memdesc<2x32x32xf16, #shared>` (a 32 x 32 layout) has
    2048, and each of its two buffers (`ttg.memdesc_index`) 1024."""
    buffer = shared_buffer_of(memdesc_type)
    shape = memdesc_parameters(memdesc_type).shape
    leading = math.prod(shape[: len(shape) - len(buffer.layout.get_out_dim_names())])
    return leading * buffer.layout.get_in_dim_size("offset")


def _laid_out_shape(t: ir.Type) -> tuple[int, ...]:
    """The shape a memdesc's encoding lays out: its allocation's (a subslice view's is bigger
    than the view), without the leading buffer dims of a multi-buffered allocation (those the
    encoding's rank does not reach), as Triton's `toLinearLayout(MemDescType)`. Read once per
    type (`per_type`)."""
    return per_type(_read_laid_out_shape, t)


def _read_laid_out_shape(t: ir.Type) -> tuple[int, ...]:
    allocation = memdesc_parameters(t).allocation
    rank = getattr(from_attribute(memdesc_of(t).encoding), "rank", len(allocation))
    return allocation[len(allocation) - rank :] if isinstance(rank, int) and 0 < rank <= len(allocation) else allocation


def shared_buffer_of(t: ir.Type) -> SharedBuffer:
    """The memdesc type `t` as a buffer (LoweringError when its layout is not a linear shared
    layout of one CTA). The layout is computed once per type (`per_type`)."""
    return SharedBuffer(t, per_type(_buffer_layout, t))  # a type that is not a memdesc: LoweringError


def _buffer_layout(t: ir.Type) -> LinearLayout:
    """The shared layout of memdesc type `t` (`shared_buffer_of`)."""
    try:
        memdesc = memdesc_of(t)
        encoding = from_attribute(memdesc.encoding)
        shared = encoding if isinstance(encoding, LinearLayout) else encoding.to_linear_layout(list(_laid_out_shape(t)))
    except (TypeError, ValueError, AttributeError) as error:
        raise LoweringError(f"cannot lower {t}: {error}") from None
    if not shared.has_in_dim("offset") or any(n not in ("offset", "block") for n in shared.get_in_dim_names()):
        raise LoweringError(f"cannot lower {t}: {memdesc.encoding} is not a linear shared layout (offset, block)")
    if shared.has_in_dim("block") and shared.get_in_dim_size("block") > 1:
        raise LoweringError(f"cannot lower {t}: shared buffers spread over several CTAs are not supported")
    return shared


def _entry_block(op: ir.OpView) -> ir.Block:
    """The entry block of the `gpu.func` enclosing `op` (or `op` itself, a `gpu.func`)."""
    kernel = op.operation
    while kernel.name != "gpu.func":
        kernel = kernel.parent.operation
    return kernel.regions[0].blocks[0]


def _buffer_views(block: ir.Block):
    """The buffer views of a kernel's entry block: (index, the `memref.view` op), in order."""
    for op in block.operations:
        if op.operation.name == "memref.view" and WORKGROUP_BUFFER in op.operation.attributes:
            yield op.operation.attributes[WORKGROUP_BUFFER].value, op.operation


def workgroup_argument(op: ir.OpView, index: int) -> ir.Value:
    """Shared buffer `index` of the kernel enclosing `op`: its `memref.view` (LoweringError when
    the kernel has none of that index)."""
    for found, view in _buffer_views(_entry_block(op)):
        if found == index:
            return view.result
    raise LoweringError(f"the kernel has no shared buffer {index}: run allocate_shared_memory")


def buffer_ranges(kernel: ir.OpView) -> dict[int, range]:
    """The bytes each shared buffer of `kernel` (after `allocate_shared_memory`) occupies in its
    one workgroup allocation: buffer index -> range of byte offsets. Two buffers whose ranges
    overlap alias (their lifetimes do not overlap).

    Postcondition: every range starts at a multiple of 128 bytes."""
    ranges = {}
    for index, view in _buffer_views(_entry_block(kernel)):
        shift = view.operands[1].owner.opview.value.value
        t = ir.MemRefType(view.results[0].type)
        ranges[index] = range(shift, shift + math.prod(t.shape) * max(1, -(-element_bits(t.element_type) // 8)))
    return ranges


def buffer_index(op: ir.OpView) -> int | None:
    attributes = op.operation.attributes
    return attributes[WORKGROUP_BUFFER].value if WORKGROUP_BUFFER in attributes else None


# ---------------------------------------------------------------------------- views


def is_memdesc(t: ir.Type) -> bool:
    """Whether `t` is a `!ttg.memdesc` (or, linearized, a `!ttg.memdesc_view`)."""
    return type_kind(t) in ("ttg.memdesc", "ttg.memdesc_view")


@dataclass(frozen=True)
class MemdescView:
    """Where a memdesc value lives: workgroup buffer `buffer`, its addresses XORed with `xor`."""

    buffer: int
    xor: int


def _operation(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _workgroup_index(memref_value: ir.Value) -> int:
    """The index of a shared buffer (its `memref.view`, `workgroup_argument`)."""
    op = _operation(memref_value)
    if op is None or op.name != "memref.view" or WORKGROUP_BUFFER not in op.attributes:
        raise LoweringError("a shared buffer that is not a view of the kernel's workgroup memory")
    return op.attributes[WORKGROUP_BUFFER].value


def subslice_xor(op: ir.Operation) -> int:
    """`S^-1(origin)` of a `ttg.memdesc_subslice`: the XOR its view applies to every address
    (`S`: the shared layout of its source, over the allocation shape).

    Requires: the origin is a multiple of the view's shape in every dimension (LoweringError)."""
    origin = list(ir.DenseI32ArrayAttr(op.attributes["offsets"]))
    shape = memdesc_parameters(op.results[0].type).shape
    if any(o % n for o, n in zip(origin, shape)):
        raise LoweringError(f"a subslice at offsets {origin}, not a multiple of its shape {list(shape)}")
    return _origin_offset(shared_buffer_of(op.operands[0].type).layout, tuple(origin))


@functools.lru_cache(maxsize=4096)  # every view of a loop's buffers asks again, in its check and its rewrite
def _origin_offset(layout: LinearLayout, origin: tuple[int, ...]) -> int:
    """`S^-1(origin)` for the shared layout `S` (`subslice_xor`)."""
    inverse = layout.invert()
    return inverse.apply(dict(zip(inverse.get_in_dim_names(), origin)))["offset"]


def _carried(op: ir.Operation, position: int) -> MemdescView | None:
    """The view a lowered `scf.for` records for its iteration argument `position` (a lowered
    `scf.if`: for its result `position`)."""
    if CARRIED_MEMDESCS not in op.attributes:
        return None
    pairs = list(ir.DenseI64ArrayAttr(op.attributes[CARRIED_MEMDESCS]))
    return MemdescView(pairs[2 * position], pairs[2 * position + 1])


def _loop_source(op: ir.Operation, position: int) -> tuple[MemdescView | None, ir.Value]:
    """(the recorded view, or None and the initial value) of iteration argument `position`."""
    recorded = _carried(op, position)
    return recorded, op.operands[3 + position]


def _step(value: ir.Value) -> tuple[MemdescView | None, ir.Value | None, int]:
    """One step of `memdesc_view`: (the view when found, else the value to follow, the XOR the
    step adds)."""
    if isinstance(value, ir.BlockArgument):
        parent = value.owner.owner
        if parent.name != "scf.for" or value.arg_number == 0:  # a function argument, a while loop's
            raise LoweringError("the shared buffer does not come from a ttg.local_alloc of this function")
        return (*_loop_source(parent, value.arg_number - 1), 0)
    op = _operation(value)
    if op is None:
        raise LoweringError("the shared buffer does not come from a ttg.local_alloc of this function")
    name = op.name
    if name == "ttg.local_alloc":
        index = buffer_index(op.opview)
        return MemdescView(-1 if index is None else index, 0), None, 0
    if name == CAST:
        if MEMDESC_VIEW in op.attributes:
            buffer, xor = ir.DenseI64ArrayAttr(op.attributes[MEMDESC_VIEW])
            return MemdescView(buffer, xor), None, 0
        source = op.operands[0]
        if isinstance(source.type, ir.MemRefType):
            return MemdescView(_workgroup_index(source), 0), None, 0
        return None, source, 0
    if name == "scf.for":
        return (*_loop_source(op, value.result_number), 0)
    if name == "scf.if":  # recorded once lowered; before, the then branch's (both agree: `_check_if`)
        then_yield = list(op.regions[0].blocks[0].operations)[-1]
        return _carried(op, value.result_number), then_yield.operands[value.result_number], 0
    if name in ("ttg.memdesc_index", "ttg.memdesc_trans", "ttg.memdesc_reshape"):
        return None, op.operands[0], 0
    if name == "ttg.memdesc_subslice":
        return None, op.operands[0], subslice_xor(op)
    raise LoweringError("the shared buffer does not come from a ttg.local_alloc of this function")


def memdesc_view(value: ir.Value) -> MemdescView:
    """The workgroup buffer (-1 before `allocate_shared_memory`) and the static XOR of memdesc
    `value`, followed through the views, the loops and the casts of the lowering (see the module
    docstring); LoweringError when it does not come from a `ttg.local_alloc` of the kernel.

    Postcondition: every memdesc a loop carries keeps its buffer (Triton's pipeliner indexes one
    allocation per loop argument)."""
    return memdesc_origin(value)[0]


def memdesc_origin(value: ir.Value) -> tuple[MemdescView, ir.Value]:
    """(`memdesc_view(value)`, the value the buffer was found at: the `ttg.local_alloc`'s
    result, a lowered view or the cast of a workgroup buffer), which tells two allocations apart
    before `allocate_shared_memory` numbers them (both are buffer -1 then)."""
    xor = 0
    for _ in range(10_000):
        found, value_next, step = _step(value)
        xor ^= step
        if found is not None:
            return MemdescView(found.buffer, found.xor ^ xor), value
        value = value_next
    raise LoweringError("a shared buffer whose views form a cycle")


def memdesc_allocation(value: ir.Value) -> ir.Operation | None:
    """The `ttg.local_alloc` that made memdesc `value` (followed through the views and the loops,
    as `memdesc_view`); None when it is already lowered or comes from no allocation of the
    kernel."""
    for _ in range(10_000):
        op = _operation(value)
        if op is not None and op.name == "ttg.local_alloc":
            return op
        try:
            found, value, _ = _step(value)
        except LoweringError:
            return None
        if found is not None:
            return None
    return None


def memdesc_start(value: ir.Value) -> ir.Value | None:
    """The i32 start of memdesc `value` (None: 0), the value a lowered view casts from, or a
    cast to i32 that resolves once its producer is lowered."""
    op = _operation(value)
    if op is not None and op.name == "ttg.local_alloc":
        return None
    if op is not None and op.name == CAST and len(op.operands) == 1:
        source = op.operands[0]
        if isinstance(source.type, ir.MemRefType):
            return None
        if source.type == ir.IntegerType.get_signless(32):
            return source
    return cast_to(value, ir.IntegerType.get_signless(32))


def lowered_view(start: ir.Value, view: MemdescView, memdesc_type: ir.Type) -> ir.Value:
    """A lowered view: the cast of its i32 `start` to `memdesc_type`, marked with its buffer
    and XOR (`ll.memdesc`)."""
    cast = ir.Operation.create(CAST, results=[memdesc_type], operands=[start])
    cast.attributes[MEMDESC_VIEW] = ir.DenseI64ArrayAttr.get([view.buffer, view.xor])
    return cast.result


@dataclass(frozen=True)
class ViewAddress:
    """What an access of a memdesc needs: the workgroup `buffer`, the dynamic `start` (None: 0)
    and the static `xor`."""

    buffer: ir.Value
    start: ir.Value | None
    xor: int


def view_address(where: ir.Value | ir.OpView, memdesc_value: ir.Value) -> ViewAddress:
    """The `ViewAddress` of memdesc `memdesc_value`, in the kernel of `where` (an op or a value).
    Note: a start that is not lowered yet is a new cast at the insertion point."""
    view = memdesc_view(memdesc_value)
    if view.buffer < 0:
        raise LoweringError("a ttg.local_alloc needs its workgroup buffer: run allocate_shared_memory")
    if isinstance(where, ir.Value):
        where = _operation(where) or where.owner.owner
    return ViewAddress(workgroup_argument(where, view.buffer), memdesc_start(memdesc_value), view.xor)


def view_base(
    builder: KernelBuilder, base: tuple[ir.Value, ir.Value], thread_bits: int, where: ViewAddress
) -> tuple[tuple[ir.Value, ir.Value], int]:
    """The thread base of an access through view `where`, and the XOR left for the instruction
    offsets: the part of the view's XOR on bits the threads set goes into the base (one `xori`),
    the rest into each instruction's offset (so an additive offset stays additive); the start
    is added last (its bits lie above the buffer's).

    Formula: base' = (base ^ (xor & thread_bits)) + start; offset' = offset ^ (xor & ~thread_bits)."""
    in_base = where.xor & thread_bits
    value = base[0]
    if in_base:
        value = arith.xori(value, builder.const_i32(in_base))
    if where.start is not None:
        value = arith.addi(value, where.start)
    if value is base[0]:
        return base, where.xor
    return (value, arith.index_castui(ir.IndexType.get(), value)), where.xor & ~thread_bits


def in_allocation(layout: LinearLayout, memdesc_type: ir.Type) -> LinearLayout:
    """`layout` (over the memdesc's shape) over the shape its shared layout maps onto (a
    `ttg.memdesc_subslice` view is smaller than its allocation; the view's origin is the XOR of
    its `ViewAddress`)."""
    return _resized(layout, _laid_out_shape(memdesc_type))


@functools.lru_cache(maxsize=4096)  # layouts are immutable
def _resized(layout: LinearLayout, shape: tuple[int, ...]) -> LinearLayout:
    """`layout` with its output dims resized to `shape`, in order."""
    for name, size in zip(layout.get_out_dim_names(), shape):
        layout = layout.resize_out_dim(name, size)
    return layout


def view_instructions(builder: KernelBuilder, access, where: ViewAddress):
    """(thread base, instructions) of the planned `access` through view `where` (`view_base`:
    the view's XOR split between the base and the instruction offsets, its start added)."""
    base, xor = view_base(
        builder, builder.thread_offsets(access.thread_offset), reachable_bits(access.thread_offset), where
    )
    instructions = [dataclasses.replace(ins, offset=ins.offset ^ xor) for ins in access.instructions]
    return base, instructions


# ---------------------------------------------------------------------------- emitters


def shared_index(builder: KernelBuilder, base: tuple[ir.Value, ir.Value], offset: int, thread_bits: int) -> ir.Value:
    """`base ^ offset` as an index, for a thread base whose bits lie in `thread_bits` (its view's
    start, added above the buffer's bits, aside): the part of the offset on the threads' bits is
    an `xori` of the base, the rest an `addi` of a constant (the access's immediate), as Triton's
    shared accesses (`lowerLdSt`): the offsets that differ only off the threads' bits share one
    base register (LLVM's CSE merges the equal `xori`s).

    Formula: base ^ offset = (base ^ (offset & thread_bits)) + (offset & ~thread_bits).
    Requires: base & ~thread_bits has no bit below the buffer's size.
    Example: thread bits 0b11000, offsets 72 and 104 (0b1001000, 0b1101000): one
    `xori base, 8`, then `+ 64` and `+ 96` (before: two `xori`s, 72 and 104)."""
    in_base, rest = offset & thread_bits, offset & ~thread_bits
    index = base[1]
    if in_base:
        index = arith.index_castui(ir.IndexType.get(), arith.xori(base[0], builder.const_i32(in_base)))
    return arith.addi(index, builder.const_index(rest)) if rest else index


def emit_stores(
    builder: KernelBuilder, buffer: ir.Value, value: ir.Value, access, instructions, base: tuple[ir.Value, ir.Value]
) -> None:
    """The planned stores of `value`'s registers, predicated (`scf.if`) when the plan says so."""
    cond = builder.store_predicate(access.predicate)
    if not instructions:
        return
    thread_bits = reachable_bits(access.thread_offset)
    if_op = scf.IfOp(cond) if cond is not None else None
    with ir.InsertionPoint(if_op.then_block) if if_op is not None else contextlib.nullcontext():
        for ins in instructions:
            index = shared_index(builder, base, ins.offset, thread_bits)
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
    thread_bits = reachable_bits(access.thread_offset)
    for ins in instructions:
        index = shared_index(builder, base, ins.offset, thread_bits)
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
