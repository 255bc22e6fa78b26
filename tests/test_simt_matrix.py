"""The SIMT interpreter's ``nvvm.ldmatrix`` / ``nvvm.stmatrix`` and LLVM pointer ops.

Expected values are derived by hand from the PTX ISA's fragment figures for
``ldmatrix``/``stmatrix`` ``.m8n8 .b16``:

* lane ``8 i + r`` supplies the address of row ``r`` (16 bytes, 8 b16 elements) of matrix ``i``;
* the 32-bit register ``i`` of lane ``L`` holds row ``L / 4``, columns ``2 (L % 4)`` (low half)
  and ``2 (L % 4) + 1`` (high half) of matrix ``i``;
* with ``.trans`` (MLIR ``layout = #nvvm.mma_layout<col>``) the fragment is of the transposed
  matrix: lane ``L`` holds rows ``2 (L % 4)`` and ``2 (L % 4) + 1`` of column ``L / 4``.

A stored 8x8 matrix below holds ``8 r + c`` at row ``r``, column ``c`` (f16, exact), so a value
names its position.
"""

from __future__ import annotations

import numpy as np
import pytest

from linear_layout.simt import interpreter as simt

SMEM = "#gpu.address_space<workgroup>"
SHAPE = "#nvvm.ld_st_matrix_shape<m = 8, n = 8>"
B16 = "#nvvm.ld_st_matrix_elt_type<b16>"


def _layout(trans: bool) -> str:
    return "#nvvm.mma_layout<col>" if trans else "#nvvm.mma_layout<row>"


