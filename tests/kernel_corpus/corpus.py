"""The kernel corpus: real `@triton.jit` kernels, their compile signatures and their inputs.

Each `KernelCase` holds the Python source of one kernel (the functions below), the signature and
constexprs Triton compiles it with, and `make_inputs(rng)`: the arguments of one launch (numpy
arrays for pointer arguments, Python numbers for scalars) and its grid. Shapes leave masked
tails (a vector of 1000 in blocks of 256, rows of 100 in blocks of 128, ...). Float data is drawn
as small integers so that sums are exact and a lowering can be compared bit for bit.

This module imports `triton` at the top: import it only in a process where `TRITON_INTERPRET`
is already decided (`oracle.py` runs it in a worker with `TRITON_INTERPRET=1`; `generate.py`
compiles it without).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import triton
import triton.language as tl

__all__ = ["CASES", "KernelCase", "Launch", "case"]


@triton.jit
def vadd_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


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
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(diff * diff, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, diff * rstd * w + b, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0)
    tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=rows < M)


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0)
    tl.store(out_ptr + cols, tl.sum(x, axis=0), mask=cols < N)


@triton.jit
def argmax_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-1)
    tl.store(out_ptr + rows, tl.argmax(x, axis=1), mask=rows < M)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=1), mask=mask)


@triton.jit
def cumsum_reverse_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=1, reverse=True), mask=mask)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(x), mask=(cols[:, None] < N) & (rows[None, :] < M))


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = rows[:, None] * BLOCK_N + cols[None, :]
    mask = rows[:, None] < M
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.gather(x, idx, axis=1), mask=mask)


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    hist = tl.histogram(x, BINS)
    tl.atomic_add(hist_ptr + tl.arange(0, BINS), hist)


@triton.jit
def scatter_add_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    idx = tl.load(idx_ptr + offs, mask=mask)
    tl.atomic_add(out_ptr + idx, x, mask=mask)


@triton.jit
def tile_loop_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = (rows[:, None] < M) & (start + cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * N + start + cols[None, :], mask=mask, other=0)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


@triton.jit
def scalar_if_kernel(x_ptr, out_ptr, n, flip, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if flip > 0:
        x = -x
    else:
        x = x * 2
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def _matmul_tile(a_ptr, b_ptr, M, N, K, acc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 PRECISION: tl.constexpr):
    """`acc` + the (BLOCK_M x BLOCK_N) tile of program (0, 1) of A (M x K) @ B (K x N), row-major,
    over K in masked BLOCK_K steps."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    for start in range(0, K, BLOCK_K):
        k = start + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=acc.dtype)
    return acc


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=c_ptr.dtype.element_ty)  # f32, f16, or i32 for i8 operands
    acc = _matmul_tile(a_ptr, b_ptr, M, N, K, acc, BLOCK_M, BLOCK_N, BLOCK_K, PRECISION)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_epilogue_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc = _matmul_tile(a_ptr, b_ptr, M, N, K, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32),
                       BLOCK_M, BLOCK_N, BLOCK_K, None)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.maximum(acc + tl.load(bias_ptr + cols, mask=cols < N, other=0)[None, :], 0)  # bias + ReLU
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=mask)


@triton.jit
def matmul_batched_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    batch = tl.program_id(2)  # A, B and C are stacks of row-major matrices
    acc = _matmul_tile(a_ptr + batch * M * K, b_ptr + batch * K * N, M, N, K,
                       tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), BLOCK_M, BLOCK_N, BLOCK_K, None)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + batch * M * N + rows[:, None] * N + cols[None, :], acc, mask=mask)


