"""Time the pictures, next to Triton 3.9's text table of the same layout, in one process.

    python benchmarks/bench_draw.py [--repeat N]

For each case: ``draw_layout(...).svg()`` (the picture and its SVG), the terminal text, the PNG
(resvg), and Triton's ``LinearLayout.get_distributed_view(False)`` (the text table Triton prints,
built from the same bases) as the reference. Cold: the encoding's LinearLayout cache cleared
before every call (the layout is rebuilt); warm: repeated calls. Best of ``--repeat`` rounds.
The goal: a 128x128 layout draws (picture + SVG) in under 0.5 s; 512x512 is drawn in 4x4 tiles
(see linear_layout.draw.grids).
"""

from __future__ import annotations

import argparse
import functools
import time

from triton.tools import LinearLayout as TritonLayout

from linear_layout import encodings as E
from linear_layout.draw import draw_conversion, draw_layout, draw_shared
from linear_layout.encodings.base import clear_cache

CASES = [
    ("blocked 64x64", E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (64, 64)),
    ("blocked 128x128", E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (128, 128)),
    ("mma v2 128x128", E.NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), (128, 128)),
    ("slice 128 (broadcast)", E.SliceLayout(1, E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))), (128,)),
    ("blocked 512x512 (tiles)", E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (512, 512)),
]


def draw_and_write(layout, shape) -> str:
    return draw_layout(layout, shape).svg()


def best(fn, repeat: int, cold: bool = False) -> float:
    times = []
    for _ in range(repeat):
        if cold:
            clear_cache()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def triton_view(layout, shape):
    """Triton's text table of the same bases (a callable)."""
    ll = layout.to_linear_layout(shape)
    names = [n for n, _ in ll.out_dims]
    theirs = TritonLayout.from_bases([(n, [list(b) for b in bs]) for n, bs in ll.bases], names, [s for _, s in ll.out_dims],
                           False)
    return lambda: theirs.get_distributed_view(False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--png", action="store_true", help="also time the PNG (slow: resvg draws every label)")
    args = parser.parse_args()
    print(f"{'case':26} {'svg cold':>9} {'svg warm':>9} {'terminal':>9} {'png':>8} {'triton text':>12} "
          f"{'svg/triton':>10}  (seconds, best of {args.repeat})")
    for name, layout, shape in CASES:
        svg = functools.partial(draw_and_write, layout, shape)
        cold = best(svg, args.repeat, cold=True)
        warm = best(svg, args.repeat)
        picture = draw_layout(layout, shape)
        term = best(functools.partial(picture.terminal, width=200, color=True), args.repeat)
        png = best(picture.png, 1) if args.png else float("nan")
        theirs = best(triton_view(layout, shape), args.repeat)
        print(f"{name:26} {cold:9.4f} {warm:9.4f} {term:9.4f} {png:8.3f} {theirs:12.4f} {cold / theirs:10.1f}")
    src = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    dst = E.BlockedLayout((4, 1), (4, 8), (1, 4), (0, 1))
    conv = best(lambda: draw_conversion(src, dst, (128, 128), 16).svg(), args.repeat, cold=True)
    shared = best(lambda: draw_shared(E.SwizzledSharedLayout(8, 1, 8, (1, 0)), (128, 128), bitwidth=16,
                                      access=src).svg(), args.repeat, cold=True)
    print(f"draw_conversion 128x128 16-bit (cold): {conv:.4f} s; draw_shared 128x128 with access (cold): {shared:.4f} s")


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
