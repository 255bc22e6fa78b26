"""The SIMT interpreter's ``nvvm.cp.async.shared.global`` with ``commit.group`` / ``wait.group``:
a copy's bytes land only at the wait that retires its group (PTX ISA, ``cp.async.wait_group N``
waits for all but the N most recent committed groups); reading or writing them before is a
race, and landing is a write of the issuing warp (other warps need a barrier after the wait).

Each kernel copies rows of 8 f16 (16 bytes): thread ``t`` copies ``%in[8 t .. 8 t + 8)`` (or
the row ``%row`` given) to the same place of the workgroup buffer.
"""

from __future__ import annotations

import numpy as np
import pytest

from linear_layout.simt import interpreter as simt
from linear_layout.simt.errors import RaceError

SMEM = "#gpu.address_space<workgroup>"
ELEMENTS = 512  # 2 warps x 32 threads x 8 f16


def _kernel(body: str) -> str:
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%in: memref<{ELEMENTS}xf16>, %out: memref<{ELEMENTS}xf16>, %n: i32)
        workgroup(%smem: memref<{2 * ELEMENTS}xf16, {SMEM}>) kernel {{
      %tid = gpu.thread_id x
      %c8 = arith.constant 8 : index
      %first = arith.muli %tid, %c8 : index
      %first64 = arith.index_cast %first : index to i64
      %g = memref.extract_aligned_pointer_as_index %in : memref<{ELEMENTS}xf16> -> index
      %g64 = arith.index_cast %g : index to i64
      %gbase = llvm.inttoptr %g64 : i64 to !llvm.ptr<1>
      %src = llvm.getelementptr %gbase[%first64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
      %s = memref.extract_aligned_pointer_as_index %smem : memref<{2 * ELEMENTS}xf16, {SMEM}> -> index
      %s64 = arith.index_cast %s : index to i64
      %sbase = llvm.inttoptr %s64 : i64 to !llvm.ptr<3>
      %dst = llvm.getelementptr %sbase[%first64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %c511 = arith.constant {ELEMENTS - 1} : index
      %mirror = arith.subi %c511, %first : index
      %c7 = arith.constant 7 : index
      %last = arith.subi %mirror, %c7 : index
{body}
      gpu.return
    }}
  }}
}}"""


COPY = "      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>"
COMMIT = "      nvvm.cp.async.commit.group"
# Each thread reads the row at the mirrored place (another warp's) and stores it at its own.
READ_MIRROR = f"""      %row = vector.load %smem[%last] : memref<{2 * ELEMENTS}xf16, {SMEM}>, vector<8xf16>
      vector.store %row, %out[%first] : memref<{ELEMENTS}xf16>, vector<8xf16>"""
READ_OWN = f"""      %own = vector.load %smem[%first] : memref<{2 * ELEMENTS}xf16, {SMEM}>, vector<8xf16>
      vector.store %own, %out[%first] : memref<{ELEMENTS}xf16>, vector<8xf16>"""


def _wait(n: int) -> str:
    return f"      nvvm.cp.async.wait.group {n}"


def _run(body: str, n: int = 0):
    data = np.arange(ELEMENTS, dtype=np.float16)
    out = np.zeros(ELEMENTS, np.float16)
    report = simt.run_kernel(_kernel(body), [data, out, n], num_warps=2)
    return report, data, out


def test_copy_lands_at_wait_then_barrier_makes_it_visible():
    _, data, out = _run("\n".join([COPY, COMMIT, _wait(0), "      gpu.barrier", READ_MIRROR]))
    mirrored = data.reshape(-1, 8)[::-1].reshape(-1)  # row r of out is row 63 - r of in
    assert np.array_equal(out, mirrored)


def test_reading_before_the_wait_is_a_race_even_for_the_own_bytes():
    with pytest.raises(RaceError, match="read-before-async-wait"):
        _run("\n".join([COPY, COMMIT, READ_OWN, _wait(0)]))


def test_landing_is_a_write_of_the_issuing_warp():
    # Waited for but no barrier: warp 0 reads what warp 1's copy delivered in the same interval.
    with pytest.raises(RaceError, match="read-after-write"):
        _run("\n".join([COPY, COMMIT, _wait(0), READ_MIRROR]))


# A second group copies the same rows to the upper half of the buffer (element 512 + 8 t on).
SECOND_GROUP = f"""      %c512 = arith.constant {ELEMENTS} : i64
      %dst2 = llvm.getelementptr %dst[%c512] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.cp.async.shared.global %dst2, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      nvvm.cp.async.commit.group"""
READ_SECOND = f"""      %up = arith.addi %first, %c512i : index
      %second = vector.load %smem[%up] : memref<{2 * ELEMENTS}xf16, {SMEM}>, vector<8xf16>
      vector.store %second, %out[%first] : memref<{ELEMENTS}xf16>, vector<8xf16>"""
UPPER = f"      %c512i = arith.constant {ELEMENTS} : index"


def test_wait_group_keeps_the_most_recent_groups_in_flight():
    # wait(1) after two groups lands the first only: its rows are readable by their own warp ...
    _, data, out = _run("\n".join([UPPER, COPY, COMMIT, SECOND_GROUP, _wait(1), READ_OWN, _wait(0)]))
    assert np.array_equal(out, data)
    # ... and the second group's rows are still in flight.
    with pytest.raises(RaceError, match="read-before-async-wait"):
        _run("\n".join([UPPER, COPY, COMMIT, SECOND_GROUP, _wait(1), READ_SECOND]))
    _, data, out = _run("\n".join([UPPER, COPY, COMMIT, SECOND_GROUP, _wait(0), READ_SECOND]))
    assert np.array_equal(out, data)


def test_two_copies_in_flight_to_the_same_bytes_race():
    # PTX orders no two cp.async: the later one may land first, so landing the older one while the
    # newer one is in flight to the same bytes is a race.
    again = "\n".join([COPY, COMMIT])
    with pytest.raises(RaceError, match="write-before-async-wait"):
        _run("\n".join([COPY, COMMIT, again, _wait(1)]))


@pytest.mark.parametrize("valid_bytes", [0, 6, 16])
def test_source_size_zero_fills_the_rest(valid_bytes):
    copy = "      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg, %n : !llvm.ptr<3>, !llvm.ptr<1>, i32"
    _, data, out = _run("\n".join([copy, COMMIT, _wait(0), "      gpu.barrier", READ_OWN]), valid_bytes)
    rows, kept = out.reshape(-1, 8), valid_bytes // 2
    assert np.array_equal(rows[:, :kept], data.reshape(-1, 8)[:, :kept])
    assert (rows[:, kept:] == 0).all()
