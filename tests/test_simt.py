"""Tests of the numpy SIMT interpreter on hand-written lowered kernels.

Wavefront counts in these tests are derived by hand from the bank model in the module docstring
of ``linear_layout.simt`` (32 banks x 4 bytes; phases of 32/16/8 threads for 32/64/128-bit
accesses).
"""

import importlib
import re

import numpy as np
import pytest

from linear_layout.simt import dialects
from linear_layout.simt import interpreter as simt

SMEM = "#gpu.address_space<workgroup>"


def kernel(signature: str, body: str, *, workgroup: str = "", block: int | None = None) -> str:
    """Wrap ``body`` in a gpu.module / gpu.func kernel; ``%tid`` is predefined as an i32."""
    attributions = f" workgroup({workgroup})" if workgroup else ""
    attributes = f" attributes {{known_block_size = array<i32: {block}, 1, 1>}}" if block else ""
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k({signature}){attributions} kernel{attributes} {{
      %tid_index = gpu.thread_id x
      %tid = arith.index_cast %tid_index : index to i32
{body}
      gpu.return
    }}
  }}
}}"""


# The example kernel of DESIGN.md ("Lowering target: SIMT form"), with its index math filled in:
# thread t copies the 8 floats at row t / 4, column 8 * (t % 4) through shared offset 8 * t.
DESIGN_COPY = f"""
module attributes {{gpu.container_module}} {{
gpu.module @kernels {{
  gpu.func @copy(%in: memref<32x32xf32>, %out: memref<32x32xf32>)
      workgroup(%smem: memref<1024xf32, {SMEM}>)
      kernel attributes {{known_block_size = array<i32: 128, 1, 1>}} {{
    %tid = gpu.thread_id x
    %t = arith.index_cast %tid : index to i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %c5 = arith.constant 5 : i32
    %r = arith.shrui %t, %c2 : i32
    %cm = arith.andi %t, %c3 : i32
    %c = arith.shli %cm, %c3 : i32
    %rs = arith.shli %r, %c5 : i32
    %o = arith.ori %rs, %c : i32
    %ri = arith.index_cast %r : i32 to index
    %ci = arith.index_cast %c : i32 to index
    %oi = arith.index_cast %o : i32 to index
    %v = vector.load %in[%ri, %ci] {{alignment = 32}} : memref<32x32xf32>, vector<8xf32>
    vector.store %v, %smem[%oi] {{alignment = 16}} : memref<1024xf32, {SMEM}>, vector<8xf32>
    gpu.barrier
    %w = vector.load %smem[%oi] {{alignment = 16}} : memref<1024xf32, {SMEM}>, vector<8xf32>
    vector.store %w, %out[%ri, %ci] {{alignment = 32}} : memref<32x32xf32>, vector<8xf32>
    gpu.return
  }}
}}
}}"""


def test_design_example_copies_through_shared_memory():
    x = np.random.default_rng(0).random((32, 32), dtype=np.float32)
    y = np.zeros_like(x)
    report = simt.run_kernel(DESIGN_COPY, [x, y])  # num_warps comes from known_block_size
    np.testing.assert_array_equal(y, x)
    assert report.num_warps == 4 and report.barriers == 1 and not report.races
    # Each 32-byte row is two 128-bit instructions. In a quarter-warp phase thread t touches
    # words 8t..8t+3 (+4 for the second instruction): threads t and t+4 share banks, so every
    # phase costs 2 wavefronts where 1 is ideal. 2 instructions x 4 phases x 2 = 16 per warp.
    for access in report.shared_accesses:
        assert (access.instruction_bytes, access.instructions) == (16, 2)
        assert (access.wavefronts, access.ideal_wavefronts) == (16, 8)
    assert (report.wavefronts, report.ideal_wavefronts, report.bank_conflicts) == (128, 64, 64)
    # Bytes: each warp moves 32 threads x 32 distinct bytes per side; 4 KiB per side in all, so
    # the floor is 32 + 32 wavefronts: the per-access minimum reaches it, the conflicts do not.
    assert {a.bytes for a in report.shared_accesses} == {1024}
    assert (report.shared_bytes("store"), report.shared_bytes("load"), report.floor_wavefronts) == (4096, 4096, 64)
    # Global: in each 128-bit instruction every thread's 16 bytes lie in their own 32-byte sector.
    assert {a.sectors for a in report.global_accesses} == {64}


def test_vector_copy_with_thread_index_math():
    # 2 warps; thread t copies a vector<4xi32> at row t / 16, column 4 * (t % 16) of a 4x64 array.
    body = """
      %c4 = arith.constant 4 : i32
      %c15 = arith.constant 15 : i32
      %row = arith.shrui %tid, %c4 : i32
      %low = arith.andi %tid, %c15 : i32
      %col = arith.muli %low, %c4 : i32
      %r = arith.index_cast %row : i32 to index
      %c = arith.index_castui %col : i32 to index
      %v = vector.load %src[%r, %c] : memref<4x64xi32>, vector<4xi32>
      vector.store %v, %dst[%r, %c] {alignment = 16} : memref<4x64xi32>, vector<4xi32>"""
    x = np.arange(256, dtype=np.int32).reshape(4, 64) * -7
    y = np.zeros_like(x)
    report = simt.run_kernel(kernel("%src: memref<4x64xi32>, %dst: memref<4x64xi32>", body), [x, y], num_warps=2)
    np.testing.assert_array_equal(y, x)
    load, store = report.global_accesses[0], report.global_accesses[2]
    # Without an alignment attribute the vector load is scalarised: 4 instructions of 4 bytes.
    assert (load.instruction_bytes, load.instructions, load.sectors) == (4, 4, 64)
    assert (store.instruction_bytes, store.instructions, store.sectors) == (16, 1, 16)


TRANSPOSE_BODY = """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c5_i32 = arith.constant 5 : i32
      %c31_i32 = arith.constant 31 : i32
      %c8_i32 = arith.constant 8 : i32
      %stride = arith.constant {stride} : index
      %warp_i32 = arith.shrui %tid, %c5_i32 : i32
      %lane_i32 = arith.andi %tid, %c31_i32 : i32
      %first_i32 = arith.muli %warp_i32, %c8_i32 : i32
      %first = arith.index_cast %first_i32 : i32 to index
      %lane = arith.index_cast %lane_i32 : i32 to index
      scf.for %i = %c0 to %c8 step %c1 {{
        %row = arith.addi %first, %i : index
        %x = memref.load %in[%row, %lane] : memref<32x32xf32>
        %base = arith.muli %row, %stride : index
        %offset = arith.addi %base, %lane : index
        memref.store %x, %smem[%offset] : memref<1056xf32, #gpu.address_space<workgroup>>
      }}
      {barrier}
      scf.for %i = %c0 to %c8 step %c1 {{
        %row = arith.addi %first, %i : index
        %base = arith.muli %lane, %stride : index
        %offset = arith.addi %base, %row : index
        %x = memref.load %smem[%offset] : memref<1056xf32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%row, %lane] : memref<32x32xf32>
      }}"""


def transpose(stride: int, barrier: str = "gpu.barrier", **options):
    """4 warps transpose a 32x32 tile through shared memory with row stride ``stride``: warp w
    writes rows 8w..8w+7 (lane = column) and then reads columns 8w..8w+7 (lane = row)."""
    source = kernel(
        "%in: memref<32x32xf32>, %out: memref<32x32xf32>",
        TRANSPOSE_BODY.format(stride=stride, barrier=barrier),
        workgroup=f"%smem: memref<1056xf32, {SMEM}>",
    )
    x = np.random.default_rng(stride).standard_normal((32, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    return x, y, simt.run_kernel(source, [x, y], num_warps=4, **options)


def test_shared_transpose_result_and_32_way_conflicts():
    x, y, report = transpose(stride=32)
    np.testing.assert_array_equal(y, x.T)
    by_kind = {kind: (w, i) for (_, _, kind), (w, i) in report.shared_by_op().items()}
    # Stores: lane l writes word 32*row + l, 32 distinct banks: 1 wavefront (8 rows x 4 warps).
    assert by_kind["store"] == (32, 32)
    # Loads: lane l reads word 32*l + row, all in bank row % 32: 32 wavefronts each.
    assert by_kind["load"] == (32 * 32, 32)
    assert report.bank_conflicts == 31 * 32 and report.barriers == 1


def test_shared_transpose_padded_is_conflict_free():
    x, y, report = transpose(stride=33)
    np.testing.assert_array_equal(y, x.T)
    # Word 33*l + row lies in bank (l + row) % 32: all distinct.
    assert report.wavefronts == report.ideal_wavefronts == 64 and report.bank_conflicts == 0


def test_missing_barrier_is_a_read_after_write_race():
    with pytest.raises(
        simt.RaceError, match=r"read-after-write race on workgroup buffer .* a gpu.barrier is missing"
    ) as raised:
        transpose(stride=32, barrier="")
    race = raised.value.race  # the raised error carries the structured race, as a recorded one would
    assert race is not None and race.kind == "read-after-write" and race.warp not in race.other_warps


def test_races_can_be_recorded_instead_of_raised():
    x, y, report = transpose(stride=32, barrier="", on_race="record")
    np.testing.assert_array_equal(y, x.T)  # lockstep hides the bug; the report does not
    assert report.races and {r.kind for r in report.races} == {"read-after-write"}
    race = report.races[0]
    assert race.warp != race.other_warps[0] and race.interval == 0


def test_write_after_read_race():
    # Every warp reads word `lane`, then warp w overwrites word `lane + 32 * w`: warps 1.. are fine,
    # but warp 0 overwrites the words all other warps read in the same interval.
    body = """
      %c31 = arith.constant 31 : i32
      %lane = arith.andi %tid, %c31 : i32
      %li = arith.index_cast %lane : i32 to index
      %ti = arith.index_cast %tid : i32 to index
      %f = arith.sitofp %tid : i32 to f32
      memref.store %f, %smem[%ti] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %x = memref.load %smem[%li] : memref<128xf32, #gpu.address_space<workgroup>>
      %y = arith.addf %x, %f : f32
      memref.store %y, %smem[%ti] : memref<128xf32, #gpu.address_space<workgroup>>"""
    source = kernel("", body, workgroup=f"%smem: memref<128xf32, {SMEM}>")
    with pytest.raises(
        simt.RaceError, match=r"write-after-read race .* warp 0 writes it .* after warp\(s\) 1, 2, 3 read"
    ):
        simt.run_kernel(source, [], num_warps=4)


