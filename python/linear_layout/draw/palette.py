"""Colours of the pictures: one fixed colour per index, the same in every picture.

Index ``k`` (a warp, lane, thread, register, ... number) gets the hue ``k * phi mod 1`` (``phi``
the golden-ratio conjugate, so neighbouring indices get far-apart hues), saturation 0.60 and a
lightness alternating between 0.72 and 0.82 on consecutive runs of hues: light enough for black
text. Highlight outlines (access phases) use a short list of dark, saturated colours.

>>> hex_colour(index_colour(0))
'#e28d8d'
>>> index_colour(5) == index_colour(5)
True
"""

from __future__ import annotations

import colorsys

__all__ = ["EMPTY", "GRID", "HIGHLIGHT", "MARKS", "TEXT", "hex_colour", "index_colour", "mark_colour", "rgb"]

_PHI = 0.6180339887498949

#: The fill of an element no one holds (and of padding cells).
EMPTY = 0xFFFFFF
#: Cell borders.
GRID = 0x9A9A9A
#: Cell text.
TEXT = 0x1A1A1A
#: Outline colours of highlighted cells, by mark number (1-based; cycled).
MARKS = (0xD62728, 0x1F3FBF, 0x2CA02C, 0x9467BD, 0xFF7F0E, 0x17BECF, 0x8C564B, 0xE377C2)


def index_colour(index: int) -> int:
    """The fill colour of index ``index`` as ``0xRRGGBB``."""
    hue = (index * _PHI) % 1.0
    lightness = 0.72 if (index // 8) % 2 == 0 else 0.82
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, 0.60)
    return (round(red * 255) << 16) | (round(green * 255) << 8) | round(blue * 255)


#: The mark of the thread chosen with ``highlight=`` (outlined in black, whatever else is marked).
HIGHLIGHT = 1000


def mark_colour(mark: int) -> int:
    """The outline colour of highlight ``mark`` (>= 1; :data:`HIGHLIGHT`: black)."""
    return 0x000000 if mark == HIGHLIGHT else MARKS[(mark - 1) % len(MARKS)]


def rgb(colour: int) -> tuple[int, int, int]:
    """``0xRRGGBB`` as ``(r, g, b)``."""
    return (colour >> 16) & 0xFF, (colour >> 8) & 0xFF, colour & 0xFF


def hex_colour(colour: int) -> str:
    """``0xRRGGBB`` as ``#rrggbb``."""
    return f"#{colour:06x}"
