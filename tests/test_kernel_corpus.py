"""The kernel corpus and its oracle: Triton's CPU interpreter runs every corpus kernel, on numpy
arrays through `NumpyTensor` (no torch), and its results equal plain numpy's; the stored TTGIR
covers every kernel at sm_80 and sm_90 with 1, 4 and 8 warps, and reads back with our reader."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("triton")

sys.path.insert(0, str(Path(__file__).resolve().parent / "kernel_corpus"))

from corpus import CASES, _ints, case
from generate import CHIPS, FIGURES, HIP_CHIPS, NUM_WARPS, OUT, compiles, stem
from oracle import NumpyTensor, exact_bf16_dot, run_triton_interpreter

from linear_layout.ttgir import parse_ttgir, print_ttgir


def _reference_layernorm(x, w, b, eps):
    mean = x.mean(axis=1, keepdims=True, dtype=np.float64)
    diff = x - mean
    rstd = 1 / np.sqrt((diff * diff).mean(axis=1, keepdims=True) + eps)
    return diff * rstd * w + b


def _reference_softmax(x):
    num = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return num / num.sum(axis=1, keepdims=True)


def _reference_attention(q, k, v):
    """softmax(Q K^T, base 2) V in float64 (scale 1): the kernel's online softmax is exact on the
    corpus data (see corpus._attention) up to its last division."""
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp2(s - s.max(axis=1, keepdims=True))
    return (p @ v.astype(np.float64)) / p.sum(axis=1, keepdims=True)


def _reference_while_loop(x, rounds, block=256):
    """Triton's `//` rounds toward zero (C division), numpy's toward minus infinity."""
    out = np.empty_like(x)
    for pid, start in enumerate(range(0, x.size, block)):
        acc = x[start : start + block].astype(np.int64)
        steps = 0
        while steps < rounds + pid % 3:
            acc, steps = np.trunc(acc / 2).astype(np.int64) + x[start : start + block], steps + 1
        out[start : start + block] = acc * 100 + steps
    return out


#: Plain numpy for each kernel: its output array from the launch's arguments.
REFERENCES = {
    "vadd": lambda a: a[0] + a[1],
    "vadd16": lambda a: a[0] + a[1],
    "softmax": lambda a: _reference_softmax(a[1]),
    "layernorm": lambda a: _reference_layernorm(a[0], a[2], a[3], a[6]),
    "row_sum": lambda a: a[0].sum(axis=1),
    "col_sum": lambda a: a[0].sum(axis=0),
    "argmax": lambda a: a[0].argmax(axis=1),
    "cumsum": lambda a: a[0].cumsum(axis=1),
    "cumsum_reverse": lambda a: a[0][:, ::-1].cumsum(axis=1)[:, ::-1],
    "transpose": lambda a: a[0].T,
    "gather": lambda a: np.take_along_axis(a[0], a[1], axis=1),
    "histogram": lambda a: np.bincount(a[0], minlength=a[1].size),
    "scatter_add": lambda a: np.bincount(a[1], weights=a[0], minlength=a[2].size),
    "tile_loop": lambda a: a[0].sum(axis=1),
    "scalar_if": lambda a: -a[0] if a[3] > 0 else a[0] * 2,
    # Matmuls in int64 (the data are small integers: every float product and sum is exact).
    "matmul_f16": lambda a: _int_matmul(a[0], a[1]),
    "matmul_tf32": lambda a: _int_matmul(a[0], a[1]),
    "matmul_i8": lambda a: _int_matmul(a[0], a[1]),
    "matmul_ieee": lambda a: _int_matmul(a[0], a[1]),
    "matmul_bf16": lambda a: _int_matmul(a[0], a[1]),
    "matmul_f16acc": lambda a: _int_matmul(a[0], a[1]),
    "matmul_batched": lambda a: _int_matmul(a[0], a[1]),
    "matmul_epilogue": lambda a: np.maximum(_int_matmul(a[0], a[1]) + a[2].astype(np.int64), 0),
    "shape_ops": lambda a: np.concatenate([np.stack([a[0], a[1]], axis=1).reshape(-1) - 1, 6 * a[0] - 3 * a[1] + 1]),
    "while_loop": lambda a: _reference_while_loop(a[0], a[3]),
    "device_assert": lambda a: a[0] * 2,
    "atomic_cas": lambda a: np.where(a[0] == a[1] % 3, a[1], a[0]),
    "call": lambda a: a[0] + 2 * a[2] + 1,
    "attention": lambda a: _reference_attention(*a[:3]),
    "pointer_int": lambda a: a[0][np.arange(a[0].size) ^ 1],
    "fp8": lambda a: a[0].astype(ml_dtypes.float8_e4m3fn).view(np.uint8),
    "atomic_old": lambda a: a[0][:, None] * 16 + np.arange(16) + a[0].reshape(2, 32).sum(axis=1).repeat(32)[:, None],
    "float_ops": lambda a: np.fmin(np.fmax(a[0], -3), 5) + a[0] / a[1] + np.sqrt(a[1] * a[1] + np.float32(2)),
    "matmul_bt_ieee": lambda a: _int_matmul(a[0], a[1].T),  # B stored (N x K)
}


def _int_matmul(a, b):
    return a.astype(np.int64) @ b.astype(np.int64)


# The pipelined matmuls (num_stages 2 to 4) compute what their kernels do.
REFERENCES.update({kernel.name: REFERENCES[kernel.pipelines] for kernel in CASES if kernel.pipelines})


def test_every_corpus_kernel_has_a_reference():
    assert set(REFERENCES) == {kernel.name for kernel in CASES}


@pytest.mark.parametrize("name", [kernel.name for kernel in CASES])
def test_triton_interpreter_runs_the_kernel_on_numpy_arrays(name):
    kernel = case(name)
    launch = kernel.make_inputs(np.random.default_rng(7))
    before = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    arrays = run_triton_interpreter(name, launch.args, launch.grid, kernel.constexprs)
    output = arrays[kernel.argument_names.index(launch.outputs[0])]
    expected = REFERENCES[name](launch.args)
    if kernel.exact:
        np.testing.assert_array_equal(output, expected.astype(output.dtype))
    else:
        np.testing.assert_allclose(output, expected, rtol=2e-6, atol=2e-6)
    for old, new in zip(before, launch.args):  # the caller's arrays are left alone
        if isinstance(old, np.ndarray):
            np.testing.assert_array_equal(old, new)


def test_scalar_if_takes_both_branches():
    kernel = case("scalar_if")
    launch = kernel.make_inputs(np.random.default_rng(3))
    args = launch.args[:3] + (0,)
    output = run_triton_interpreter("scalar_if", args, launch.grid, kernel.constexprs)[1]
    np.testing.assert_array_equal(output, args[0] * 2)


def test_interpreter_failures_are_reported():
    kernel = case("vadd")
    launch = kernel.make_inputs(np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="Triton's interpreter failed"):
        run_triton_interpreter("vadd", launch.args[:2], launch.grid, kernel.constexprs)


def test_numpy_tensor_shares_memory_and_reports_torch_dtypes():
    array = np.arange(12, dtype=np.int32).reshape(3, 4)
    tensor = NumpyTensor(array)
    assert str(tensor.dtype) == "torch.int32" and tensor.dtype is NumpyTensor(array[:1]).dtype
    assert tensor.data_ptr() == array.ctypes.data and tensor.size() == (3, 4) and tensor.stride() == (4, 1)
    tensor.copy_(NumpyTensor(np.zeros_like(array)))
    assert not array.any()
    with pytest.raises(ValueError):
        NumpyTensor(array.T)


@pytest.mark.parametrize("chip", [*CHIPS, *HIP_CHIPS])
@pytest.mark.parametrize("num_warps", NUM_WARPS)
def test_stored_ttgir_covers_every_kernel_and_reads_back(chip, num_warps):
    target = f"cuda:{chip[2:]}" if chip in CHIPS else f"hip:{chip}"
    lanes = 32 if chip in CHIPS else 64
    for kernel in CASES:
        if (chip, num_warps) not in {(c, w) for c, _, w in compiles(kernel)}:
            continue
        text = (OUT / f"{stem(kernel.name, chip, num_warps)}.ttgir").read_text()
        assert f'"ttg.num-warps" = {num_warps} : i32' in text
        assert f'ttg.target = "{target}"' in text and f'"ttg.threads-per-warp" = {lanes} : i32' in text
        assert re.search(rf"tt\.func public @{kernel.fn.__name__}\(", text)
        assert "/work/" not in text and "site-packages" not in text
        module = parse_ttgir(text)
        assert "tt.func" in str(module)


def test_stored_ttgir_and_tritons_figures_hold_only_the_corpus():
    cuda = {stem(k.name, chip, w) for k in CASES for chip, _, w in compiles(k) if chip in CHIPS}
    hip = {stem(k.name, chip, w) for k in CASES for chip, _, w in compiles(k) if chip in HIP_CHIPS}
    assert {path.stem for path in OUT.glob("*.ttgir")} == cuda | hip
    assert set(json.loads(FIGURES.read_text())) == cuda  # Triton's PTX: cuda only


@pytest.mark.parametrize("chip", [*CHIPS, *HIP_CHIPS])
def test_stored_ttgir_of_the_new_ops_round_trips_byte_exact(chip):
    """`tt.call` (read in Triton's custom syntax) and the other ops of the newer corpus kernels
    are written back as Triton printed them (not shape_ops nor while_loop: the writer names
    `tt.split`'s two results `%2:2` where Triton wrote `%outLHS, %outRHS`, and `scf.while`'s
    arguments `%arg4` where Triton wrote `%acc`)."""
    for name in ("call", "float_ops", "atomic_cas", "device_assert"):
        text = (OUT / f"{stem(name, chip, 4)}.ttgir").read_text()
        assert print_ttgir(parse_ttgir(text)) == text


def _bf16_handles(rng: np.random.Generator, shape) -> tuple[np.ndarray, object]:
    """Small-integer bf16 values, and the TensorHandle Triton's interpreter loads them into: their
    uint16 bit patterns (it holds every bf16 tensor so, whatever the argument's storage)."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    assert _get_np_dtype(tl.bfloat16) == np.uint16
    values = _ints(rng, shape, ml_dtypes.bfloat16)
    return values, TensorHandle(values.view(np.uint16).copy(), tl.bfloat16)


def test_tritons_interpreter_multiplies_the_bit_patterns_of_bf16_and_the_correction_the_values():
    """What goes wrong in Triton 3.9's interpreter: its `create_dot` runs `np.matmul` on the uint16
    bit patterns of bf16 operands. The oracle's correction multiplies their values, exactly."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    rng = np.random.default_rng(19)
    (a, a_bits), (b, b_bits) = _bf16_handles(rng, (16, 32)), _bf16_handles(rng, (32, 16))
    accumulator = TensorHandle(_ints(rng, (16, 16), np.float32), tl.float32)
    builder = InterpreterBuilder()
    theirs = InterpreterBuilder.create_dot(builder, a_bits, b_bits, accumulator, None, 0).data
    bit_product = np.matmul(a.view(np.uint16), b.view(np.uint16), dtype=np.float32) + accumulator.data
    np.testing.assert_array_equal(theirs, bit_product)
    exact = _int_matmul(a, b) + accumulator.data.astype(np.int64)
    assert np.abs(theirs - exact).min() > 1e6
    corrected = exact_bf16_dot(InterpreterBuilder.create_dot)(builder, a_bits, b_bits, accumulator, None, 0)
    assert corrected.dtype == tl.float32 and corrected.data.dtype == np.float32
    np.testing.assert_array_equal(corrected.data, exact)


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "float8e5"])
def test_the_bf16_correction_leaves_every_other_dot_of_tritons_interpreter_unchanged(dtype):
    """f16 and f32 (normal, not integer, data: any change of the arithmetic would show), i8 and
    fp8 operands: the corrected dot returns the interpreter's own result, bit for bit."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    rng = np.random.default_rng(5)
    element = getattr(tl, dtype)
    if dtype == "int8":
        a, b, acc = _ints(rng, (16, 32), np.int8), _ints(rng, (32, 16), np.int8), np.zeros((16, 16), np.int32)
    elif dtype == "float8e5":  # held as uint8 codes, normal ones of either sign
        a = rng.integers(0x04, 0x78, size=(16, 32)).astype(np.uint8) | rng.choice(np.array([0, 0x80], np.uint8), (16, 32))
        b, acc = a.T.copy(), rng.standard_normal((16, 16)).astype(np.float32)
    else:
        a, b = (rng.standard_normal(shape).astype(dtype) for shape in ((16, 32), (32, 16)))
        acc = rng.standard_normal((16, 16)).astype(np.float32)
    builder = InterpreterBuilder()
    handles = TensorHandle(a, element), TensorHandle(b, element), TensorHandle(acc, tl.int32 if dtype == "int8" else tl.float32)
    theirs = InterpreterBuilder.create_dot(builder, *handles, None, 0)
    corrected = exact_bf16_dot(InterpreterBuilder.create_dot)(builder, *handles, None, 0)
    assert corrected.dtype == theirs.dtype and corrected.data.dtype == theirs.data.dtype
    np.testing.assert_array_equal(corrected.data, theirs.data)
    assert np.isfinite(theirs.data).all() and theirs.data.any()


def test_tritons_interpreter_adds_the_bit_patterns_of_bf16_too_which_the_oracle_leaves_alone():
    """Arithmetic in bf16 itself is wrong in Triton 3.9's interpreter as well (`binary_op` on the
    uint16 bits: a bf16 `a + b` is the sum of the bit patterns), and the oracle does not correct
    it: no corpus kernel computes in bf16 (the matmuls accumulate in f32)."""
    from triton.runtime.interpreter import InterpreterBuilder

    rng = np.random.default_rng(3)
    (a, a_bits), (b, b_bits) = _bf16_handles(rng, 64), _bf16_handles(rng, 64)
    theirs = InterpreterBuilder().create_fadd(a_bits, b_bits).data
    np.testing.assert_array_equal(theirs, a.view(np.uint16) + b.view(np.uint16))
    assert np.any(theirs.view(ml_dtypes.bfloat16) != a + b)


#: Issue 19 item 5: its kernels, each with the scalar its loop runs over and the constexpr step
#: (a masked tail: the scalar of the corpus launch not a multiple of the step), at sm_80 with
#: these warps and stages.
ITEM_5_KERNELS = {
    "matmul_f16": ("K", "BLOCK_K"), "matmul_bf16": ("K", "BLOCK_K"), "matmul_tf32": ("K", "BLOCK_K"),
    "matmul_ieee": ("K", "BLOCK_K"), "matmul_i8": ("K", "BLOCK_K"), "matmul_epilogue": ("K", "BLOCK_K"),
    "matmul_batched": ("K", "BLOCK_K"), "attention": ("seq_len", "BLOCK_N"),
}
ITEM_5_WARPS = (4, 8)
ITEM_5_STAGES = (1, 2, 3, 4)
ITEM_5_HEADING = "### Issue 19 item 5 coverage"


def _masked_loop_tail(kernel) -> bool:
    """Whether the corpus launch of `kernel` leaves its loop a masked last step."""
    length, step = ITEM_5_KERNELS[kernel.pipelines or kernel.name]
    scalars = dict(zip(kernel.argument_names, kernel.make_inputs(np.random.default_rng(0)).args))
    return scalars[length] % kernel.constexprs[step] != 0


def item_5_coverage() -> dict[tuple[str, int, int], list[str]]:
    """(kernel, warps, stages) -> the sm_80 corpus files of that combination with a masked loop
    tail (kernel: the item's name, which a pipelined case names in `pipelines`)."""
    cells: dict[tuple[str, int, int], list[str]] = {
        (name, warps, stages): [] for name in ITEM_5_KERNELS for warps in ITEM_5_WARPS for stages in ITEM_5_STAGES
    }
    for kernel in CASES:
        if (kernel.pipelines or kernel.name) not in ITEM_5_KERNELS or not _masked_loop_tail(kernel):
            continue
        stages = kernel.options["num_stages"]
        for chip, _, warps in compiles(kernel):
            if chip == "sm80" and (kernel.pipelines or kernel.name, warps, stages) in cells:
                cells[kernel.pipelines or kernel.name, warps, stages].append(stem(kernel.name, chip, warps))
    return cells


def item_5_table() -> str:
    """The coverage as the Markdown table of docs/triton-kernels.md."""
    cells = item_5_coverage()
    lines = ["| kernel | warps | " + " | ".join(f"num_stages {s}" for s in ITEM_5_STAGES) + " |",
             "|---|---|" + "---|" * len(ITEM_5_STAGES)]
    for name in ITEM_5_KERNELS:
        for warps in ITEM_5_WARPS:
            files = (", ".join(f"`{file}`" for file in cells[name, warps, stages]) for stages in ITEM_5_STAGES)
            lines.append(f"| {name} | {warps} | " + " | ".join(files) + " |")
    return "\n".join(lines) + "\n"


def test_issue_19_item_5_has_every_kernel_warps_and_stages_with_a_masked_tail_and_the_docs_its_table():
    """Every (kernel, warps, stages) of issue 19 item 5 has a corpus file at sm_80 whose launch
    leaves a masked K tail (attention: a masked key tail), and docs/triton-kernels.md shows the
    table generated here (`python tests/test_kernel_corpus.py` prints it)."""
    missing = [cell for cell, files in item_5_coverage().items() if not files]
    assert not missing, f"issue 19 item 5 combinations without a corpus file: {missing}"
    docs = (Path(__file__).resolve().parents[1] / "docs" / "triton-kernels.md").read_text()
    section = docs.split(ITEM_5_HEADING, 1)[1].split("\n#", 1)[0]
    assert item_5_table() in section


def test_a_case_without_a_masked_loop_tail_does_not_count():
    """The pipelined f32 matmuls that step 16 through K = 48 leave no tail (their `_k32` cases do)."""
    assert not _masked_loop_tail(case("matmul_tf32_s2")) and _masked_loop_tail(case("matmul_tf32_k32_s2"))
    assert _masked_loop_tail(case("matmul_tf32")) and _masked_loop_tail(case("attention_s4"))


if __name__ == "__main__":
    print(item_5_table(), end="")