def test_duplicate_writes_of_equal_values_are_benign_but_different_values_race():
    # All 64 threads store `value` into word lane % 32; a broadcast layout stores duplicates like this.
    body = """
      %c31 = arith.constant 31 : i32
      %lane = arith.andi %tid, %c31 : i32
      %li = arith.index_cast %lane : i32 to index
      %value = arith.{op} %lane, %tid : i32
      memref.store %value, %smem[%li] : memref<32xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %x = memref.load %smem[%li] : memref<32xi32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid_index] : memref<64xi32>"""
    out = np.zeros(64, np.int32)
    benign = kernel("%out: memref<64xi32>", body.format(op="andi"), workgroup=f"%smem: memref<32xi32, {SMEM}>")
    simt.run_kernel(benign, [out], num_warps=2)
    np.testing.assert_array_equal(out, np.arange(64) % 32)
    racy = kernel("%out: memref<64xi32>", body.format(op="addi"), workgroup=f"%smem: memref<32xi32, {SMEM}>")
    with pytest.raises(simt.RaceError, match="write-after-write"):
        simt.run_kernel(racy, [out], num_warps=2)


def test_shuffle_xor_butterfly_reduction():
    body = """
      %x = memref.load %data[%tid_index] : memref<64xf32>
      %width = arith.constant 32 : i32
      %c16 = arith.constant 16 : i32
      %c8 = arith.constant 8 : i32
      %c4 = arith.constant 4 : i32
      %c2 = arith.constant 2 : i32
      %c1 = arith.constant 1 : i32
      %y16, %v16 = gpu.shuffle xor %x, %c16, %width : f32
      %s16 = arith.addf %x, %y16 : f32
      %y8, %v8 = gpu.shuffle xor %s16, %c8, %width : f32
      %s8 = arith.addf %s16, %y8 : f32
      %y4, %v4 = gpu.shuffle xor %s8, %c4, %width : f32
      %s4 = arith.addf %s8, %y4 : f32
      %y2, %v2 = gpu.shuffle xor %s4, %c2, %width : f32
      %s2 = arith.addf %s4, %y2 : f32
      %y1, %v1 = gpu.shuffle xor %s2, %c1, %width : f32
      %s1 = arith.addf %s2, %y1 : f32
      memref.store %s1, %data[%tid_index] : memref<64xf32>"""
    data = np.arange(64, dtype=np.float32)
    report = simt.run_kernel(kernel("%data: memref<64xf32>", body), [data], num_warps=2)
    np.testing.assert_array_equal(data, np.repeat([np.arange(32).sum(), np.arange(32, 64).sum()], 32))
    assert report.shuffles == 5 * 2 and report.op_counts["gpu.shuffle"] == 5


