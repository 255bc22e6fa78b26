"""Run the converted kernels of bench_codegen on an NVIDIA GPU: outputs against numpy, times next
to Triton's kernels.

For every kernel of `bench_codegen.suite()` (a tile load in layout A, `convert_layout` to B, a tile
store):

1. **ours**: `ll-lower` (with `chip=` when the lowering takes it), then the stock
   `gpu-lower-to-nvvm-pipeline{... kernel-bare-ptr-calling-convention=true}` to PTX: the kernel
   takes two pointers, `in` and `out`;
2. **Triton 3.9**: the same kernel written as TTGIR, compiled by `triton.compile` for the GPU's
   compute capability (PTX; Triton's extra trailing pointer parameters get null);
3. **inputs/expected**: a random tile; a conversion moves data and changes no value, so the
   expected output is the input, bit for bit;
4. on the GPU (CUDA driver API through ctypes, no extra dependency): load both PTX modules, run
   each kernel once and compare its output with the expected tile, then time `--repeat` launches
   of each between CUDA events and print microseconds per launch side by side.

Shared memory: a CUDA module cannot declare more than 48 KiB of static `.shared` memory. Our
kernels keep their scratch in static arrays up to that size; above it (the 64 KiB f32 transposes
of the suite) the lowering puts it in dynamic shared memory (`.extern .shared .align 16 .b8
ll_dynamic_shared[]`, `patterns/dynamic_shared_memory.py`) and records the bytes on the kernel
(`ll.dynamic_shared_memory`), which becomes the kernel's `dynamic_shared`. Triton's kernels always
use dynamic shared memory (`metadata.shared` bytes). A launch passes `dynamic_shared` bytes and,
above 48 KiB, first raises the function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to
it (`launch_settings`).

A kernel the driver refuses is reported as FAILED and counted; the check goes on. The exit code
is 1 when any kernel failed or computed a wrong output.

Without a GPU (no `libcuda`, or no device) the script still builds every kernel (steps 1-3),
checks the PTX has its entry point and prints what it would run; `--cpu-only` forces that.

    python benchmarks/gpu_check.py [--cpu-only] [--quick] [--repeat N] [--chip sm_90]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import bench_codegen

from lowering_cases import kernel_text

#: The most static shared memory a module may declare, and the dynamic size a launch may use
#: without raising the function's limit (CUDA: 48 KiB both).
DEFAULT_SHARED_LIMIT = 48 * 1024
#: CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
MAX_DYNAMIC_SHARED_SIZE_ATTRIBUTE = 8


# ---------------------------------------------------------------------------- building (CPU)


@dataclass(frozen=True)
class Kernel:
    """A compiled kernel: PTX text, entry name, parameters, threads per block, dynamic shared bytes."""

    ptx: str
    name: str
    num_params: int
    threads: int
    dynamic_shared: int = 0


def ptx_entry(ptx: str) -> tuple[str, int]:
    """(entry name, number of parameters) of the one `.entry` of a PTX module."""
    match = re.search(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)
    if match is None:
        raise ValueError("the PTX has no .entry")
    return match.group(1), len(re.findall(r"\.param\b", match.group(2)))


def launch_settings(kernel: Kernel) -> dict[int, int]:
    """The function attributes to set before launching `kernel` (attribute -> value): the
    dynamic shared limit when the launch needs more than the default 48 KiB."""
    if kernel.dynamic_shared > DEFAULT_SHARED_LIMIT:
        return {MAX_DYNAMIC_SHARED_SIZE_ATTRIBUTE: kernel.dynamic_shared}
    return {}


def _lowering(chip: str | None) -> str:
    return f"ll-lower{{chip={chip}}}" if chip else "ll-lower"


def nvvm_pipeline(chip: str) -> str:
    return (f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-chip={chip} cubin-features=+ptx80 "
            f"cubin-format=isa kernel-bare-ptr-calling-convention=true}})")


def build_ours(case, chip: str, lowering_chip: str | None) -> Kernel:
    """Our kernel for `case`: ll-lower, then the stock NVVM pipeline to PTX with bare pointers."""
    import mlir
    from mlir import ir

    from linear_layout.ir import load_dialects
    from linear_layout.passes import build_pass_manager

    _, a, b, shape, dtype, warps = case
    text = kernel_text(a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape)), dtype, warps,
                       encodings=(str(a), str(b)))
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(_lowering(lowering_chip), context).run(module.operation)
        lowered = str(module)
    mlir_opt = Path(next(iter(mlir.__path__))) / "bin" / "mlir-opt"
    result = subprocess.run([str(mlir_opt), *bench_codegen.LLVM_FLAGS, f"--pass-pipeline={nvvm_pipeline(chip)}"],
                            input=lowered, capture_output=True, text=True, check=True)
    match = re.search(r'assembly = "(.*?)"', result.stdout, re.S)
    ptx = re.sub(r"\\([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), match.group(1))
    entry, params = ptx_entry(ptx)
    return Kernel(ptx, entry, params, 32 * warps, dynamic_shared=bench_codegen.dynamic_shared_of(lowered))


def build_triton(case, capability: int) -> Kernel | str:
    """Triton's kernel for `case` (PTX), or a one-line reason when Triton is absent or fails."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, without its warning
    try:
        import triton  # noqa: F401
    except ImportError:
        return "triton is not installed"
    _, a, b, shape, dtype, warps = case
    text = bench_codegen.triton_kernel(a, b, shape, dtype, warps).replace('"cuda:90"', f'"cuda:{capability}"')
    compiled = bench_codegen.triton_compile(text, capability)
    if not isinstance(compiled, tuple):
        return compiled or "triton failed"
    ptx, shared = compiled
    entry, params = ptx_entry(ptx)
    return Kernel(ptx, entry, params, 32 * warps, dynamic_shared=shared)


