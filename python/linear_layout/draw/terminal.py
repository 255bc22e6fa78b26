"""Terminal output: 24-bit ANSI colour blocks, cropped to the terminal's width, with a legend.

Each cell prints as its key (the index it is coloured by, e.g. the warp number) right-aligned in
a fixed width, on the cell's colour. A highlighted cell's key is preceded by ``*`` (outline
colours do not exist in a terminal), a broadcast duplicate's by ``+``. So the picture reads the
same without colour: with ``color=False`` (by default when ``NO_COLOR`` is set or standard
output is not a terminal, see :func:`use_colour`) the escape codes are simply left out.

No line is wider than ``width`` characters (escape codes do not count): columns that do not fit
are cropped and a note says which are shown; notes wrap (continuation lines indented by four).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from typing import TextIO

from .model import LegendEntry, Panel, wrap_notes
from .palette import rgb

__all__ = ["render_terminal", "terminal_width", "use_colour"]

_RESET = "\x1b[0m"
_MIN_WIDTH = 20


def use_colour(environ: Mapping[str, str] | None = None, stream: TextIO | None = None) -> bool:
    """Whether to write colour by default: not when ``NO_COLOR`` is set to a non-empty value
    (https://no-color.org), nor when ``stream`` (default: standard output) is not a terminal
    (a file or a pipe)."""
    env = os.environ if environ is None else environ
    out = sys.stdout if stream is None else stream
    return not env.get("NO_COLOR") and bool(getattr(out, "isatty", lambda: False)())


def terminal_width() -> int:
    """The terminal's width in columns (``COLUMNS`` or the tty; 80 when unknown)."""
    return shutil.get_terminal_size((80, 24)).columns


def _paint(text: str, colour: int, on: bool) -> str:
    if not on:
        return text
    red, green, blue = rgb(colour)
    return f"\x1b[48;2;{red};{green};{blue}m\x1b[38;2;0;0;0m{text}{_RESET}"


def _crop(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _cell_text(panel: Panel, index: int, key_width: int) -> str:
    prefix = "*" if panel.marks[index] else ("+" if panel.duplicates[index] > 1 else " ")
    return prefix + panel.keys[index].rjust(key_width)


def _row_text(panel: Panel, row: int, shown: int, key_width: int, colour: bool) -> str:
    """The first ``shown`` cells of ``row``, one colour escape per run of equal fills."""
    runs: list[tuple[int, list[str]]] = []
    for col in range(shown):
        index = panel.cell(row, col)
        text = _cell_text(panel, index, key_width)
        if runs and runs[-1][0] == panel.fills[index]:
            runs[-1][1].append(text)
        else:
            runs.append((panel.fills[index], [text]))
    return "".join(_paint("".join(texts), fill, colour) for fill, texts in runs)


def _panel_lines(panel: Panel, width: int, colour: bool) -> list[str]:
    key_width = max((len(k) for k in panel.keys), default=1)
    if panel.col_names:
        key_width = max(key_width, max(len(n) for n in panel.col_names))
    name_width = max((len(n) for n in panel.row_names), default=0)
    cell_width = key_width + 1
    shown = max(1, min(panel.cols, (width - name_width - 1) // cell_width))
    lines = [_crop(panel.title, width)] if panel.title else []
    if panel.col_names:
        lines.append(" " * (name_width + 1) + "".join(" " + n.rjust(key_width) for n in panel.col_names[:shown]))
    for row in range(panel.rows):
        lines.append(panel.row_names[row].rjust(name_width) + " " + _row_text(panel, row, shown, key_width, colour))
    if shown < panel.cols:
        lines.append(_crop(f"(columns 0-{shown - 1} of {panel.cols} shown: the terminal is {width} wide)", width))
    lines += wrap_notes(panel.notes, width)
    return lines


def _legend_lines(legend: tuple[LegendEntry, ...], width: int, colour: bool) -> list[str]:
    lines: list[str] = []
    current, used = "", 0
    for entry in legend:
        visible = f"{entry.key}={entry.text}"
        item = _paint(f" {entry.key} ", entry.colour, colour) + f"={entry.text}" if colour else visible
        item_width = len(visible) + (2 if colour else 0)
        if used and used + 2 + item_width > width:
            lines.append(current)
            current, used = "", 0
        if used:
            current += "  "
            used += 2
        current += item if item_width <= width else _crop(visible, width)
        used += min(item_width, width)
    if current:
        lines.append(current)
    return lines


def render_terminal(
    title: str,
    panels: tuple[Panel, ...],
    legend: tuple[LegendEntry, ...],
    notes: tuple[str, ...],
    width: int | None = None,
    colour: bool | None = None,
) -> str:
    """The picture as terminal text, at most ``width`` columns wide (default: the terminal's);
    ``colour=None``: :func:`use_colour`."""
    width = max(_MIN_WIDTH, terminal_width() if width is None else width)
    colour = use_colour() if colour is None else colour
    lines = [_crop(title, width)]
    for panel in panels:
        lines.append("")
        lines += _panel_lines(panel, width, colour)
    if legend:
        lines.append("")
        lines += _legend_lines(legend, width, colour)
    lines += wrap_notes(notes, width)
    return "\n".join(lines) + "\n"