def test_shuffle_modes_width_and_valid_flag():
    # width 8: lane k < 8 gets lane k+3 (down), k-3 (up) or 5 (idx); lanes >= 8 are invalid.
    body = """
      %x = arith.muli %tid, %c10 : i32
      %r, %valid = gpu.shuffle {mode} %x, %c, %c8 : i32
      %flag = arith.extui %valid : i1 to i32
      %k = arith.constant 1000000 : i32
      %packed = arith.muli %flag, %k : i32
      %sum = arith.addi %packed, %r : i32
      %safe = arith.select %valid, %sum, %c0 : i32
      memref.store %safe, %out[%tid_index] : memref<32xi32>"""
    prelude = """
      %c0 = arith.constant 0 : i32
      %c8 = arith.constant 8 : i32
      %c10 = arith.constant 10 : i32
      %c = arith.constant {offset} : i32"""
    lanes = np.arange(32)
    for mode, offset, source in [
        ("down", 3, lanes + 3),
        ("up", 3, lanes - 3),
        ("idx", 5, np.full(32, 5)),
        ("xor", 2, lanes ^ 2),
    ]:
        out = np.zeros(32, np.int32)
        source_text = kernel("%out: memref<32xi32>", prelude.format(offset=offset) + body.format(mode=mode))
        simt.run_kernel(source_text, [out], num_warps=1)
        valid = (lanes < 8) & (source >= 0) & (source < 8)
        np.testing.assert_array_equal(out, np.where(valid, 1000000 + 10 * source, 0), err_msg=mode)


def test_unsupported_op_is_named():
    body = """
      %v = arith.constant dense<1.0> : vector<4xf32>
      %r = vector.reduction <add>, %v : vector<4xf32> into f32"""
    with pytest.raises(simt.UnsupportedOp, match=r"'vector.reduction' at .* not supported"):
        simt.run_kernel(kernel("", body), [], num_warps=1)
    assert "vector.reduction" not in simt.SUPPORTED_OPS and "gpu.shuffle" in simt.SUPPORTED_OPS


# TTGIR's locations: a name around a call site around the file position (Triton's inlined callees).
_TTGIR_LOC = 'loc("x"(callsite("k.py":3:7 at "caller.py":9:1)))'


@pytest.mark.parametrize(
    ("error", "body", "workgroup", "message"),
    [
        (
            simt.UnsupportedOp,
            f"""
      %v = arith.constant dense<1.0> : vector<4xf32>
      %r = vector.reduction <add>, %v : vector<4xf32> into f32 {_TTGIR_LOC}""",
            "",
            r"'vector.reduction' at k\.py:3:7 is not supported",
        ),
        (
            simt.MemoryAccessError,
            f"""
      %c = arith.constant 1.0 : f32
      %i = arith.constant 1 : index
      %j = arith.addi %tid_index, %i : index
      memref.store %c, %smem[%j] : memref<32xf32, {SMEM}> {_TTGIR_LOC}""",
            f"%smem: memref<32xf32, {SMEM}>",
            r"^memref\.store at k\.py:3:7: out-of-bounds",
        ),
        (
            simt.RaceError,
            f"""
      %c31 = arith.constant 31 : i32
      %lane = arith.andi %tid, %c31 : i32
      %li = arith.index_cast %lane : i32 to index
      %f = arith.sitofp %tid : i32 to f32
      memref.store %f, %smem[%li] : memref<32xf32, {SMEM}> {_TTGIR_LOC}""",
            f"%smem: memref<32xf32, {SMEM}>",
            r"memref\.store at k\.py:3:7\)",
        ),
    ],
    ids=["unsupported", "out-of-bounds", "race"],
)
def test_errors_name_the_source_position(error, body, workgroup, message):
    # The interpreter's messages say file:line:col as every other message of the project
    # (ir.upstream.source_position), not the raw location text.
    with pytest.raises(error, match=message) as raised:
        simt.run_kernel(kernel("", body, workgroup=workgroup), [], num_warps=2)
    assert "callsite" not in str(raised.value) and "caller.py" not in str(raised.value)


