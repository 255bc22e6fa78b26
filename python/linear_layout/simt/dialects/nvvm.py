"""The `nvvm` matrix instructions `ldmatrix`/`stmatrix` (m8n8, b16); the module doc of `interpreter.py` states their semantics.

Ops: ldmatrix stmatrix (``m8n8`` ``b16``, ``num`` 1/2/4, row or col layout).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import mlir.ir as ir

from ...ir.upstream import matrix_attributes
from ..banks import bank_wavefronts, distinct_elements
from ..errors import MemoryAccessError, UnsupportedOp
from ..machine import handles, linear_block, location_of
from ..memory import Buffer
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
    providing = ex.lane_of_thread < 8 * form.num
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
    ex.require_all_active(op.name)
    addresses = _row_addresses(ex, pointer, form)
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
    ex.track_read(op, buf, offsets)
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
    providing = ex.lane_of_thread < 8 * form.num
    values = _b16_as_rows(buf, halves)
    saved = ex.active
    ex.active = providing
    try:
        ex.track_write(op, buf, offsets[providing], values[providing])
    finally:
        ex.active = saved
    buf.data[offsets[providing]] = values[providing]
    return []