@triton.jit
def float_ops_kernel(x_ptr, y_ptr, u_ptr, out_ptr, clip_ptr, half_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    """Triton's own elementwise ops: tt.clampf (both NaN modes), tt.precise_divf, tt.precise_sqrt,
    tt.fp_to_fp (rtz to f16) and tt.mulhiui."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    u = tl.load(u_ptr + offs, mask=mask, other=0)
    c = tl.clamp(x, -3.0, 5.0)
    q = tl.math.div_rn(x, y)
    s = tl.math.sqrt_rn(y * y + 2.0)
    tl.store(out_ptr + offs, c + q + s, mask=mask)
    tl.store(clip_ptr + offs, tl.clamp(x, -3.0, 5.0, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(half_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"), mask=mask)
    tl.store(hi_ptr + offs, tl.umulhi(u, u), mask=mask)


@triton.jit
def shape_ops_kernel(x_ptr, y_ptr, out_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    """Shape ops as register renamings: tt.join, tt.split, tt.reshape (row-major, and
    allow_reorder), tt.cat (can_reorder: its order is unspecified, so only its sum is stored)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    j = tl.join(x, y)
    a, b = tl.split(j * 3 + 1)
    r = tl.reshape(j, (2 * BLOCK,))
    o2 = pid * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o2, r - 1, mask=o2 < 2 * n)
    tl.store(out_ptr + 2 * n + offs, a * 2 - b, mask=mask)
    s = tl.sum(tl.reshape(j * j, (2 * BLOCK,), can_reorder=True), axis=0)
    total = s + tl.sum(tl.cat(x, y * 5, can_reorder=True), axis=0)
    tl.store(sums_ptr + offs, tl.zeros_like(x) + total, mask=mask)  # the block's sum at each place


@triton.jit
def while_loop_kernel(x_ptr, out_ptr, n, rounds, BLOCK: tl.constexpr):
    """scf.while carrying a tensor and a scalar: each block its own number of rounds."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    acc = x
    steps = 0
    while steps < rounds + pid % 3:
        acc = acc // 2 + x
        steps += 1
    tl.store(out_ptr + offs, acc * 100 + steps, mask=mask)


@triton.jit
def device_assert_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """tt.assert (compiled with debug=True: Triton adds its own overflow asserts too)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.device_assert(x < 100, "x out of range")
    tl.store(out_ptr + offs, x * 2, mask=mask)