def test_scf_for_with_iter_args_and_divergent_trip_counts():
    # Thread t sums 0..t-1 (a divergent loop), then scf.if picks per-thread branches.
    body = """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i32
      %sum = scf.for %i = %c0 to %tid_index step %c1 iter_args(%acc = %zero) -> (i32) {
        %ii = arith.index_cast %i : index to i32
        %next = arith.addi %acc, %ii : i32
        scf.yield %next : i32
      }
      %c1_i32 = arith.constant 1 : i32
      %odd_bit = arith.andi %tid, %c1_i32 : i32
      %odd = arith.cmpi ne, %odd_bit, %zero : i32
      %r = scf.if %odd -> (i32) {
        %neg = arith.subi %zero, %sum : i32
        scf.yield %neg : i32
      } else {
        scf.yield %sum : i32
      }
      memref.store %r, %out[%tid_index] : memref<64xi32>"""
    out = np.zeros(64, np.int32)
    simt.run_kernel(kernel("%out: memref<64xi32>", body), [out], num_warps=2)
    t = np.arange(64)
    np.testing.assert_array_equal(out, np.where(t % 2, -1, 1) * (t * (t - 1) // 2))


def test_integer_wraparound_and_signedness():
    # Scalar integer arguments are uniform across threads.
    body = """
      %s8 = arith.addi %a8, %b8 : i8
      %p32 = arith.muli %a32, %a32 : i32
      %shr_u = arith.shrui %n32, %c28 : i32
      %shr_s = arith.shrsi %n32, %c28 : i32
      %wide_s = arith.extsi %a8 : i8 to i32
      %wide_u = arith.extui %a8 : i8 to i32
      %narrow = arith.trunci %p32 : i32 to i8
      %index = arith.index_cast %n32 : i32 to index
      %index_u = arith.index_castui %n32 : i32 to index
      %lt_s = arith.cmpi slt, %n32, %c28 : i32
      %lt_u = arith.cmpi ult, %n32, %c28 : i32
      %div = arith.divui %n32, %c28 : i32
      %rem = arith.remui %n32, %c28 : i32
      %divs = arith.divsi %n32, %c28 : i32
      %bit = arith.addi %lt_s, %lt_s : i1
      %w0 = arith.extui %s8 : i8 to i64
      %w2 = arith.extui %p32 : i32 to i64
      %w3 = arith.extui %shr_u : i32 to i64
      %w4 = arith.extsi %shr_s : i32 to i64
      %w5 = arith.extsi %wide_s : i32 to i64
      %w6 = arith.extsi %wide_u : i32 to i64
      %w7 = arith.extsi %narrow : i8 to i64
      %w8 = arith.index_cast %index : index to i64
      %w9 = arith.index_cast %index_u : index to i64
      %w10 = arith.extui %lt_s : i1 to i64
      %w11 = arith.extui %lt_u : i1 to i64
      %w12 = arith.extui %div : i32 to i64
      %w13 = arith.extui %rem : i32 to i64
      %w14 = arith.extsi %divs : i32 to i64
      %w15 = arith.extui %bit : i1 to i64
      %v = vector.from_elements %w0, %w2, %w3, %w4, %w5, %w6, %w7, %w8, %w9, %w10, %w11, %w12, %w13, %w14, %w15 : vector<15xi64>
      %c0 = arith.constant 0 : index
      vector.store %v, %out[%c0] : memref<15xi64>, vector<15xi64>"""
    signature = "%a8: i8, %b8: i8, %a32: i32, %n32: i32, %c28: i32, %out: memref<15xi64>"
    out = np.zeros(15, np.int64)
    simt.run_kernel(kernel(signature, body), [200, 100, 0x10001, -100, 28, out], num_warps=1)
    n = -100
    expected = [
        (200 + 100) % 256,  # i8 wrap
        (0x10001 * 0x10001) % 2**32,  # i32 wrap: 0x20001
        (n % 2**32) >> 28,  # logical shift
        n >> 28,  # arithmetic shift
        200 - 256,  # extsi of i8 200 (= -56)
        200,  # extui
        np.int8(np.uint8(0x20001 & 0xFF)),  # trunci, read back signed
        n,  # index_cast sign-extends
        n % 2**32,  # index_castui zero-extends
        1,  # -100 < 28 signed
        0,  # 2**32 - 100 > 28 unsigned
        (n % 2**32) // 28,
        (n % 2**32) % 28,
        -3,  # signed division truncates toward zero
        0,  # i1: 1 + 1 wraps to 0
    ]
    np.testing.assert_array_equal(out, expected)


def test_undefined_behaviour_is_reported():
    shift = kernel("%n: i32", "      %x = arith.shli %tid, %n : i32")
    with pytest.raises(simt.UndefinedBehaviorError, match="shift amount >= bit width 32"):
        simt.run_kernel(shift, [32], num_warps=1)
    divide = kernel("%n: i32", "      %x = arith.divui %tid, %n : i32")
    with pytest.raises(simt.UndefinedBehaviorError, match="division by zero"):
        simt.run_kernel(divide, [0], num_warps=1)
    divergent_barrier = kernel(
        "",
        """
      %c1 = arith.constant 1 : i32
      %odd = arith.andi %tid, %c1 : i32
      %cond = arith.trunci %odd : i32 to i1
      scf.if %cond {
        gpu.barrier
      }""",
    )
    with pytest.raises(simt.UndefinedBehaviorError, match=r"gpu\.barrier reached by only 32 of 64"):
        simt.run_kernel(divergent_barrier, [], num_warps=2)


def test_memory_errors():
    out_of_bounds = kernel(
        "%out: memref<32xf32>",
        """
      %c = arith.constant 1.0 : f32
      %i = arith.constant 1 : index
      %j = arith.addi %tid_index, %i : index
      memref.store %c, %out[%j] : memref<32xf32>""",
    )
    with pytest.raises(simt.MemoryAccessError, match=r"out-of-bounds .* thread 31 index 32"):
        simt.run_kernel(out_of_bounds, [np.zeros(32, np.float32)], num_warps=1)
    negative = kernel(
        "%in: memref<32xf32>",
        """
      %c1 = arith.constant 1 : index
      %j = arith.subi %tid_index, %c1 : index
      %v = vector.load %in[%j] : memref<32xf32>, vector<2xf32>""",
    )
    with pytest.raises(simt.MemoryAccessError, match=r"thread 0 index -1 in dimension 0 with a vector of 2"):
        simt.run_kernel(negative, [np.zeros(32, np.float32)], num_warps=1)
    misaligned = kernel(
        "%in: memref<64xf32>",
        """
      %c2 = arith.constant 2 : index
      %i = arith.muli %tid_index, %c2 : index
      %v = vector.load %in[%i] {alignment = 16} : memref<64xf32>, vector<2xf32>""",
    )
    with pytest.raises(simt.MemoryAccessError, match="promises alignment 16 but thread 1 accesses byte 8"):
        simt.run_kernel(misaligned, [np.zeros(64, np.float32)], num_warps=1)
    uninitialised = kernel(
        "",
        f"""
      %x = memref.load %smem[%tid_index] : memref<32xf32, {SMEM}>""",
        workgroup=f"%smem: memref<32xf32, {SMEM}>",
    )
    with pytest.raises(simt.MemoryAccessError, match="uninitialised workgroup memory"):
        simt.run_kernel(uninitialised, [], num_warps=1)
    with pytest.raises(simt.MemoryAccessError, match="cannot hold f32"):
        simt.run_kernel(DESIGN_COPY, [np.zeros((32, 32)), np.zeros((32, 32))])
    with pytest.raises(ValueError, match="known_block_size"):
        simt.run_kernel(DESIGN_COPY, [np.zeros((32, 32), np.float32)] * 2, num_warps=2)


def test_vector_width_bank_model():
    # One warp; thread t accesses a vector<4xf32> at word `stride * t` with 128-bit instructions.
    # stride 4: each quarter-warp phase covers 32 consecutive words -> 1 wavefront, 4 per warp.
    # stride 32: the 8 threads of a phase all hit banks 0-3 -> 8 wavefronts per phase, 32 in all.
    # stride 2 with vector<2xf32> (64-bit): half-warp phases of 32 words -> 2 wavefronts.
    # stride 64 with vector<2xf32>: the 16 threads of a phase all hit banks 0-1 -> 16 per phase.
    cases = [(4, 4, 16, 4, 4), (32, 4, 16, 32, 4), (2, 2, 8, 2, 2), (64, 2, 8, 32, 2)]
    for stride, width, alignment, wavefronts, ideal in cases:
        body = f"""
      %stride = arith.constant {stride} : index
      %o = arith.muli %tid_index, %stride : index
      %v = arith.constant dense<1.0> : vector<{width}xf32>
      vector.store %v, %smem[%o] {{alignment = {alignment}}} : memref<4096xf32, {SMEM}>, vector<{width}xf32>"""
        source = kernel("", body, workgroup=f"%smem: memref<4096xf32, {SMEM}>")
        (access,) = simt.run_kernel(source, [], num_warps=1).shared_accesses
        assert (access.wavefronts, access.ideal_wavefronts) == (wavefronts, ideal), (stride, width)
    broadcast = kernel(
        "",
        f"""
      %c0 = arith.constant 0.0 : f16
      %fill = vector.broadcast %c0 : f16 to vector<2xf16>
      %c2 = arith.constant 2 : index
      %o = arith.muli %tid_index, %c2 : index
      vector.store %fill, %smem[%o] : memref<64xf16, {SMEM}>, vector<2xf16>
      gpu.barrier
      %c1 = arith.constant 1 : index
      %half = arith.shrui %tid_index, %c1 : index
      %x = memref.load %smem[%half] : memref<64xf16, {SMEM}>""",
        workgroup=f"%smem: memref<64xf16, {SMEM}>",
    )
    report = simt.run_kernel(broadcast, [], num_warps=1)
    # Without an alignment attribute the vector<2xf16> store is two 2-byte instructions; in each,
    # thread t touches word t (bank t): 1 wavefront each. The f16 load of element t // 2 touches
    # words 0..7 only, 4 threads per word (broadcast): 1 wavefront.
    store, load = report.shared_accesses
    assert (store.instruction_bytes, store.instructions, store.wavefronts) == (2, 2, 2)
    assert (load.instruction_bytes, load.wavefronts, load.ideal_wavefronts) == (2, 1, 1)
    # The store moves 64 distinct f16 (128 bytes); the load 16 distinct f16 (lanes 2k, 2k+1 share
    # one): 32 bytes. The floor is ceil(128/128) + ceil(32/128) = 2 wavefronts, as measured.
    assert (store.bytes, load.bytes, report.floor_wavefronts, report.wavefronts) == (128, 32, 2, 3)
    assert "floor=2" in report.summary()


def _per_lane_word(pattern, lanes=32):
    return np.array([pattern(t) for t in range(lanes)], dtype=np.int32)


_MULTICAST = {3, 4, 6, 7, 9}  # the guide's threads that all read one word of bank 5
_PERMUTATION = [int(x) for x in np.random.default_rng(7).permutation(32)]


# The cases NVIDIA documents (CUDA C++ Programming Guide, "Shared Memory" of compute capability
# 5.x and later: figures "Strided Shared Memory Accesses" and "Irregular Shared Memory Accesses";
# 64-bit accesses are served per half-warp and 128-bit ones per quarter-warp, one bank conflict
# check per phase), as (bytes per lane, the 32-bit word each lane starts at, wavefronts, ideal).
# Derived by hand: a phase costs the largest number of distinct words any bank holds in it, and
# its ideal is ceil(distinct words / 32); lanes reading one word share it (broadcast, multicast).
NVIDIA_BANK_CASES = {
    "32-bit stride 1": (4, lambda t: t, 1, 1),
    "32-bit stride 2: 2-way conflict": (4, lambda t: 2 * t, 2, 1),
    "32-bit stride 3: conflict-free": (4, lambda t: 3 * t, 1, 1),
    "32-bit stride 32: 32-way conflict": (4, lambda t: 32 * t, 32, 1),
    "32-bit random permutation": (4, lambda t: _PERMUTATION[t], 1, 1),
    "32-bit multicast within bank 5": (4, lambda t: 5 if t in _MULTICAST else t, 1, 1),
    "32-bit broadcast of one word": (4, lambda t: 7, 1, 1),
    "64-bit stride 1: two half-warp phases": (8, lambda t: 2 * t, 2, 2),
    "64-bit stride 2: 2-way in each half-warp": (8, lambda t: 4 * t, 4, 2),
    "64-bit broadcast: one wavefront per half-warp": (8, lambda t: 0, 2, 2),
    "64-bit lanes t and t+16 share a bank across phases: free": (8, lambda t: 2 * (t % 16) + 32 * (t // 16), 2, 2),
    "128-bit stride 1: four quarter-warp phases": (16, lambda t: 4 * t, 4, 4),
    "128-bit stride 2: 2-way in each quarter-warp": (16, lambda t: 8 * t, 8, 4),
    "128-bit broadcast: one wavefront per quarter-warp": (16, lambda t: 0, 4, 4),
}


@pytest.mark.parametrize("case", sorted(NVIDIA_BANK_CASES))
def test_nvidia_documented_bank_cases(case):
    width, word_of_lane, wavefronts, ideal = NVIDIA_BANK_CASES[case]
    elements = width // 4
    body = f"""
      %w = memref.load %words[%tid_index] : memref<32xi32>
      %o = arith.index_cast %w : i32 to index
      %v = vector.load %smem[%o] {{alignment = {width}}} : memref<2048xf32, {SMEM}>, vector<{elements}xf32>"""
    source = kernel("%words: memref<32xi32>", body, workgroup=f"%smem: memref<2048xf32, {SMEM}>")
    report = simt.run_kernel(source, [_per_lane_word(word_of_lane)], num_warps=1, check_uninitialized=False)
    (access,) = report.shared_accesses
    assert (access.instruction_bytes, access.instructions) == (width, 1)
    assert (access.wavefronts, access.ideal_wavefronts) == (wavefronts, ideal), case


def test_f16_and_bf16_data():
    body = """
      %c4 = arith.constant 4 : index
      %o = arith.muli %tid_index, %c4 : index
      %v = vector.load %in[%o] {alignment = 8} : memref<128xf16>, vector<4xf16>
      %sq = arith.mulf %v, %v : vector<4xf16>
      %e = math.exp %sq : vector<4xf16>
      %wide = arith.extf %e : vector<4xf16> to vector<4xf32>
      %b = arith.truncf %wide : vector<4xf32> to vector<4xbf16>
      vector.store %e, %out[%o] {alignment = 8} : memref<128xf16>, vector<4xf16>
      vector.store %b, %out_bf16[%o] : memref<128xbf16>, vector<4xbf16>
      %bits = vector.bitcast %e : vector<4xf16> to vector<2xi32>
      %c2 = arith.constant 2 : index
      %o2 = arith.muli %tid_index, %c2 : index
      vector.store %bits, %out_bits[%o2] : memref<64xi32>, vector<2xi32>"""
    signature = "%in: memref<128xf16>, %out: memref<128xf16>, %out_bf16: memref<128xbf16>, %out_bits: memref<64xi32>"
    x = np.random.default_rng(1).standard_normal(128).astype(np.float16)
    out, out_bf16, out_bits = np.zeros(128, np.float16), np.zeros(128, np.float32), np.zeros(64, np.int32)
    report = simt.run_kernel(kernel(signature, body), [x, out, out_bf16, out_bits], num_warps=1)
    expected = np.exp(x * x)  # numpy rounds to f16 after each op, like the interpreter
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out_bits, expected.view(np.int32))
    # bf16 is held in float32, rounded to nearest-even bf16: the low 16 bits are zero.
    assert not (out_bf16.view(np.uint32) & 0xFFFF).any()
    np.testing.assert_allclose(out_bf16, expected.astype(np.float32), rtol=2**-8)
    assert report.global_accesses[0].instruction_bytes == 8


def test_vector_ops_and_dense_constants():
    body = """
      %cst = arith.constant dense<[10, 20, 30, 40]> : vector<4xi32>
      %t4 = vector.broadcast %tid : i32 to vector<4xi32>
      %v = arith.addi %cst, %t4 : vector<4xi32>
      %c3 = arith.constant 3 : i32
      %lane_mod = arith.andi %tid, %c3 : i32
      %dyn = arith.index_cast %lane_mod : i32 to index
      %picked = vector.extract %v[%dyn] : i32 from vector<4xi32>
      %first = vector.extract %v[0] : i32 from vector<4xi32>
      %ins = vector.insert %picked, %v[3] : i32 into vector<4xi32>
      %sh = vector.shuffle %ins, %cst [7, 3, 0, 5] : vector<4xi32>, vector<4xi32>
      %two = vector.from_elements %first, %picked : vector<2xi32>
      %grid = vector.broadcast %two : vector<2xi32> to vector<2x2xi32>
      %row = vector.extract %grid[1] : vector<2xi32> from vector<2x2xi32>
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c6 = arith.constant 6 : index
      %base = arith.muli %tid_index, %c6 : index
      vector.store %sh, %out[%base] : memref<192xi32>, vector<4xi32>
      %o = arith.addi %base, %c4 : index
      vector.store %row, %out[%o] : memref<192xi32>, vector<2xi32>"""
    out = np.zeros(192, np.int32)
    simt.run_kernel(kernel("%out: memref<192xi32>", body), [out], num_warps=1)
    t = np.arange(32)[:, None]
    v = np.array([10, 20, 30, 40]) + t
    picked = v[np.arange(32), np.arange(32) % 4][:, None]
    ins = np.concatenate([v[:, :3], picked], axis=1)
    both = np.concatenate([ins, np.broadcast_to([10, 20, 30, 40], (32, 4))], axis=1)
    expected = np.concatenate([both[:, [7, 3, 0, 5]], v[:, :1], picked], axis=1)
    np.testing.assert_array_equal(out.reshape(32, 6), expected)


def test_multiple_blocks_use_block_id():
    body = """
      %b = gpu.block_id x
      %n = gpu.block_dim x
      %base = arith.muli %b, %n : index
      %i = arith.addi %base, %tid_index : index
      %g = gpu.grid_dim x
      %gi = arith.index_cast %g : index to i32
      memref.store %gi, %out[%i] : memref<96xi32>"""
    out = np.zeros(96, np.int32)
    report = simt.run_kernel(kernel("%out: memref<96xi32>", body), {"arg0": out}, num_warps=1, num_blocks=3)
    np.testing.assert_array_equal(out, 3)
    assert report.blocks == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    out[:] = 0
    simt.run_kernel(kernel("%out: memref<96xi32>", body), {0: out}, num_warps=1, block_id=1, num_blocks=3)
    np.testing.assert_array_equal(out, np.repeat([0, 3, 0], 32))


def test_bf16_constants_and_nested_control_flow():
    # MLIR prints bf16 inf/nan as hex bit patterns, which numpy cannot read from the attribute.
    body = """
      %cst = arith.constant dense<[0x7F80, 1.5, -2.0, 3.0]> : vector<4xbf16>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c2_i32 = arith.constant 2 : i32
      %small = arith.cmpi ult, %tid, %c2_i32 : i32
      scf.if %small {
        scf.for %i = %c0 to %c4 step %c1 {
          %x = vector.extract %cst[%i] : bf16 from vector<4xbf16>
          %row = arith.muli %tid_index, %c4 : index
          %o = arith.addi %row, %i : index
          memref.store %x, %out[%o] : memref<8xbf16>
        }
      }"""
    out = np.zeros(8, np.float32)
    simt.run_kernel(kernel("%out: memref<8xbf16>", body), [out], num_warps=1)
    np.testing.assert_array_equal(out, [np.inf, 1.5, -2.0, 3.0] * 2)


def _wrap32(x):
    """Signed 32-bit two's-complement value of an integer array."""
    return ((np.asarray(x, dtype=np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


_U = np.uint32
INT_CASES = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << (b & 31),
    "arith.shrui": lambda a, b: a.astype(_U) >> _U(b & 31),
    "arith.shrsi": lambda a, b: a >> (b & 31),
    "arith.divui": lambda a, b: a.astype(_U) // b.astype(_U),
    "arith.remui": lambda a, b: a.astype(_U) % b.astype(_U),
    "arith.divsi": _trunc_div,
    "arith.remsi": lambda a, b: a - _trunc_div(a, b) * b,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.maxui": lambda a, b: np.maximum(a.astype(_U), b.astype(_U)),
    "arith.minui": lambda a, b: np.minimum(a.astype(_U), b.astype(_U)),
}
PREDICATES = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
    "ult": lambda a, b: a.astype(_U) < b.astype(_U),
    "ule": lambda a, b: a.astype(_U) <= b.astype(_U),
    "ugt": lambda a, b: a.astype(_U) > b.astype(_U),
    "uge": lambda a, b: a.astype(_U) >= b.astype(_U),
}
FLOAT_BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.remf": np.fmod,
}
FLOAT_UNARY = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.exp": np.exp,
    "math.sqrt": np.sqrt,
    "math.floor": np.floor,
    "math.tanh": np.tanh,
    "math.rsqrt": lambda x: np.float32(1) / np.sqrt(x),
}


def elementwise(op_lines: str, element: str, a, b, out_dtype):
    body = f"""
      %a = memref.load %in_a[%tid_index] : memref<32x{element}>
      %b = memref.load %in_b[%tid_index] : memref<32x{element}>
{op_lines}
      memref.store %r, %out[%tid_index] : memref<32x{out_dtype[0]}>"""
    signature = f"%in_a: memref<32x{element}>, %in_b: memref<32x{element}>, %out: memref<32x{out_dtype[0]}>"
    out = np.zeros(32, out_dtype[1])
    simt.run_kernel(kernel(signature, body), [a, b, out], num_warps=1)
    return out


@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_integer_ops_match_numpy(name):
    rng = np.random.default_rng(len(name))
    a = rng.integers(-(2**31), 2**31, 32).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, 32).astype(np.int32)
    if name.startswith("arith.sh"):
        b = rng.integers(0, 32, 32).astype(np.int32)
    b[b == 0] = 7
    out = elementwise(f"      %r = {name} %a, %b : i32", "i32", a, b, ("i32", np.int32))
    expected = _wrap32(INT_CASES[name](a.astype(np.int64), b.astype(np.int64)).astype(np.int64) & 0xFFFFFFFF)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("predicate", sorted(PREDICATES))
def test_cmpi_predicates(predicate):
    a = np.array([-5, 5, 0, -1, 7] * 6 + [1, 2], np.int32)
    b = np.array([5, -5, 0, 3, 7] * 6 + [2, 1], np.int32)
    lines = f"      %c = arith.cmpi {predicate}, %a, %b : i32\n      %r = arith.extui %c : i1 to i32"
    out = elementwise(lines, "i32", a, b, ("i32", np.int32))
    np.testing.assert_array_equal(out, PREDICATES[predicate](a.astype(np.int64), b.astype(np.int64)))


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY) + sorted(FLOAT_UNARY))
def test_float_ops_match_numpy(name):
    rng = np.random.default_rng(len(name))
    a = rng.uniform(0.5, 4, 32).astype(np.float32)
    b = rng.uniform(0.5, 4, 32).astype(np.float32) * rng.choice([-1, 1], 32).astype(np.float32)
    if name in FLOAT_UNARY:
        out = elementwise(f"      %r = {name} %a : f32", "f32", a, b, ("f32", np.float32))
        expected = FLOAT_UNARY[name](a)
    else:
        out = elementwise(f"      %r = {name} %a, %b : f32", "f32", a, b, ("f32", np.float32))
        expected = FLOAT_BINARY[name](a, b)
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6)


