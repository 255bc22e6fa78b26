"""Time linear_layout's algebra against Triton 3.9's binding, side by side in one process.

Each row runs the same operation on the same layout through both implementations, twice:

* **warm**: best-of-5 time per call, repeating the call on the same objects (what a compiler
  pass sees once per-layout caches -- apply tables, hashes, product plans -- are filled);
* **cold**: the first call on fresh layout objects with the module-level plan caches cleared
  (best of 25 rounds, after 16 untimed rounds of the same first calls so that Python 3.11 has
  specialised the code path, as in any process that has done some work; building the fresh
  objects is not timed). The protocol is the same for both sides: each round clears our plan
  caches, builds the arguments with ``from_bases`` from the same lists (``fresh`` and
  ``to_triton`` are the same code), then times one call; the two sides alternate round by round,
  so a change in the machine's load hits both. Triton's binding keeps no per-object cache. Best-of
  wall-clock times are used because a CPU-time clock read costs more than the calls timed here
  (about 0.8 us against 0.1 us); the best round is one the scheduler did not interrupt.

Ratios are ours / Triton (below 1.0 means we are faster). Tabulation is compared against what a
Triton user has to write, a Python loop of ``apply`` over every input point (timed in full up to
2**15 points, above that on the first 2**14 points of the same loop and scaled); its speed-up
column is loop time / ours.

    python benchmarks/bench_algebra.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from linear_layout import (
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
)
from linear_layout.core import builders as builders_module
from linear_layout.core import layout as layout_module

try:
    from triton.tools import LinearLayout as TritonLayout
except ImportError:  # pragma: no cover - the benchmark needs the oracle
    sys.exit("bench_algebra.py needs triton==3.9.0 (pip install -e '.[test]')")

COLD_ROUNDS = 25
WARMUP_ROUNDS = 16  # untimed cold rounds first: Python 3.11 specialises a function from its 9th call
LOOP_SAMPLE = 1 << 14


def blocked(shape, size_per_thread, threads_per_warp, warps_per_cta, order) -> LinearLayout:
    """Triton's blocked layout built from the algebra (registers wrap to cover `shape`)."""
    cta = (
        identity_standard_nd("register", size_per_thread, order)
        * identity_standard_nd("lane", threads_per_warp, order)
        * identity_standard_nd("warp", warps_per_cta, order)
    )
    names = [f"dim{i}" for i in range(len(shape))]
    cta = ensure_layout_not_smaller_than(cta, dict(zip(names, shape))).transpose_outs(names)
    return cta * LinearLayout.identity_1d(1, "block", names[0])


def mma_v2(shape, warps_per_cta) -> LinearLayout:
    """An Ampere mma accumulator: per warp a 16x8 tile, registers in pairs along dim1."""
    warps = identity_standard_nd("warp", warps_per_cta, [1, 0]).transpose_outs(["dim0", "dim1"])
    cta = LinearLayout.from_bases(
        [
            ("register", [[0, 1], [8, 0]]),
            ("lane", [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]),
            ("warp", [[b0 * 16, b1 * 8] for b0, b1 in warps.bases[0][1]]),
        ],
        ["dim0", "dim1"],
    )
    cta = ensure_layout_not_smaller_than(cta, {"dim0": shape[0], "dim1": shape[1]})
    return cta * LinearLayout.identity_1d(1, "block", "dim0")


