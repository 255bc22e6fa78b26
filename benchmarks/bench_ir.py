"""Time parse -> verify (ll-verify) -> print of ttg IR, for 1k, 10k and 100k ops, with few and
with many distinct encodings, side by side with Triton 3.9 doing the same with its C++ dialect.

    python benchmarks/bench_ir.py [--sizes 1000 10000 100000] [--repeat N] [--skip-triton] [--cpu-time]

Each module is one function holding a chain of `ttg.convert_layout` ops. "few" cycles through
4 blocked encodings; "many" through up to 512 distinct ones (distinct tensor types too). We
report microseconds per op for each phase (Triton's too: parse with its verifier, then print),
the 10x scaling ratio of the total (10 means linear; the target is <= 11), and the hit rate of
our attribute/type cache during verification.
With `--repeat N`, each row is timed N more times and a "warm" row gives the best of them (the
first run of a row is cold: a fresh context, and encodings the process has not yet built). Before
the first row, each side runs once, untimed, on the largest module in encodings no row uses, so
that neither pays alone for the process's first heap growth; ours and Triton's runs alternate.
docs/tools.md records the figures before and after issue 20's speed-up and where the time goes.
Ratio = ours / Triton (above 1 means slower): Triton parses, verifies and prints in C++ with
aliases, we do the verification in Python over IRDL attributes.
With `--cpu-time` every phase is timed in CPU time of the process (`time.process_time`) instead of
wall-clock time: on a shared, loaded machine the wall-clock figures move by 2x between runs.
Before each timed run (ours and Triton's alike) the process collects its garbage, untimed: Python
runs a full collection once the objects that survived since the last one exceed a quarter of all
tracked objects, and without the reset that collection (about 30 ms with Triton and MLIR loaded,
a cost of the whole heap, not of the run) fell into whichever of our runs crossed the line, moving
a cold 10k-op row by 0.15 of Triton's time. A collection a run's own objects trigger still counts.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys
import tempfile
import time

from mlir import ir

from linear_layout.ir import cache_info, load_dialects, print_module
from linear_layout.passes import build_pass_manager

SHAPE = (64, 64)
clock = time.perf_counter  # time.process_time with --cpu-time


def blocked_encodings(limit: int) -> list[str]:
    """Distinct valid blocked encodings for 4 warps of 32 threads."""
    out = []
    splits32 = [(1 << a, 32 >> a) for a in range(6)]
    splits4 = [(1, 4), (2, 2), (4, 1)]
    for spt0, spt1 in itertools.product((1, 2, 4, 8), repeat=2):
        for tpw, wpc, order in itertools.product(splits32, splits4, ((1, 0), (0, 1))):
            out.append(f"#ttg.blocked<{{sizePerThread = [{spt0}, {spt1}], threadsPerWarp = [{tpw[0]}, {tpw[1]}], "
                       f"warpsPerCTA = [{wpc[0]}, {wpc[1]}], order = [{order[0]}, {order[1]}]}}>")
            if len(out) == limit:
                return out
    return out


def make_module(num_ops: int, num_encodings: int, skip: int = 0) -> str:
    """A chain of `num_ops` conversions through `num_encodings` blocked encodings (those after
    the first `skip` of `blocked_encodings`)."""
    encodings = blocked_encodings(skip + num_encodings)[skip:]
    types = [f"tensor<{SHAPE[0]}x{SHAPE[1]}xf32, #e{i}>" for i in range(len(encodings))]
    lines = [f"#e{i} = {e}" for i, e in enumerate(encodings)]
    lines.append('module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {')
    lines.append(f"  func.func @chain(%v0: {types[0]}) -> {types[num_ops % len(types)]} {{")
    for i in range(num_ops):
        src, dst = types[i % len(types)], types[(i + 1) % len(types)]
        lines.append(f'    %v{i + 1} = "ttg.convert_layout"(%v{i}) : ({src}) -> {dst}')
    lines.append(f"    return %v{num_ops} : {types[num_ops % len(types)]}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def time_ours(text: str) -> tuple[dict[str, float], float]:
    with ir.Context() as ctx:
        load_dialects(ctx)
        pm = build_pass_manager("builtin.module(ll-verify)")
        t0 = clock()
        module = ir.Module.parse(text)
        t1 = clock()
        before = cache_info()
        pm.run(module.operation)
        t2 = clock()
        after = cache_info()
        print_module(module)
        t3 = clock()
    lookups = (after["hits"] - before["hits"]) + (after["misses"] - before["misses"])
    hit_rate = (after["hits"] - before["hits"]) / lookups if lookups else float("nan")
    return {"parse": t1 - t0, "verify": t2 - t1, "print": t3 - t2}, hit_rate


def triton_timer():
    """Parse (with Triton's verifier) and print with Triton 3.9's own dialects, or None."""
    try:
        from triton._C.libtriton import ir as tir
    except ImportError:
        return None

    def run(text: str) -> dict[str, float]:
        # Triton's functions are tt.func; everything else is written the same.
        text = text.replace("func.func", "tt.func").replace("    return", "    tt.return")
        text = text.replace('"ttg.threads-per-warp" = 32 : i32', '"ttg.threads-per-warp" = 32 : i32, "ttg.num-ctas" = 1 : i32')
        ctx = tir.context()
        tir.load_dialects(ctx)
        with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
            f.write(text)
        try:
            t0 = clock()
            module = tir.parse_mlir_module(f.name, ctx)
            t1 = clock()
            str(module)
            t2 = clock()
        finally:
            os.unlink(f.name)
        return {"parse+verify": t1 - t0, "print": t2 - t1}

    return run


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    return min(runs, key=lambda phases: sum(phases.values()))


def _row(size: int, label: str, phases: dict[str, float], hit_rate: float, triton: dict[str, float] | None) -> str:
    per_op = {k: v / size * 1e6 for k, v in phases.items()}
    total = sum(phases.values())
    triton_text = ""
    if triton is not None:
        triton_total = sum(triton.values())
        triton_text = (
            f"{triton['parse+verify'] / size * 1e6:7.2f} {triton['print'] / size * 1e6:7.2f} "
            f"{triton_total / size * 1e6:7.2f}       {total / triton_total:6.2f}"
        )
    return (
        f"{size:>7} {label:>14} | {per_op['parse']:7.2f} {per_op['verify']:7.2f} "
        f"{per_op['print']:7.2f} {total / size * 1e6:7.2f}       | {hit_rate:10.1%} | {triton_text}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=1, help="also time each row this many more times (warm)")
    parser.add_argument("--skip-triton", action="store_true")
    parser.add_argument("--cpu-time", action="store_true", help="time in CPU time of the process, not wall-clock")
    args = parser.parse_args()
    if args.cpu_time:
        global clock
        clock = time.process_time
    triton = None if args.skip_triton else triton_timer()
    # One untimed run of each side on the largest module, in encodings no row uses: the first
    # large run of a process pays for heap pages the later runs reuse (about 1 us per op of
    # system time at 10k ops), which would otherwise fall on whichever side runs first.
    warm_up = make_module(max(args.sizes), 4, skip=512)
    time_ours(warm_up)
    if triton is not None:
        triton(warm_up)
    print(f"{'ops':>7} {'encodings':>14} | {'parse':>7} {'verify':>7} {'print':>7} {'total':>7} us/op | "
          f"{'cache hits':>10} | {'triton':>7} {'print':>7} {'total':>7} us/op {'ratio':>6}")
    for label, count in (("few", 4), ("many", 512)):
        totals = {}
        for size in args.sizes:
            text = make_module(size, min(count, size))
            name = f"{label} {min(count, size)}"
            # The first run of a row is cold for its encodings (each row uses a fresh context, and
            # "many" brings 508 encodings the process has not seen); the repeats are warm. Ours
            # and Triton's runs alternate, so that a change of the machine's load between them
            # falls on both.
            runs, triton_runs = [], []
            for _ in range(1 + args.repeat):
                gc.collect()  # untimed: no full collection left pending by earlier runs (docstring)
                runs.append(time_ours(text))
                if triton is not None:
                    gc.collect()
                    triton_runs.append(triton(text))
            phases, hit_rate = runs[0]
            totals[size] = sum(phases.values())
            print(_row(size, name, phases, hit_rate, triton_runs[0] if triton_runs else None))
            if args.repeat:
                warm = _best([run[0] for run in runs[1:]])
                triton_warm = _best(triton_runs[1:]) if triton_runs else None
                print(_row(size, name + " warm", warm, runs[-1][1], triton_warm))
        for small, large in zip(args.sizes, args.sizes[1:]):
            if large == 10 * small:
                print(f"  scaling {label}: total({large}) / total({small}) = {totals[large] / totals[small]:.1f} (target <= 11)")
    sys.stdout.flush()


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