def _kernel(body: str, *, elements: int = 256, warps: int = 1, args: str = "") -> str:
    """A kernel whose workgroup buffer %smem holds ``elements`` f16 copied from %in (each thread
    copies its share), with ``%base`` the buffer's address as an !llvm.ptr<3> and %lane the lane."""
    threads = 32 * warps
    per_thread = elements // threads
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%in: memref<{elements}xf16>, %out: memref<{threads}x4xi32>{args})
        workgroup(%smem: memref<{elements}xf16, {SMEM}>) kernel {{
      %tid = gpu.thread_id x
      %cper = arith.constant {per_thread} : index
      %first = arith.muli %tid, %cper : index
      %chunk = vector.load %in[%first] : memref<{elements}xf16>, vector<{per_thread}xf16>
      vector.store %chunk, %smem[%first] : memref<{elements}xf16, {SMEM}>, vector<{per_thread}xf16>
      gpu.barrier
      %c32 = arith.constant 32 : index
      %lane = arith.remui %tid, %c32 : index
      %address = memref.extract_aligned_pointer_as_index %smem : memref<{elements}xf16, {SMEM}> -> index
      %address64 = arith.index_cast %address : index to i64
      %base = llvm.inttoptr %address64 : i64 to !llvm.ptr<3>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
{body}
      gpu.return
    }}
  }}
}}"""


def _row_pointer(row_element: str) -> str:
    """``%p`` = ``%base`` + ``row_element`` f16 elements (an index value)."""
    return f"""
      %row64 = arith.index_cast {row_element} : index to i64
      %p = llvm.getelementptr %base[%row64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16"""


def _ldmatrix(num: int, trans: bool, row_element: str, threads: int = 32) -> str:
    result = "i32" if num == 1 else f"!llvm.struct<({', '.join(['i32'] * num)})>"
    lines = [_row_pointer(row_element), f"""
      %m = nvvm.ldmatrix %p {{num = {num} : i32, layout = {_layout(trans)}, shape = {SHAPE}, eltType = {B16}}}
          : (!llvm.ptr<3>) -> {result}"""]
    for i in range(num):
        word = "%m" if num == 1 else f"%w{i}"
        if num > 1:
            lines.append(f"      %w{i} = llvm.extractvalue %m[{i}] : {result}")
        lines.append(f"      memref.store {word}, %out[%tid, %c{i}] : memref<{threads}x4xi32>")
    return "\n".join(lines)


def _run(source: str, data: np.ndarray, warps: int = 1, extra=()):
    out = np.zeros((32 * warps, 4), dtype=np.uint32)
    report = simt.run_kernel(source, [data, out, *extra], num_warps=warps)
    halves = out.view(np.uint16).reshape(32 * warps, 4, 2)
    return report, halves


def _positions(halves) -> np.ndarray:
    """The f16 values of each half as integers (they name positions ``8 r + c``)."""
    return halves.view(np.float16).astype(np.int64)


MATRICES = np.arange(256, dtype=np.float16)  # four 8x8 matrices, back to back, 8 r + c (+ 64 i)


def test_ldmatrix_x1_fragment():
    # Lanes 0..7 address rows 0..7 of the matrix at element 0 (lane 8 on: ignored, any address).
    body = ("      %r8 = arith.constant 8 : index\n      %row = arith.remui %lane, %r8 : index\n"
            "      %rs = arith.muli %row, %r8 : index" + _ldmatrix(1, False, "%rs"))
    report, halves = _run(_kernel(body), MATRICES)
    (access,) = [a for a in report.shared_accesses if a.op == "nvvm.ldmatrix"]
    assert (access.bytes_per_thread, access.wavefronts, access.bytes) == (4, 1, 128)
    got = _positions(halves[:, 0])
    # Hand-read from the figure: lane 0 holds (0,0),(0,1); lane 1 (0,2),(0,3); lane 4 (1,0),(1,1);
    # lane 31 (7,6),(7,7).
    assert got[0].tolist() == [0, 1] and got[1].tolist() == [2, 3]
    assert got[4].tolist() == [8, 9] and got[31].tolist() == [62, 63]
    lanes = np.arange(32)
    assert np.array_equal(got[:, 0], 8 * (lanes // 4) + 2 * (lanes % 4))
    assert np.array_equal(got[:, 1], got[:, 0] + 1)


def _x4_body(num: int, trans: bool) -> str:
    # Lane 8 i + r addresses row r of matrix i: element 64 i + 8 r = 8 * lane (lanes 0..31).
    prefix = "      %r8 = arith.constant 8 : index\n      %rs = arith.muli %lane, %r8 : index"
    return prefix + _ldmatrix(num, trans, "%rs")


@pytest.mark.parametrize("num", [2, 4])
def test_ldmatrix_x2_x4_fragments(num):
    report, halves = _run(_kernel(_x4_body(num, False)), MATRICES)
    lanes = np.arange(32)
    for i in range(num):
        got = _positions(halves[:, i])
        assert np.array_equal(got[:, 0], 64 * i + 8 * (lanes // 4) + 2 * (lanes % 4)), i
        assert np.array_equal(got[:, 1], got[:, 0] + 1), i
    # Rows back to back: each matrix is 128 contiguous bytes, one conflict-free wavefront.
    (access,) = [a for a in report.shared_accesses if a.op == "nvvm.ldmatrix"]
    assert (access.wavefronts, access.ideal_wavefronts, access.bytes) == (num, num, 128 * num)


def test_ldmatrix_trans_fragment():
    _, halves = _run(_kernel(_x4_body(4, True)), MATRICES)
    got = _positions(halves)
    # Lane 0 holds (0,0),(1,0) = 0, 8; lane 1 (2,0),(3,0) = 16, 24; lane 4 (0,1),(1,1) = 1, 9.
    assert got[0, 0].tolist() == [0, 8] and got[1, 0].tolist() == [16, 24] and got[4, 0].tolist() == [1, 9]
    lanes = np.arange(32)
    for i in range(4):
        assert np.array_equal(got[:, i, 0], 64 * i + 8 * 2 * (lanes % 4) + lanes // 4)
        assert np.array_equal(got[:, i, 1], got[:, i, 0] + 8)


def test_ldmatrix_rows_anywhere_and_bank_conflicts():
    # Row r of matrix i at element 128 r + 8 i: rows 256 bytes apart, all in banks 4 i .. 4 i + 3.
    # Each matrix's 8 rows hit the same 4 banks: 8 wavefronts per matrix, 32 for x4 (ideal 4).
    body = ("      %c8 = arith.constant 8 : index\n      %c128 = arith.constant 128 : index\n"
            "      %i = arith.divui %lane, %c8 : index\n      %r = arith.remui %lane, %c8 : index\n"
            "      %ri = arith.muli %r, %c128 : index\n      %ii = arith.muli %i, %c8 : index\n"
            "      %rs = arith.addi %ri, %ii : index" + _ldmatrix(4, False, "%rs"))
    data = np.arange(1024, dtype=np.float16)
    report, halves = _run(_kernel(body, elements=1024), data)
    lanes = np.arange(32)
    for i in range(4):  # lane L: row L/4 of matrix i is element 128 (L/4) + 8 i, columns 2 (L%4) + {0, 1}
        got = _positions(halves[:, i])
        assert np.array_equal(got[:, 0], 128 * (lanes // 4) + 8 * i + 2 * (lanes % 4))
    (access,) = [a for a in report.shared_accesses if a.op == "nvvm.ldmatrix"]
    assert (access.wavefronts, access.ideal_wavefronts, access.bytes) == (32, 4, 512)


def _stmatrix_then_read(trans: bool, num: int = 4) -> str:
    # Lane L's register i holds the 32-bit word 1000 + 4 L + i, split into two f16-sized halves
    # (low = 2 (4 L + i), high = 2 (4 L + i) + 1, as integers). stmatrix writes them to a second
    # buffer; every thread then copies it to %dump element-wise.
    words = "\n".join(
        f"      %v{i}a = arith.constant {i} : index\n"
        f"      %v{i}b = arith.addi %l4, %v{i}a : index\n"
        f"      %v{i}c = arith.index_cast %v{i}b : index to i32\n"
        f"      %v{i} = arith.muli %v{i}c, %c2x : i32\n"
        f"      %v{i}h = arith.addi %v{i}, %c1x : i32\n"
        f"      %v{i}s = arith.shli %v{i}h, %c16x : i32\n"
        f"      %s{i} = arith.ori %v{i}, %v{i}s : i32" for i in range(num))
    sources = ", ".join(f"%s{i}" for i in range(num))
    types = ", ".join(["i32"] * num)
    return f"""
      %c4 = arith.constant 4 : index
      %l4 = arith.muli %lane, %c4 : index
      %c1x = arith.constant 1 : i32
      %c2x = arith.constant 2 : i32
      %c16x = arith.constant 16 : i32
{words}
      %r8 = arith.constant 8 : index
      %rs = arith.muli %lane, %r8 : index
{_row_pointer("%rs")}
      nvvm.stmatrix %p, {sources} {{layout = {_layout(trans)}, shape = {SHAPE}, eltType = {B16}}} : !llvm.ptr<3>, {types}
      gpu.barrier
      %mine = vector.load %smem[%first] : memref<256xf16, {SMEM}>, vector<8xf16>
      vector.store %mine, %dump[%first] : memref<256xf16>, vector<8xf16>"""


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_places_fragments_as_ldmatrix_reads_them(trans):
    dump = np.zeros(256, dtype=np.float16)
    source = _kernel(_stmatrix_then_read(trans), args=", %dump: memref<256xf16>")
    report, _ = _run(source, np.zeros(256, dtype=np.float16), extra=[dump])
    stored = dump.view(np.uint16).astype(np.int64).reshape(4, 8, 8)  # matrix i, row, column
    for i in range(4):
        for lane in range(32):
            row, col = lane // 4, 2 * (lane % 4)
            low, high = 2 * (4 * lane + i), 2 * (4 * lane + i) + 1
            if trans:  # the fragment is of the transposed matrix: (row, col) is stored at (col, row)
                assert (stored[i, col, row], stored[i, col + 1, row]) == (low, high)
            else:
                assert (stored[i, row, col], stored[i, row, col + 1]) == (low, high)
    (access,) = [a for a in report.shared_accesses if a.op == "nvvm.stmatrix"]
    assert (access.kind, access.wavefronts, access.ideal_wavefronts, access.bytes) == ("store", 4, 4, 512)
    assert not report.races


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_then_ldmatrix_round_trips(trans):
    body = _stmatrix_then_read(trans).split("      gpu.barrier")[0] + "      gpu.barrier\n" + \
        _ldmatrix(4, trans, "%rs").replace("%row64", "%row64b").replace("%p =", "%p2 =").replace("%p {", "%p2 {")
    _, halves = _run(_kernel(body), np.zeros(256, dtype=np.float16))
    lanes = np.arange(32)
    for i in range(4):
        assert np.array_equal(halves[:, i, 0].astype(np.int64), 2 * (4 * lanes + i))
        assert np.array_equal(halves[:, i, 1].astype(np.int64), 2 * (4 * lanes + i) + 1)


def test_matrix_race_between_warps_is_detected():
    # Warp w stores its matrices with stmatrix at elements 256 w ..; then, with no barrier, each
    # warp loads the other warp's matrices with ldmatrix: a read-after-write race.
    store = _stmatrix_then_read(False).split("      gpu.barrier")[0].replace(
        "%rs = arith.muli %lane, %r8", "%rs = arith.muli %tid, %r8")
    load = _ldmatrix(4, False, "%rl", threads=64).replace("%row64", "%row64b").replace(
        "%p =", "%p2 =").replace("%p {", "%p2 {")
    body = store + "\n      %other = arith.xori %tid, %c32 : index\n      %rl = arith.muli %other, %r8 : index" + load
    source = _kernel(body, elements=512, warps=2)
    with pytest.raises(simt.RaceError, match=r"read-after-write.*nvvm\.ldmatrix"):
        _run(source, np.zeros(512, dtype=np.float16), warps=2)
    fixed = source.replace("      %other =", "      gpu.barrier\n      %other =")
    _, halves = _run(fixed, np.zeros(512, dtype=np.float16), warps=2)
    lanes = np.arange(32)  # warp 1 reads warp 0's registers and vice versa: the same words
    assert np.array_equal(halves[32:, 0, 0].astype(np.int64), 2 * (4 * lanes))


def test_misaligned_row_and_divergence_and_unsupported_forms():
    misaligned = "      %r8 = arith.constant 8 : index\n      %rs0 = arith.muli %lane, %r8 : index\n" \
                 "      %rs = arith.addi %rs0, %c1 : index" + _ldmatrix(1, False, "%rs")
    with pytest.raises(simt.MemoryAccessError, match="not 16-byte aligned"):
        _run(_kernel(misaligned), MATRICES)
    divergent = _x4_body(1, False).replace("%m = nvvm.ldmatrix", "%m = nvvm.ldmatrix")
    divergent = ("      %is_low = arith.cmpi ult, %lane, %c2 : index\n      scf.if %is_low {\n"
                 + divergent + "\n      }")
    with pytest.raises(simt.UndefinedBehaviorError, match="divergent"):
        _run(_kernel(divergent), MATRICES)
    b8 = f"""
      %r16 = arith.constant 16 : index
      %rs = arith.muli %lane, %r16 : index{_row_pointer("%rs")}
      %m = nvvm.ldmatrix %p {{num = 1 : i32, layout = #nvvm.mma_layout<col>,
          shape = #nvvm.ld_st_matrix_shape<m = 16, n = 16>, eltType = #nvvm.ld_st_matrix_elt_type<b8>}}
          : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>"""
    with pytest.raises(simt.UnsupportedOp, match="only m8n8 b16"):
        _run(_kernel(b8), MATRICES)


def test_pointer_ops():
    # getelementptr with a constant and a dynamic index, ptrtoint back: addresses in bytes.
    body = """
      %q = llvm.getelementptr %base[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32
      %i64 = arith.index_cast %lane : index to i64
      %r = llvm.getelementptr %q[%i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %a = llvm.ptrtoint %r : !llvm.ptr<3> to i32
      memref.store %a, %out[%tid, %c0] : memref<32x4xi32>
      %bits = llvm.bitcast %a : i32 to vector<2xf16>
      %back = llvm.bitcast %bits : vector<2xf16> to i32
      memref.store %back, %out[%tid, %c1] : memref<32x4xi32>"""
    out = np.zeros((32, 4), dtype=np.uint32)
    simt.run_kernel(_kernel(body), [MATRICES, out], num_warps=1)
    # The workgroup buffer is the first, at address 0: 3 * 4 bytes + 2 * lane.
    assert np.array_equal(out[:, 0], 12 + 2 * np.arange(32)) and np.array_equal(out[:, 1], out[:, 0])
    # A global argument's pointer is its byte address: argument 0 (%in) sits at GLOBAL_BASE_ADDRESS.
    from linear_layout.simt.memory import GLOBAL_BASE_ADDRESS

    global_pointer = _kernel(f"""
      %g = memref.extract_aligned_pointer_as_index %in : memref<256xf16> -> index
      %g64 = arith.index_cast %g : index to i64
      %global0 = arith.constant {GLOBAL_BASE_ADDRESS} : i64
      %above = arith.subi %g64, %global0 : i64
      %above32 = arith.trunci %above : i64 to i32
      memref.store %above32, %out[%tid, %c2] : memref<32x4xi32>""")
    out[:] = 7
    simt.run_kernel(global_pointer, [MATRICES, out], num_warps=1)
    assert (out[:, 2] == 0).all()