def swizzled_shared(shape, vec, per_phase, max_phase) -> LinearLayout:
    """Row-major XOR-swizzled shared memory: row r's column groups are XORed with (r / per_phase) % max_phase."""
    rows, cols = shape
    col_bases = [[0, 1 << i] for i in range(cols.bit_length() - 1)]
    row_bases = [[1 << i, (vec * (((1 << i) // per_phase) % max_phase)) % cols] for i in range(rows.bit_length() - 1)]
    return LinearLayout.from_bases([("offset", col_bases + row_bases), ("block", [])], ["dim0", "dim1"])


def suite() -> dict[str, LinearLayout]:
    broadcast = blocked([32, 128], [1, 4], [4, 8], [8, 1], [1, 0])  # 8 warps cover 32 rows; on 16, one warp bit broadcasts
    wide = LinearLayout.from_bases(
        [
            ("register", [[1, 0, 0], [2, 0, 0], [0, 0, 1], [0, 0, 2], [4, 0, 0], [0, 16, 0]]),
            ("lane", [[8, 0, 0], [0, 1, 0], [0, 2, 0], [16, 0, 0], [0, 4, 0]]),
            ("warp", [[0, 8, 0], [32, 0, 0], [0, 0, 4], [64, 0, 0]]),
            ("block", [[0, 32, 0], [0, 0, 8], [0, 64, 0], [0, 0, 16], [128, 0, 0]]),
        ],
        ["dim0", "dim1", "dim2"],
    )
    return {
        "blocked 128x128": blocked([128, 128], [1, 8], [8, 4], [4, 1], [1, 0]),
        "blocked^T 128x128": blocked([128, 128], [8, 1], [4, 8], [1, 4], [0, 1]),
        "mma v2 128x128": mma_v2([128, 128], [2, 2]),
        "blocked 256x256": blocked([256, 256], [1, 8], [8, 4], [4, 1], [1, 0]),
        "mma v2 512x512": mma_v2([512, 512], [2, 2]),
        "swizzled smem 128x128": swizzled_shared([128, 128], 8, 1, 8),
        "4-in-dim 20-bit 3-D": wide,
        "broadcast blocked 16x128": ensure_layout_not_larger_than(broadcast, {"dim0": 16, "dim1": 128}),
        "blocked 16x128 x 8 warps": blocked([16, 128], [1, 4], [4, 8], [1, 1], [1, 0])
        * LinearLayout.zeros_1d(8, "warp", "dim0"),
    }


@dataclass(frozen=True)
class Case:
    """One row: ``call(*args)`` with ``args`` built from the suite by ``build``."""

    op: str
    label: str
    build: Callable[[dict[str, LinearLayout]], tuple[LinearLayout, ...]]
    call: Callable[..., Any]


def cases() -> list[Case]:
    hw = {"register": 45, "lane": 19, "warp": 2, "block": 0}
    hw_wide = {"register": 45, "lane": 19, "warp": 11, "block": 21}
    return [
        Case("invert_and_compose", "blocked -> swizzled smem", lambda s: (s["blocked 128x128"], s["swizzled smem 128x128"]),
             lambda a, b: a.invert_and_compose(b)),
        Case("invert_and_compose", "mma -> blocked", lambda s: (s["mma v2 128x128"], s["blocked 128x128"]),
             lambda a, b: a.invert_and_compose(b)),
        Case("invert_and_compose", "blocked^T -> blocked", lambda s: (s["blocked^T 128x128"], s["blocked 128x128"]),
             lambda a, b: a.invert_and_compose(b)),
        Case("compose", "blocked o smem^-1", lambda s: (s["blocked 128x128"], s["swizzled smem 128x128"].invert()),
             lambda a, b: a.compose(b)),
        Case("compose", "4-in-dim o identity",
             lambda s: (s["4-in-dim 20-bit 3-D"], s["4-in-dim 20-bit 3-D"].invert().invert().pseudoinvert()),
             lambda a, b: a.compose(b)),
        Case("*", "blocked * 2 blocks", lambda s: (s["blocked 128x128"], LinearLayout.identity_1d(2, "block", "dim0")),
             lambda a, b: a * b),
        Case("*", "4-in-dim * 4-in-dim", lambda s: (s["4-in-dim 20-bit 3-D"],), lambda a: a * a),
        Case("invert", "swizzled smem", lambda s: (s["swizzled smem 128x128"],), lambda a: a.invert()),
        Case("invert", "4-in-dim 20-bit", lambda s: (s["4-in-dim 20-bit 3-D"],), lambda a: a.invert()),
        Case("invert_and_compose", "broadcast -> blocked",
             lambda s: (s["broadcast blocked 16x128"], s["blocked 16x128 x 8 warps"]),
             lambda a, b: a.invert_and_compose(b)),
        Case("apply (1 point)", "blocked 128x128", lambda s: (s["blocked 128x128"],), lambda a: a.apply(hw)),
        Case("apply (1 point)", "4-in-dim 20-bit", lambda s: (s["4-in-dim 20-bit 3-D"],), lambda a: a.apply(hw_wide)),
    ]


def to_triton(layout: LinearLayout):
    return TritonLayout.from_bases(
        [(name, [list(b) for b in bases]) for name, bases in layout.bases],
        list(layout.get_out_dim_names()),
        [size for _, size in layout.out_dims],
        require_surjective=False,
    )


def fresh(layout: LinearLayout) -> LinearLayout:
    """An equal layout with none of its per-object caches filled."""
    return LinearLayout.from_bases(
        [(name, [list(b) for b in bases]) for name, bases in layout.bases],
        list(layout.get_out_dim_names()),
        [size for _, size in layout.out_dims],
        require_surjective=False,
    )


def clear_module_caches() -> None:
    """The algebra's module-level plan caches (products, transposes and shape fits per dimension signature)."""
    layout_module._PRODUCT_PLANS.clear()
    layout_module._PRODUCT_SEEN.clear()
    layout_module._TRANSPOSE_PLANS.clear()
    builders_module._GROW_PLANS.clear()
    builders_module._SHRINK_PLANS.clear()
    builders_module._INFER_PLANS.clear()


def time_call(fn: Callable[[], Any], budget: float) -> float:
    """Best-of-5 microseconds per call, each repeat sized to roughly `budget` seconds."""
    number = 1
    while timeit.timeit(fn, number=number) < budget / 5 and number < 1 << 20:
        number *= 2
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def time_cold(makers: Sequence[Callable[[], Sequence[Any]]], call: Callable[..., Any]) -> list[float]:
    """Per maker (one per implementation), the best of COLD_ROUNDS first calls on freshly built
    arguments, in microseconds, after WARMUP_ROUNDS untimed ones (the same first calls, so the
    interpreter has specialised them).

    The sides alternate round by round, so a change in the machine's load hits them alike, and
    each round runs the same steps on every side: clear our module-level plan caches, build
    fresh arguments, time one call.
    """
    best = [float("inf")] * len(makers)
    for round_ in range(WARMUP_ROUNDS + COLD_ROUNDS):
        for side, make_args in enumerate(makers):
            clear_module_caches()
            args = make_args()
            start = time.perf_counter()
            call(*args)
            elapsed = time.perf_counter() - start
            if round_ >= WARMUP_ROUNDS:
                best[side] = min(best[side], elapsed)
    return [seconds * 1e6 for seconds in best]


def operation_rows(layouts: dict[str, LinearLayout], budget: float) -> None:
    print(f"{'operation':<20} {'layout':<26} {'ours cold':>10} {'tri cold':>10} {'cold o/t':>9}"
          f" {'ours warm':>10} {'tri warm':>10} {'warm o/t':>9}   (us)")
    for case in cases():
        args = case.build(layouts)
        triton_args = tuple(to_triton(a) for a in args)
        cold, triton_cold = time_cold(
            [lambda args=args: tuple(fresh(a) for a in args), lambda args=args: tuple(to_triton(a) for a in args)],
            case.call,
        )
        warm = time_call(lambda args=args, case=case: case.call(*args), budget)
        triton_warm = time_call(lambda args=triton_args, case=case: case.call(*args), budget)
        print(f"{case.op:<20} {case.label:<26} {cold:>10.2f} {triton_cold:>10.2f} {cold / triton_cold:>9.2f}"
              f" {warm:>10.2f} {triton_warm:>10.2f} {warm / triton_warm:>9.2f}")


def loop_time(layout: LinearLayout) -> tuple[float, bool]:
    """Microseconds of Triton's per-point apply loop over every input (scaled from a sample above
    2**15 points), and whether it was scaled."""
    triton_layout = to_triton(layout)
    sizes = [(name, layout.get_in_dim_size(name)) for name in reversed(layout.get_in_dim_names())]
    names = [name for name, _ in sizes]
    total = layout.get_total_in_dim_size()
    points = total if total <= 1 << 15 else LOOP_SAMPLE

    def loop() -> None:
        for values in itertools.islice(itertools.product(*(range(size) for _, size in sizes)), points):
            triton_layout.apply(dict(zip(names, values)))

    best = min(timeit.repeat(loop, number=1, repeat=3))
    return best * 1e6 * total / points, points < total


def tabulation_rows(layouts: dict[str, LinearLayout], budget: float) -> None:
    print(f"{'tabulate':<26} {'points':>8} {'ours cold':>10} {'ours warm':>10} {'loop':>12}"
          f" {'cold x':>8} {'warm x':>8}   (us; x = loop / ours)")
    for label in ("blocked 128x128", "mma v2 128x128", "blocked 256x256", "mma v2 512x512", "4-in-dim 20-bit 3-D"):
        layout = layouts[label]
        (cold,) = time_cold([lambda layout=layout: (fresh(layout),)], lambda a: a.tabulate())
        warm = time_call(layout.tabulate, budget)
        loop, scaled = loop_time(layout)
        points = f"2**{layout.get_total_in_dim_size_log2()}"
        print(f"{label:<26} {points:>8} {cold:>10.1f} {warm:>10.1f} {loop:>11.0f}{'*' if scaled else ' '}"
              f" {loop / cold:>7.0f}x {loop / warm:>7.0f}x")
    print(f"* the loop is timed on its first {LOOP_SAMPLE} points and scaled to all of them")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget per row")
    args = parser.parse_args()
    budget = 0.05 if args.quick else 0.25
    layouts = suite()
    operation_rows(layouts, budget)
    print()
    tabulation_rows(layouts, budget)


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
