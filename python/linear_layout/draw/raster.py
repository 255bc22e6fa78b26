"""PNG output: the laid-out picture (:mod:`linear_layout.draw.placement`) painted straight into the
PNG's raw rows (a numpy array) and compressed by zlib -- no SVG parsing, no per-cell vector
rasterisation; Pillow only draws each glyph once.

Chosen by measurement (``benchmarks/bench_draw.py --png``, cold, a fresh process each): a
128 x 128 f16 conversion through shared memory (four panels of 16,384 cells, about 65,000
labels) costs 1.2 s of CPU and 166 MB here, 11.3 s and 742 MB with resvg, 32.9 s and 505 MB with
cairosvg (docs/pictures.md). The cost of an SVG rasteriser is its text: every label is shaped
and filled as a path. Here the cells are filled one pixel line per cell row, copied down the row,
and text is stamped from a glyph atlas: each character of each font size is drawn once by
Pillow's FreeType binding, then every occurrence of it is written by integer scatters (two
coverage levels: text colour, and half text half background).

Pixels agree with the SVG: the same geometry, cell gaps, outlines, corner marks, swatches and
text positions (glyph shapes may differ slightly from a browser's: ``DejaVu Sans Mono`` when the
system has it, else Pillow's built-in font).
"""

from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .model import LegendEntry, Panel
from .palette import GRID, TEXT, mark_colour, rgb
from .placement import LABEL_FONT, Geometry, PlacedPanel, Placement, Text, place_picture
from .svg import GAP

__all__ = ["encode_png", "render_png"]

#: zlib level of the PNG: flat colours compress well at the fastest level.
_COMPRESS_LEVEL = 1


@dataclass(frozen=True)
class Glyph:
    """A character at two coverage levels: pixel offsets ``(dy, dx)`` from its baseline origin
    that are ``solid`` (coverage >= 0.6: the text colour) and ``half`` (0.2-0.6: half text, half
    background), and its advance. Two levels keep the glyphs smooth at 8-9 px while every pixel is
    one integer write, no floating-point blend."""

    solid: tuple[np.ndarray, np.ndarray]
    half: tuple[np.ndarray, np.ndarray]
    advance: float


@functools.cache
def _font(size: float, bold: bool) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = "DejaVuSansMono-Bold.ttf" if bold else "DejaVuSansMono.ttf"
    try:
        return ImageFont.truetype(name, round(size))
    except OSError:
        return ImageFont.load_default(round(size))


@functools.cache
def _glyph(char: str, size: float, bold: bool) -> Glyph:
    font = _font(size, bold)
    pad = int(size * 2)
    canvas = Image.new("L", (2 * pad, 2 * pad), 0)
    ImageDraw.Draw(canvas).text((pad, pad), char, font=font, fill=255, anchor="ls")
    coverage = np.asarray(canvas, dtype=np.int64)
    solid = np.nonzero(coverage >= 153)
    half = np.nonzero((coverage >= 51) & (coverage < 153))
    return Glyph((solid[0] - pad, solid[1] - pad), (half[0] - pad, half[1] - pad), float(font.getlength(char)))


def _advance(size: float, bold: bool) -> float:
    return _glyph("0", size, bold).advance


def _stamp(rows: np.ndarray, char: str, size: float, bold: bool, x: np.ndarray, y: np.ndarray) -> None:
    """Draw ``char`` in the text colour at every baseline origin ``(x, y)`` (whole pixels) into
    the PNG's raw rows (:func:`_png_rows`: a filter byte, then RGB pixels)."""
    glyph = _glyph(char, size, bold)
    stride = rows.shape[1]
    flat = rows.reshape(-1)
    origin = np.round(y).astype(np.int64) * stride + 1 + 3 * np.round(x).astype(np.int64)
    ink = rgb(TEXT)
    for (dy, dx), solid in ((glyph.solid, True), (glyph.half, False)):
        if not dy.size:
            continue
        index = np.clip((origin[:, None] + (dy * stride + 3 * dx)[None, :]).ravel(), 0, flat.size - 3)
        for channel in range(3):
            at = index + channel
            flat[at] = ink[channel] if solid else (flat[at] >> 1) + (ink[channel] >> 1)


