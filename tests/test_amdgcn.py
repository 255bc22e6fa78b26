"""The AMD target (issue 18, gfx942): the lowering's AMD form of masked accesses, and the stock
upstream ROCDL path from a lowered kernel to AMDGPU LLVM IR and AMDGCN (`passes/amdgcn.py`).

The pinned MLIR 22.1.8 build has no AMDGPU target, so `emit_amdgcn` is refused there with a
one-line reason (its compile test then checks that refusal); the LLVM IR the stock path does give is
compiled to AMDGCN here by Triton's own LLVM AMDGPU back end, which proves it is valid AMDGPU code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linear_layout.core.targets import TargetError, amdgpu_target, hip_chip, lowering_chip
from linear_layout.passes import PipelineError, build_pass_manager
from linear_layout.passes.amdgcn import AmdgcnError, amdgpu_backend_available, emit_amdgcn, emit_rocdl_llvm
from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel

CORPUS = Path(__file__).parent / "kernel_corpus"
TTGIR = CORPUS / "ttgir"
NVIDIA_ONLY = re.compile(r"\bllvm\.inline_asm\b|\bnvvm\.")


def _text(stem: str) -> str:
    return (TTGIR / f"{stem}.ttgir").read_text()


def test_targets():
    assert amdgpu_target("gfx942").wave_size == 64 and amdgpu_target("gfx1100").wave_size == 32
    assert lowering_chip("gfx942") == "gfx942" and lowering_chip("sm_90") == "sm_90"
    assert hip_chip("hip:gfx942") == "gfx942" and hip_chip("cuda:90") is None
    with pytest.raises(TargetError, match=r"unknown ttg.target 'hip:gfx1': known AMD chips"):
        hip_chip("hip:gfx1")  # an unknown AMD chip is an error, never NVIDIA code
    # the lowering takes either family, so an unknown name (whatever it looks like) lists both
    for chip in ("gfx1", "sm_1", "a100"):
        with pytest.raises(TargetError, match=rf"unknown chip '{chip}'; known NVIDIA chips: sm_20, .*, sm_121f; "
                                              r"known AMD chips: gfx908, .*, gfx1250$"):
            lowering_chip(chip)
    with pytest.raises(TargetError, match="unknown AMDGPU chip 'sm_90'"):
        amdgpu_target("sm_90")


@pytest.mark.parametrize("stem", ["vadd.gfx942.w4", "softmax.gfx942.w4", "layernorm.gfx942.w1", "histogram.gfx942.w8"])
def test_a_hip_module_lowers_to_the_amd_form(stem):
    """`ttg.target = "hip:gfx942"` selects the AMD form: masked accesses are `scf.if` around plain
    vector accesses, with no PTX inline asm and no nvvm op."""
    text = str(lower_ttgir(_text(stem)))
    assert not NVIDIA_ONLY.search(text)
    assert "scf.if" in text and "vector.load" in text


def test_the_chip_option_selects_the_amd_form_and_it_runs_like_tritons_interpreter():
    """The same sm_80 TTGIR lowered for gfx942 has no predicated PTX, and still runs bit-exact
    against Triton's interpreter (the masked tail included)."""
    pytest.importorskip("triton")
    sys.path.insert(0, str(CORPUS))
    from corpus import case
    from oracle import run_triton_interpreter

    nvidia = str(lower_ttgir(_text("vadd.sm80.w4")))
    assert "llvm.inline_asm" in nvidia
    module = lower_ttgir(_text("vadd.sm80.w4"), chip="gfx942")
    assert not NVIDIA_ONLY.search(str(module))
    kernel = case("vadd")
    launch = kernel.make_inputs(np.random.default_rng(5))
    expected = run_triton_interpreter("vadd", launch.args, launch.grid, kernel.constexprs)
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    report = run_triton_kernel(module, args, launch.grid)
    for index, array in expected.items():
        np.testing.assert_array_equal(args[index], array)
    assert not report.races


@pytest.mark.parametrize("stem", ["vadd.gfx942.w4", "softmax.gfx942.w4", "row_sum.gfx942.w8", "scatter_add.gfx942.w4"])
def test_the_stock_rocdl_path_gives_amdgpu_llvm_ir(stem):
    llvm_ir = emit_rocdl_llvm(lower_ttgir(_text(stem)), "gfx942")
    name = stem.split(".")[0]
    assert 'target triple = "amdgcn-amd-amdhsa"' in llvm_ir
    assert re.search(rf"define amdgpu_kernel void @{name}_kernel\(", llvm_ir), llvm_ir[:400]
    assert "__ocml" not in llvm_ir  # no ROCm device library needed
    if name in ("softmax", "row_sum"):  # warp reductions: gpu.shuffle as LDS permutes/swizzles
        assert "@llvm.amdgcn.ds.bpermute" in llvm_ir or "@llvm.amdgcn.ds.swizzle" in llvm_ir
        assert "@llvm.amdgcn.s.barrier" in llvm_ir  # across warps through LDS
    if name == "scatter_add":
        assert "atomicrmw" in llvm_ir


