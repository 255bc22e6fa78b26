"""Write the TTGIR corpus: real Triton kernels compiled on the CPU for several targets.

    python tests/ttgir_corpus/generate.py            # (re)writes tests/ttgir_corpus/<kernel>.<target>.ttgir

Each kernel is compiled with `triton.compile(ASTSource(...), target=GPUTarget(...))` for each of
its `targets` (all of `TARGETS` unless it names some); no GPU is needed. The files are committed;
`tests/test_ttgir.py` checks that `print_ttgir(parse_ttgir(...))` gives each file back byte for
byte, and compiles each file and its rewrite and compares the PTX/AMDGCN.
Source locations are written relative to this file's name, so the corpus holds no machine paths.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent

TARGETS = {
    "sm80": GPUTarget("cuda", 80, 32),
    "sm90": GPUTarget("cuda", 90, 32),
    "gfx942": GPUTarget("hip", "gfx942", 64),
    "gfx1100": GPUTarget("hip", "gfx1100", 32),
    "gfx1200": GPUTarget("hip", "gfx1200", 32),
}


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32 if c_ptr.dtype.element_ty != tl.int32 else tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(diff * diff, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, (diff * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, stride, seq_len, scale,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(q_ptr + offs_m[:, None] * stride + offs_d[None, :])
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        k = tl.load(k_ptr + (start + offs_n)[None, :] * stride + offs_d[:, None])
        s = tl.dot(q, k) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + (start + offs_n)[:, None] * stride + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + offs_m[:, None] * stride + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def reduce_rows_kernel(x_ptr, sum_ptr, max_ptr, arg_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * BLOCK_N + cols[None, :])
    tl.store(sum_ptr + rows, tl.sum(x, axis=1))
    tl.store(max_ptr + cols, tl.max(x, axis=0))
    tl.store(arg_ptr + rows, tl.argmax(x, axis=1))


@triton.jit
def scan_kernel(x_ptr, y_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = rows[:, None] * BLOCK_N + cols[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=1) + tl.cumsum(x, axis=0))


@triton.jit
def atomics_kernel(x_ptr, hist_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + (x & 255), 1, mask=mask)
    tl.atomic_max(total_ptr + 1, tl.max(x, axis=0))
    tl.atomic_cas(total_ptr, 0, 1)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    cols = pid_n * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@triton.jit
def tma_copy_kernel(in_desc, out_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tile = in_desc.load([pid * BLOCK_M, 0])
    out_desc.store([pid * BLOCK_M, 0], tile * 2)


@triton.jit
def elementwise_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    out = tl.where(x > y, tl.math.fma(x, y, 1.0), tl.sigmoid(x) * tl.cos(y))
    tl.store(out_ptr + offs, out, mask=mask)


@triton.jit
def matmul_unmasked_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):  # noqa: B007 (its name is in the stored TTGIR)
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def inline_asm_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr, ASM: tl.constexpr, CONSTRAINTS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    out = tl.inline_asm_elementwise(ASM, CONSTRAINTS, [x, y], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, out)


@triton.jit
def gather_kernel(x_ptr, index_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = rows[:, None] * BLOCK_N + cols[None, :]
    x = tl.load(x_ptr + offs)
    index = tl.load(index_ptr + offs) & (BLOCK_M - 1)
    tl.store(out_ptr + offs, tl.gather(x, index, axis=0))


@triton.jit
def misc_ops_kernel(x_ptr, y_ptr, i_ptr, out_ptr, hist_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    i = tl.load(i_ptr + offs)
    a = tl.clamp(x, -1.0, 1.0)
    c = tl.sqrt_rn(y)
    d = tl.umulhi(i, i)
    f8 = x.to(tl.float8e5).to(tl.float32)
    bits = x.to(tl.int32, bitcast=True)
    tl.device_assert(x == x, "nan")
    v = tl.load(x_ptr + 4) * tl.num_programs(0)
    tl.store(out_ptr + offs, tl.div_rn(x, y) + c + d.to(tl.float32) + f8 + bits.to(tl.float32) + v)
    tl.store(hist_ptr + tl.arange(0, 16), tl.histogram(i & 15, 16))
    tl.store(out_ptr + BLOCK + tl.arange(0, 2 * BLOCK), tl.cat(a, c, can_reorder=True))


@triton.jit
def tma_matmul_kernel(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([pid_n * BLOCK_N, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def dot_scaled_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    offs_s = tl.arange(0, BLOCK_K // 32)
    a = tl.load(a_ptr + offs_m[:, None] * BLOCK_K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BLOCK_N + offs_n[None, :])
    a_s = tl.load(as_ptr + offs_m[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    b_s = tl.load(bs_ptr + offs_n[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    c = tl.dot_scaled(a, a_s, "e4m3", b, b_s, "e4m3")
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], c)


# Gluon kernels: ops that only Gluon's explicit-layout frontend emits (gfx1250 TDM, clusters, ...).
# Imported here, below the older kernels, so that their source lines (the corpus's locs) stay put.
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as ttgl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction  # noqa: E402
from triton.experimental.gluon.language.amd import cdna5  # noqa: E402
from triton.experimental.gluon.language.amd._layouts import AMDWMMALayout  # noqa: E402
from triton.experimental.gluon.language.amd.cdna4 import async_copy as cdna4_async_copy  # noqa: E402
from triton.experimental.gluon.language.amd.cdna5 import cluster as amd_cluster  # noqa: E402
from triton.experimental.gluon.language.amd.cdna5 import mbarrier as amd_mbarrier  # noqa: E402
from triton.experimental.gluon.language.amd.cdna5 import tdm  # noqa: E402
from triton.experimental.gluon.language.nvidia import blackwell  # noqa: E402
from triton.experimental.gluon.language.nvidia.blackwell import clc  # noqa: E402
from triton.experimental.gluon.language.nvidia.blackwell import tma as blackwell_tma  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import mbarrier as nv_mbarrier  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import tma as hopper_tma  # noqa: E402


@gluon.jit
def tdm_kernel(ptr, out_ptr, M, N, BLOCK_M: ttgl.constexpr, BLOCK_N: ttgl.constexpr):
    layout: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    desc = tdm.make_tensor_descriptor(ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N], layout)
    out = tdm.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N], layout)
    smem = ttgl.allocate_shared_memory(ptr.dtype.element_ty, [BLOCK_M, BLOCK_N], layout)
    smem2 = ttgl.allocate_shared_memory(ptr.dtype.element_ty, [BLOCK_M, BLOCK_N], layout)
    bar = ttgl.allocate_shared_memory(ttgl.int64, [1], amd_mbarrier.MBarrierLayout())
    amd_mbarrier.init(bar, count=1)
    tdm.prefetch(desc, [0, 0])
    moved = tdm.update_tensor_descriptor(desc, add_offsets=[BLOCK_M, 0], set_bounds=[M, N], pred=M > 0)
    tdm.async_load(moved, dest=smem, mbarrier=bar, warp_used_hint=3, cache_modifier=".cg")
    tdm.async_load(desc, [0, 0], smem2)
    tdm.async_load_fused([(desc, smem, 1), (moved, smem2, 2)])
    tdm.async_wait(0)
    amd_mbarrier.wait(bar, 0)
    amd_mbarrier.arrive(bar, count=1)
    rows = ttgl.arange(0, BLOCK_M, layout=ttgl.BlockedLayout([BLOCK_M], [32], [4], [0]))
    tdm.async_gather(desc, rows, smem, mbarrier=bar)
    tdm.async_scatter(out, rows, smem2)
    tdm.async_store(out, [0, 0], smem, mbarrier=bar)
    tdm.async_wait(0)


@gluon.jit
def amd_cluster_kernel(ptr):
    amd_cluster.arrive()
    amd_cluster.wait()


@gluon.jit
def nvidia_tma_ops_kernel(ptr, M, N, BLOCK_M: ttgl.constexpr, BLOCK_N: ttgl.constexpr):
    layout: ttgl.constexpr = ttgl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    desc = hopper_tma.make_tensor_descriptor(ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N], layout)
    rows_desc = hopper_tma.make_tensor_descriptor(ptr, [M, N], [N, 1], [1, BLOCK_N], layout)
    smem = ttgl.allocate_shared_memory(ttgl.float16, [BLOCK_M, BLOCK_N], layout)
    bar = ttgl.allocate_shared_memory(ttgl.int64, [1], nv_mbarrier.MBarrierLayout())
    nv_mbarrier.init(bar, count=1)
    nv_mbarrier.expect(bar, BLOCK_M * BLOCK_N * 2)
    rows = ttgl.arange(0, BLOCK_M, layout=ttgl.SliceLayout(0, ttgl.BlockedLayout([1, 4], [32, 1], [1, 4], [1, 0])))
    blackwell_tma.async_gather(rows_desc, rows, 0, bar, smem)
    nv_mbarrier.wait(bar, 0)
    blackwell_tma.async_scatter(rows_desc, rows, 0, smem)
    hopper_tma.async_atomic_add(desc, [0, 0], smem)
    hopper_tma.store_wait(0)
    x = ttgl.full([BLOCK_M, BLOCK_N], 1.0, ttgl.float32, ttgl.BlockedLayout([1, 2], [4, 8], [4, 1], [1, 0]))
    y = blackwell.fma2(blackwell.add2(x, x), blackwell.mul2(x, x), blackwell.sub2(x, x))
    smem.store(y.to(ttgl.float16))
    response = ttgl.allocate_shared_memory(ttgl.int64, [2], nv_mbarrier.MBarrierLayout())
    clc.try_cancel(response, bar)
    result = clc.load_result(response)
    if result.is_canceled():
        ttgl.store(ptr + result.program_id(0), 1.0)


@gluon.jit
def amd_convert_kernel(ptr, f8_ptr, out_ptr):
    blocked: ttgl.constexpr = ttgl.BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0])
    offs_m = ttgl.arange(0, 32, layout=ttgl.SliceLayout(1, blocked))
    offs_n = ttgl.arange(0, 32, layout=ttgl.SliceLayout(0, blocked))
    offs = offs_m[:, None] * 32 + offs_n[None, :]
    packed = ttgl.load(ptr + offs)
    up = ttgl.fp4_to_fp(packed, ttgl.float16, 1)
    wide: ttgl.constexpr = ttgl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    out_m = ttgl.arange(0, 32, layout=ttgl.SliceLayout(1, wide))
    out_n = ttgl.arange(0, 64, layout=ttgl.SliceLayout(0, wide))
    ttgl.store(out_ptr + out_m[:, None] * 64 + out_n[None, :], up)
    f8 = ttgl.load(f8_ptr + offs)
    up8 = cdna5.scaled_upcast(f8, ttgl.full([32, 32], 127, ttgl.uint8, blocked), ttgl.float16)
    down = cdna5.scaled_downcast(up8, ttgl.full([32, 1], 127, ttgl.uint8, up8.type.layout), "e4m3", axis=1)
    ttgl.store(f8_ptr + offs, down)
    fp4_scale_layout: ttgl.constexpr = cdna5.get_scaled_upcast_fp4_scale_layout(packed, 32, ttgl.float16, 1)
    fp4_scale = ttgl.full([32, 2], 127, ttgl.uint8, fp4_scale_layout)
    up4 = cdna5.scaled_upcast(packed, fp4_scale, ttgl.float16, axis=1)
    ttgl.store(ptr + offs, cdna5.scaled_downcast(up4, fp4_scale, "e2m1", axis=1))
    wmma: ttgl.constexpr = AMDWMMALayout(3, True, [[0, 1], [1, 0]], [], [16, 16, 128])
    operand: ttgl.constexpr = ttgl.DotOperandLayout(operand_index=0, parent=wmma, k_width=16)
    fp4_smem = ttgl.allocate_shared_memory(ttgl.uint8, [64, 64], ttgl.SwizzledSharedLayout(1, 1, 1, [0, 1]))
    repacked = cdna5.load_shared_fp4_repacked(fp4_smem, operand)
    rows = ttgl.arange(0, 128, layout=ttgl.SliceLayout(1, blocked))
    ttgl.store(ptr + rows[:, None] * 32 + offs_n[None, :], ttgl.convert_layout(repacked, blocked))


@gluon.jit
def buffer_to_local_kernel(ptr):
    blocked: ttgl.constexpr = ttgl.BlockedLayout([4], [64], [4], [0])
    offs = ttgl.arange(0, 1024, layout=blocked)
    smem = ttgl.allocate_shared_memory(ttgl.float32, [1024], ttgl.SwizzledSharedLayout(1, 1, 1, [0]))
    cdna4_async_copy.buffer_load_to_shared(smem, ptr, offs)
    cdna4_async_copy.buffer_load_to_shared(smem, ptr, offs, mask=offs < 512, other=0.0, cache_modifier=".cg")
    cdna4_async_copy.commit_group()
    cdna4_async_copy.wait_group(0)


@triton.jit
def split_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    joined = tl.join(tl.load(x_ptr + offs), tl.load(y_ptr + offs))
    first, second = tl.split(joined * 2)
    tl.store(x_ptr + offs, first - second)
    tl.store(y_ptr + offs, tl.sum(joined, axis=1))


@gluon.jit
def tdm_prefetch_kernel(ptr, out_ptr, M, N):
    layout: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    desc = tdm.make_tensor_descriptor(ptr, [M, N], [N, 1], [32, 64], layout)
    offsets = tdm._test_prefetch_with_offsets(desc, [0, 0], pred=M > 0, speculative=True)
    ttgl.store(out_ptr + offsets.to(ttgl.int32), 1.0)


@gluon.jit
def tmem_kernel(out_ptr):
    tmem_layout: ttgl.constexpr = blackwell.TensorMemoryLayout(block=(128, 64), col_stride=1)
    acc = blackwell.allocate_tensor_memory(ttgl.float32, [128, 64], tmem_layout)
    values, maxima = acc.load_max(abs=True)
    part = acc.slice(0, 32).load()
    ttgl.store(out_ptr + ttgl.arange(0, 128, layout=maxima.type.layout), maxima)
    ttgl.store(out_ptr + ttgl.arange(0, 128, layout=ttgl.SliceLayout(1, values.type.layout)), ttgl.sum(values, axis=1))
    ttgl.store(out_ptr + ttgl.arange(0, 128, layout=ttgl.SliceLayout(1, part.type.layout)), ttgl.sum(part, axis=1))


# targets only the kernels that name them are compiled for
EXTRA_TARGETS = {
    "sm100": GPUTarget("cuda", 100, 32),
    "sm103": GPUTarget("cuda", 103, 32),
    "gfx950": GPUTarget("hip", "gfx950", 64),
    "gfx1250": GPUTarget("hip", "gfx1250", 32),
}


@dataclass(frozen=True)
class Kernel:
    name: str
    fn: object
    signature: dict
    constexprs: dict
    options: dict = field(default_factory=dict)
    targets: tuple[str, ...] = tuple(TARGETS)  # the TARGETS it is compiled for


def _matmul(name: str, dtype: str, out: str, stages: int) -> Kernel:
    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{out}", "M": "i32", "N": "i32",
                 "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    return Kernel(name, matmul_kernel, signature, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32},
                  {"num_warps": 4, "num_stages": stages})


KERNELS = (
    _matmul("matmul_f16", "fp16", "fp16", 3),
    _matmul("matmul_f32", "fp32", "fp32", 3),
    _matmul("matmul_i8", "i8", "i32", 3),
    Kernel("softmax", softmax_kernel,
           {"out_ptr": "*fp32", "in_ptr": "*fp32", "stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
           {"BLOCK": 1024}, {"num_warps": 4}),
    Kernel("layernorm", layernorm_kernel,
           {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32", "stride": "i32", "N": "i32",
            "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 2048}, {"num_warps": 8}),
    Kernel("attention_fwd", attention_fwd_kernel,
           {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "stride": "i32",
            "seq_len": "i32", "scale": "fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD": "constexpr"},
           {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD": 64}, {"num_warps": 4, "num_stages": 2}),
    Kernel("reductions", reduce_rows_kernel,
           {"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32", "arg_ptr": "*i32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}, {"BLOCK_M": 64, "BLOCK_N": 128}, {"num_warps": 4}),
    Kernel("scan", scan_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
           {"BLOCK_M": 32, "BLOCK_N": 64}, {"num_warps": 4}),
    Kernel("atomics", atomics_kernel, {"x_ptr": "*i32", "hist_ptr": "*i32", "total_ptr": "*i32", "n": "i32",
                                       "BLOCK": "constexpr"}, {"BLOCK": 512}, {"num_warps": 4}),
    Kernel("transpose", transpose_kernel, {"x_ptr": "*fp16", "y_ptr": "*fp16", "M": "i32", "N": "i32",
                                           "BLOCK": "constexpr"}, {"BLOCK": 64}, {"num_warps": 4}),
    Kernel("tma_copy", tma_copy_kernel,
           {"in_desc": "tensordesc<fp16[64, 64]>", "out_desc": "tensordesc<fp16[64, 64]>",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}, {"BLOCK_M": 64, "BLOCK_N": 64}, {"num_warps": 4}),
    Kernel("elementwise", elementwise_kernel,
           {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
           {"BLOCK": 1024}, {"num_warps": 4}),
    # gfx942's block ping-pong schedule (8 warps, 2 stages, unmasked loads) writes
    # `rocdl.sched.barrier none` and `rocdl.s.setprio 1` (and `ttg.barrier`) into the TTGIR
    Kernel("matmul_pingpong", matmul_unmasked_kernel,
           {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "K": "i32", "stride_am": "i32",
            "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
            "BLOCK_K": "constexpr"}, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64},
           {"num_warps": 8, "num_stages": 2}, targets=("gfx942",)),
    Kernel("inline_asm_ptx", inline_asm_kernel,
           {"x_ptr": "*i32", "y_ptr": "*i32", "out_ptr": "*i32", "BLOCK": "constexpr", "ASM": "constexpr",
            "CONSTRAINTS": "constexpr"},
           {"BLOCK": 512, "ASM": "add.s32 $0, $1, $2;", "CONSTRAINTS": "=r,r,r"}, {"num_warps": 4},
           targets=("sm80", "sm90")),
    Kernel("inline_asm_amdgcn", inline_asm_kernel,
           {"x_ptr": "*i32", "y_ptr": "*i32", "out_ptr": "*i32", "BLOCK": "constexpr", "ASM": "constexpr",
            "CONSTRAINTS": "constexpr"},
           {"BLOCK": 512, "ASM": "v_add_u32 $0, $1, $2", "CONSTRAINTS": "=v,v,v"}, {"num_warps": 4},
           targets=("gfx942", "gfx1100")),
    Kernel("gather", gather_kernel, {"x_ptr": "*fp32", "index_ptr": "*i32", "out_ptr": "*fp32",
                                     "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
           {"BLOCK_M": 32, "BLOCK_N": 32}, {"num_warps": 4}),
    # clampf, precise_divf/sqrt, mulhiui, histogram, assert (debug), fp_to_fp, bitcast, cat
    Kernel("misc_ops", misc_ops_kernel,
           {"x_ptr": "*fp32", "y_ptr": "*fp32", "i_ptr": "*i32", "out_ptr": "*fp32", "hist_ptr": "*i32",
            "BLOCK": "constexpr"}, {"BLOCK": 256}, {"num_warps": 4, "debug": True}, targets=("sm90", "gfx942")),
    # sm_100: tcgen05 (ttng.tc_gen5_mma, ttng.tmem_*) from tl.dot on TMA descriptors, and the same
    # loop warp-specialized (ttg.warp_specialize, its partitions and terminators)
    *(Kernel(name, tma_matmul_kernel,
             {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
              "c_desc": "tensordesc<fp16[128, 128]>", "K": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
              "BLOCK_K": "constexpr", "WARP_SPECIALIZE": "constexpr"},
             {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "WARP_SPECIALIZE": ws},
             {"num_warps": 4, "num_stages": 3}, targets=("sm100",))
      for name, ws in (("tcgen05_matmul", False), ("warp_specialize", True))),
    # tt.join and tt.split, whose results Triton names one by one (%outLHS, %outRHS)
    Kernel("split", split_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 256},
           {"num_warps": 4}, targets=("sm90", "gfx942")),
    # tt.dot_scaled (gfx950 keeps it), ttng.tc_gen5_mma_scaled with tensor-memory scales (sm_100)
    Kernel("dot_scaled", dot_scaled_kernel,
           {"a_ptr": "*fp8e4nv", "as_ptr": "*u8", "b_ptr": "*fp8e4nv", "bs_ptr": "*u8", "c_ptr": "*fp32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
           {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}, {"num_warps": 4}, targets=("sm100", "gfx950")),
    # gfx1250 TDM: descriptor updates, loads (one with a barrier, fused), stores, gather, scatter, prefetch
    Kernel("gluon_tdm", tdm_kernel, {"ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32",
                                     "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
           {"BLOCK_M": 32, "BLOCK_N": 64}, {"num_warps": 4}, targets=("gfx1250",)),
    # sm_100 TMA gather/scatter/reduce (tma.async_atomic_add), packed f32x2 arithmetic, cluster launch control
    Kernel("gluon_nvidia_tma", nvidia_tma_ops_kernel, {"ptr": "*fp16", "M": "i32", "N": "i32", "BLOCK_M": "constexpr",
                                                       "BLOCK_N": "constexpr"},
           {"BLOCK_M": 32, "BLOCK_N": 64}, {"num_warps": 4}, targets=("sm100",)),
    # fp4/fp8 conversions (ttg.fp4_to_fp, amdg.scaled_upcast/downcast_*), fp4 repacked for WMMA
    Kernel("gluon_amd_convert", amd_convert_kernel, {"ptr": "*u8", "f8_ptr": "*fp8e4nv", "out_ptr": "*fp16"}, {},
           {"num_warps": 4}, targets=("gfx1250",)),
    # amdg.buffer_load_to_local, without and with mask, other and a cache policy
    Kernel("gluon_buffer_to_local", buffer_to_local_kernel, {"ptr": "*fp32"}, {}, {"num_warps": 4},
           targets=("gfx950",)),
    # amdg.tdm_prefetch returning the offsets it prefetched (Gluon's test hook for them)
    Kernel("gluon_tdm_prefetch", tdm_prefetch_kernel, {"ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32"},
           {}, {"num_warps": 4}, targets=("gfx1250",)),
    # sm_103 (Blackwell Ultra): ttng.tmem_load with a max reduction (its two results named by Triton,
    # %result, %red) and ttng.tmem_subslice
    Kernel("gluon_tmem", tmem_kernel, {"out_ptr": "*fp32"}, {}, {"num_warps": 4}, targets=("sm103",)),
    Kernel("gluon_amd_cluster", amd_cluster_kernel, {"ptr": "*fp16"}, {}, {"num_warps": 4, "num_ctas": 2},
           targets=("gfx1250",)),
)


def _portable_locations(ttgir: str) -> str:
    """Replace absolute paths in `loc(...)`: this file by its bare name, Triton's own sources by
    their path inside the package (`triton/language/standard.py`)."""
    ttgir = re.sub(r'"[^"]*/(generate\.py)"', r'"\1"', ttgir)
    return re.sub(r'"[^"]*/site-packages/(triton/[^"]*)"', r'"\1"', ttgir)


def _pointer_alignment(kernel: Kernel) -> dict:
    """`tt.divisibility = 16` on every pointer argument, as Triton's launcher specialises 16-byte
    aligned pointers (the common case: torch allocations)."""
    names = list(kernel.signature)
    return {(names.index(name),): [["tt.divisibility", 16]] for name, kind in kernel.signature.items()
            if kind.startswith("*")}


def compile_ttgir(kernel: Kernel, target: GPUTarget) -> str:
    make_source = GluonASTSource if isinstance(kernel.fn, GluonJITFunction) else ASTSource
    source = make_source(kernel.fn, kernel.signature, kernel.constexprs, attrs=_pointer_alignment(kernel))
    return _portable_locations(triton.compile(source, target=target, options=dict(kernel.options)).asm["ttgir"])


def main(argv: list[str]) -> int:
    only = set(argv)
    failures = 0
    for kernel in KERNELS:
        for target_name in kernel.targets:
            target = {**TARGETS, **EXTRA_TARGETS}[target_name]
            stem = f"{kernel.name}.{target_name}"
            if only and kernel.name not in only and stem not in only:
                continue
            try:
                text = compile_ttgir(kernel, target)
            except Exception as error:  # a kernel a target cannot compile is skipped, and said so
                failures += 1
                print(f"{stem}: not compiled: {type(error).__name__}: {str(error).splitlines()[0][:200]}")
                continue
            (HERE / f"{stem}.ttgir").write_text(text)
            print(f"{stem}: {len(text.splitlines())} lines")
    return 0 if failures == 0 else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
