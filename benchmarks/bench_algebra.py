"""Time linear_layout's algebra against Triton 3.9's binding, side by side in one process.

Each row runs the same operation on the same layout through both implementations and prints
the best-of-repeats time per call and the ratio ours / Triton (below 1.0 means we are faster).
Tabulation is compared against what a Triton user has to write: a Python loop of ``apply``.

    python benchmarks/bench_algebra.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import timeit

from linear_layout import LinearLayout, ensure_layout_not_smaller_than, identity_standard_nd

try:
    from triton.tools import LinearLayout as TritonLayout
except ImportError:  # pragma: no cover - the benchmark needs the oracle
    sys.exit("bench_algebra.py needs triton==3.9.0 (pip install -e '.[test]')")


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
    blocked_128 = blocked([128, 128], [1, 8], [8, 4], [4, 1], [1, 0])
    blocked_t = blocked([128, 128], [8, 1], [4, 8], [1, 4], [0, 1])
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
        "blocked 128x128": blocked_128,
        "blocked^T 128x128": blocked_t,
        "mma v2 128x128": mma_v2([128, 128], [2, 2]),
        "swizzled smem 128x128": swizzled_shared([128, 128], 8, 1, 8),
        "4-in-dim 20-bit 3-D": wide,
        "broadcast blocked 16x128": _with_broadcast(broadcast),
    }


def _with_broadcast(layout: LinearLayout) -> LinearLayout:
    from linear_layout import ensure_layout_not_larger_than

    return ensure_layout_not_larger_than(layout, {"dim0": 16, "dim1": 128})


def to_triton(layout: LinearLayout):
    return TritonLayout.from_bases(
        [(name, [list(b) for b in bases]) for name, bases in layout.bases],
        list(layout.get_out_dim_names()),
        [size for _, size in layout.out_dims],
        require_surjective=False,
    )


def time_call(fn, budget: float) -> float:
    """Best-of-5 microseconds per call, each repeat sized to roughly `budget` seconds."""
    number = 1
    while timeit.timeit(fn, number=number) < budget / 5 and number < 1 << 20:
        number *= 2
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def cases(layouts):
    blocked_128 = layouts["blocked 128x128"]
    shared = layouts["swizzled smem 128x128"]
    mma = layouts["mma v2 128x128"]
    broadcast = layouts["broadcast blocked 16x128"]
    wide = layouts["4-in-dim 20-bit 3-D"]
    yield "invert_and_compose", "blocked -> swizzled smem", lambda m: (lambda a=m(blocked_128), b=m(shared): a.invert_and_compose(b))
    yield "invert_and_compose", "mma -> blocked", lambda m: (lambda a=m(mma), b=m(blocked_128): a.invert_and_compose(b))
    yield "invert_and_compose", "blocked^T -> blocked", lambda m: (lambda a=m(layouts["blocked^T 128x128"]), b=m(blocked_128): a.invert_and_compose(b))
    yield "compose", "blocked o smem^-1", lambda m: (lambda a=m(blocked_128), b=m(shared).invert(): a.compose(b))
    yield "compose", "4-in-dim o identity", lambda m: (lambda a=m(wide), b=m(wide).invert().invert().pseudoinvert(): a.compose(b))
    yield "*", "blocked * 2 blocks", lambda m: (lambda a=m(blocked_128), b=m(LinearLayout.identity_1d(2, "block", "dim0")): a * b)
    yield "*", "4-in-dim * 4-in-dim", lambda m: (lambda a=m(wide): a * a)
    yield "invert", "swizzled smem", lambda m: (lambda a=m(shared): a.invert())
    yield "invert", "4-in-dim 20-bit", lambda m: (lambda a=m(wide): a.invert())
    yield "invert_and_compose", "broadcast -> blocked", lambda m: (lambda a=m(broadcast), b=m(blocked([16, 128], [1, 4], [4, 8], [1, 1], [1, 0]) * LinearLayout.zeros_1d(8, "warp", "dim0")): a.invert_and_compose(b))
    yield "apply (1 point)", "blocked 128x128", lambda m: (lambda a=m(blocked_128): a.apply({"register": 45, "lane": 19, "warp": 2, "block": 0}))
    yield "apply (1 point)", "4-in-dim 20-bit", lambda m: (lambda a=m(wide): a.apply({"register": 45, "lane": 19, "warp": 11, "block": 21}))


def identity(layout):
    return layout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget per row")
    args = parser.parse_args()
    budget = 0.05 if args.quick else 0.25
    layouts = suite()
    print(f"{'operation':<20} {'layout':<26} {'ours us':>10} {'triton us':>10} {'ours/triton':>12}")
    for op, label, make in cases(layouts):
        ours = time_call(make(identity), budget)
        theirs = time_call(make(to_triton), budget)
        print(f"{op:<20} {label:<26} {ours:>10.2f} {theirs:>10.2f} {ours / theirs:>12.2f}")

    print()
    print(f"{'tabulation':<20} {'layout':<26} {'ours us':>10} {'loop us':>10} {'speed-up':>12}")
    for label in ("blocked 128x128", "mma v2 128x128", "4-in-dim 20-bit 3-D"):
        layout = layouts[label]
        triton_layout = to_triton(layout)
        sizes = [(name, layout.get_in_dim_size(name)) for name in layout.get_in_dim_names()]

        def loop():
            for values in itertools.product(*(range(size) for _, size in reversed(sizes))):
                triton_layout.apply(dict(zip((name for name, _ in reversed(sizes)), values)))

        ours = time_call(layout.tabulate, budget)
        theirs = time_call(loop, budget) if layout.get_total_in_dim_size() <= 1 << 15 else float("nan")
        if theirs != theirs:  # too large to loop in reasonable time: extrapolate from 2**14 points
            points = 1 << 14
            per_point = time_call(lambda: [triton_layout.apply({n: 0 for n, _ in sizes}) for _ in range(points)], budget) / points
            theirs = per_point * layout.get_total_in_dim_size()
            label += " (loop extrapolated)"
        print(f"{'tabulate':<20} {label:<26} {ours:>10.1f} {theirs:>10.1f} {theirs / ours:>11.0f}x")


if __name__ == "__main__":
    main()
