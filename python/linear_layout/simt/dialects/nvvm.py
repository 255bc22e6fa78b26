"""The `nvvm` matrix instructions `ldmatrix`/`stmatrix` (m8n8, b16) and `mma.sync`; the module doc of
`interpreter.py` states the semantics of the first two, `_mma_sync` that of the third.

Ops: ldmatrix stmatrix (``m8n8`` ``b16``, ``num`` 1/2/4, row or col layout) mma.sync (``row.col``:
m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 s8/u8; f32, f16 or s32 accumulators)
cp.async.shared.global cp.async.commit.group cp.async.wait.group (a copy lands at the wait that
retires its group; touching its bytes before is a race) bar.warp.sync (a warp barrier: every
lane of each warp, full mask; it orders nothing between warps, so the race tracking of the
barrier interval goes on).
"""

from __future__ import annotations

import dataclasses

import mlir.ir as ir
import numpy as np

from ...ir.upstream import matrix_attributes, mma_attributes
from ..banks import bank_wavefronts, distinct_elements
from ..elements import elem_of
from ..errors import MemoryAccessError, UnsupportedOp
from ..machine import AsyncCopy, handles, linear_block, location_of
from ..memory import Buffer, elements_at
from ..report import SharedAccess

MATRIX_ROW_BYTES = 16  # one row of an 8x8 b16 matrix (ldmatrix/stmatrix)


@dataclasses.dataclass(frozen=True)
class _MatrixForm:
    """One ``nvvm.ldmatrix``/``nvvm.stmatrix``: ``num`` 8x8 b16 matrices, transposed or not."""

    num: int
    trans: bool


def _matrix_form(op, num: int) -> _MatrixForm:
    attributes = matrix_attributes(op)
    if not attributes.m8n8_b16:
        raise UnsupportedOp(
            f"{op.name} with shape {attributes.shape} and eltType {attributes.element}: only m8n8 b16 is supported"
        )
    if num not in (1, 2, 4):
        raise UnsupportedOp(f"{op.name}: num must be 1, 2 or 4, got {num}")
    return _MatrixForm(num, attributes.column)


def _row_addresses(ex, pointers: np.ndarray, form: _MatrixForm) -> np.ndarray:
    """Per thread, the byte address of the row it reads or writes: lane ``8 i + r`` supplies row
    ``r`` of matrix ``i``; lanes from ``8 num`` on repeat the row of lane ``lane % (8 num)``."""
    providers = ex.warp_of_thread * ex.launch.threads_per_warp + ex.lane_of_thread % (8 * form.num)
    return pointers[providers].astype(np.int64)


def _shared_rows(ex, op, addresses: np.ndarray) -> tuple[Buffer, np.ndarray]:
    """The workgroup buffer holding every 16-byte row, and each thread's row as element offsets."""
    misaligned = addresses % MATRIX_ROW_BYTES != 0
    if misaligned.any():
        t = int(np.argmax(misaligned))
        raise MemoryAccessError(f"{op.name}: row address {int(addresses[t])} of thread {t} is not 16-byte aligned")
    first = int(addresses[0])
    found = [b for b in ex.shared if b.base_address <= first < b.base_address + len(b.data) * b.elem.mem_bytes]
    if not found:
        raise MemoryAccessError(f"{op.name}: row address {first} of thread 0 is in no workgroup buffer")
    buf = found[0]
    end = buf.base_address + len(buf.data) * buf.elem.mem_bytes
    outside = (addresses < buf.base_address) | (addresses + MATRIX_ROW_BYTES > end)
    if outside.any():
        t = int(np.argmax(outside))
        raise MemoryAccessError(
            f"{op.name}: row address {int(addresses[t])} of thread {t} is outside the "
            "workgroup buffer of thread 0's row (rows must lie in one workgroup buffer)"
        )
    if MATRIX_ROW_BYTES % buf.elem.mem_bytes:
        raise UnsupportedOp(f"{op.name} on a buffer of {buf.elem.name}: elements must divide a 16-byte row")
    per_row = MATRIX_ROW_BYTES // buf.elem.mem_bytes
    start = (addresses - buf.base_address) // buf.elem.mem_bytes
    return buf, start[:, None] + np.arange(per_row)


def _rows_as_b16(buf: Buffer, values: np.ndarray) -> np.ndarray:
    """(threads, elements of a row) in the buffer's type -> (threads, 8) uint16."""
    return np.ascontiguousarray(buf.elem.to_bits(values)).view(np.uint8).reshape(len(values), -1).view(np.uint16)


