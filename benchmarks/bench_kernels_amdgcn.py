"""The gfx942 (64-lane) corpus kernels side by side with Triton 3.9, in one process: our AMDGCN
against Triton's AMDGCN for the same TTGIR (`tests/kernel_corpus/ttgir/*.gfx942.*.ttgir`).

- **ours**: `lower_ttgir` (`ll-lower`: the module's `ttg.target = "hip:gfx942"` selects the AMD
  form), then the stock ROCDL path (`emit_rocdl_llvm`: `rocdl-attach-target`,
  `convert-gpu-to-rocdl`, LLVM IR for `amdgcn-amd-amdhsa`), then LLVM's AMDGPU back end at O3:
  `emit_amdgcn` (the stock `gpu-module-to-binary{format=isa}`) where this MLIR build has the
  AMDGPU target, else Triton's own LLVM AMDGPU back end (`compile_amdgpu`, the one
  `triton.compile` uses for its LLVM IR), since the pinned `xtc` MLIR/LLVM 22.1.8 build has no
  AMDGPU target; the header line says which;
- **Triton**: `triton.compile(path, target=GPUTarget("hip", "gfx942", 64))`, each compile in a
  fresh cache directory.

It prints (ours | Triton): total instructions, global load and store widths (bits x count; flat,
global and buffer accesses), LDS bytes, `s_barrier`, cross-lane operations (ds_bpermute,
ds_swizzle, DPP, readlane) and the compile time from TTGIR text to AMDGCN text; then where ours
has more instructions, narrower accesses, more LDS bytes or barriers.

    python benchmarks/bench_kernels_amdgcn.py [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "kernel_corpus"
sys.path.insert(0, str(CORPUS))

from amdgcn_stats import AmdgcnStats, amdgcn_stats, tritons_codegen  # noqa: E402

from linear_layout.passes.amdgcn import amdgpu_backend_available, emit_amdgcn, emit_rocdl_llvm  # noqa: E402
from linear_layout.tools.kernels import lower_ttgir  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernels import print_verdict, widths_text  # noqa: E402  (the same verdict and widths as the PTX comparison)

CHIP = "gfx942"


def triton_amdgcn(path: Path) -> tuple[str, float, int]:
    """Triton's AMDGCN for TTGIR file `path`, the seconds its compile took (fresh cache) and its
    LDS bytes (`metadata.shared`: Triton's LDS is one dynamic buffer, not in the AMDGCN's
    `.amdhsa_group_segment_fixed_size`)."""
    import triton
    from triton.backends.compiler import GPUTarget

    with tempfile.TemporaryDirectory() as directory:
        os.environ["TRITON_CACHE_DIR"] = directory
        start = time.perf_counter()
        kernel = triton.compile(str(path), target=GPUTarget("hip", CHIP, 64))
        seconds = time.perf_counter() - start
    return kernel.asm["amdgcn"], seconds, int(kernel.metadata.shared)


def ours(path: Path) -> tuple[str | None, float, str]:
    """Our AMDGCN (None and the reason when the kernel does not lower) and the seconds it took."""
    start = time.perf_counter()
    try:
        module = lower_ttgir(path.read_text())
        if amdgpu_backend_available():
            asm = emit_amdgcn(module, CHIP)
        else:
            asm = tritons_codegen(emit_rocdl_llvm(module, CHIP), CHIP)
    except Exception as error:  # the reason is printed: the first line of the diagnostics
        lines = [line.strip() for line in str(error).splitlines() if "error:" in line]
        return None, 0.0, (lines[0] if lines else str(error).splitlines()[0])[:140]
    return asm, time.perf_counter() - start, ""


def _row(stem: str, mine: AmdgcnStats, theirs: AmdgcnStats, seconds: tuple[float, float]) -> str:
    return (
        f"{stem:26} {mine.instructions:5} | {theirs.instructions:<5} "
        f"{widths_text(mine.global_loads):>10} | {widths_text(theirs.global_loads):<10} "
        f"{widths_text(mine.global_stores):>10} | {widths_text(theirs.global_stores):<10} "
        f"{mine.lds_bytes:5} | {theirs.lds_bytes:<5} {mine.barriers:3} | {theirs.barriers:<3} "
        f"{mine.cross_lane:3} | {theirs.cross_lane:<3} {seconds[0] * 1e3:7.0f} | {seconds[1] * 1e3:<7.0f}"
    )


def _worse(stem: str, mine: AmdgcnStats, theirs: AmdgcnStats) -> list[str]:
    found = []
    if mine.instructions > theirs.instructions:
        found.append(f"{stem}: {mine.instructions} instructions against {theirs.instructions}")
    if max(mine.global_loads + mine.global_stores, default=0) < max(
        theirs.global_loads + theirs.global_stores, default=0
    ):
        found.append(f"{stem}: narrower global accesses")
    if mine.lds_bytes > theirs.lds_bytes or mine.barriers > theirs.barriers:
        found.append(f"{stem}: more LDS bytes or barriers")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the corpus files whose name contains this")
    args = parser.parse_args(argv)
    files = [p for p in sorted((CORPUS / "ttgir").glob(f"*.{CHIP}.*.ttgir")) if args.only in p.stem]
    backend = (
        "stock gpu-module-to-binary" if amdgpu_backend_available() else "Triton's LLVM (no AMDGPU in this MLIR build)"
    )
    print(f"our AMDGCN: stock ROCDL path to LLVM IR, codegen by {backend}")
    print(
        f"{'file':26} {'instructions':>13} {'global loads':>23} {'global stores':>23} "
        f"{'LDS B':>13} {'s_barrier':>7} {'xlane':>7} {'compile ms':>17}"
    )
    ratios, worse, missing = [], [], []
    for path in files:
        asm, seconds, reason = ours(path)
        if asm is None:
            missing.append((path.stem, reason))
            continue
        theirs_asm, theirs_seconds, theirs_lds = triton_amdgcn(path)
        mine, theirs = amdgcn_stats(asm), dataclasses.replace(amdgcn_stats(theirs_asm), lds_bytes=theirs_lds)
        print(_row(path.stem, mine, theirs, (seconds, theirs_seconds)))
        ratios.append(seconds / theirs_seconds)
        worse.extend(_worse(path.stem, mine, theirs))
    print_verdict(ratios, worse, missing, "not compiled")
    return 0


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