@triton.jit
def atomic_cas_kernel(flags_ptr, x_ptr, old_ptr, BLOCK: tl.constexpr):
    """tt.atomic_cas (it has no mask: the length is a multiple of BLOCK): each flag swapped for
    x where it equals x % 3, the old flags kept."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    old = tl.atomic_cas(flags_ptr + offs, x % 3, x)
    tl.store(old_ptr + offs, old)


@triton.jit(noinline=True)
def _block_start(pid, block, skew):
    """A helper Triton keeps as a function (noinline: tt.call), on scalars."""
    return pid * block + skew


@triton.jit
def call_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """tt.call of a noinline helper (inlined by the lowering), called twice."""
    offs = _block_start(tl.program_id(0), BLOCK, 0) + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x + _block_start(n, 2, 1), mask=mask)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M, seq_len, scale,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr):
    """Flash-attention forward, one head: O = softmax(scale Q K^T, base 2) V with the online
    softmax in exp2 (m_i, l_i and acc carried by the loop; P cast to f16 is the second dot's A
    operand, from registers); masked tails in the rows (M) and the keys (seq_len)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD)
    q = tl.load(q_ptr + rows[:, None] * HEAD + d[None, :], mask=rows[:, None] < M, other=0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        keys = start + cols
        k = tl.load(k_ptr + keys[None, :] * HEAD + d[:, None], mask=keys[None, :] < seq_len, other=0)
        s = tl.where(keys[None, :] < seq_len, tl.dot(q, k) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + keys[:, None] * HEAD + d[None, :], mask=keys[:, None] < seq_len, other=0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + rows[:, None] * HEAD + d[None, :], acc / l_i[:, None], mask=rows[:, None] < M)


@triton.jit
def pointer_int_kernel(x_ptr, out_ptr, diff_ptr, n, BLOCK: tl.constexpr):
    """tt.ptr_to_int (a tensor and a scalar) and tt.int_to_ptr: the byte addresses of x as i64,
    their distance from x (4 per element), and a load through `address ^ 4`, the neighbour."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    addresses = (x_ptr + offs).to(tl.int64)
    tl.store(diff_ptr + offs, addresses - x_ptr.to(tl.int64), mask=mask)
    neighbours = (addresses ^ 4).to(tl.pointer_type(tl.float32))  # x is 16-byte aligned: x + (offs ^ 1)
    tl.store(out_ptr + offs, tl.load(neighbours, mask=(offs ^ 1) < n, other=-1.0), mask=mask)


@triton.jit
def atomic_old_kernel(count_ptr, out_ptr, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    """The old values of tt.atomic_rmw reach every copy of an element: 32 counters with 4 or 8
    warps (the warps above the first hold copies), summed in every warp and broadcast over a tile
    that every warp stores."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    old = tl.atomic_add(count_ptr + rows, 1)
    cols = tl.arange(0, WIDTH)
    tile = old[:, None] * WIDTH + cols[None, :] + tl.sum(old, axis=0)
    tl.store(out_ptr + rows[:, None] * WIDTH + cols[None, :], tile)


@triton.jit
def fp8_kernel(x_ptr, e4_ptr, e5_ptr, back_ptr, h5_ptr, b4_ptr, n, BLOCK: tl.constexpr):
    """tt.fp_to_fp with fp8 (rtne: Triton's NVIDIA backend refuses rtz): from f32, f16 and bf16
    to f8E4M3FN and f8E5M2, their bits stored as u8 (tt.bitcast), and back to f32 (through f16)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    e4 = x.to(tl.float8e4nv)
    e5 = x.to(tl.float8e5)
    tl.store(e4_ptr + offs, e4.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(e5_ptr + offs, e5.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(back_ptr + offs, e4.to(tl.float32) + e5.to(tl.float16).to(tl.float32), mask=mask)
    h5 = x.to(tl.float16).to(tl.float8e5)
    tl.store(h5_ptr + offs, h5.to(tl.uint8, bitcast=True), mask=mask)
    b4 = x.to(tl.bfloat16).to(tl.float8e4nv)
    tl.store(b4_ptr + offs, b4.to(tl.uint8, bitcast=True), mask=mask)


@triton.jit
def matmul_bt_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    """C = A B^T with B stored (N x K), row-major: each step loads a BLOCK_N x BLOCK_K tile of B and
    transposes it for the dot. On the FMA path (f32, input_precision ieee) Triton transposes the
    shared-memory view (`ttg.memdesc_trans` of the operand's buffer), not the registers."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        k = start + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0)
        b = tl.load(b_ptr + cols[:, None] * K + k[None, :], mask=(cols[:, None] < N) & (k[None, :] < K), other=0)
        acc = tl.dot(a, b.T, acc, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@dataclass(frozen=True)
class Launch:
    """One launch: `args` in signature order (numpy arrays for pointers, Python numbers for
    scalars; constexprs excluded), the `grid`, and the names of the arguments it writes."""

    args: tuple
    grid: tuple[int, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class KernelCase:
    """A corpus kernel: its function, Triton's compile signature (`*fp32`, `i32`, `fp32`,
    `constexpr`), its constexprs and `make_inputs(rng) -> Launch`."""

    name: str
    fn: object
    signature: dict
    constexprs: dict
    make_inputs: Callable[[np.random.Generator], Launch]  # the scalars do not depend on `rng`
    exact: bool = True  # False where exp/sqrt/division make results approximate (see ulp bounds)
    options: dict = field(default_factory=dict)
    hip: bool = True  # compiled for gfx942 too (False for the matmuls: AMD's MFMA dot is not lowered)
    # the cuda chips it is compiled for (None: sm80 and sm90; sm90 alone where Triton refuses a type at
    # sm_80: f8E4M3FN needs sm_89)
    chips: tuple[str, ...] | None = None
    num_warps: tuple[int, ...] | None = None  # the warp counts (None: 1, 4 and 8)
    pipelines: str | None = None  # the corpus kernel this case compiles with num_stages >= 2

    @property
    def argument_names(self) -> tuple[str, ...]:
        return tuple(name for name, kind in self.signature.items() if kind != "constexpr")


def _ints(rng: np.random.Generator, shape, dtype, low: int = -8, high: int = 8) -> np.ndarray:
    """Small integers as `dtype`: float sums of them are exact."""
    return rng.integers(low, high, size=shape).astype(dtype)


def _vadd(n: int):
    def make(rng):
        x, y = _ints(rng, n, np.float32), _ints(rng, n, np.float32)
        return Launch((x, y, np.zeros(n, np.float32), n), (-(-n // 256),), ("out_ptr",))

    return make


def _softmax(rng):
    rows, cols = 5, 100
    x = _ints(rng, (rows, cols), np.float32)
    return Launch((np.zeros_like(x), x, cols, cols), (rows,), ("out_ptr",))


def _layernorm(rng):
    rows, cols = 3, 100
    x = _ints(rng, (rows, cols), np.float32)
    w, b = _ints(rng, cols, np.float32), _ints(rng, cols, np.float32)
    return Launch((x, np.zeros_like(x), w, b, cols, cols, 1e-5), (rows,), ("y_ptr",))


def _matrix(dtype, m: int = 37, n: int = 50, low: int = -8, high: int = 8):
    def make(rng):
        x = _ints(rng, (m, n), dtype, low, high)
        return x, m, n

    return make


def _rows_out(dtype, block_m: int, out_dtype=None):
    def make(rng):
        x, m, n = _matrix(dtype)(rng)
        return Launch((x, np.zeros(m, out_dtype or dtype), m, n), (-(-m // block_m),), ("out_ptr",))

    return make


def _col_sum(rng):
    x, m, n = _matrix(np.float32)(rng)
    return Launch((x, np.zeros(n, np.float32), m, n), (-(-n // 32),), ("out_ptr",))


def _cumsum(rng):
    x, m, n = _matrix(np.int32)(rng)
    return Launch((x, np.zeros_like(x), m, n), (-(-m // 8),), ("out_ptr",))


def _transpose(rng):
    x, m, n = _matrix(np.float32)(rng)
    return Launch((x, np.zeros((n, m), np.float32), m, n), (-(-m // 32), -(-n // 32)), ("y_ptr",))


def _gather(rng):
    m, n = 37, 32
    x = _ints(rng, (m, n), np.float32)
    idx = rng.integers(0, n, size=(m, n)).astype(np.int32)
    return Launch((x, idx, np.zeros_like(x), m), (-(-m // 8),), ("out_ptr",))


def _histogram(rng):
    x = rng.integers(0, 64, size=1024).astype(np.int32)
    return Launch((x, np.zeros(64, np.int32)), (4,), ("hist_ptr",))


def _scatter_add(rng):
    n = 1000
    x = _ints(rng, n, np.int32)
    idx = rng.integers(0, 37, size=n).astype(np.int32)
    return Launch((x, idx, np.zeros(37, np.int32), n), (4,), ("out_ptr",))


def _tile_loop(rng):
    x, m, n = _matrix(np.float32, 37, 150)(rng)
    return Launch((x, np.zeros(m, np.float32), m, n), (-(-m // 16),), ("out_ptr",))


def _scalar_if(flip: int):
    def make(rng):
        n = 1000
        x = _ints(rng, n, np.float32)
        return Launch((x, np.zeros_like(x), n, flip), (4,), ("out_ptr",))

    return make


def _matmul(dtype, m: int = 37, n: int = 45, k: int = 40, block_m: int = 32, block_n: int = 32, accumulator=None,
            low: int = -8, high: int = 8):
    """A (m x k) and B (k x n) of small integers: every product and partial sum is exact in f32
    (C is f32, or i32 for integer operands); the sizes leave masked tails in M, N and K."""

    def make(rng):
        a, b = _ints(rng, (m, k), dtype, low, high), _ints(rng, (k, n), dtype, low, high)
        grid = (-(-m // block_m), -(-n // block_n))
        out = accumulator or (np.int32 if np.dtype(dtype).kind == "i" else np.float32)
        return Launch((a, b, np.zeros((m, n), out), m, n, k), grid, ("c_ptr",))

    return make


def _matmul_epilogue(rng, n: int = 45, k: int = 40):
    m = 37
    a, b = _ints(rng, (m, k), np.float16), _ints(rng, (k, n), np.float16)
    bias = _ints(rng, n, np.float32, -64, 64)
    grid = (-(-m // 32), -(-n // 32))
    return Launch((a, b, bias, np.zeros((m, n), np.float16), m, n, k), grid, ("c_ptr",))


def _matmul_batched(rng, n: int = 45, k: int = 40):
    batches, m = 3, 37
    a, b = _ints(rng, (batches, m, k), np.float16), _ints(rng, (batches, k, n), np.float16)
    grid = (-(-m // 32), -(-n // 32), batches)
    return Launch((a, b, np.zeros((batches, m, n), np.float32), m, n, k), grid, ("c_ptr",))


_MATMUL = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "PRECISION": "constexpr"}


def _float_ops(rng):
    """x: thirds (inexact in f16, so rtz differs from rtne) with NaNs; y: nonzero; u: full 32 bits."""
    n = 1000
    x = (_ints(rng, n, np.float32, -30, 30) / np.float32(3)).astype(np.float32)
    x[::97] = np.nan
    y = _ints(rng, n, np.float32, 1, 9) * rng.choice(np.array([-1, 1], np.float32), n)
    u = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    outs = (np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float16), np.zeros(n, np.uint32))
    return Launch((x, y, u, *outs, n), (-(-n // 256),), ("out_ptr", "clip_ptr", "half_ptr", "hi_ptr"))


def _shape_ops(rng):
    n = 1000
    x, y = _ints(rng, n, np.int32, -100, 100), _ints(rng, n, np.int32, -100, 100)
    grid = -(-n // 256)
    return Launch((x, y, np.zeros(3 * n, np.int32), np.zeros(n, np.int32), n), (grid,), ("out_ptr", "sums_ptr"))


def _while_loop(rng):
    n = 1000
    x = rng.integers(-1000, 1000, size=n).astype(np.int32)
    return Launch((x, np.zeros_like(x), n, 2), (-(-n // 256),), ("out_ptr",))


def _device_assert(rng):
    n = 1000
    x = _ints(rng, n, np.int32, -100, 100)
    return Launch((x, np.zeros_like(x), n), (-(-n // 256),), ("out_ptr",))


def _atomic_cas(rng):
    n = 1024
    return Launch(
        (rng.integers(0, 3, size=n).astype(np.int32), _ints(rng, n, np.int32, 0, 100), np.zeros(n, np.int32)),
        (n // 512,), ("flags_ptr", "old_ptr"),
    )


def _attention(rng):
    """Q, K in {0, 1} and V in [-2, 2] (f16), scale 1: every score s is an integer in [0, HEAD = 16],
    so each p = 2^(s - m) >= 2^-16 is exact in f16, and every product, partial sum and rescaled
    accumulator is a multiple of 2^-16 below 2^8 in magnitude, exact in f32 (24 bits): QK^T, P V,
    m_i and l_i are exact, and only the final division rounds."""
    m, seq_len, head = 50, 100, 16
    q, k = _ints(rng, (m, head), np.float16, 0, 2), _ints(rng, (seq_len, head), np.float16, 0, 2)
    v = _ints(rng, (seq_len, head), np.float16, -2, 3)
    return Launch((q, k, v, np.zeros((m, head), np.float32), m, seq_len, 1.0), (-(-m // 32),), ("o_ptr",))

def _pointer_int(rng):
    n = 1000
    x = _ints(rng, n, np.float32)
    return Launch((x, np.zeros(n, np.float32), np.zeros(n, np.int64), n), (-(-n // 256),), ("out_ptr", "diff_ptr"))


def _atomic_old(rng):
    counts = _ints(rng, 64, np.int32, 0, 1000)
    return Launch((counts, np.zeros((64, 16), np.int32)), (2,), ("out_ptr", "count_ptr"))



def _fp8(rng):
    """Values Triton's interpreter converts exactly as IEEE does (its rounding adds the cut-off bit
    and clamps the exponent): normal in both fp8 formats (2**-6 to 240), never a tie of either
    (a quarter, three eighths, five eighths or three quarters of an f8E4M3FN step past a value, or
    an f8E5M2 value itself), signed, and zeros."""
    n = 1000
    exponent = rng.integers(-6, 8, size=n)
    steps = rng.integers(0, 7, size=n) + rng.choice(np.array([0.25, 0.375, 0.625, 0.75]), size=n)
    exact = rng.random(n) < 0.25
    steps = np.where(exact, 2 * rng.integers(0, 4, size=n), steps)  # f8E5M2 (and so f8E4M3FN) values
    x = (np.exp2(exponent) * (1 + steps / 8) * rng.choice(np.array([-1.0, 1.0]), size=n)).astype(np.float32)
    x[::101] = 0
    outs = (np.zeros(n, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.float32), np.zeros(n, np.uint8),
            np.zeros(n, np.uint8))
    return Launch((x, *outs, n), (-(-n // 256),), ("e4_ptr", "e5_ptr", "back_ptr", "h5_ptr", "b4_ptr"))


_ROWS = {"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
_ROWS_I32 = {**_ROWS, "x_ptr": "*i32", "out_ptr": "*i32"}

CASES: tuple[KernelCase, ...] = (
    KernelCase("vadd", vadd_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _vadd(1000)),
    # n = 1040 = 65 * 16: Triton's launcher gives `n` tt.divisibility = 16, so the mask is constant
    # over runs of 16 and the accesses are vectorised; the last block still has a masked tail.
    KernelCase("vadd16", vadd_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _vadd(1040)),
    KernelCase("softmax", softmax_kernel,
               {"out_ptr": "*fp32", "in_ptr": "*fp32", "stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 128}, _softmax, exact=False),
    KernelCase("layernorm", layernorm_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "stride": "i32", "N": "i32",
                "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 128}, _layernorm, exact=False),
    KernelCase("row_sum", row_sum_kernel, _ROWS, {"BLOCK_M": 8, "BLOCK_N": 64}, _rows_out(np.float32, 8)),
    KernelCase("col_sum", col_sum_kernel, _ROWS, {"BLOCK_M": 64, "BLOCK_N": 32}, _col_sum),
    KernelCase("argmax", argmax_kernel, {**_ROWS, "out_ptr": "*i32"}, {"BLOCK_M": 8, "BLOCK_N": 64},
               _rows_out(np.float32, 8, np.int32)),
    KernelCase("cumsum", cumsum_kernel, _ROWS_I32, {"BLOCK_M": 8, "BLOCK_N": 64}, _cumsum),
    KernelCase("cumsum_reverse", cumsum_reverse_kernel, _ROWS_I32, {"BLOCK_M": 8, "BLOCK_N": 64}, _cumsum),
    KernelCase("transpose", transpose_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 32}, _transpose),
    KernelCase("gather", gather_kernel,
               {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "M": "i32",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}, {"BLOCK_M": 8, "BLOCK_N": 32}, _gather),
    KernelCase("histogram", histogram_kernel, {"x_ptr": "*i32", "hist_ptr": "*i32", "BLOCK": "constexpr",
                                               "BINS": "constexpr"}, {"BLOCK": 256, "BINS": 64}, _histogram),
    KernelCase("scatter_add", scatter_add_kernel,
               {"x_ptr": "*i32", "idx_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _scatter_add),
    KernelCase("tile_loop", tile_loop_kernel, _ROWS, {"BLOCK_M": 16, "BLOCK_N": 32}, _tile_loop),
    KernelCase("scalar_if", scalar_if_kernel,
               {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "flip": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _scalar_if(3)),
    # f32 operands with input_precision="ieee": Triton's FMA dot (dot operands of a blocked parent).
    # f16 operands, f32 accumulator: Triton's mma.sync (#ttg.nvidia_mma version 2 at sm_80).
    KernelCase("matmul_f16", matmul_kernel, {**_MATMUL, "a_ptr": "*fp16", "b_ptr": "*fp16"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "PRECISION": None}, _matmul(np.float16), options={"num_stages": 1}, hip=False),
    # f32 operands, input_precision tf32 (the default): mma.sync m16n8k8 .tf32; small integers are exact in tf32.
    KernelCase("matmul_tf32", matmul_kernel, _MATMUL, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": None},
               _matmul(np.float32), options={"num_stages": 1}, hip=False),
    # f16 operands and accumulator (out_dtype f16): mma.sync with f16 C/D registers; |values| < 4 keep
    # every partial sum (at most 40 x 9) exact in f16.
    KernelCase("matmul_f16acc", matmul_kernel, {**_MATMUL, "a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "PRECISION": None},
               _matmul(np.float16, accumulator=np.float16, low=-3, high=4), options={"num_stages": 1}, hip=False),
    # i8 operands, i32 accumulator: mma.sync m16n8k32 .s8 .satfinite.
    KernelCase("matmul_i8", matmul_kernel, {**_MATMUL, "a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "PRECISION": None}, _matmul(np.int8),
               options={"num_stages": 1}, hip=False),
    # The f16 matmul with a fused epilogue: + bias (per column), ReLU, cast to f16.
    KernelCase("matmul_epilogue", matmul_epilogue_kernel,
               {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp32", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                "K": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, _matmul_epilogue, options={"num_stages": 1}, hip=False),
    KernelCase("matmul_batched", matmul_batched_kernel,
               {k: v for k, v in {**_MATMUL, "a_ptr": "*fp16", "b_ptr": "*fp16"}.items() if k != "PRECISION"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, _matmul_batched, options={"num_stages": 1}, hip=False),
    KernelCase("matmul_ieee", matmul_kernel, _MATMUL, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": "ieee"},
               _matmul(np.float32), options={"num_stages": 1}, hip=False),
    KernelCase("float_ops", float_ops_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "u_ptr": "*u32", "out_ptr": "*fp32", "clip_ptr": "*fp32",
                "half_ptr": "*fp16", "hi_ptr": "*u32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _float_ops),
    KernelCase("shape_ops", shape_ops_kernel,
               {"x_ptr": "*i32", "y_ptr": "*i32", "out_ptr": "*i32", "sums_ptr": "*i32", "n": "i32",
                "BLOCK": "constexpr"}, {"BLOCK": 256}, _shape_ops),
    KernelCase("while_loop", while_loop_kernel, {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "rounds": "i32",
                                                     "BLOCK": "constexpr"}, {"BLOCK": 256}, _while_loop),
    KernelCase("device_assert", device_assert_kernel,
               {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}, _device_assert,
               options={"debug": True}),
    KernelCase("atomic_cas", atomic_cas_kernel,
               {"flags_ptr": "*i32", "x_ptr": "*i32", "old_ptr": "*i32", "BLOCK": "constexpr"}, {"BLOCK": 512},
               _atomic_cas),
    KernelCase("call", call_kernel, {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _device_assert),
    # Flash attention (f16 mma.sync, P from registers as the A operand), one stage: exact on its data
    # (see _attention) in both interpreters; on a GPU, Triton's division (div.full.f32) is within 2 ulp.
    KernelCase("attention", attention_kernel,
               {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp32", "M": "i32", "seq_len": "i32",
                "scale": "fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD": "constexpr"},
               {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD": 16}, _attention, options={"num_stages": 1},
               hip=False),
    KernelCase("pointer_int", pointer_int_kernel,
               {"x_ptr": "*fp32", "out_ptr": "*fp32", "diff_ptr": "*i64", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _pointer_int),
    KernelCase("atomic_old", atomic_old_kernel, {"count_ptr": "*i32", "out_ptr": "*i32", "WIDTH": "constexpr",
                                                 "BLOCK": "constexpr"}, {"WIDTH": 16, "BLOCK": 32}, _atomic_old),
    # f8E4M3FN needs sm_89: Triton refuses it at sm_80
    KernelCase("fp8", fp8_kernel, {"x_ptr": "*fp32", "e4_ptr": "*u8", "e5_ptr": "*u8", "back_ptr": "*fp32",
                                   "h5_ptr": "*u8", "b4_ptr": "*u8", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}, _fp8, chips=("sm90",)),
)

#: The inputs of the pipelined matmuls: K = N = 48, whose rows Triton copies 16 bytes at a time
#: (with K = 40 and N = 45 it pipelines only the f32 operands); M = 37, and K = 48 in steps of 32
#: (16 for f32) leave masked M, N and K tails.
_PIPELINED_INPUTS: dict[str, Callable[[np.random.Generator], Launch]] = {
    "matmul_f16": _matmul(np.float16, n=48, k=48),
    "matmul_tf32": _matmul(np.float32, n=48, k=48),
    "matmul_f16acc": _matmul(np.float16, n=48, k=48, accumulator=np.float16, low=-3, high=4),
    "matmul_i8": _matmul(np.int8, n=48, k=48),
    "matmul_epilogue": lambda rng: _matmul_epilogue(rng, n=48, k=48),
    "matmul_batched": lambda rng: _matmul_batched(rng, n=48, k=48),
    "matmul_ieee": _matmul(np.float32, n=48, k=48),
}


def _pipelined(kernel: KernelCase, stages: int) -> KernelCase:
    """`kernel` software-pipelined by Triton over `stages` (cp.async copies into `stages - 1`
    buffers), at sm_80 with 4 and 8 warps (and at sm_90 with 3 stages: mma.sync at these sizes)."""
    return replace(
        kernel, name=f"{kernel.name}_s{stages}", make_inputs=_PIPELINED_INPUTS[kernel.name],
        options={"num_stages": stages}, chips=("sm80", "sm90") if stages == 3 else ("sm80",), num_warps=(4, 8),
        pipelines=kernel.name,
    )


CASES += tuple(_pipelined(kernel, stages) for kernel in CASES if kernel.name in _PIPELINED_INPUTS for stages in (2, 3, 4))

import ml_dtypes  # noqa: E402  (here: an import line above the kernels would move their TTGIR locs)

#: bf16 operands, f32 accumulator: mma.sync m16n8k16 .bf16, with 4 and 8 warps; plain at sm_80 and
#: sm_90, pipelined with 2 stages at sm_80 and 3 at sm_80 and sm_90 (the inputs of the f16 matmuls:
#: masked M, N and K tails). Small integers are exact in bf16 (|x| <= 256), and every product and
#: partial sum in f32. Triton's interpreter computes bf16 dots only with the oracle's correction
#: (`oracle.exact_bf16_dot`).
_MATMUL_BF16 = KernelCase("matmul_bf16", matmul_kernel, {**_MATMUL, "a_ptr": "*bf16", "b_ptr": "*bf16"},
                          {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "PRECISION": None},
                          _matmul(ml_dtypes.bfloat16), options={"num_stages": 1}, hip=False, num_warps=(4, 8))
_PIPELINED_INPUTS["matmul_bf16"] = _matmul(ml_dtypes.bfloat16, n=48, k=48)
CASES += (_MATMUL_BF16, *(_pipelined(_MATMUL_BF16, stages) for stages in (2, 3)))

def _matmul_bt(rng, m: int = 37, n: int = 48, k: int = 48):
    """A (m x k) and B stored transposed (n x k), small integers (exact in f32); masked M, N and K tails."""
    a, b = _ints(rng, (m, k), np.float32), _ints(rng, (n, k), np.float32)
    return Launch((a, b, np.zeros((m, n), np.float32), m, n, k), (-(-m // 32), -(-n // 32)), ("c_ptr",))


def _views_and_stages(kernel: KernelCase, stages: int, chips: tuple[str, ...]) -> KernelCase:
    """`kernel` compiled by Triton with `num_stages = stages` at `chips` with 4 and 8 warps."""
    suffix = f"_s{stages}" if stages > 1 else ""
    return replace(kernel, name=f"{kernel.name}{suffix}", options={"num_stages": stages}, chips=chips,
                   num_warps=(4, 8), pipelines=kernel.name if stages > 1 else None)


# B transposed on the FMA path: Triton emits `ttg.memdesc_trans` of B's buffer (one stage and
# pipelined); flash attention pipelined (cp.async copies of K and V).
_MATMUL_BT = KernelCase("matmul_bt_ieee", matmul_bt_kernel, _MATMUL,
                        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "PRECISION": "ieee"}, _matmul_bt, hip=False)
CASES += (
    _views_and_stages(_MATMUL_BT, 1, ("sm80", "sm90")),
    _views_and_stages(_MATMUL_BT, 2, ("sm80",)),
    _views_and_stages(_MATMUL_BT, 3, ("sm80", "sm90")),
    *(_views_and_stages(case_, stages, ("sm80",)) for case_ in CASES if case_.name == "attention" for stages in (2, 3)),
)

#: Issue 19 item 5 (sm_80, 4 and 8 warps, 1 to 4 stages, masked K tails) beyond the cases above:
#: bf16 and flash attention with 4 stages (their _s2 and _s3 above), and the pipelined f32 matmuls
#: (tf32 and ieee) with a masked K tail: their _s2 to _s4 above step BLOCK_K = 16 through K = 48,
#: which leaves none, so these step 32 (`_k32`, and K = 48: a tail of 16) at 2, 3 and 4 stages.
_BASES = {kernel.name: kernel for kernel in CASES}


def _k32(kernel: KernelCase) -> KernelCase:
    """`kernel` with BLOCK_K = 32, its inputs those of its pipelined cases (K = 48: a masked K tail)."""
    return replace(kernel, name=f"{kernel.name}_k32", constexprs={**kernel.constexprs, "BLOCK_K": 32},
                   make_inputs=_PIPELINED_INPUTS[kernel.name])


def _k32_pipelined(kernel: KernelCase, stages: int) -> KernelCase:
    """`_pipelined(_k32(kernel), stages)`, computing what `kernel` computes."""
    k32 = _k32(kernel)
    _PIPELINED_INPUTS[k32.name] = k32.make_inputs
    return replace(_pipelined(k32, stages), pipelines=kernel.name)


CASES += (
    _pipelined(_BASES["matmul_bf16"], 4),
    _views_and_stages(_BASES["attention"], 4, ("sm80",)),
    *(_k32_pipelined(_BASES[name], stages) for name in ("matmul_tf32", "matmul_ieee") for stages in (2, 3, 4)),
)

_BY_NAME = {kernel.name: kernel for kernel in CASES}


def case(name: str) -> KernelCase:
    """The corpus kernel called `name` (a KeyError names the known ones)."""
    if name not in _BY_NAME:
        raise KeyError(f"no corpus kernel {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]
