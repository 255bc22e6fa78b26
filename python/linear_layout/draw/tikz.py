"""TikZ output (``Picture.tikz()``, ``-o picture.tex``): the laid-out picture
(:mod:`linear_layout.draw.placement`) as one ``tikzpicture`` for a LaTeX document.

One unit is one SVG pixel (``x=0.2mm, y=-0.2mm``: a 40 px cell is 8 mm wide, the y axis points
down as in the SVG). Every colour used is defined once (``\\definecolor{llN}{HTML}{RRGGBB}``);
each cell is a ``\\fill`` rectangle, each label a ``\\node`` in ``\\ttfamily``; outlines are drawn
as in the SVG. Needs ``\\usepackage{tikz}`` (and ``xcolor``, which TikZ loads). Tooltips have no
TikZ form: the picture's labels, legend and notes are what a paper shows.
"""

from __future__ import annotations

from .model import LegendEntry, Panel
from .palette import GRID, TEXT, mark_colour
from .placement import LABEL_FONT, PlacedPanel, Text, cell_origins, place_picture
from .svg import GAP

__all__ = ["render_tikz", "tex_escape"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    >>> tex_escape("#ttg.blocked<{order = [1, 0]}> 50%")
    '\\\\#ttg.blocked\\\\textless{}\\\\{order = [1, 0]\\\\}\\\\textgreater{} 50\\\\%'
    """
    return "".join(_SPECIAL.get(char, char) for char in text)


class _Colours:
    """The colours of the picture, each defined once, named ``ll0``, ``ll1``, ..."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, colour: int) -> str:
        return self.names.setdefault(colour, f"ll{len(self.names)}")

    def definitions(self) -> list[str]:
        return [f"\\definecolor{{{name}}}{{HTML}}{{{colour:06X}}}" for colour, name in self.names.items()]


def _text(item: Text, colours: _Colours) -> str:
    anchor = {"start": "west", "middle": "center", "end": "east"}[item.anchor]
    weight = "\\bfseries" if item.bold else ""
    return (
        f"\\node[anchor=base {anchor}, inner sep=0, text={colours(TEXT)}, "
        f"font=\\ttfamily{weight}\\fontsize{{{item.size * 0.75:g}}}{{{item.size * 0.9:g}}}\\selectfont] "
        f"at ({item.x:g},{item.y:g}) {{{tex_escape(item.text)}}};"
    )


def _panel(placed: PlacedPanel, colours: _Colours) -> list[str]:
    panel, geo = placed.panel, placed.geometry
    lines = [_text(item, colours) for item in placed.texts]
    cw, ch = geo.cell_width, geo.cell_height
    for index, x, y in cell_origins(placed):
        lines.append(f"\\fill[{colours(panel.fills[index])}] ({x:g},{y:g}) rectangle ++({cw - GAP:g},{ch - GAP:g});")
        if placed.labels_shown and panel.labels[index]:
            label = Text(x + cw / 2, y + ch - 4.5, panel.labels[index], anchor="middle", size=LABEL_FONT)
            lines.append(_text(label, colours))
        if panel.duplicates[index] > 1:
            lines.append(f"\\fill[{colours(TEXT)}] ({x + cw - 6:g},{y:g}) -- ++(6,0) -- ++(0,6) -- cycle;")
        if panel.marks[index]:
            lines.append(
                f"\\draw[{colours(mark_colour(panel.marks[index]))}, line width=0.4mm] "
                f"({x + 2:g},{y + 2:g}) rectangle ++({cw - 4:g},{ch - 4:g});"
            )
    return lines


def render_tikz(
    title: str, panels: tuple[Panel, ...], legend: tuple[LegendEntry, ...], notes: tuple[str, ...], columns: int
) -> str:
    """The whole picture as a ``tikzpicture`` environment (see the module docstring)."""
    layout = place_picture(title, panels, legend, notes, columns)
    colours = _Colours()
    body: list[str] = []
    for placed in layout.panels:
        body += _panel(placed, colours)
    body += [
        f"\\fill[{colours(s.colour)}, draw={colours(GRID)}] ({s.x:g},{s.y:g}) rectangle ++(12,12);"
        for s in layout.swatches
    ]
    body += [_text(item, colours) for item in layout.texts]
    return "\n".join(
        [f"% {tex_escape(title)}: {layout.width} x {layout.height} px, 1 px = 0.2 mm"]
        + colours.definitions()
        + ["\\begin{tikzpicture}[x=0.2mm, y=-0.2mm]"]
        + body
        + ["\\end{tikzpicture}", ""]
    )
