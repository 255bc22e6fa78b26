"""Real Triton kernels side by side with Triton 3.9, in one process: our PTX against Triton's PTX
for the same TTGIR (the kernel corpus, `tests/kernel_corpus/`).

For each corpus file (kernel x sm_80/sm_90 x 1/4/8 warps) whose every op has a lowering:

- **ours**: `ttgir_to_ptx` (`ll-lower{chip=...}`, then the stock `gpu-lower-to-nvvm-pipeline`);
- **Triton**: `triton.compile(path, target=GPUTarget("cuda", 80|90, 32))` on the same TTGIR file,
  each compile in a fresh cache directory;

it prints (ours | Triton): total PTX instructions, global load and store widths (bits x count),
shared bytes, `bar.sync`, `shfl.sync`, and the compile time from TTGIR text to PTX text; for a dot
kernel a second line counts mma.sync, ldmatrix, cp.async, ld/st.shared and fma.rn.f32 (ours|Triton). The
files without a lowering are listed with the op that has none. A summary gives the median compile
time ratio and the kernels where we have more instructions, narrower accesses, or more shared
bytes or barriers.

    python benchmarks/bench_kernels.py [--only SUBSTRING] [--short-pointers]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "kernel_corpus"
sys.path.insert(0, str(CORPUS))

from ptx_stats import PtxStats, ptx_stats  # noqa: E402

from linear_layout.tools.kernels import ttgir_to_ptx  # noqa: E402


def widths_text(widths: tuple[int, ...]) -> str:
    """Access widths as `bits x count` (`128x4 32x2`), `-` for none."""
    return " ".join(f"{w}x{n}" for w, n in sorted(Counter(widths).items())) or "-"


def triton_ptx(path: Path, chip: str) -> tuple[str, float]:
    """Triton's PTX for TTGIR file `path` and the seconds its compile took (fresh cache)."""
    import triton
    from triton.backends.compiler import GPUTarget

    with tempfile.TemporaryDirectory() as directory:
        os.environ["TRITON_CACHE_DIR"] = directory
        start = time.perf_counter()
        kernel = triton.compile(str(path), target=GPUTarget("cuda", int(chip[3:]), 32))
        seconds = time.perf_counter() - start
    return kernel.asm["ptx"], seconds


def ours(path: Path, chip: str, short_pointers: bool = False) -> tuple[str | None, float, str]:
    """Our PTX (None and the reason when the kernel does not lower) and the seconds it took."""
    start = time.perf_counter()
    try:
        ptx = ttgir_to_ptx(path.read_text(), chip=chip, short_pointers=short_pointers)
    except Exception as error:  # the reason is printed: the first line of the diagnostics
        lines = [line.strip() for line in str(error).splitlines() if "error:" in line]
        return None, 0.0, (lines[0] if lines else str(error).splitlines()[0])[:140]
    return ptx, time.perf_counter() - start, ""


#: The matrix-path instructions of a dot kernel, counted in both PTX texts (issue 19 item 6).
_MATRIX_OPS = {
    "mma": r"\bmma\.sync\.",
    "ldmatrix": r"\bldmatrix\.",
    "cp.async": r"\bcp\.async\.(?:ca|cg)\.",
    "ld.shared": r"\bld\.shared\.",
    "st.shared": r"\bst\.shared\.",
    "fma": r"\bfma\.rn\.f32\b",
}


def matrix_counts(ptx: str) -> dict[str, int]:
    """How many of each `_MATRIX_OPS` instruction `ptx` has."""
    import re

    return {name: len(re.findall(pattern, ptx)) for name, pattern in _MATRIX_OPS.items()}


def _matrix_row(mine: str, theirs: str) -> str | None:
    """`  name ours|Triton ...` for a kernel with mma or FMA chains; None for the others."""
    ours_counts, their_counts = matrix_counts(mine), matrix_counts(theirs)
    if not (their_counts["mma"] or their_counts["fma"] > 32):
        return None
    return "    " + "  ".join(f"{name} {ours_counts[name]}|{their_counts[name]}" for name in _MATRIX_OPS)


def _row(stem: str, mine: PtxStats, theirs: PtxStats, seconds: tuple[float, float]) -> str:
    return (
        f"{stem:24} {mine.instructions:5} | {theirs.instructions:<5} "
        f"{widths_text(mine.global_loads):>10} | {widths_text(theirs.global_loads):<10} "
        f"{widths_text(mine.global_stores):>10} | {widths_text(theirs.global_stores):<10} "
        f"{mine.shared_bytes:5} | {theirs.shared_bytes:<5} {mine.barriers:3} | {theirs.barriers:<3} "
        f"{mine.shuffles:3} | {theirs.shuffles:<3} {seconds[0] * 1e3:7.0f} | {seconds[1] * 1e3:<7.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the corpus files whose name contains this")
    parser.add_argument(
        "--short-pointers", action="store_true", help="ours with 32-bit shared addresses (LLVM's nvptx-short-ptr)"
    )
    args = parser.parse_args(argv)
    import json

    figures = json.loads((CORPUS / "triton_ptx.json").read_text())
    files = [p for p in sorted((CORPUS / "ttgir").glob("*.ttgir")) if args.only in p.stem and p.stem in figures]
    print(f"{'file':24} {'instructions':>13} {'global loads':>23} {'global stores':>23} "
          f"{'shared B':>13} {'bar':>7} {'shfl':>7} {'compile ms':>17}")
    ratios, worse, missing = [], [], []
    for path in files:
        chip = "sm_" + path.stem.split(".")[1][2:]
        ptx, seconds, reason = ours(path, chip, args.short_pointers)
        if ptx is None:
            missing.append((path.stem, reason))
            continue
        theirs_ptx, theirs_seconds = triton_ptx(path, chip)
        mine, theirs = ptx_stats(ptx), ptx_stats(theirs_ptx)
        theirs = PtxStats(**{**theirs.__dict__, "shared_bytes": figures[path.stem]["shared_bytes"]})
        print(_row(path.stem, mine, theirs, (seconds, theirs_seconds)))
        matrix = _matrix_row(ptx, theirs_ptx)
        if matrix:
            print(matrix)
        ratios.append(seconds / theirs_seconds)
        if mine.instructions > theirs.instructions:
            worse.append(f"{path.stem}: {mine.instructions} instructions against {theirs.instructions}")
        if sorted(mine.global_loads + mine.global_stores, reverse=True)[:1] < sorted(
            theirs.global_loads + theirs.global_stores, reverse=True
        )[:1]:
            worse.append(f"{path.stem}: narrower global accesses")
        if mine.shared_bytes > theirs.shared_bytes or mine.barriers > theirs.barriers:
            worse.append(f"{path.stem}: more shared bytes or barriers")
    print_verdict(ratios, worse, missing, "not lowered")
    return 0


def print_verdict(ratios: list[float], worse: list[str], missing: list[tuple[str, str]], failed: str) -> None:
    """The end of a side-by-side run: the median compile-time ratio, every line where ours is
    worse than Triton's, and the files that did not go through (``failed``: what did not happen)."""
    if ratios:
        print(f"\ncompile time ours / Triton's, median over {len(ratios)} files: {statistics.median(ratios):.2f}")
    print(f"\nmore than Triton ({len(worse)}):" if worse else "\nnowhere more than Triton")
    for line in worse:
        print(f"  {line}")
    print(f"\n{failed} ({len(missing)} files):")
    for stem, reason in missing:
        print(f"  {stem}: {reason}")


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
