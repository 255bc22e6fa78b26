"""Real Triton kernels side by side with Triton 3.9, in one process: our PTX against Triton's PTX
for the same TTGIR (the kernel corpus, `tests/kernel_corpus/`).

For each corpus file (kernel x sm_80/sm_90 x 1/4/8 warps) whose every op has a lowering:

- **ours**: `ttgir_to_ptx` (`ll-lower{chip=...}`, then the stock `gpu-lower-to-nvvm-pipeline`);
- **Triton**: `triton.compile(path, target=GPUTarget("cuda", 80|90, 32))` on the same TTGIR file,
  each compile in a fresh cache directory;

it prints (ours | Triton): total PTX instructions, global load and store widths (bits x count),
shared bytes, `bar.sync`, `shfl.sync`, and the compile time from TTGIR text to PTX text (wall
clock, and CPU time: this process's and its children's, so Triton's includes its `ptxas`); for a dot
kernel a second line counts mma.sync, ldmatrix, cp.async, ld/st.shared and fma.rn.f32 (ours|Triton). The
files without a lowering are listed with the op that has none. A summary gives the median compile
time ratios (wall and CPU) and the kernels where we have more instructions, narrower accesses, or
more shared bytes or barriers.

Each of our compiles starts cold: the package's process-wide memos (its plan caches) are emptied
first (`forget_memos`), as for the first kernel a process compiles, so that neither the files
before it nor `--repeat` lend it their plans. `--repeat N` compiles each file N times, ours and
Triton's in turn, and keeps the best of the N for each time (the others' load on a shared
machine only ever adds time). The first compile of a process pays for imports and for Triton's
and our first-use setup: on a short `--only` run, the first file's times are not representative.

    python benchmarks/bench_kernels.py [--only SUBSTRING] [--repeat N] [--short-pointers]
"""

from __future__ import annotations

import argparse
import os
import resource
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


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its finished children (`ptxas`)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def triton_ptx(path: Path, chip: str) -> tuple[str, float, float]:
    """Triton's PTX for TTGIR file `path` and the wall and CPU seconds its compile took (fresh cache)."""
    import triton
    from triton.backends.compiler import GPUTarget

    with tempfile.TemporaryDirectory() as directory:
        os.environ["TRITON_CACHE_DIR"] = directory
        start, cpu = time.perf_counter(), cpu_seconds()
        kernel = triton.compile(str(path), target=GPUTarget("cuda", int(chip[3:]), 32))
        seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return kernel.asm["ptx"], seconds, cpu


def forget_memos() -> None:
    """Empty the process-wide memos of every `linear_layout` module (its `functools` caches and
    `BoundedCache`s): the next compile plans everything anew, as the first compile of its kernel."""
    from linear_layout.core._packing import BoundedCache

    for name, module in list(sys.modules.items()):
        if name != "linear_layout" and not name.startswith("linear_layout."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, BoundedCache):
                value.clear()
            elif hasattr(value, "cache_clear") and hasattr(value, "__wrapped__"):
                value.cache_clear()


def ours(path: Path, chip: str, short_pointers: bool = False) -> tuple[str | None, float, float, str]:
    """Our PTX (None and the reason when the kernel does not lower) and the wall and CPU seconds
    it took, from cold memos (`forget_memos`)."""
    forget_memos()
    start, cpu = time.perf_counter(), cpu_seconds()
    try:
        ptx = ttgir_to_ptx(path.read_text(), chip=chip, short_pointers=short_pointers)
    except Exception as error:  # the reason is printed: the first line of the diagnostics
        lines = [line.strip() for line in str(error).splitlines() if "error:" in line]
        return None, 0.0, 0.0, (lines[0] if lines else str(error).splitlines()[0])[:140]
    return ptx, time.perf_counter() - start, cpu_seconds() - cpu, ""