def test_the_llvm_ir_is_valid_amdgpu_code():
    """Triton's LLVM AMDGPU back end compiles our stock-path LLVM IR: 64-lane softmax with its
    barriers, and vadd's masked loads as exec-masked loads at Triton's widths."""
    pytest.importorskip("triton")
    sys.path.insert(0, str(CORPUS))
    from amdgcn_stats import amdgcn_stats, tritons_codegen

    softmax = amdgcn_stats(tritons_codegen(emit_rocdl_llvm(lower_ttgir(_text("softmax.gfx942.w4")), "gfx942")))
    assert softmax.barriers >= 1 and softmax.cross_lane >= 6 and softmax.lds_bytes == 8
    asm = tritons_codegen(emit_rocdl_llvm(lower_ttgir(_text("vadd16.gfx942.w1")), "gfx942"))
    assert "s_and_saveexec_b64" in asm and "s_endpgm" in asm
    vadd16 = amdgcn_stats(asm)
    assert vadd16.global_loads == (128, 128) and vadd16.global_stores == (128,)


def test_emit_amdgcn_compiles_or_is_refused_before_touching_the_module():
    """With the AMDGPU target, the stock path makes gfx942 assembly; without it (the pinned MLIR
    22.1.8 wheel: X86, AArch64, ARM and NVPTX only), `emit_amdgcn` refuses with one line before
    anything in the module changed. No skip: whichever build is installed, one branch is checked."""
    module = lower_ttgir(_text("softmax.gfx942.w4"))
    if amdgpu_backend_available():
        asm = emit_amdgcn(module, "gfx942")
        assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx942"' in asm and "s_barrier" in asm
        return
    before = str(module)
    with pytest.raises(AmdgcnError, match="this MLIR build has no AMDGPU target"):
        emit_amdgcn(module, "gfx942")
    assert str(module) == before  # refused before anything changed


def test_bad_input_is_an_amdgcn_error():
    with pytest.raises(AmdgcnError, match="unknown AMDGPU chip 'sm_90'"):
        emit_rocdl_llvm(lower_ttgir(_text("vadd.gfx942.w4")), "sm_90")
    with pytest.raises(AmdgcnError, match=r"corpus\.py:\d+:\d+.*'llvm\.inline_asm' is NVIDIA-only"):
        emit_rocdl_llvm(lower_ttgir(_text("vadd.sm80.w4")), "gfx942")
    from mlir import ir

    with ir.Context(), ir.Location.unknown(), pytest.raises(AmdgcnError, match=r"no gpu\.module"):
        emit_rocdl_llvm(ir.Module.parse("module {}"), "gfx942")


def test_the_chip_option_accepts_amd_chips_only_known_ones():
    from mlir import ir

    with ir.Context():
        build_pass_manager("builtin.module(ll-lower{chip=gfx942})")
        with pytest.raises(PipelineError, match=r"bad value 'gfx9' for option 'chip'.*unknown chip 'gfx9'; known NVIDIA .*; known AMD chips: gfx908"):
            build_pass_manager("builtin.module(ll-lower{chip=gfx9})")


def _opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", *args], capture_output=True, timeout=120)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--emit-rocdl-llvm", "--amdgcn-chip=gfx9"], "--amdgcn-chip: unknown AMDGPU chip 'gfx9'"),
        (["--emit-ptx", "--emit-amdgcn"], "--emit-ptx and --emit-amdgcn cannot be combined"),
        (["--emit-amdgcn"], "--emit-amdgcn: this MLIR build has no AMDGPU target"),
    ],
)
def test_driver_errors_are_one_line(args, message):
    if args == ["--emit-amdgcn"] and amdgpu_backend_available():  # not an error with the target: assembly
        result = _opt(str(TTGIR / "vadd.gfx942.w1.ttgir"), "-p", "builtin.module(ll-lower)", *args)
        assert result.returncode == 0 and b".amdgcn_target" in result.stdout, result.stderr.decode()
        return
    result = _opt(str(TTGIR / "vadd.gfx942.w1.ttgir"), "-p", "builtin.module(ll-lower)", *args)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and result.stdout == b"" and "Traceback" not in stderr
    assert len(stderr.splitlines()) == 1 and message in stderr, stderr


def test_driver_emits_rocdl_llvm():
    result = _opt(str(TTGIR / "vadd.gfx942.w1.ttgir"), "-p", "builtin.module(ll-lower)", "--emit-rocdl-llvm")
    assert result.returncode == 0, result.stderr.decode()
    assert b"define amdgpu_kernel void @vadd_kernel(" in result.stdout
