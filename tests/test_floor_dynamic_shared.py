"""Scratch above 48 KiB lives in dynamic shared memory (patterns/dynamic_shared_memory.py).

A CUDA module cannot declare more than 48 KiB of static `.shared` memory, so a kernel whose
workgroup buffers need more gets them as `memref.view`s of `gpu.dynamic_shared_memory`; the
stock NVVM pipeline turns that into `.extern .shared .align 16 .b8 ll_dynamic_shared[]`, and the
kernel records the launch's dynamic bytes (`ll.dynamic_shared_memory`). Checked here: the IR,
the PTX (declaration, no static array, the offsets of the views), and execution in the SIMT
interpreter (exact output, no race, wavefronts at the floor), with the ordinary and the
ldmatrix/stmatrix paths; kernels within the limit keep their static buffers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from mlir import ir

from linear_layout.core.hardware import MAX_STATIC_SHARED_BYTES
from linear_layout.encodings import BlockedLayout, NVMMADistributedLayout
from linear_layout.ir import load_dialects
from linear_layout.passes import build_pass_manager
from linear_layout.patterns.dynamic_shared_memory import dynamic_shared_bytes, place_shared_memory
from linear_layout.simt import run_kernel
from linear_layout.simt.interpreter import UnsupportedOp
from lowering_cases import kernel_text, random_input
from test_lowering_ptx import ptx_of

ROW_F32 = BlockedLayout((1, 4), (8, 4), (8, 1), (1, 0))  # bench_codegen's "transpose 128x128 f32 w8"
COL_F32 = BlockedLayout((4, 1), (4, 8), (1, 8), (0, 1))
MMA_V3 = NVMMADistributedLayout((3, 0), (8, 1), (16, 128, 16))  # bench_codegen's "epilogue v3 128x128 f16 w8"
STORE_F16 = BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0))
ROW_F16_4 = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL_F16_4 = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
EXTERN = ".extern .shared .align 16 .b8 ll_dynamic_shared[];"
STATIC_ARRAY = re.compile(r"^\s*\.shared \.align \d+ \.b8 \w+\[(\d+)\];", re.M)


def lower(text: str, chip: str | None = None) -> str:
    with ir.Context() as context:
        load_dialects(context)
        module = ir.Module.parse(text)
        build_pass_manager(f"ll-lower{{chip={chip}}}" if chip else "ll-lower", context).run(module.operation)
        return str(module)


def to_ptx(lowered: str, chip: str = "sm_90") -> str:
    return ptx_of(lowered, chip)


def transpose_text(shape, dtype: str, row: BlockedLayout, col: BlockedLayout, warps: int = 8) -> str:
    return kernel_text(
        row.to_linear_layout(list(shape)),
        col.to_linear_layout(list(shape)),
        dtype,
        warps,
        encodings=(str(row), str(col)),
    )


def two_conversions_text() -> str:
    """One kernel, two conversions: a 64 KiB f32 transpose and a Hopper f16 epilogue (its own
    buffer, 16 KiB, stored with stmatrix): 80 KiB in all."""
    f32 = "memref<128x128xf32>"
    f16 = "memref<128x128xf16>"
    a, b = f"tensor<128x128xf32, {ROW_F32}>", f"tensor<128x128xf32, {COL_F32}>"
    c, d = f"tensor<128x128xf16, {MMA_V3}>", f"tensor<128x128xf16, {STORE_F16}>"
    return f"""module attributes {{"ttg.num-warps" = 8 : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  func.func @cvt(%in: {f32}, %out: {f32}, %in2: {f16}, %out2: {f16}) {{
    %x = "ll.load"(%in) : ({f32}) -> {a}
    %y = "ttg.convert_layout"(%x) : ({a}) -> {b}
    "ll.store"(%y, %out) : ({b}, {f32}) -> ()
    %u = "ll.load"(%in2) : ({f16}) -> {c}
    %v = "ttg.convert_layout"(%u) : ({c}) -> {d}
    "ll.store"(%v, %out2) : ({d}, {f16}) -> ()
    return
  }}
}}
"""


def execute(lowered: str, inputs: list[np.ndarray]):
    outputs = [np.zeros_like(x) for x in inputs]
    with ir.Context() as context:
        load_dialects(context)
        args = [a for pair in zip(inputs, outputs, strict=True) for a in pair]
        report = run_kernel(ir.Module.parse(lowered), args)
    for x, y in zip(inputs, outputs, strict=True):
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "the conversion lost data"
    assert not report.races
    return report


def test_a_64_kib_scratch_is_dynamic_shared_memory():
    lowered = lower(transpose_text((128, 128), "f32", ROW_F32, COL_F32))
    assert "ll.dynamic_shared_memory = 65536 : i64" in lowered
    assert lowered.count("gpu.dynamic_shared_memory") == 1
    # the kernel's one allocation of bytes is a view of the dynamic memory, the scratch a view of it
    assert re.search(
        r"memref\.view %\w+\[%\w+\]\[\] : memref<\?xi8, #gpu\.address_space<workgroup>> to "
        r"memref<65536xi8, #gpu\.address_space<workgroup>>",
        lowered,
    )
    assert re.search(
        r"memref\.view %\w+\[%\w+\]\[\] \{ll.workgroup_buffer = 0 : i64\} : memref<65536xi8, "
        r"#gpu\.address_space<workgroup>> to memref<16384xi32, #gpu\.address_space<workgroup>>",
        lowered,
    )
    assert "workgroup(" not in lowered
    assert "llvm.mlir.global external @ll_dynamic_shared()" in lowered
    ptx = to_ptx(lowered)
    assert EXTERN in ptx and not STATIC_ARRAY.search(ptx)
    assert "st.shared.v4.b32" in ptx and "ld.shared" in ptx
    report = execute(lowered, [random_input([128, 128], "f32", 1)])
    assert report.wavefronts == report.floor_wavefronts == 1024
    assert MAX_STATIC_SHARED_BYTES == 48 * 1024


def test_two_scratches_share_the_dynamic_bytes_and_the_matrix_path_runs_on_them():
    """The two conversions' scratches (64 KiB and 16 KiB) live at different ops: both start at
    byte 0 of the one allocation (allocation.py), 64 KiB in all, still above the static limit."""
    lowered = lower(two_conversions_text(), chip="sm_90")
    constants = dict(re.findall(r"%(\w+) = arith\.constant (\d+) : index", lowered))
    views = re.findall(
        r"memref\.view %\w+\[%(\w+)\]\[\] \{ll.workgroup_buffer = \d+ : i64\} : memref<\d+xi8, "
        r"#gpu\.address_space<workgroup>> to memref<(\d+)x(i32|f16)",
        lowered,
    )
    offsets = sorted((int(constants[shift]), int(n) * {"i32": 4, "f16": 2}[t]) for shift, n, t in views)
    assert offsets == [(0, 16384), (0, 65536)]
    total = max(offset + size for offset, size in offsets)
    assert f"ll.dynamic_shared_memory = {total} : i64" in lowered and total > MAX_STATIC_SHARED_BYTES
    ptx = to_ptx(lowered)
    assert EXTERN in ptx and not STATIC_ARRAY.search(ptx)
    assert ptx.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == 8  # into the f16 view, by pointer
    report = execute(lowered, [random_input([128, 128], "f32", 2), random_input([128, 128], "f16", 3)])
    assert report.wavefronts == report.floor_wavefronts


def test_a_small_scratch_stays_static():
    lowered = lower(transpose_text((64, 64), "f32", ROW_F32, COL_F32))
    assert "gpu.dynamic_shared_memory" not in lowered and "ll.dynamic_shared_memory" not in lowered
    assert "workgroup(" in lowered
    ptx = to_ptx(lowered)
    assert ".extern .shared" not in ptx
    assert [int(n) for n in STATIC_ARRAY.findall(ptx)] == [16384]
    assert ".shared .align 128 .b8" in ptx  # 128-byte aligned, not only to the element


def test_static_buffers_are_aligned_for_their_widest_access():
    """Without `llvm.align` the stock lowering aligns an f16/i8 array to its element (`.align 2`,
    `.align 1`), less than the 16-byte vectors and matrix rows it serves."""
    for dtype in ("f16", "i8"):
        ptx = to_ptx(lower(transpose_text((64, 64), dtype, ROW_F16_4, COL_F16_4, warps=4)))
        assert re.findall(r"\.shared \.align (\d+) \.b8", ptx) == ["128"], dtype


def _dynamic_kernel(body: str) -> str:
    workgroup = "#gpu.address_space<workgroup>"
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%out: memref<4xf32>) kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
      %d = gpu.dynamic_shared_memory : memref<?xi8, {workgroup}>
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %a = memref.view %d[%c0][] : memref<?xi8, {workgroup}> to memref<4xf32, {workgroup}>
      {body}
      gpu.return
    }}
  }}
}}
"""


