"""The SIMT interpreter's ``nvvm.mma.sync``, pinned by values derived by hand from the PTX ISA's
fragment figures (section "Matrix Fragments for mma.m16n8k*"), not from the interpreter's code.

In every figure ``groupID = laneid >> 2`` and ``threadID_in_group = laneid % 4``. Read from them:

* **m16n8k16, .f16/.bf16** (four A registers ``a0..a3``, two halves each, ``i`` = 0..7 over the
  halves): A row is ``groupID`` for ``a0, a2`` and ``groupID + 8`` for ``a1, a3``; A column is
  ``threadID_in_group * 2 + (i & 1)`` for ``a0, a1`` and that ``+ 8`` for ``a2, a3``. B (two
  registers, ``i`` = 0..3): row ``threadID_in_group * 2 + (i & 1)`` for ``b0``, ``+ 8`` for
  ``b1``; column ``groupID``.
* **m16n8k8, .tf32** (one element per register): ``a0`` (g, t), ``a1`` (g + 8, t), ``a2`` (g, t + 4),
  ``a3`` (g + 8, t + 4); ``b0`` (t, g), ``b1`` (t + 4, g).
* **m16n8k32, .s8** (four bytes per register, ``i`` = 0..15): A row ``groupID`` for ``a0, a2``,
  ``groupID + 8`` for ``a1, a3``; A column ``threadID_in_group * 4 + (i & 3)`` for ``a0, a1``,
  ``+ 16`` for ``a2, a3``. B row ``threadID_in_group * 4 + (i & 3)`` for ``b0``, ``+ 16`` for
  ``b1``; column ``groupID``.
* **C/D** (f32 and s32: ``c0..c3``; f16: two registers of two halves, the same four elements):
  row ``groupID`` for ``c0, c1`` and ``groupID + 8`` for ``c2, c3``; column
  ``threadID_in_group * 2 + (i & 1)``.

The tests place whole matrices into registers with these tables and compare D with numpy's
``A @ B + C``, and pin single lanes literally.
"""

from __future__ import annotations

import numpy as np
import pytest

from linear_layout.simt import interpreter as simt
from linear_layout.simt.errors import SimtError

LANES = np.arange(32)
GROUP, IN_GROUP = LANES >> 2, LANES % 4

ROW_COL = "layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>"


def _f16_a(a: np.ndarray) -> np.ndarray:
    """(32, 4, 2) halves of a0..a3 per lane, from the m16n8k16 .f16 A figure."""
    out = np.zeros((32, 4, 2), a.dtype)
    for reg in range(4):
        row = GROUP + (8 if reg in (1, 3) else 0)
        for half in range(2):
            col = IN_GROUP * 2 + half + (8 if reg in (2, 3) else 0)
            out[:, reg, half] = a[row, col]
    return out


def _f16_b(b: np.ndarray) -> np.ndarray:
    out = np.zeros((32, 2, 2), b.dtype)
    for reg in range(2):
        for half in range(2):
            out[:, reg, half] = b[IN_GROUP * 2 + half + 8 * reg, GROUP]
    return out


def _c_fragment(c: np.ndarray) -> np.ndarray:
    """(32, 4) elements c0..c3 per lane."""
    out = np.zeros((32, 4), c.dtype)
    for i in range(4):
        out[:, i] = c[GROUP + (8 if i >= 2 else 0), IN_GROUP * 2 + (i & 1)]
    return out