def test_float_compare_and_conversions():
    a = np.array([1.0, np.nan, -2.5, 3e9, -3e9, 0.0, 7.9, -7.9] * 4, np.float32)
    b = np.array([1.0, 1.0, -3.0, 0.0, np.nan, -0.0, 8.0, 8.0] * 4, np.float32)
    lines = """
      %olt = arith.cmpf olt, %a, %b : f32
      %ult = arith.cmpf ult, %a, %b : f32
      %oeq = arith.cmpf oeq, %a, %b : f32
      %une = arith.cmpf une, %a, %b : f32
      %i = arith.fptosi %a : f32 to i32
      %back = arith.sitofp %i : i32 to f32
      %ui = arith.fptoui %b : f32 to i8
      %u = arith.uitofp %ui : i8 to f32
      %flags = vector.from_elements %olt, %ult, %oeq, %une : vector<4xi1>
      %sum = arith.addf %back, %u : f32
      %r = arith.select %olt, %sum, %back : f32"""
    out = elementwise(lines, "f32", a, b, ("f32", np.float32))
    saturated = np.clip(np.trunc(np.nan_to_num(a)), -(2**31), 2**31 - 1)
    unsigned = np.clip(np.trunc(np.nan_to_num(b)), 0, 255)
    np.testing.assert_array_equal(out, np.where(a < b, saturated + unsigned, saturated).astype(np.float32))


