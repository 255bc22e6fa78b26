"""Shared-memory reuse by liveness (patterns/allocation.py) and the byte-addressed workgroup memory
of the SIMT interpreter (simt/memory.py): buffers whose lifetimes do not overlap share bytes, as
Triton's allocator packs them; one workgroup allocation of bytes, typed `memref.view`s of it;
views of different element types see the same bytes, and the race detector sees a write through
one view racing with a read through another; the barrier insertion orders the reuse."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from linear_layout.patterns.allocation import BUFFER_ALIGNMENT, Placement, place_buffers
from linear_layout.simt import interpreter as simt
from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel

CORPUS = Path(__file__).parent / "kernel_corpus"
SMEM = "#gpu.address_space<workgroup>"


@st.composite
def _buffers(draw) -> list[Placement]:
    count = draw(st.integers(1, 8))
    found = []
    for _ in range(count):
        first = draw(st.integers(0, 20))
        last = draw(st.integers(first, 24))
        found.append(Placement(None, 1, draw(st.integers(1, 600)), first, last))
    return found


@settings(max_examples=60, deadline=None)
@given(_buffers())
def test_placed_buffers_that_live_together_never_share_bytes(buffers):
    placed = place_buffers(buffers)
    assert [(p.bytes, p.first, p.last) for p in placed] == [(b.bytes, b.first, b.last) for b in buffers]
    for k, p in enumerate(placed):
        assert p.offset % BUFFER_ALIGNMENT == 0
        for q in placed[k + 1 :]:
            lives = p.first <= q.last and q.first <= p.last
            overlaps = p.offset < q.offset + q.bytes and q.offset < p.offset + p.bytes
            assert not (lives and overlaps)


def test_a_dead_buffers_bytes_serve_a_later_one():
    # Triton's matmul: A and B (2 KiB each) live through the loop, the epilogue's 4 KiB conversion
    # scratch after it: 4 KiB in all, the scratch over A and B.
    a, b = Placement(None, 1, 2048, 0, 10), Placement(None, 1, 2048, 1, 10)
    scratch = Placement(None, 1, 4096, 12, 12)
    placed = place_buffers([a, b, scratch])
    assert [p.offset for p in placed] == [0, 2048, 0]
    assert max(p.offset + p.bytes for p in placed) == 4096


def _kernel(signature: str, body: str, bytes_: int = 512) -> str:
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k({signature}) workgroup(%bytes: memref<{bytes_}xi8, {SMEM}>) kernel {{
      %tid_index = gpu.thread_id x
      %tid = arith.index_cast %tid_index : index to i32
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %f = memref.view %bytes[%c0][] : memref<{bytes_}xi8, {SMEM}> to memref<64xf32, {SMEM}>
      %i = memref.view %bytes[%c0][] : memref<{bytes_}xi8, {SMEM}> to memref<64xi32, {SMEM}>
      %h = memref.view %bytes[%c256][] : memref<{bytes_}xi8, {SMEM}> to memref<64xbf16, {SMEM}>
      %u = memref.view %bytes[%c256][] : memref<{bytes_}xi8, {SMEM}> to memref<64xi16, {SMEM}>
{body}
      gpu.return
    }}
  }}
}}"""


def test_views_of_different_types_see_the_same_bytes():
    body = """
      %x = arith.sitofp %tid : i32 to f32
      memref.store %x, %f[%tid_index] : memref<64xf32, #gpu.address_space<workgroup>>
      %y = arith.sitofp %tid : i32 to bf16
      memref.store %y, %h[%tid_index] : memref<64xbf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %bits = memref.load %i[%tid_index] : memref<64xi32, #gpu.address_space<workgroup>>
      memref.store %bits, %out[%tid_index] : memref<64xi32>
      %half = memref.load %u[%tid_index] : memref<64xi16, #gpu.address_space<workgroup>>
      %wide = arith.extui %half : i16 to i32
      memref.store %wide, %out16[%tid_index] : memref<64xi32>"""
    out, out16 = np.zeros(64, np.int32), np.zeros(64, np.int32)
    report = simt.run_kernel(_kernel("%out: memref<64xi32>, %out16: memref<64xi32>", body), [out, out16], num_warps=2)
    np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32).view(np.int32))
    np.testing.assert_array_equal(out16, np.arange(64, dtype=np.float32).view(np.uint32) >> 16)  # bf16's bits
    assert not report.races
    # the report lists the views as the kernel typed them (not the bytes under them)
    assert sorted(str(b.elem.name) for b in report.workgroup_buffers) == ["bf16", "f32", "i16", "i32"]


_CROSS_WARP = """
      %x = arith.sitofp %tid : i32 to f32
      memref.store %x, %f[%tid_index] : memref<64xf32, #gpu.address_space<workgroup>>
      {barrier}
      %c32 = arith.constant 32 : i32
      %c63 = arith.constant 63 : i32
      %other = arith.addi %tid, %c32 : i32
      %wrapped = arith.andi %other, %c63 : i32
      %at = arith.index_cast %wrapped : i32 to index
      %bits = memref.load %i[%at] : memref<64xi32, #gpu.address_space<workgroup>>
      memref.store %bits, %out[%tid_index] : memref<64xi32>"""


