"""The emitter of a `MatrixPlan` (planning/matrix.py): `nvvm.stmatrix` / `nvvm.ldmatrix` on one
side of a shared-memory conversion, vector `vector.store` / `vector.load` on the other.

Per CTA, as `emit_shared` does for ordinary plans::

    row = base + matrix.address(lane, warp)                 # the row this lane supplies
    for rep in range(num_reps):
        if rep: barrier
        stores of rep (stmatrix words, or vector stores), under the store predicate when the
            storing side's warps repeat data (only warps outside its mask store)
        barrier
        loads of rep (vector loads, or ldmatrix words)
    the destination vector from the loaded pieces (one vector.shuffle)

Each barrier is `nvvm.bar.warp.sync` when the exchange stays inside each warp
(`shared_memory.warp_synchronous`, Triton's `isCvtWarpSync`), else `gpu.barrier`.

The row pointer is the upstream recipe (DESIGN.md): `memref.extract_aligned_pointer_as_index`
of the workgroup buffer, `arith.index_cast` to i64, `llvm.inttoptr` to `!llvm.ptr<3>`, then
`llvm.getelementptr` by the element offset (i64). An instruction offset that shares no bit with
the lane's row offsets is a constant `getelementptr` from the lane's row pointer (an immediate in
PTX); any other is an `xori` of the row offset. A 32-bit word is the registers `words[i]` packed
low half first (`vector.bitcast` of a `vector<2 x T>`, or `vector<4 x i8>`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, memref, nvvm, scf, vector

from ..dialects.ttg import ConvertLayoutOp
from ..planning.matrix import MatrixInstruction, MatrixPlan, MatrixSide
from .common import cast_to
from .kernel import KernelBuilder, Launch, LoweringError
from .shared_memory import (
    ViewAddress,
    assemble,
    buffer_index,
    emit_loads,
    emit_stores,
    exchange_barrier,
    from_words,
    reachable_bits,
    scratch_word_element,
    to_words,
    view_base,
    workgroup_argument,
)
from .vectors import element_bits, gather

__all__ = ["MatrixRows", "assemble_matrix", "emit_matrix", "load_matrix"]

SHARED_POINTER = "!llvm.ptr<3>"
_DYNAMIC = -(2**31)  # llvm.getelementptr: the index is an operand


@dataclass(frozen=True)
class _Word:
    registers: tuple[int, ...]


@dataclass(frozen=True)
class _Words:
    """The loaded words as an access `assemble` understands (pieces in instruction order)."""

    vector: int
    instructions: tuple[_Word, ...]
    copies: tuple[tuple[int, int], ...] = ()


class MatrixRows:
    """The row pointers of one ``ldmatrix``/``stmatrix`` side (`planning.matrix.MatrixSide`) in
    the workgroup ``buffer``: ``row`` = the buffer's base + ``side.address(lane, warp)`` elements
    of ``element``, and :meth:`pointer` the row of one instruction (``row ^ instruction.offset``);
    ``attributes`` are the instructions' (``.trans`` as the side says, 8x8 b16 matrices).

    Used by the conversions' matrix emitter (`emit_matrix`) and by the dot operands' ldmatrix
    (`patterns.dot`)."""

    def __init__(
        self, builder: KernelBuilder, buffer: ir.Value | ViewAddress, side: MatrixSide, element: ir.Type
    ) -> None:
        where = buffer if isinstance(buffer, ViewAddress) else ViewAddress(buffer, None, 0)  # a view: start, XOR
        self.builder = builder
        self.element = element
        self.pointer_type = ir.Type.parse(SHARED_POINTER)
        i64 = ir.IntegerType.get_signless(64)
        start = memref.extract_aligned_pointer_as_index(where.buffer)
        self.base = llvm.inttoptr(self.pointer_type, arith.index_cast(i64, start))
        self.thread_bits = reachable_bits(side.address)
        base, self.xor = view_base(builder, builder.thread_offsets(side.address), self.thread_bits, where)
        self.offset = base[0]
        self.row = self._gep(self.base, arith.extui(i64, self.offset))
        self.attributes = dict(
            layout=ir.Attribute.parse(f"#nvvm.mma_layout<{'col' if side.trans else 'row'}>"),
            shape=ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
            elt_type=ir.Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>"),
        )

    def _gep(self, base: ir.Value, index: ir.Value | int) -> ir.Value:
        dynamic, raw = ([index], [_DYNAMIC]) if isinstance(index, ir.Value) else ([], [index])
        return llvm.getelementptr(self.pointer_type, base, dynamic, raw, self.element, llvm.GEPNoWrapFlags.none)

    def pointer(self, ins: MatrixInstruction) -> ir.Value:
        """The row this lane addresses for ``ins``: a constant step from ``row`` when the offset
        (XORed with a view's origin) shares no bit with the lanes' row offsets (an immediate in
        PTX), else an ``xori``."""
        offset = ins.offset ^ self.xor
        if not offset:
            return self.row
        if not offset & self.thread_bits:
            return self._gep(self.row, offset)
        moved = arith.xori(self.offset, self.builder.const_i32(offset))
        return self._gep(self.base, arith.extui(ir.IntegerType.get_signless(64), moved))


def _pack(value: ir.Value, registers: tuple[int, ...], element: ir.Type) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    piece = gather(value, list(registers), element)
    return vector.extract(vector.bitcast(ir.VectorType.get([1], i32), piece), [], [0])


def _unpack(word: ir.Value, count: int, element: ir.Type) -> ir.Value:
    """The `count` elements of a word: a `vector<count x T>`, or the element itself when the
    word is one 32-bit element (as `assemble` takes single elements)."""
    i32 = ir.IntegerType.get_signless(32)
    if count == 1:
        return word if element == i32 else arith.bitcast(element, word)
    one = vector.from_elements(ir.VectorType.get([1], i32), [word])
    return vector.bitcast(ir.VectorType.get([count], element), one)


def _stmatrix(rows: MatrixRows, value: ir.Value, ins: MatrixInstruction) -> None:
    words = [_pack(value, registers, rows.element) for registers in ins.words]
    nvvm.stmatrix(rows.pointer(ins), words, **rows.attributes)


def _stmatrices(builder: KernelBuilder, rows: MatrixRows, value: ir.Value, side: MatrixSide, rep: int) -> None:
    """The `stmatrix` of repetition `rep`, under the side's store predicate (`scf.if`) when warps
    repeat data: then only the warps outside its mask store."""
    cond = builder.store_predicate(side.predicate)
    if_op = scf.IfOp(cond) if cond is not None else None
    with ir.InsertionPoint(if_op.then_block) if if_op is not None else contextlib.nullcontext():
        for ins in (i for i in side.instructions if i.rep == rep):
            _stmatrix(rows, value, ins)
        if if_op is not None:
            scf.YieldOp([])


def load_matrix(rows: MatrixRows, ins: MatrixInstruction) -> list[ir.Value]:
    """One ``nvvm.ldmatrix`` (``.x{len(ins.words)}``) at ``rows.pointer(ins)``: the pieces of its
    words, each word unpacked into its registers' elements (`assemble_matrix` places them)."""
    i32 = ir.IntegerType.get_signless(32)
    num = len(ins.words)
    result = i32 if num == 1 else ir.Type.parse(f"!llvm.struct<({', '.join(['i32'] * num)})>")
    loaded = nvvm.ldmatrix(result, rows.pointer(ins), num, **rows.attributes)
    words = [loaded] if num == 1 else [llvm.extractvalue(i32, loaded, [i]) for i in range(num)]
    return [_unpack(word, len(registers), rows.element) for word, registers in zip(words, ins.words, strict=True)]


def emit_matrix(op: ConvertLayoutOp, launch: Launch, plan: MatrixPlan, warp_only: bool = False) -> ir.Value:
    """The conversion `op` through its workgroup buffer as `plan` says (see the module docstring)."""
    builder = KernelBuilder(op, launch)
    element = op.src.type.element_type
    index = buffer_index(op)
    if index is None:
        raise LoweringError("a matrix-instruction conversion needs its workgroup buffer: run allocate_shared_memory")
    buffer = workgroup_argument(op, index)
    value = cast_to(op.src, builder.vector_type(op.src.type))
    words = element_bits(element) == 32 and scratch_word_element(element) != element
    if words:  # 32-bit floats move as i32 words (the pooled i32 scratch)
        value, element = to_words(value), scratch_word_element(element)
    store, load = (plan.matrix, plan.other) if plan.matrix.kind == "store" else (plan.other, plan.matrix)
    rows = {
        id(side): MatrixRows(builder, buffer, side, element) for side in (store, load) if isinstance(side, MatrixSide)
    }
    bases = {
        id(side): builder.thread_offsets(side.thread_offset)
        for side in (store, load)
        if not isinstance(side, MatrixSide)
    }
    pieces: list[ir.Value] = []
    for rep in range(plan.num_reps):
        if rep:
            exchange_barrier(warp_only)  # the previous repetition's loads are done (WAR)
        if isinstance(store, MatrixSide):
            _stmatrices(builder, rows[id(store)], value, store, rep)
        else:
            emit_stores(
                builder, buffer, value, store, [i for i in store.instructions if i.rep == rep], bases[id(store)]
            )
        exchange_barrier(warp_only)
        if isinstance(load, MatrixSide):
            for ins in (i for i in load.instructions if i.rep == rep):
                pieces += load_matrix(rows[id(load)], ins)
        else:
            pieces += emit_loads(
                builder, buffer, element, load, [i for i in load.instructions if i.rep == rep], bases[id(load)]
            )
    result_type = builder.vector_type(op.result.type)
    assembled_type = ir.VectorType.get(result_type.shape, element)
    if not isinstance(load, MatrixSide):
        result = assemble(load, pieces, element, assembled_type)
    else:
        result = assemble_matrix(load, pieces, element, assembled_type)
    return from_words(result, result_type) if words else result


def assemble_matrix(side: MatrixSide, pieces: list[ir.Value], element: ir.Type, result_type: ir.Type) -> ir.Value:
    """The per-thread vector of ``result_type`` from the pieces of a loading side's ``ldmatrix``
    (`load_matrix`, in instruction order): each word's elements go to its registers, and the
    side's ``copies`` fill the registers that repeat another."""
    words = tuple(_Word(registers) for ins in side.instructions for registers in ins.words)
    return assemble(_Words(len(words[0].registers), words, side.copies), pieces, element, result_type)