def test_docstrings_list_exactly_the_supported_ops():
    """Each dialect module of simt/dialects/ lists its ops in its docstring (`Ops: ...`); together
    they are exactly SUPPORTED_OPS."""
    listed = set()
    for dialect in dialects.DIALECTS:
        module = importlib.import_module(f"linear_layout.simt.dialects.{dialect}")
        section = module.__doc__.split("Ops:")[1].replace("\n", " ")
        words = re.sub(r"\.(\s|$)", " ", re.sub(r"\([^)]*\)", "", section).replace(",", " ")).split()
        listed |= {f"{dialect}.{w}" for w in words if re.fullmatch(r"[a-z_0-9]+(\.[a-z_0-9]+)*", w)}
    assert listed == set(simt.SUPPORTED_OPS)


def test_kernel_selection():
    two = (
        DESIGN_COPY.replace(
            "gpu.module @kernels {",
            """gpu.module @kernels {
  gpu.func @other() kernel { gpu.return }""",
        )
        + "\n"
    )
    with pytest.raises(simt.SimtError, match=r"expected exactly one kernel, found \['other', 'copy'\]"):
        simt.run_kernel(two, [])
    x, y = np.ones((32, 32), np.float32), np.zeros((32, 32), np.float32)
    simt.run_kernel(two, [x, y], kernel="copy")
    np.testing.assert_array_equal(y, x)


