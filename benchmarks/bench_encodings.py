"""Time `to_linear_layout`, ours against Triton 3.9's binding, per encoding family.

    python benchmarks/bench_encodings.py [--repeat N]

Triton is timed on `GluonOpBuilder.to_linear_layout(attr, shape)` with the MLIR
attribute built beforehand (its cheapest path; Triton caches the conversion per
(attribute, shape) inside the context).  Ours is timed twice: cold (our caches
cleared before every call, so the layout is rebuilt and a new LinearLayout made)
and warm (the per-(layout, shape) cache hit that repeated calls see).
Ratios are ours / Triton: below 1.0 means we are faster.  Each timing is this process's CPU
time (`time.process_time`, so time the process spends descheduled on a shared machine does not
count), the best of many short rounds, and the three timings of a case are interleaved round by
round, so that load from other processes falls on all of them alike.  `clear_cache` clears only
the encodings' per-(layout, shape) cache; the algebra's plans (cached per dimension signature, like
Triton's uniqued StringAttrs) stay.
"""

import argparse
import os
import time
import timeit
import warnings

from linear_layout import encodings as E
from linear_layout.encodings import to_gluon
from linear_layout.encodings.base import clear_cache

FAMILIES = {
    "blocked": [
        (E.BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0)), (128, 128)),
        (E.BlockedLayout((4,), (32,), (4,), (0,)), (1024,)),
        (E.BlockedLayout((1, 1, 2), (2, 4, 4), (2, 2, 1), (2, 1, 0), ((1, 0, 0),)), (8, 64, 64)),
    ],
    "slice": [
        (E.SliceLayout(1, E.BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))), (128,)),
        (E.SliceLayout(0, E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8))), (128,)),
    ],
    "linear": [
        (
            E.DistributedLinearLayout(
                ((0, 1),), ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0)), ((8, 0), (16, 0)), (), (32, 8)
            ),
            (64, 16),
        ),
    ],
    "nvidia_mma": [
        (E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), (128, 128)),
        (E.NVMMADistributedLayout((3, 0), (4, 1), (16, 128, 16)), (128, 256)),
    ],
    "dot_op": [
        (E.DotOperandLayout(0, E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), 2), (128, 64)),
        (E.DotOperandLayout(1, E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), 4), (64, 128)),
        (E.DotOperandLayout(0, E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0)), 0), (64, 32)),
    ],
    "amd_mfma": [
        (E.AMDMFMALayout(3, (32, 32, 8), True, (2, 2)), (128, 128)),
        (E.AMDMFMALayout(4, (16, 16, 32), False, (2, 2), None, (2, 2)), (128, 128)),
        (E.AMDMFMALayout(3, (4, 64, 4), False, (4, 1)), (64, 128)),
    ],
    "amd_wmma": [
        (E.AMDWMMALayout(1, True, ((0, 1), (1, 0))), (128, 128)),
        (E.AMDWMMALayout(3, True, ((0, 1), (1, 0)), ((2, 0),), (16, 16, 32)), (128, 128)),
        (E.AMDWMMALayout(3, False, ((0, 0, 1),), (), (32, 16, 64), (), 3), (4, 64, 64)),
    ],
    "amd_dot_op": [
        (E.DotOperandLayout(0, E.AMDMFMALayout(3, (32, 32, 8), True, (2, 2)), 8), (128, 64)),
        (E.DotOperandLayout(1, E.AMDMFMALayout(4, (16, 16, 32), False, (2, 2)), 8), (64, 128)),
        (E.DotOperandLayout(0, E.AMDWMMALayout(3, True, ((0, 1), (1, 0)), (), (16, 16, 32)), 8), (128, 64)),
        (E.DotOperandLayout(1, E.AMDWMMALayout(2, True, ((0, 1), (1, 0))), 8), (64, 128)),
    ],
    "swizzled_shared": [
        (E.SwizzledSharedLayout(8, 1, 8, (1, 0)), (128, 64)),
        (E.SwizzledSharedLayout(4, 2, 4, (0, 1)), (64, 64)),
    ],
    "nvmma_shared": [
        (E.NVMMASharedLayout(128, 16), (128, 64)),
        (E.NVMMASharedLayout(64, 8, 2, True), (128, 128)),
        (E.NVMMASharedLayout(0, 16, 3, True), (4, 64, 64)),
    ],
    "shared_linear": [
        (E.SharedLinearLayout(((0, 1), (0, 2), (1, 0), (2, 0))), (4, 4)),
    ],
}


def _time_interleaved(runs, rounds):
    """CPU seconds per call of each `(fn, number)` in `runs`: the best of `rounds` rounds, where
    every round times each function once, one after the other, so that load from other processes
    on the machine falls on all of them alike (many short rounds find its quiet moments)."""
    timers = [(timeit.Timer(fn, timer=time.process_time), number) for fn, number in runs]
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for i, (timer, number) in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000, help="calls per case and timing (in rounds of 25)")
    parser.add_argument(
        "--family", action="append", choices=sorted(FAMILIES), help="time only these families (repeatable)"
    )
    args = parser.parse_args()

    try:
        warnings.filterwarnings("ignore")
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        from triton._C.libtriton import gluon_ir, ir
    except ImportError as e:
        raise SystemExit(f"needs triton==3.9.0: {e}") from None

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)

    print(f"{'family':<16} {'triton us':>10} {'ours cold us':>13} {'ours warm us':>13} {'cold/tri':>9} {'warm/tri':>9}")
    for family, cases in FAMILIES.items():
        if args.family and family not in args.family:
            continue
        tri = cold = warm = 0.0
        for layout, shape in cases:
            attr = to_gluon(layout)._to_ir(builder)
            shape_list = list(shape)

            def triton_call(attr=attr, shape_list=shape_list):
                builder.to_linear_layout(attr, shape_list)

            def cold_call(layout=layout, shape=shape):
                clear_cache()
                layout.to_linear_layout(shape)

            def warm_call(layout=layout, shape=shape):
                layout.to_linear_layout(shape)

            t, c, w = _time_interleaved(
                [(triton_call, 25), (cold_call, 25), (warm_call, 100)], rounds=max(1, args.repeat // 25)
            )
            tri, cold, warm = tri + t, cold + c, warm + w
        n = len(cases)
        print(
            f"{family:<16} {tri / n * 1e6:>10.2f} {cold / n * 1e6:>13.2f} {warm / n * 1e6:>13.2f} "
            f"{cold / tri:>9.2f} {warm / tri:>9.2f}"
        )


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
