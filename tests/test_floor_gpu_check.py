"""The CPU-side parts of benchmarks/gpu_check.py: kernel building, PTX entry points, inputs and
expected outputs, and the no-GPU path (this machine has no NVIDIA GPU; the GPU run itself needs one)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import gpu_check
from linear_layout.encodings import BlockedLayout

CASE = ("transpose 64x64 f16 w4", BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0)),
        BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1)), (64, 64), "f16", 4)


def test_ptx_entry():
    ptx = ".version 8.0\n.visible .entry cvt(\n\t.param .u64 .ptr .global .align 1 cvt_param_0,\n" \
          "\t.param .u64 .ptr .global .align 1 cvt_param_1\n)\n{\n ret;\n}"
    assert gpu_check.ptx_entry(ptx) == ("cvt", 2)
    with pytest.raises(ValueError, match=r"no \.entry"):
        gpu_check.ptx_entry(".version 8.0")


def test_our_kernel_takes_two_pointers():
    kernel = gpu_check.build_ours(CASE, "sm_90", None)
    assert (kernel.name, kernel.num_params, kernel.threads, kernel.dynamic_shared) == ("cvt", 2, 128, 0)
    assert "st.shared" in kernel.ptx and "ld.shared" in kernel.ptx and "bar.sync" in kernel.ptx
    assert "kernel-bare-ptr-calling-convention=true" in gpu_check.nvvm_pipeline("sm_90")
    # With the chip, the lowering uses matrix instructions (the transpose: stmatrix).
    sm90 = gpu_check.build_ours(CASE, "sm_90", "sm_90")
    assert sm90.ptx.count("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4 and sm90.num_params == 2


def test_triton_kernel():
    pytest.importorskip("triton", reason="Triton 3.9 is the oracle; CI installs it")
    kernel = gpu_check.build_triton(CASE, 90)
    assert isinstance(kernel, gpu_check.Kernel), kernel
    assert kernel.num_params >= 2 and kernel.threads == 128 and kernel.dynamic_shared > 0
    assert "ldmatrix" in kernel.ptx or "stmatrix" in kernel.ptx  # the table


def test_inputs_and_expected():
    x, expected = gpu_check.inputs_and_expected(CASE, seed=3)
    assert x.shape == (64, 64) and x.dtype == np.float16 and x.flags.c_contiguous
    assert np.array_equal(x, expected) and x is not expected
    bf16 = (CASE[0], CASE[1], CASE[2], (8, 8), "bf16", 4)
    x, _ = gpu_check.inputs_and_expected(bf16)
    assert x.dtype == np.uint16 and x.shape == (8, 8) and len(np.unique(x)) > 32  # bf16 bit patterns


def test_without_a_gpu_everything_is_built(capsys):
    assert gpu_check.main(["--cpu-only", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "GPU run skipped (--cpu-only)" in out and out.count("ours cvt(2 params)") == 2
    why = gpu_check.Cuda.available()
    assert why is None or isinstance(why, str)