WARP_BARRIER = "%all_lanes = arith.constant -1 : i32\n      nvvm.bar.warp.sync %all_lanes : i32"


def test_a_warp_barrier_orders_nothing_between_warps():
    # The transpose exchanges data between warps: a warp barrier in place of gpu.barrier is a race.
    with pytest.raises(simt.RaceError, match="read-after-write"):
        transpose(stride=32, barrier=WARP_BARRIER)


def test_a_warp_barrier_is_counted_and_needs_every_lane():
    # Each warp writes and reads back its own 32 words: a warp barrier suffices.
    body = """
      %c31 = arith.constant 31 : i32
      %lane = arith.andi %tid, %c31 : i32
      %ti = arith.index_cast %tid : i32 to index
      %mirror = arith.xori %tid, %c31 : i32
      %mi = arith.index_cast %mirror : i32 to index
      memref.store %tid, %smem[%ti] : memref<64xi32, #gpu.address_space<workgroup>>
      {barrier}
      %x = memref.load %smem[%mi] : memref<64xi32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%ti] : memref<64xi32>"""
    out = np.zeros(64, np.int32)
    source = kernel(
        "%out: memref<64xi32>", body.format(barrier=WARP_BARRIER), workgroup=f"%smem: memref<64xi32, {SMEM}>"
    )
    report = simt.run_kernel(source, [out], num_warps=2)
    np.testing.assert_array_equal(out, np.arange(64) ^ 31)
    assert report.barriers == report.warp_barriers == 1 and not report.races
    partial = body.format(barrier="%m = arith.constant 65535 : i32\n      nvvm.bar.warp.sync %m : i32")
    with pytest.raises(simt.UnsupportedOp, match="mask other than -1"):
        simt.run_kernel(
            kernel("%out: memref<64xi32>", partial, workgroup=f"%smem: memref<64xi32, {SMEM}>"), [out], num_warps=2
        )