def inputs_and_expected(case, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A random tile and the expected output (the same tile: a conversion changes no value)."""
    _, _, _, shape, dtype, _ = case
    x = np.ascontiguousarray(bench_codegen.tile(shape, dtype, seed))
    if dtype == "bf16":  # the device holds bf16 bit patterns: the high halves of the float32 values
        x = np.ascontiguousarray((x.view(np.uint32) >> np.uint32(16)).astype(np.uint16))
    return x, x.copy()


# ---------------------------------------------------------------------------- the CUDA driver (GPU)


class CudaError(RuntimeError):
    pass


class Cuda:
    """The few CUDA driver calls the check needs, through ctypes (`libcuda.so`)."""

    def __init__(self) -> None:
        path = ctypes.util.find_library("cuda") or "libcuda.so.1"
        self.lib = ctypes.CDLL(path)
        self._check(self.lib.cuInit(0), "cuInit")
        count = ctypes.c_int()
        self._check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value < 1:
            raise CudaError("no CUDA device")
        self.device = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    @staticmethod
    def available() -> str | None:
        """None when a GPU is usable, else why not."""
        try:
            Cuda()
        except (OSError, CudaError) as error:
            return str(error)
        return None

    def _check(self, status: int, what: str) -> None:
        if status:
            raise CudaError(f"{what} failed with CUDA error {status}")

    def capability(self) -> int:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(major), 75, self.device), "major")  # CC major
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, self.device), "minor")  # CC minor
        return 10 * major.value + minor.value

    def load(self, kernel: Kernel):
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(kernel.ptx.encode() + b"\0")),
                    f"cuModuleLoadData({kernel.name})")
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(function), module, kernel.name.encode()),
                    "cuModuleGetFunction")
        for attribute, value in launch_settings(kernel).items():
            self._check(self.lib.cuFuncSetAttribute(function, attribute, value), "cuFuncSetAttribute")
        return function

    def alloc(self, nbytes: int) -> ctypes.c_uint64:
        pointer = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
        return pointer

    def upload(self, pointer, array: np.ndarray) -> None:
        self._check(self.lib.cuMemcpyHtoD_v2(pointer, array.ctypes.data_as(ctypes.c_void_p),
                                             ctypes.c_size_t(array.nbytes)), "cuMemcpyHtoD")

    def download(self, pointer, array: np.ndarray) -> None:
        self._check(self.lib.cuMemcpyDtoH_v2(array.ctypes.data_as(ctypes.c_void_p), pointer,
                                             ctypes.c_size_t(array.nbytes)), "cuMemcpyDtoH")

    def launch(self, function, kernel: Kernel, pointers) -> None:
        values = [ctypes.c_uint64(p.value) for p in pointers]
        values += [ctypes.c_uint64(0)] * (kernel.num_params - len(values))  # Triton's scratch pointers
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
        self._check(self.lib.cuLaunchKernel(function, 1, 1, 1, kernel.threads, 1, 1, kernel.dynamic_shared,
                                            None, params, None), f"cuLaunchKernel({kernel.name})")

    def synchronize(self) -> None:
        self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def time_launches(self, function, kernel: Kernel, pointers, repeat: int) -> float:
        """Microseconds per launch over `repeat` launches, between two CUDA events."""
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
        self._check(self.lib.cuEventCreate(ctypes.byref(stop), 0), "cuEventCreate")
        self.launch(function, kernel, pointers)
        self.synchronize()
        self._check(self.lib.cuEventRecord(start, None), "cuEventRecord")
        for _ in range(repeat):
            self.launch(function, kernel, pointers)
        self._check(self.lib.cuEventRecord(stop, None), "cuEventRecord")
        self._check(self.lib.cuEventSynchronize(stop), "cuEventSynchronize")
        milliseconds = ctypes.c_float()
        self._check(self.lib.cuEventElapsedTime(ctypes.byref(milliseconds), start, stop), "cuEventElapsedTime")
        return 1000.0 * milliseconds.value / repeat


def run_on_gpu(cuda: Cuda, kernel: Kernel, x: np.ndarray, expected: np.ndarray, repeat: int) -> tuple[bool, float]:
    """(output == expected bit for bit, microseconds per launch)."""
    function = cuda.load(kernel)
    source, target = cuda.alloc(x.nbytes), cuda.alloc(x.nbytes)
    cuda.upload(source, x)
    cuda.upload(target, np.zeros_like(x))
    cuda.launch(function, kernel, [source, target])
    cuda.synchronize()
    out = np.zeros_like(x)
    cuda.download(target, out)
    correct = np.array_equal(out.view(np.uint8), expected.view(np.uint8))
    return correct, cuda.time_launches(function, kernel, [source, target], repeat)


# ---------------------------------------------------------------------------- main


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-only", action="store_true", help="build every kernel, run none")
    parser.add_argument("--quick", action="store_true", help="every fourth kernel")
    parser.add_argument("--limit", type=int, default=None, help="at most this many kernels")
    parser.add_argument("--repeat", type=int, default=200, help="timed launches per kernel (default 200)")
    parser.add_argument("--chip", default=None, help="target chip (default: the GPU's, else sm_90)")
    parser.add_argument("--portable", action="store_true", help="lower without a chip (no ldmatrix/stmatrix)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    why = "--cpu-only" if args.cpu_only else Cuda.available()
    cuda = None if why else Cuda()
    chip = args.chip or (f"sm_{cuda.capability()}" if cuda else "sm_90")
    capability = int(re.sub(r"\D", "", chip))
    cases = bench_codegen.suite()[:: 4 if args.quick else 1][: args.limit]
    print(f"{len(cases)} kernels for {chip}; " + (f"GPU run skipped ({why})" if why else "running on the GPU"))
    failures = 0
    for case in cases:
        x, expected = inputs_and_expected(case)
        ours = build_ours(case, chip, None if args.portable else chip)
        theirs = build_triton(case, capability)
        if cuda is None:
            status = "built" if isinstance(theirs, Kernel) else f"built (Triton: {theirs})"
            shared = f", {ours.dynamic_shared} B dynamic shared" if ours.dynamic_shared else ""
            print(f"  {case[0]:<40} ours {ours.name}({ours.num_params} params{shared})  {status}")
            continue
        try:
            ok, micro = run_on_gpu(cuda, ours, x, expected, args.repeat)
        except CudaError as error:  # the driver refused the kernel: report, go on
            print(f"  {case[0]:<40} ours FAILED: {error}")
            failures += 1
            continue
        line = f"  {case[0]:<40} ours {'ok' if ok else 'WRONG'} {micro:8.2f} us"
        failures += not ok
        if isinstance(theirs, Kernel):
            t_ok, t_micro = run_on_gpu(cuda, theirs, x, expected, args.repeat)
            line += f" | Triton {'ok' if t_ok else 'WRONG'} {t_micro:8.2f} us  (ours/Triton {micro / t_micro:.2f})"
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
