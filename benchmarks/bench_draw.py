"""Time the pictures, next to Triton 3.9's text table of the same layout, in one process.

    python benchmarks/bench_draw.py [--repeat N] [--png] [--renderers raster,resvg,cairosvg]

For each case: ``draw_layout(...).svg()`` (the picture and its SVG), the terminal text, the PNG
(resvg), and Triton's ``LinearLayout.get_distributed_view(False)`` (the text table Triton prints,
built from the same bases) as the reference. Cold: the encoding's LinearLayout cache cleared
before every call (the layout is rebuilt); warm: repeated calls. Best of ``--repeat`` rounds.
The goal: a 128x128 layout draws (picture + SVG) in under 0.5 s; 512x512 is drawn in 4x4 tiles
(see linear_layout.draw.grids).

``--png``: a real conversion's PNG, cold: each renderer in a fresh Python process (nothing
cached, nothing imported), an attention kernel's ``#mma`` accumulator (8 warps) to a blocked
layout, 128x128 f16, through shared memory -- source, scratch (stored and loaded) and
destination, four panels of 16,384 cells. Timed: the picture plus the PNG, and the process's
peak memory (``ru_maxrss``); ``cpu s`` is the process's CPU time for the same span (what the
wall time would be on an idle core). Renderers: ``raster`` (what ``Picture.png`` does:
linear_layout.draw.raster), ``resvg`` (resvg-py, the SVG renderer before it) and ``cairosvg``
(when installed). The goal: <= 2 s and <= 300 MB.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
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


#: One cold PNG in a fresh process; prints JSON {"seconds", "peak_mb", "pixels"}.
_PNG_CHILD = """
import json, resource, sys, time
start = time.perf_counter()
from linear_layout import encodings as E
from linear_layout.draw import draw_conversion
imported = time.perf_counter()
cpu = time.process_time()
src = E.NVMMADistributedLayout((2, 0), (8, 1), (16, 8))
dst = E.BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0))
picture = draw_conversion(src, dst, (128, 128), 16)
renderer = sys.argv[1]
if renderer == "raster":
    data = picture.png()
elif renderer == "resvg":
    import resvg_py
    data = bytes(resvg_py.svg_to_bytes(svg_string=picture.svg(), background="#ffffff"))
else:
    import cairosvg
    data = cairosvg.svg2png(bytestring=picture.svg().encode())
end = time.perf_counter()
cpu = time.process_time() - cpu
width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": end - imported, "cpu": cpu, "import": imported - start, "peak_mb": peak,
                  "size": [width, height]}))
"""


def cold_png(renderer: str) -> dict | None:
    """The PNG of the conversion above drawn in a fresh process by ``renderer`` (None: not installed)."""
    run = subprocess.run([sys.executable, "-c", _PNG_CHILD, renderer], capture_output=True, text=True, check=False)
    if run.returncode:
        if "ModuleNotFoundError" in run.stderr:
            return None
        raise RuntimeError(run.stderr)
    return json.loads(run.stdout)


def png_table(renderers: list[str]) -> None:
    print("\nPNG of a 128x128 f16 conversion through shared memory (mma 8 warps -> blocked), cold, fresh process:")
    print(f"{'renderer':10} {'picture+png s':>14} {'cpu s':>7} {'import s':>9} {'peak MB':>8}  size")
    for renderer in renderers:
        result = cold_png(renderer)
        if result is None:
            print(f"{renderer:10} (not installed)")
            continue
        print(f"{renderer:10} {result['seconds']:14.2f} {result['cpu']:7.2f} {result['import']:9.2f} "
              f"{result['peak_mb']:8.0f}  "
              f"{result['size'][0]}x{result['size'][1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--png", action="store_true", help="also time the PNGs, and a conversion's PNG cold")
    parser.add_argument("--renderers", default="raster,resvg,cairosvg", help="PNG renderers to compare (--png)")
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
    if args.png:
        png_table(args.renderers.split(","))


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