def best_times(
    path: Path, chip: str, repeat: int, short_pointers: bool = False
) -> tuple[str | None, str, str, tuple[float, ...]]:
    """(our PTX or None, the reason it is None, Triton's PTX, (our wall, Triton's wall, our CPU,
    Triton's CPU) seconds, each the best of `repeat` compiles made in turn)."""
    ptx, wall, cpu, reason = ours(path, chip, short_pointers)
    if ptx is None:
        return None, reason, "", ()
    theirs_ptx, their_wall, their_cpu = triton_ptx(path, chip)
    times = [wall, their_wall, cpu, their_cpu]
    for _ in range(repeat - 1):
        _, wall, cpu, _ = ours(path, chip, short_pointers)
        _, their_wall, their_cpu = triton_ptx(path, chip)
        times = [min(a, b) for a, b in zip(times, (wall, their_wall, cpu, their_cpu))]
    return ptx, "", theirs_ptx, tuple(times)


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
        f"{seconds[2] * 1e3:7.0f} | {seconds[3] * 1e3:<7.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the corpus files whose name contains this")
    parser.add_argument(
        "--short-pointers", action="store_true", help="ours with 32-bit shared addresses (LLVM's nvptx-short-ptr)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="compile each file N times; keep the best times")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    import json

    figures = json.loads((CORPUS / "triton_ptx.json").read_text())
    files = [p for p in sorted((CORPUS / "ttgir").glob("*.ttgir")) if args.only in p.stem and p.stem in figures]
    print(f"{'file':24} {'instructions':>13} {'global loads':>23} {'global stores':>23} "
          f"{'shared B':>13} {'bar':>7} {'shfl':>7} {'compile ms':>17} {'CPU ms':>15}")
    ratios, cpu_ratios, worse, missing = [], [], [], []
    for path in files:
        chip = "sm_" + path.stem.split(".")[1][2:]
        ptx, reason, theirs_ptx, seconds = best_times(path, chip, args.repeat, args.short_pointers)
        if ptx is None:
            missing.append((path.stem, reason))
            continue
        mine, theirs = ptx_stats(ptx), ptx_stats(theirs_ptx)
        theirs = PtxStats(**{**theirs.__dict__, "shared_bytes": figures[path.stem]["shared_bytes"]})
        print(_row(path.stem, mine, theirs, seconds))
        matrix = _matrix_row(ptx, theirs_ptx)
        if matrix:
            print(matrix)
        ratios.append(seconds[0] / seconds[1])
        if seconds[3] > 0:
            cpu_ratios.append(seconds[2] / seconds[3])
        if mine.instructions > theirs.instructions:
            worse.append(f"{path.stem}: {mine.instructions} instructions against {theirs.instructions}")
        if sorted(mine.global_loads + mine.global_stores, reverse=True)[:1] < sorted(
            theirs.global_loads + theirs.global_stores, reverse=True
        )[:1]:
            worse.append(f"{path.stem}: narrower global accesses")
        if mine.shared_bytes > theirs.shared_bytes or mine.barriers > theirs.barriers:
            worse.append(f"{path.stem}: more shared bytes or barriers")
    print_verdict(ratios, worse, missing, "not lowered", cpu_ratios)
    return 0


def print_verdict(
    ratios: list[float],
    worse: list[str],
    missing: list[tuple[str, str]],
    failed: str,
    cpu_ratios: list[float] | None = None,
) -> None:
    """The end of a side-by-side run: the median compile-time ratio (wall clock; and of CPU time
    when ``cpu_ratios`` are given), every line where ours is worse than Triton's, and the files
    that did not go through (``failed``: what did not happen)."""
    if ratios:
        print(f"\ncompile time ours / Triton's, median over {len(ratios)} files: {statistics.median(ratios):.2f}")
    if cpu_ratios:
        print(f"CPU time ours / Triton's, median over {len(cpu_ratios)} files: {statistics.median(cpu_ratios):.2f}")
    print(f"\nmore than Triton ({len(worse)}):" if worse else "\nnowhere more than Triton")
    for line in worse:
        print(f"  {line}")
    print(f"\n{failed} ({len(missing)} files):")
    for stem, reason in missing:
        print(f"  {stem}: {reason}")


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