def test_a_write_through_one_view_and_a_read_through_another_race_without_a_barrier():
    out = np.zeros(64, np.int32)
    with pytest.raises(simt.RaceError, match="read-after-write"):
        simt.run_kernel(_kernel("%out: memref<64xi32>", _CROSS_WARP.format(barrier="")), [out], num_warps=2)
    report = simt.run_kernel(
        _kernel("%out: memref<64xi32>", _CROSS_WARP.format(barrier="gpu.barrier")), [out], num_warps=2
    )
    assert not report.races
    np.testing.assert_array_equal(out, np.roll(np.arange(64, dtype=np.float32), -32).view(np.int32))


def test_a_view_outside_its_bytes_is_an_error():
    body = """
      %c500 = arith.constant 500 : index
      %bad = memref.view %bytes[%c500][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>"""
    with pytest.raises(simt.MemoryAccessError, match=r"memref\.view of 16 bytes at byte 500"):
        simt.run_kernel(_kernel("", body), [], num_warps=1)


def _triton_figures(stem: str) -> dict:
    return json.loads((CORPUS / "triton_ptx.json").read_text())[stem]


def test_the_matmul_epilogue_reuses_the_operand_buffers_after_a_barrier():
    """matmul_f16.sm80.w4: one workgroup allocation of Triton's shared bytes; the epilogue's
    conversion scratch lies over the operand buffers A and B, dead after the loop; the barrier
    before its first store orders the reuse: without it the interpreter reports the race (the
    store overwrites bytes other warps read as A in the loop)."""
    pytest.importorskip("triton")
    sys.path.insert(0, str(CORPUS))
    from corpus import case

    stem = "matmul_f16.sm80.w4"
    module = lower_ttgir((CORPUS / "ttgir" / f"{stem}.ttgir").read_text())
    text = str(module)
    (allocation,) = re.findall(r"workgroup\(%\w+ : memref<(\d+)xi8, #gpu.address_space<workgroup>>", text)
    assert int(allocation) == _triton_figures(stem)["shared_bytes"] == 4096
    views = re.findall(r"(%\w+) = memref.view %\w+\[%c(\d+)\]\[\] \{ll.workgroup_buffer = (\d+) : i64\}", text)
    assert [(offset, index) for _, offset, index in views] == [("0", "0"), ("2048", "1"), ("0", "2")]
    scratch = views[2][0]
    lines = text.splitlines()
    first_store = next(k for k, line in enumerate(lines) if "store" in line and f"{scratch}[" in line)
    barrier = max(k for k in range(first_store) if lines[k].strip() == "gpu.barrier")
    assert "scf.yield" in "".join(lines[barrier - 3 : barrier])  # right after the loop
    kernel = case("matmul_f16")
    launch = kernel.make_inputs(np.random.default_rng(5))
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    assert not run_triton_kernel(module, args, launch.grid).races
    without = ir.Module.parse("\n".join(lines[:barrier] + lines[barrier + 1 :]), module.context)
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    report = run_triton_kernel(without, args, launch.grid, on_race="record")
    assert {race.kind for race in report.races} == {"write-after-read"}
    assert all(race.op == "vector.store" for race in report.races)


def _copy_kernel(read: str) -> str:
    """Each of 64 threads copies 8 f16 (16 bytes) with `cp.async` through an f16 view of the
    workgroup bytes, then (`read`) reads its 16 bytes through an i32 view of the same bytes."""
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%in: memref<512xf16>, %out: memref<256xi32>) workgroup(%bytes: memref<1024xi8, {SMEM}>) kernel {{
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %halves = memref.view %bytes[%c0][] : memref<1024xi8, {SMEM}> to memref<512xf16, {SMEM}>
      %words = memref.view %bytes[%c0][] : memref<1024xi8, {SMEM}> to memref<256xi32, {SMEM}>
      %first = arith.muli %tid, %c8 : index
      %first64 = arith.index_cast %first : index to i64
      %g = memref.extract_aligned_pointer_as_index %in : memref<512xf16> -> index
      %g64 = arith.index_cast %g : index to i64
      %gbase = llvm.inttoptr %g64 : i64 to !llvm.ptr<1>
      %src = llvm.getelementptr %gbase[%first64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
      %s = memref.extract_aligned_pointer_as_index %halves : memref<512xf16, {SMEM}> -> index
      %s64 = arith.index_cast %s : index to i64
      %sbase = llvm.inttoptr %s64 : i64 to !llvm.ptr<3>
      %dst = llvm.getelementptr %sbase[%first64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      nvvm.cp.async.commit.group
{read}
      gpu.return
    }}
  }}
}}"""


_READ_WORDS = f"""      %at = arith.muli %tid, %c4 : index
      %w = vector.load %words[%at] : memref<256xi32, {SMEM}>, vector<4xi32>
      vector.store %w, %out[%at] : memref<256xi32>, vector<4xi32>"""


def test_a_copy_through_one_view_lands_in_the_bytes_another_view_reads():
    data = (np.arange(512) % 97).astype(np.float16)
    out = np.zeros(256, np.int32)
    with pytest.raises(simt.RaceError, match="read-before-async-wait"):  # read through the other view too early
        simt.run_kernel(_copy_kernel(_READ_WORDS + "\n      nvvm.cp.async.wait.group 0"), [data, out], num_warps=2)
    waited = "      nvvm.cp.async.wait.group 0\n" + _READ_WORDS
    report = simt.run_kernel(_copy_kernel(waited), [data, out], num_warps=2)
    assert not report.races
    np.testing.assert_array_equal(out, data.view(np.int32))