def test_the_interpreter_rejects_aliasing_views():
    workgroup = "#gpu.address_space<workgroup>"
    overlapping = f"%b = memref.view %d[%c8][] : memref<?xi8, {workgroup}> to memref<4xf32, {workgroup}>"
    with pytest.raises(UnsupportedOp, match="overlaps"):
        run_kernel(_dynamic_kernel(overlapping), [np.zeros(4, np.float32)])
    same = (
        f"%b = memref.view %d[%c0][] : memref<?xi8, {workgroup}> to memref<4xf32, {workgroup}>\n"
        f"      %x = arith.constant 2.5 : f32\n"
        f"      memref.store %x, %a[%c0] : memref<4xf32, {workgroup}>\n"
        f"      %y = memref.load %b[%c0] : memref<4xf32, {workgroup}>\n"
        f"      memref.store %y, %out[%c0] : memref<4xf32>"
    )
    out = np.zeros(4, np.float32)
    run_kernel(_dynamic_kernel(same), [out])  # the same view twice is one buffer
    assert out[0] == 2.5


def _kernel_with_buffers(*types: str) -> str:
    buffers = ", ".join(f"%b{i}: memref<{t}, {SMEM_SPACE}>" for i, t in enumerate(types))
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k() workgroup({buffers}) kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
      gpu.return
    }}
  }}
}}
"""


SMEM_SPACE = "#gpu.address_space<workgroup>"


@pytest.mark.parametrize(
    "types, dynamic, offsets",
    [
        (("12288xf32",), 0, None),  # exactly 48 KiB: static
        (("12288xf32", "1xi8"), 49153, [0, 49152]),  # one byte more: dynamic, 128-byte-aligned views
        (("100xi8", "12288xf32"), 128 + 49152, [0, 128]),
    ],
)
def test_the_48_kib_limit_is_exact(types, dynamic, offsets):
    with ir.Context() as context:
        load_dialects(context)
        module = ir.Module.parse(_kernel_with_buffers(*types))
        kernel = module.body.operations[0].regions[0].blocks[0].operations[0]
        assert place_shared_memory(kernel) == dynamic == dynamic_shared_bytes(kernel)
        text = str(module)
    if offsets is None:
        assert text.count("{llvm.align = 128 : i64}") == len(types) and "gpu.dynamic_shared_memory" not in text
    else:
        assert "workgroup(" not in text and f"ll.dynamic_shared_memory = {dynamic} : i64" in text
        shifts = re.findall(r"memref\.view %\w+\[%(\w+)\]", text)
        constants = dict(re.findall(r"%(\w+) = arith\.constant (\d+) : index", text))
        assert [int(constants[s]) for s in shifts] == offsets
