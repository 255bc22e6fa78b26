"""The CPU-side parts of benchmarks/gpu_check.py: kernel building, PTX entry points, inputs and
expected outputs, and the no-GPU path (this machine has no NVIDIA GPU; the GPU run itself needs one)."""

from __future__ import annotations

import re
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
    if why is None:  # a usable GPU: the driver answers with its compute capability
        assert gpu_check.Cuda().capability() >= 70
    else:  # none: the reason is the error that opening the driver raises
        with pytest.raises((OSError, gpu_check.CudaError)) as failure:
            gpu_check.Cuda()
        assert why == str(failure.value) and why.strip()


BIG = ("transpose 128x128 f32 w8", BlockedLayout((1, 4), (8, 4), (8, 1), (1, 0)),
       BlockedLayout((4, 1), (4, 8), (1, 8), (0, 1)), (128, 128), "f32", 8)


def test_a_64_kib_scratch_launches_with_dynamic_shared_memory():
    """Above the 48 KiB of static shared memory a module may declare, our kernel declares
    `.extern .shared` and carries the bytes its launch must give; the launch raises the
    function's dynamic limit first. Within the limit: static arrays, no launch setting."""
    big = gpu_check.build_ours(BIG, "sm_90", "sm_90")
    assert big.dynamic_shared == 65536 and big.num_params == 2 and big.threads == 256
    assert ".extern .shared .align 16 .b8 ll_dynamic_shared[];" in big.ptx
    assert gpu_check.launch_settings(big) == {gpu_check.MAX_DYNAMIC_SHARED_SIZE_ATTRIBUTE: 65536}
    small = gpu_check.build_ours(CASE, "sm_90", "sm_90")
    assert small.dynamic_shared == 0 and gpu_check.launch_settings(small) == {}
    assert ".extern .shared" not in small.ptx and re.search(r"\.shared \.align 128 \.b8 \w+\[2048\]", small.ptx)
    edge = gpu_check.Kernel("", "k", 2, 32, dynamic_shared=48 * 1024)
    assert gpu_check.launch_settings(edge) == {}  # the default limit is inclusive


class _FakeDriver:
    """Stands in for libcuda: records the calls a load and a launch make, succeeds."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            return 0
        return call


def test_the_launch_passes_the_dynamic_shared_bytes():
    cuda = gpu_check.Cuda.__new__(gpu_check.Cuda)  # no driver here: a fake one
    cuda.lib = _FakeDriver()
    kernel = gpu_check.Kernel(".entry cvt()", "cvt", 2, 256, dynamic_shared=65536)
    function = cuda.load(kernel)
    cuda.launch(function, kernel, [gpu_check.ctypes.c_uint64(16), gpu_check.ctypes.c_uint64(32)])
    names = [name for name, _ in cuda.lib.calls]
    assert names == ["cuModuleLoadData", "cuModuleGetFunction", "cuFuncSetAttribute", "cuLaunchKernel"]
    _, (attr_function, attribute, value) = cuda.lib.calls[2]
    assert attr_function is function and (attribute, value) == (8, 65536)  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    _, launch = cuda.lib.calls[3]
    assert launch[1:8] == (1, 1, 1, 256, 1, 1, 65536)  # grid, block, sharedMemBytes
    cuda.lib.calls.clear()
    static = gpu_check.Kernel(".entry cvt()", "cvt", 2, 128)
    cuda.launch(cuda.load(static), static, [gpu_check.ctypes.c_uint64(16), gpu_check.ctypes.c_uint64(32)])
    assert [name for name, _ in cuda.lib.calls] == ["cuModuleLoadData", "cuModuleGetFunction", "cuLaunchKernel"]
    assert cuda.lib.calls[-1][1][7] == 0
