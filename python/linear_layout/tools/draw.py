"""``linear-layout-draw``: pictures of layouts, shared memory and conversions from the command line.

    linear-layout-draw '#ttg.blocked<{...}>' --shape 64x64 [--color-by lane] [-o out.svg|out.png|out.txt]
    linear-layout-draw '#ttg.swizzled_shared<{...}>' --shape 64x64 --bitwidth 16 [--access '#ttg.blocked<{...}>']
    linear-layout-draw --src '#ttg.blocked<{...}>' --dst '#ttg.blocked<{...}>' --shape 64x64 --bitwidth 16
    linear-layout-draw --ttgir kernel.ttgir --line 101      # the convert_layout / local_load / ... there
    linear-layout-draw --compare '#ttg.blocked<{...}>' '#ttg.blocked<{...}>' --shape 64x64 [--src ENC]
    linear-layout-draw ... --highlight 37 -o picture.tex   # thread 37 outlined; TikZ for LaTeX

Without ``-o`` the picture is printed to the terminal (24-bit colour, cropped to the terminal's
width). ``--color auto`` (the default) writes colour only to a terminal and not when ``NO_COLOR``
is set; ``--color always`` / ``--color never`` (or ``--no-color``) decide it. Bad input is one line on stderr,
``linear-layout-draw: error: ...``, and exit status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from ..draw import Picture, draw_compare, draw_conversion, draw_layout, draw_shared
from ..draw.owners import COLOR_BY
from ..draw.shared import SHARED_COLOR_BY
from ..encodings import SharedLayout, parse_encoding
from .cli import guarded_main
from .kernel_line import kernel_picture, read_kernel_line

__all__ = ["main"]

PROG = "linear-layout-draw"

#: ``--color``: the ``color`` argument of ``Picture.terminal`` (None: colour on a terminal only).
_COLOUR = {"auto": None, "always": True, "never": False}


class UserError(Exception):
    """Bad input or arguments: one line on stderr and exit status 1."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit code 1, like every other user error
        raise UserError(message)