SHARED_ATOMICS = """
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      %ti = arith.index_cast %tid : i32 to index
      %bin = arith.andi %tid, %c3 : i32
      %bi = arith.index_cast %bin : i32 to index
      %low = arith.cmpi ult, %tid, %c3 : i32
      scf.if %low {{
        memref.store %c0, %smem[%bi] : memref<4xi32, #gpu.address_space<workgroup>>
      }}
      %c3i = arith.constant 3 : index
      memref.store %c0, %smem[%c3i] : memref<4xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %old = memref.atomic_rmw addi %c1, %smem[%bi] : (i32, memref<4xi32, #gpu.address_space<workgroup>>) -> i32
      {between}
      %count = memref.load %smem[%bi] : memref<4xi32, #gpu.address_space<workgroup>>
      memref.store %count, %out[%ti] : memref<128xi32>"""


def test_shared_atomics_of_several_warps_count_and_race_only_with_plain_accesses():
    out = np.zeros(128, np.int32)
    counted = kernel(
        "%out: memref<128xi32>", SHARED_ATOMICS.format(between="gpu.barrier"), workgroup=f"%smem: memref<4xi32, {SMEM}>"
    )
    report = simt.run_kernel(counted, [out], num_warps=4)
    np.testing.assert_array_equal(out, np.full(128, 32))  # 128 threads into 4 bins
    assert not report.races and report.op_counts["memref.atomic_rmw"] == 1
    racy = kernel("%out: memref<128xi32>", SHARED_ATOMICS.format(between=""), workgroup=f"%smem: memref<4xi32, {SMEM}>")
    with pytest.raises(simt.RaceError, match="read-after-atomic"):
        simt.run_kernel(racy, [out], num_warps=4)