def _stamp_strings(rows: np.ndarray, texts: list[str], x: np.ndarray, y: np.ndarray, size: float, bold: bool) -> None:
    """Stamp strings whose first character's origin is ``(x, y)``: one scatter per character."""
    if not texts:
        return
    codes = np.array(texts, dtype=str).reshape(-1, 1).view(np.int32)
    advance = _advance(size, bold)
    for code in np.unique(codes[codes > 32]).tolist():
        which, position = np.nonzero(codes == code)
        _stamp(rows, chr(code), size, bold, x[which] + position * advance, y[which])


def _stamp_texts(rows: np.ndarray, items: list[Text]) -> None:
    """Stamp texts, grouped by font."""
    by_font: dict[tuple[float, bool], list[Text]] = {}
    for item in items:
        by_font.setdefault((item.size, item.bold), []).append(item)
    for (size, bold), group in by_font.items():
        advance = _advance(size, bold)
        shift = {"start": 0.0, "middle": 0.5, "end": 1.0}
        x = np.array([t.x - shift[t.anchor] * len(t.text) * advance for t in group])
        y = np.array([t.y for t in group])
        _stamp_strings(rows, [t.text for t in group], x, y, size, bold)


def _cell_index(start: float, count: int, size: float) -> tuple[int, np.ndarray]:
    """For the pixels of a run of ``count`` cells of ``size`` px from ``start``: the first pixel,
    and each pixel's cell, or ``count`` for a pixel of the white gap after a cell."""
    first = int(np.floor(start))
    pixels = np.arange(first, int(np.ceil(start + count * size)))
    local = pixels + 0.5 - start
    cell = np.clip((local // size).astype(np.int64), 0, count - 1)
    return first, np.where(local - cell * size < size - GAP, cell, count)


def _cell_box(geo: Geometry, row: int, col: int, inset: int) -> tuple[int, int, int, int]:
    """``(y0, y1, x0, x1)`` of cell ``(row, col)``, less ``inset`` pixels on each side."""
    x0 = int(np.floor(geo.grid_x + col * geo.cell_width + 0.5))
    y0 = int(np.floor(geo.grid_y + row * geo.cell_height + 0.5))
    width, height = round(geo.cell_width) - GAP, round(geo.cell_height) - GAP
    return y0 + inset, y0 + height - inset, x0 + inset, x0 + width - inset


def _outline(image: np.ndarray, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> None:
    y0, y1, x0, x1 = box
    image[y0 : y0 + 2, x0:x1] = image[y1 - 2 : y1, x0:x1] = colour
    image[y0:y1, x0 : x0 + 2] = image[y0:y1, x1 - 2 : x1] = colour


def _corner(image: np.ndarray, box: tuple[int, int, int, int]) -> None:
    """The broadcast mark: a 6 px triangle in the top-right corner."""
    y0, _, _, x1 = box
    for k in range(6):
        image[y0 + k, x1 - 6 + k : x1] = rgb(TEXT)


def _paint_panel(image: np.ndarray, panel: Panel, geo: Geometry) -> None:
    """Cell fills (one pixel line per cell row, copied down the row; gaps white), then outlines
    and corner marks."""
    x0, col = _cell_index(geo.grid_x, panel.cols, geo.cell_width)
    y0, row = _cell_index(geo.grid_y, panel.rows, geo.cell_height)
    fills = np.full((panel.rows + 1, panel.cols + 1, 3), 255, dtype=np.uint8)
    fills[:-1, :-1] = np.array([rgb(f) for f in panel.fills], dtype=np.uint8).reshape(panel.rows, panel.cols, 3)
    lines = fills[:, col]
    starts = np.flatnonzero(np.diff(row, prepend=-1))
    for start, stop in zip(starts.tolist(), starts[1:].tolist() + [row.size]):
        image[y0 + start : y0 + stop, x0 : x0 + col.size] = lines[row[start]]
    for index in np.flatnonzero(np.asarray(panel.duplicates) > 1).tolist():
        _corner(image, _cell_box(geo, *divmod(index, panel.cols), 0))
    for index in np.flatnonzero(panel.marks).tolist():
        _outline(image, _cell_box(geo, *divmod(index, panel.cols), 1), rgb(mark_colour(panel.marks[index])))


def _label_texts(placed: PlacedPanel) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The cell labels of a panel with their first character's origin (centred in the cell)."""
    if not placed.labels_shown:
        return [], np.zeros(0), np.zeros(0)
    panel, geo = placed.panel, placed.geometry
    index = np.arange(panel.rows * panel.cols)
    labels = list(panel.labels)
    lengths = np.array([len(label) for label in labels])
    advance = _advance(LABEL_FONT, False)
    x = geo.grid_x + (index % panel.cols + 0.5) * geo.cell_width - lengths * advance / 2
    y = geo.grid_y + (index // panel.cols + 1) * geo.cell_height - 4.5
    keep = lengths > 0
    return [label for label in labels if label], x[keep], y[keep]


def _paint_swatches(image: np.ndarray, layout: Placement) -> None:
    for swatch in layout.swatches:
        x, y = int(swatch.x), int(swatch.y)
        image[y : y + 13, x : x + 13] = rgb(GRID)
        image[y + 1 : y + 12, x + 1 : x + 12] = rgb(swatch.colour)


def render_png(
    title: str,
    panels: tuple[Panel, ...],
    legend: tuple[LegendEntry, ...],
    notes: tuple[str, ...],
    columns: int,
    zoom: float = 1.0,
) -> bytes:
    """The picture as PNG bytes (8-bit RGB), ``zoom`` times the SVG's pixel size."""
    layout = place_picture(title, panels, legend, notes, columns)
    rows = _png_rows(layout.height, layout.width)
    image = rows[:, 1:].reshape(layout.height, layout.width, 3)
    for placed in layout.panels:
        _paint_panel(image, placed.panel, placed.geometry)
        labels, x, y = _label_texts(placed)
        _stamp_strings(rows, labels, x, y, LABEL_FONT, False)
    _paint_swatches(image, layout)
    _stamp_texts(rows, [t for placed in layout.panels for t in placed.texts] + list(layout.texts))
    if zoom != 1.0:
        size = (max(1, round(layout.width * zoom)), max(1, round(layout.height * zoom)))
        zoomed = np.asarray(Image.fromarray(image, "RGB").resize(size, Image.Resampling.LANCZOS))
        rows = _png_rows(size[1], size[0])
        rows[:, 1:] = zoomed.reshape(size[1], -1)
    return encode_png(rows)


def _png_rows(height: int, width: int) -> np.ndarray:
    """A PNG's raw rows, white: a filter byte (0: none) then ``width`` RGB pixels, for each row."""
    rows = np.full((height, 1 + 3 * width), 255, dtype=np.uint8)
    rows[:, 0] = 0
    return rows


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def encode_png(rows: np.ndarray) -> bytes:
    """Raw rows (:func:`_png_rows`, filled) as a PNG: 8-bit RGB, zlib at level 1.

    Pillow's own encoder chooses a filter per row, which costs more than it saves on pictures of
    flat colours (1.9 s against 0.5 s for 8,176 x 4,406 pixels, 4% smaller)."""
    height, width = rows.shape[0], (rows.shape[1] - 1) // 3
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.data, _COMPRESS_LEVEL))
        + _chunk(b"IEND", b"")
    )