def _argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog=PROG, description="Draw a layout, a shared-memory layout or a conversion.")
    parser.add_argument("encoding", nargs="?", help="an encoding in Triton's syntax, e.g. '#ttg.blocked<{...}>'")
    parser.add_argument("--shape", metavar="AxB", help="the tensor's shape, e.g. 64x64 (default: the encoding's tile)")
    parser.add_argument(
        "--color-by",
        default=None,
        metavar="INDEX",
        help=f"distributed: {', '.join(COLOR_BY)} (default warp); shared: {', '.join(SHARED_COLOR_BY)} (default chunk)",
    )
    parser.add_argument("--src", metavar="ENCODING", help="source encoding of a conversion")
    parser.add_argument("--dst", metavar="ENCODING", help="destination encoding of a conversion")
    parser.add_argument(
        "--bitwidth",
        type=int,
        default=None,
        metavar="BITS",
        help="element size in bits (shared memory and conversions; default 32)",
    )
    parser.add_argument(
        "--access", metavar="ENCODING", help="shared memory: highlight one warp's access by this distributed encoding"
    )
    parser.add_argument("--kind", choices=("load", "store"), default=None, help="the access's kind (default load)")
    parser.add_argument("--ttgir", metavar="FILE", help="a TTGIR kernel: draw the op on --line")
    parser.add_argument(
        "--line",
        type=int,
        metavar="N",
        help="with --ttgir: the line of a ttg.convert_layout, local_load, local_store or local_alloc",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="two candidate layouts side by side with the cost of converting A to B; with --src, "
        "the conversions from --src to each, with their costs",
    )
    parser.add_argument(
        "--highlight",
        type=int,
        metavar="T",
        help="outline thread T's elements (T = lane + warp * lanes) in every distributed panel",
    )
    parser.add_argument(
        "-o", dest="output", metavar="FILE", help="write FILE (.svg, .png, .tex for TikZ, or .txt) instead of printing"
    )
    parser.add_argument("--width", type=int, default=None, help="terminal width (default: the terminal's)")
    parser.add_argument(
        "--color",
        choices=tuple(_COLOUR),
        default=None,
        help="auto (default): colour only on a terminal and without NO_COLOR; always; never",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text, as --color never")
    return parser


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """``"64x64"`` -> ``(64, 64)``; powers of two only."""
    if text is None:
        return None
    try:
        shape = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise UserError(f"--shape: expected sizes separated by 'x', e.g. 64x64, got {text!r}") from None
    if not shape or any(s < 1 or s & (s - 1) for s in shape):
        raise UserError(f"--shape: every size must be a positive power of two, got {text!r}")
    return shape


def _encoding(text: str, what: str):
    try:
        return parse_encoding(text)
    except ValueError as error:
        raise UserError(f"{what}: {error}") from None


def _ttgir_picture(args: argparse.Namespace) -> Picture:
    if args.line is None or args.encoding or args.src or args.dst or args.access or args.shape or args.compare:
        raise UserError("--ttgir takes --line N, and no encoding, --src, --dst, --access, --shape or --compare")
    if args.highlight is not None:
        raise UserError("--highlight applies to an encoding, --src/--dst or --compare, not to --ttgir")
    try:
        text = Path(args.ttgir).read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot read '{args.ttgir}': {error.strerror}") from None
    try:
        line = read_kernel_line(text, args.line)
    except ValueError as error:
        raise UserError(f"{args.ttgir}: {error}") from None
    picture = kernel_picture(line, args.color_by)
    return dataclasses.replace(picture, title=f"{args.ttgir}:{line.number} {line.op}: {picture.title}")


def _compare_picture(args: argparse.Namespace) -> Picture:
    if args.encoding or args.dst or args.access or args.kind:
        raise UserError("--compare takes two encodings, and no positional encoding, --dst, --access or --kind")
    a, b = (_encoding(text, f"--compare {side}") for side, text in zip("AB", args.compare))
    if isinstance(a, SharedLayout) or isinstance(b, SharedLayout):
        raise UserError("--compare draws distributed layouts (or conversions to them), not shared-memory encodings")
    return draw_compare(
        a,
        b,
        parse_shape(args.shape),
        _bitwidth(args),
        src=_encoding(args.src, "--src") if args.src else None,
        color_by=args.color_by,
        highlight=args.highlight,
    )


def _picture(args: argparse.Namespace) -> Picture:
    if args.ttgir:
        return _ttgir_picture(args)
    if args.compare:
        return _compare_picture(args)
    if args.line is not None:
        raise UserError("--line needs --ttgir")
    shape = parse_shape(args.shape)
    if args.src or args.dst:
        if not (args.src and args.dst) or args.encoding:
            raise UserError("a conversion needs both --src and --dst, and no positional encoding")
        if args.access or args.kind:
            raise UserError("--access and --kind apply to a shared-memory encoding, not to a conversion")
        return draw_conversion(
            _encoding(args.src, "--src"),
            _encoding(args.dst, "--dst"),
            shape,
            _bitwidth(args),
            color_by=args.color_by,
            highlight=args.highlight,
        )
    if not args.encoding:
        raise UserError("nothing to draw: give an encoding, or --src and --dst")
    layout = _encoding(args.encoding, "encoding")
    if isinstance(layout, SharedLayout):
        if args.highlight is not None:
            raise UserError("--highlight applies to distributed layouts and conversions, not to shared memory")
        access = _encoding(args.access, "--access") if args.access else None
        if args.kind and not access:
            raise UserError(_KIND_ONLY)
        return draw_shared(
            layout,
            shape,
            bitwidth=_bitwidth(args),
            access=access,
            kind=args.kind or "load",
            color_by=args.color_by or "chunk",
        )
    if args.access or args.kind:
        raise UserError("--access applies to shared-memory encodings only" if args.access else _KIND_ONLY)
    if args.bitwidth is not None:
        raise UserError("--bitwidth applies to shared-memory encodings and conversions only")
    return draw_layout(layout, shape, color_by=args.color_by or "warp", highlight=args.highlight)


_KIND_ONLY = "--kind applies to the access of a shared-memory encoding (--access) only"


def _bitwidth(args: argparse.Namespace) -> int:
    """--bitwidth, 32 when not given (an explicit 0 is checked like any other value, not defaulted)."""
    return 32 if args.bitwidth is None else args.bitwidth


def _run(argv: Sequence[str] | None) -> int:
    args = _argument_parser().parse_args(argv)
    if args.width is not None and args.width < 1:
        raise UserError(f"--width must be a positive number of columns, got {args.width}")
    try:
        picture = _picture(args)
    except ValueError as error:
        raise UserError(str(error)) from None
    if args.output:
        try:
            picture.save(args.output)
        except OSError as error:
            raise UserError(f"cannot write '{args.output}': {error.strerror}") from None
        except ValueError as error:
            raise UserError(str(error)) from None
        return 0
    if args.no_color and args.color not in (None, "never"):
        raise UserError(f"--no-color contradicts --color {args.color}")
    colour = False if args.no_color else _COLOUR[args.color or "auto"]
    sys.stdout.write(picture.terminal(width=args.width, color=colour))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return guarded_main(
        PROG, lambda: _run(argv), (UserError,), lambda error: f"{PROG}: error: {' '.join(str(error).split())}"
    )


if __name__ == "__main__":
    sys.exit(main())