def _kernel(a_decl: str, b_decl: str, c_decl: str, load_a: str, load_b: str, load_c: str, mma: str, store: str) -> str:
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%a: {a_decl}, %b: {b_decl}, %c: {c_decl}, %d: {c_decl}) kernel {{
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c6 = arith.constant 6 : index
{load_a}
{load_b}
{load_c}
      %r = {mma}
{store}
      gpu.return
    }}
  }}
}}"""


def _f16_kernel(accumulator: str) -> str:
    """A/B as memref<32x8xf16>/<32x4xf16> (lane, halves of the registers in order); C/D as f32
    (memref<32x4xf32>) or f16 (memref<32x4xf16>, two vector<2xf16> registers)."""
    load_a = "\n".join(
        f"      %a{r} = vector.load %a[%t, %c{2 * r}] : memref<32x8xf16>, vector<2xf16>" for r in range(4)
    )
    load_b = "\n".join(
        f"      %b{r} = vector.load %b[%t, %c{2 * r}] : memref<32x4xf16>, vector<2xf16>" for r in range(2)
    )
    shape = "#nvvm.shape<m = 16, n = 8, k = 16>"
    if accumulator == "f32":
        load_c = "\n".join(f"      %x{i} = memref.load %c[%t, %c{i}] : memref<32x4xf32>" for i in range(4))
        result = "!llvm.struct<(f32, f32, f32, f32)>"
        mma = (
            f"nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%x0, %x1, %x2, %x3] {{{ROW_COL}, shape = {shape}}}"
            f" : (vector<2xf16>, vector<2xf16>, f32) -> {result}"
        )
        store = "\n".join(
            f"      %y{i} = llvm.extractvalue %r[{i}] : {result}\n"
            f"      memref.store %y{i}, %d[%t, %c{i}] : memref<32x4xf32>"
            for i in range(4)
        )
        return _kernel("memref<32x8xf16>", "memref<32x4xf16>", "memref<32x4xf32>", load_a, load_b, load_c, mma, store)
    load_c = "\n".join(
        f"      %x{r} = vector.load %c[%t, %c{2 * r}] : memref<32x4xf16>, vector<2xf16>" for r in range(2)
    )
    result = "!llvm.struct<(vector<2xf16>, vector<2xf16>)>"
    mma = (
        f"nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%x0, %x1] {{{ROW_COL}, shape = {shape}}}"
        f" : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> {result}"
    )
    store = "\n".join(
        f"      %y{r} = llvm.extractvalue %r[{r}] : {result}\n"
        f"      vector.store %y{r}, %d[%t, %c{2 * r}] : memref<32x4xf16>, vector<2xf16>"
        for r in range(2)
    )
    return _kernel("memref<32x8xf16>", "memref<32x4xf16>", "memref<32x4xf16>", load_a, load_b, load_c, mma, store)


def _word_kernel(ptx_type: str, k: int, accumulator: str, extra: str = "") -> str:
    """A/B as 32-bit words (memref<32x4xi32>/<32x2xi32>); C/D in ``accumulator`` (f32 or i32)."""
    load_a = "\n".join(f"      %a{r} = memref.load %a[%t, %c{r}] : memref<32x4xi32>" for r in range(4))
    load_b = "\n".join(f"      %b{r} = memref.load %b[%t, %c{r}] : memref<32x2xi32>" for r in range(2))
    c_type = f"memref<32x4x{accumulator}>"
    load_c = "\n".join(f"      %x{i} = memref.load %c[%t, %c{i}] : {c_type}" for i in range(4))
    result = f"!llvm.struct<({accumulator}, {accumulator}, {accumulator}, {accumulator})>"
    types = f"multiplicandAPtxType = #nvvm.mma_type<{ptx_type}>, multiplicandBPtxType = #nvvm.mma_type<{ptx_type}>"
    mma = (
        f"nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%x0, %x1, %x2, %x3] "
        f"{{{ROW_COL}, {types}{extra}, shape = #nvvm.shape<m = 16, n = 8, k = {k}>}}"
        f" : (i32, i32, {accumulator}) -> {result}"
    )
    store = "\n".join(
        f"      %y{i} = llvm.extractvalue %r[{i}] : {result}\n      memref.store %y{i}, %d[%t, %c{i}] : {c_type}"
        for i in range(4)
    )
    return _kernel("memref<32x4xi32>", "memref<32x2xi32>", c_type, load_a, load_b, load_c, mma, store)


def _run(source: str, a, b, c, d):
    simt.run_kernel(source, [a, b, c, d], num_warps=1)
    return d


def _integers(rng, shape, low=-8, high=8):
    return rng.integers(low, high, size=shape)


def test_f16_m16n8k16_f32_pinned_lanes():
    # A[r, c] = 16 r + c names its position; B selects column n of A: B[k, n] = (k == n) + 2 (k == n + 8).
    a = np.arange(256, dtype=np.float64).reshape(16, 16)
    b = np.zeros((16, 8))
    for n in range(8):
        b[n, n], b[n + 8, n] = 1, 2
    c = np.zeros((16, 8))
    d = _run(
        _f16_kernel("f32"),
        _f16_a(a).reshape(32, 8).astype(np.float16),
        _f16_b(b).reshape(32, 4).astype(np.float16),
        _c_fragment(c).astype(np.float32),
        np.zeros((32, 4), np.float32),
    )
    # D[r, n] = A[r, n] + 2 A[r, n + 8] = 16 r + n + 2 (16 r + n + 8) = 48 r + 3 n + 16.
    # Lane 0 holds D (0, 0), (0, 1), (8, 0), (8, 1); lane 7 (group 1, thread 3) holds (1, 6), (1, 7), (9, 6), (9, 7).
    assert d[0].tolist() == [16, 19, 400, 403]
    assert d[7].tolist() == [48 + 18 + 16, 48 + 21 + 16, 432 + 18 + 16, 432 + 21 + 16]


@pytest.mark.parametrize("accumulator", ["f32", "f16"])
def test_f16_m16n8k16_whole_product(accumulator):
    rng = np.random.default_rng(1)
    a, b, c = _integers(rng, (16, 16)), _integers(rng, (16, 8)), _integers(rng, (16, 8), -100, 100)
    dtype = np.float32 if accumulator == "f32" else np.float16
    d = _run(
        _f16_kernel(accumulator),
        _f16_a(a).reshape(32, 8).astype(np.float16),
        _f16_b(b).reshape(32, 4).astype(np.float16),
        _c_fragment(c).astype(dtype),
        np.zeros((32, 4), dtype),
    )
    assert np.array_equal(d.astype(np.int64), _c_fragment(a @ b + c))


def _bf16_words(pairs: np.ndarray) -> np.ndarray:
    """(..., 2) exact bf16 values -> their 32-bit registers, the first half in the low bits."""
    bits = (pairs.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint32)
    return bits[..., 0] | bits[..., 1] << np.uint32(16)


def test_bf16_m16n8k16_whole_product():
    rng = np.random.default_rng(2)
    a, b, c = _integers(rng, (16, 16)), _integers(rng, (16, 8)), _integers(rng, (16, 8), -100, 100)
    d = _run(
        _word_kernel("bf16", 16, "f32"),
        _bf16_words(_f16_a(a)),
        _bf16_words(_f16_b(b)),
        _c_fragment(c).astype(np.float32),
        np.zeros((32, 4), np.float32),
    )
    assert np.array_equal(d.astype(np.int64), _c_fragment(a @ b + c))


def test_tf32_m16n8k8_whole_product_and_truncation():
    rng = np.random.default_rng(3)
    a, b, c = _integers(rng, (16, 8)), _integers(rng, (8, 8)), _integers(rng, (16, 8), -100, 100)
    a_regs = np.stack(
        [a[GROUP, IN_GROUP], a[GROUP + 8, IN_GROUP], a[GROUP, IN_GROUP + 4], a[GROUP + 8, IN_GROUP + 4]], 1
    )
    b_regs = np.stack([b[IN_GROUP, GROUP], b[IN_GROUP + 4, GROUP]], 1)
    as_words = lambda x: x.astype(np.float32).view(np.uint32)
    d = _run(
        _word_kernel("tf32", 8, "f32"),
        as_words(a_regs),
        as_words(b_regs),
        _c_fragment(c).astype(np.float32),
        np.zeros((32, 4), np.float32),
    )
    assert np.array_equal(d.astype(np.int64), _c_fragment(a @ b + c))
    # tf32 keeps 10 mantissa bits: 1 + 2^-11 is read as 1 (A all ones in that form, B = identity: D = 1).
    ones = np.full((32, 4), np.float32(1 + 2.0**-11)).view(np.uint32)
    identity = as_words(np.stack([np.eye(8)[IN_GROUP, GROUP], np.eye(8)[IN_GROUP + 4, GROUP]], 1))
    d = _run(
        _word_kernel("tf32", 8, "f32"), ones, identity, np.zeros((32, 4), np.float32), np.zeros((32, 4), np.float32)
    )
    assert (d == 1).all()


def _s8_words(bytes_: np.ndarray) -> np.ndarray:
    """(..., 4) int8 values -> 32-bit registers, byte 0 in the low bits."""
    return np.ascontiguousarray(bytes_.astype(np.int8)).view(np.uint32)[..., 0]


def _s8_fragments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a_regs = np.zeros((32, 4, 4), np.int64)
    for reg in range(4):
        for i in range(4):
            a_regs[:, reg, i] = a[GROUP + (8 if reg in (1, 3) else 0), IN_GROUP * 4 + i + (16 if reg in (2, 3) else 0)]
    b_regs = np.zeros((32, 2, 4), np.int64)
    for reg in range(2):
        for i in range(4):
            b_regs[:, reg, i] = b[IN_GROUP * 4 + i + 16 * reg, GROUP]
    return _s8_words(a_regs), _s8_words(b_regs)


def test_s8_m16n8k32_whole_product():
    rng = np.random.default_rng(4)
    a, b, c = (
        _integers(rng, (16, 32), -128, 128),
        _integers(rng, (32, 8), -128, 128),
        _integers(rng, (16, 8), -1000, 1000),
    )
    a_words, b_words = _s8_fragments(a, b)
    d = _run(
        _word_kernel("s8", 32, "i32", _overflow("satfinite")),
        a_words,
        b_words,
        _c_fragment(c).astype(np.int32).view(np.uint32),
        np.zeros((32, 4), np.uint32),
    )
    assert np.array_equal(d.view(np.int32).astype(np.int64), _c_fragment(a @ b + c))


def _overflow(behavior: str) -> str:
    return f", intOverflowBehavior = #nvvm.mma_int_overflow<{behavior}>"


@pytest.mark.parametrize(("behavior", "expected"), [("wrapped", -(2**31) + 16383), ("satfinite", 2**31 - 1)])
def test_s8_accumulator_wraps_or_saturates(behavior, expected):
    # Every A and B byte is -128: A B adds 32 * 128 * 128 = 2^19 to each C element. C = 2^31 - 2^19 + 16383,
    # so D = 2^31 + 16383: it wraps to -2^31 + 16383, or saturates to 2^31 - 1.
    a = np.full((16, 32), -128)
    b = np.full((32, 8), -128)
    c = np.full((16, 8), 2**31 - 2**19 + 16383)
    a_words, b_words = _s8_fragments(a, b)
    d = _run(
        _word_kernel("s8", 32, "i32", _overflow(behavior)),
        a_words,
        b_words,
        _c_fragment(c).astype(np.int64).astype(np.int32).view(np.uint32),
        np.zeros((32, 4), np.uint32),
    )
    assert (d.view(np.int32) == expected).all()


def test_unsupported_shape_is_named():
    # m16n8k8 .f16 is valid PTX (and MLIR), but Triton's version-2 MMA never emits it.
    source = (
        _f16_kernel("f32").replace("k = 16", "k = 8").replace("A[%a0, %a1, %a2, %a3] B[%b0, %b1]", "A[%a0, %a1] B[%b0]")
    )
    with pytest.raises(SimtError, match=r"nvvm\.mma\.sync m16n8k8 with multiplicands f16/f16"):
        _run(
            source,
            np.zeros((32, 8), np.float16),
            np.zeros((32, 4), np.float16),
            np.zeros((32, 4), np.float32),
            np.zeros((32, 4), np.float32),
        )