def _b16_as_rows(buf: Buffer, halves: np.ndarray) -> np.ndarray:
    """(threads, 8) uint16 -> (threads, elements of a row) in the buffer's type."""
    raw = np.ascontiguousarray(halves.astype(np.uint16)).view(np.uint8).view(buf.elem.bits_dtype)
    return buf.elem.from_bits(raw.reshape(len(halves), -1))


def _fragment_source(ex, form: _MatrixForm, matrix: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    """For each thread, (thread, column) of the row that holds half ``half`` of its fragment of
    matrix ``matrix``: row ``lane / 4``, column ``2 (lane % 4) + half`` of the fragment matrix;
    with ``.trans`` the fragment matrix is the stored one transposed (PTX ISA, ldmatrix)."""
    lane = ex.lane_of_thread
    row, col = lane // 4, 2 * (lane % 4) + half
    if form.trans:
        row, col = col, row
    return ex.warp_of_thread * ex.launch.threads_per_warp + 8 * matrix + row, col


def _account_matrix(
    ex, op, kind: str, buf: Buffer, addresses: np.ndarray, offsets: np.ndarray, form: _MatrixForm
) -> None:
    """Wavefronts per 8x8 matrix: its 8 row addresses (16 bytes each) are served as one phase."""
    providing = (ex.lane_of_thread < 8 * form.num) & ex.active
    warps, lanes = ex.warp_of_thread[providing], ex.lane_of_thread[providing]
    wave, ideal = bank_wavefronts(
        warps,
        lanes,
        addresses[providing][:, None],
        MATRIX_ROW_BYTES,
        ex.launch.num_warps,
        ex.launch.threads_per_warp,
        kind,
    )
    moved = distinct_elements(warps, offsets[providing], ex.launch.num_warps) * buf.elem.mem_bytes
    for w in np.unique(warps):
        ex.report.shared_accesses.append(
            SharedAccess(
                op=op.name,
                location=location_of(op),
                kind=kind,
                buffer=buf.name,
                block=linear_block(ex.block_id, ex.launch.grid),
                warp=int(w),
                bytes_per_thread=4 * form.num,
                instruction_bytes=MATRIX_ROW_BYTES,
                instructions=1,
                wavefronts=int(wave[w]),
                ideal_wavefronts=int(ideal[w]),
                bytes=int(moved[w]),
            )
        )


def _matrix_rows(ex, op, pointer, form: _MatrixForm) -> tuple[Buffer, np.ndarray, np.ndarray]:
    """The buffer and each thread's row (address, element offsets). Whole warps execute the
    instruction (a warp-uniform branch may skip it): the threads of skipped warps take the first
    executing thread's row, which they neither read nor write."""
    ex.require_warps_converged(op.name)
    addresses = _row_addresses(ex, pointer, form)
    addresses = np.where(ex.active, addresses, addresses[ex.active][0])
    buf, offsets = _shared_rows(ex, op, addresses)
    return buf, addresses, offsets


@handles("nvvm.ldmatrix")
def _ldmatrix(ex, op):
    (pointer,) = ex.operands(op)
    result_type = op.results[0].type
    num = 1 if isinstance(result_type, ir.IntegerType) else op.attributes["num"].value
    form = _matrix_form(op, num)
    buf, addresses, offsets = _matrix_rows(ex, op, pointer, form)
    _account_matrix(ex, op, "load", buf, addresses, offsets, form)
    ex.track_read(op, buf, offsets[ex.active])
    rows = _rows_as_b16(buf, buf.data[offsets])
    words = []
    for matrix in range(form.num):
        low = rows[_fragment_source(ex, form, matrix, 0)].astype(np.uint32)
        high = rows[_fragment_source(ex, form, matrix, 1)].astype(np.uint32)
        words.append(low | high << np.uint32(16))
    return [words[0] if form.num == 1 and isinstance(result_type, ir.IntegerType) else tuple(words)]


@handles("nvvm.stmatrix")
def _stmatrix(ex, op):
    pointer, *sources = ex.operands(op)
    form = _matrix_form(op, len(sources))
    buf, addresses, offsets = _matrix_rows(ex, op, pointer, form)
    _account_matrix(ex, op, "store", buf, addresses, offsets, form)
    halves = np.zeros((ex.num_threads, 8), dtype=np.uint16)
    for matrix, source in enumerate(sources):
        words = np.asarray(source).astype(np.uint32)
        for half in (0, 1):
            thread, col = _fragment_source(ex, form, matrix, half)
            halves[thread, col] = (words >> np.uint32(16 * half)) & np.uint32(0xFFFF)
    # Only the lanes that supply a row address write it (halves is indexed by the supplying thread).
    providing = (ex.lane_of_thread < 8 * form.num) & ex.active
    values = _b16_as_rows(buf, halves)
    saved = ex.active
    ex.active = providing
    try:
        ex.track_write(op, buf, offsets[providing], values[providing])
    finally:
        ex.active = saved
    buf.data[offsets[providing]] = values[providing]
    return []


# ---- mma.sync

#: (m, n, k, multiplicand PTX type) -> multiplicand elements per 32-bit register; the shapes
#: Triton's ``#ttg.nvidia_mma`` version 2 emits.
_MMA_SHAPES = {
    (16, 8, 16, "f16"): 2,
    (16, 8, 16, "bf16"): 2,
    (16, 8, 8, "tf32"): 1,
    (16, 8, 32, "s8"): 4,
    (16, 8, 32, "u8"): 4,
}
_TF32_DROPPED = np.uint32(0x1FFF)  # tf32 keeps 10 of f32's 23 mantissa bits: the mma ignores the low 13


@dataclasses.dataclass(frozen=True)
class _MmaForm:
    """One ``nvvm.mma.sync``: the shape, the multiplicand type, its elements per 32-bit register
    (``per_register``) and whether s32 results saturate (``satfinite``) instead of wrapping."""

    m: int
    n: int
    k: int
    ptx_type: str
    per_register: int
    satfinite: bool


def _mma_form(op) -> _MmaForm:
    attributes = mma_attributes(op)
    shape = (attributes.m, attributes.n, attributes.k, attributes.a_type)
    if attributes.a_type != attributes.b_type or shape not in _MMA_SHAPES:
        raise UnsupportedOp(
            f"nvvm.mma.sync m{attributes.m}n{attributes.n}k{attributes.k} with multiplicands "
            f"{attributes.a_type}/{attributes.b_type}: supported are m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 s8/u8"
        )
    if not (attributes.a_row and attributes.b_col):
        raise UnsupportedOp("nvvm.mma.sync: only layoutA = row, layoutB = col is supported")
    return _MmaForm(*shape, _MMA_SHAPES[shape], attributes.satfinite)


def _register_elements(value: np.ndarray, ptx_type: str) -> np.ndarray:
    """One multiplicand register per thread -> (threads, elements) exact float64 or int64 values,
    the element in the low bits first."""
    array = np.asarray(value)
    if array.ndim == 2:  # vector<2xf16>
        return array.astype(np.float64)
    words = array.astype(np.uint32)
    if ptx_type == "tf32":
        return (words & ~_TF32_DROPPED).view(np.float32).astype(np.float64)[:, None]
    if ptx_type in ("f16", "bf16"):
        halves = np.stack([words & np.uint32(0xFFFF), words >> np.uint32(16)], axis=1)
        if ptx_type == "f16":
            return halves.astype(np.uint16).view(np.float16).astype(np.float64)
        return (halves << np.uint32(16)).view(np.float32).astype(np.float64)
    shifts = np.uint32(8) * np.arange(4, dtype=np.uint32)
    octets = ((words[:, None] >> shifts) & np.uint32(0xFF)).astype(np.uint8)
    return (octets.view(np.int8) if ptx_type == "s8" else octets).astype(np.int64)


def _fragment_matrix(ex, registers: list, places, rows: int, cols: int, dtype) -> np.ndarray:
    """(warps, rows, cols): element ``j`` of register ``r`` of lane ``L`` put at ``places(L, r, j)``."""
    matrix = np.zeros((ex.launch.num_warps, rows, cols), dtype=dtype)
    lanes = ex.lane_of_thread
    for r, elements in enumerate(registers):
        for j in range(elements.shape[1]):
            row, col = places(lanes, r, j)
            matrix[ex.warp_of_thread, row, col] = elements[:, j]
    return matrix


def _a_place(per_register: int):
    """PTX ISA, mma.m16n8kK ``.row`` A fragment: register ``r`` of lane ``L`` (group ``g = L / 4``,
    ``t = L % 4``) holds row ``g + 8 (r % 2)``, columns ``e t + j + 4 e (r / 2)`` for its ``e``
    elements ``j``."""
    return lambda lanes, r, j: (lanes // 4 + 8 * (r % 2), per_register * (lanes % 4) + j + 4 * per_register * (r // 2))


def _b_place(per_register: int):
    """PTX ISA, ``.col`` B fragment: register ``r`` of lane ``L`` holds rows ``e t + j + 4 e r``
    of column ``g``."""
    return lambda lanes, r, j: (per_register * (lanes % 4) + j + 4 * per_register * r, lanes // 4)


def _c_place(lanes, i, j):
    """PTX ISA, C/D fragment: element ``i`` (0..3; f16 accumulators pack elements 0, 1 and 2, 3
    into their two registers) of lane ``L`` is row ``g + 8 (i / 2)``, column ``2 t + i % 2``
    (``j`` is always 0: one element per entry)."""
    return lanes // 4 + 8 * (i // 2), 2 * (lanes % 4) + i % 2 + j


def _accumulator_elements(values: list) -> tuple[list[np.ndarray], bool]:
    """The four C elements of each thread, each as a (threads, 1) array, and whether the
    registers are f16 pairs."""
    halves = np.asarray(values[0]).ndim == 2
    if halves:  # two vector<2xf16>: elements (0, 1) and (2, 3)
        elements = np.concatenate([np.asarray(v) for v in values], axis=1).astype(np.float64)
        return [elements[:, i : i + 1] for i in range(4)], True
    return [np.asarray(v)[:, None] for v in values], False


def _mma_result(ex, form: _MmaForm, product: np.ndarray, halves: bool, accumulator) -> tuple:
    """D per thread, rounded once to the accumulator type, as the struct of its registers."""
    lanes, warps = ex.lane_of_thread, ex.warp_of_thread
    elements = []
    for i in range(4):
        row, col = _c_place(lanes, i, 0)
        elements.append(product[warps, row, col])
    if halves:
        return tuple(np.stack(elements[2 * r : 2 * r + 2], axis=1).astype(np.float16) for r in range(2))
    if accumulator.is_float:
        return tuple(e.astype(np.float32) for e in elements)
    if form.satfinite:
        elements = [np.clip(e, -(2**31), 2**31 - 1) for e in elements]
    return tuple(accumulator.wrap(e.astype(np.int64).view(np.uint64)) for e in elements)


@handles("nvvm.mma.sync")
def _mma_sync(ex, op):
    """``D = A B + C`` for each warp, with A (m x k, ``.row``), B (k x n, ``.col``) and C/D (m x n)
    gathered from the lanes' registers by the PTX ISA fragment tables (`_a_place`, `_b_place`,
    `_c_place`). Floating-point products and sums are exact (float64) and D is rounded once to
    the accumulator type; s32 sums wrap, or saturate with ``satfinite``; tf32 operands drop their
    low 13 mantissa bits.

    Requires: every thread of the block active (mma.sync is a warp-wide ``.aligned`` instruction).
    """
    ex.require_all_active(op.name)
    form = _mma_form(op)
    sizes = list(op.attributes["operandSegmentSizes"])
    values = ex.operands(op)
    a_values, b_values, c_values = (
        values[: sizes[0]],
        values[sizes[0] : sizes[0] + sizes[1]],
        values[sizes[0] + sizes[1] :],
    )
    integer = form.ptx_type in ("s8", "u8")
    dtype = np.int64 if integer else np.float64
    a = _fragment_matrix(
        ex, [_register_elements(v, form.ptx_type) for v in a_values], _a_place(form.per_register), form.m, form.k, dtype
    )
    b = _fragment_matrix(
        ex, [_register_elements(v, form.ptx_type) for v in b_values], _b_place(form.per_register), form.k, form.n, dtype
    )
    c_elements, halves = _accumulator_elements(c_values)
    accumulator = elem_of(op.operands[-1].type)
    if integer:
        c_elements = [accumulator.signed(e) for e in c_elements]
    c = _fragment_matrix(ex, c_elements, _c_place, form.m, form.n, dtype)
    return [_mma_result(ex, form, np.matmul(a, b) + c, halves, accumulator)]


# ---- cp.async


@handles("nvvm.cp.async.shared.global")
def _cp_async(ex, op):
    """Each active thread copies ``size`` bytes from global ``src`` to shared ``dst``; with a
    ``cpSize`` operand only its first ``cpSize`` bytes are read and the rest are zeros (PTX's
    ``src-size``, Triton's masked ``other = 0``). The global bytes are read now; the shared
    bytes land only when a ``cp.async.wait.group`` retires the copy's group: until then any
    access to them is a race (``*-before-async-wait``), and landing counts as a write by the
    issuing warps in the interval of the wait."""
    dst, src, *source_size = ex.operands(op)
    size = ir.IntegerAttr(op.attributes["size"]).value
    threads = ex.active.copy()
    dst_buf, dst_start = elements_at(ex, op, ex.shared, dst[threads].astype(np.int64), size, "workgroup")
    valid_bytes = np.full(int(threads.sum()), size, dtype=np.int64)
    if source_size:
        valid_bytes = np.minimum(np.asarray(source_size[0]).astype(np.int64)[threads], size)
    copied = np.zeros((len(valid_bytes), size), dtype=np.uint8)
    reading = valid_bytes > 0
    if reading.any():
        src_buf, src_start = elements_at(
            ex, op, ex.global_buffers, src[threads].astype(np.int64)[reading], int(valid_bytes[reading].max()), "global"
        )
        count = -(-size // src_buf.elem.mem_bytes)
        source = src_buf.data[np.minimum(src_start[:, None] + np.arange(count), len(src_buf.data) - 1)]
        source_bytes = np.ascontiguousarray(src_buf.elem.to_bits(source)).view(np.uint8)[:, :size]
        valid = np.arange(size) < valid_bytes[reading][:, None]
        copied[reading] = np.where(valid, source_bytes, 0)
    # the bytes as the destination's elements (a typed view or the workgroup bytes themselves)
    values = dst_buf.elem.from_bits(copied.view(dst_buf.elem.bits_dtype))
    copy = AsyncCopy(op, dst_buf, dst_start[:, None] + np.arange(values.shape[1]), values, threads)
    _mark_in_flight(ex, copy)
    ex.async_copies.open.append(copy)
    return []


def _mark_in_flight(ex, copy: AsyncCopy) -> None:
    warp_bits = np.left_shift(np.uint64(1), ex.warp_of_thread[copy.threads].astype(np.uint64))
    places = copy.buf.byte_places(copy.offsets)
    if not len(warp_bits):
        return
    np.bitwise_or.at(copy.buf.race_tracking().in_flight, places, np.repeat(warp_bits, len(places) // len(warp_bits)))


@handles("nvvm.cp.async.commit.group")
def _cp_async_commit(ex, op):
    """Close the open group (the copies since the last commit; possibly none)."""
    ex.require_all_active(op.name)
    ex.async_copies.groups.append(ex.async_copies.open)
    ex.async_copies.open = []
    return []


@handles("nvvm.cp.async.wait.group")
def _cp_async_wait(ex, op):
    """Land every committed group except the ``n`` most recent, oldest first."""
    ex.require_all_active(op.name)
    keep = ir.IntegerAttr(op.attributes["n"]).value
    groups = ex.async_copies.groups
    landing, ex.async_copies.groups = (groups[:-keep], groups[-keep:]) if keep else (groups, [])
    landed = [c for group in landing for c in group]
    for copy in landed:
        copy.buf.race_tracking().in_flight[copy.buf.byte_places(copy.offsets)] = 0
    for copy in [c for group in ex.async_copies.groups for c in group] + ex.async_copies.open:
        _mark_in_flight(ex, copy)  # a later copy to the same bytes is still in flight
    for copy in landed:
        saved = ex.active
        ex.active = copy.threads
        try:
            ex.track_write(copy.op, copy.buf, copy.offsets, copy.values)
        finally:
            ex.active = saved
        copy.buf.data[copy.offsets] = copy.values
    return []


@handles("nvvm.bar.warp.sync")
def _bar_warp_sync(ex, op):
    """``bar.warp.sync -1``: each warp waits for its own 32 lanes. The interpreter runs a warp's
    lanes in lockstep, so the only check is the full mask and converged warps; the accesses of
    other warps in the interval stay tracked (a cross-warp race is still found). Counted in
    ``report.barriers`` and ``report.warp_barriers``."""
    ex.require_warps_converged(op.name)
    (mask,) = ex.operands(op)
    if ex.uniform(mask, "the mask of nvvm.bar.warp.sync") & 0xFFFFFFFF != 0xFFFFFFFF:
        raise UnsupportedOp("nvvm.bar.warp.sync with a mask other than -1 (every lane)")
    ex.report.barriers += 1
    ex.report.warp_barriers += 1
    return []
