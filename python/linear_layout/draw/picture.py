"""``Picture``: what every ``draw_*`` function returns, and its three outputs.

* :meth:`Picture.svg`: an SVG document (every cell a ``<rect>`` with a ``<title>`` tooltip);
* :meth:`Picture.png`: the same layout painted straight into pixels
  (:mod:`linear_layout.draw.raster`: numpy and Pillow; 5-20x faster than rasterising the SVG);
* :meth:`Picture.tikz`: a TikZ picture for LaTeX, from the same layout;
* :meth:`Picture.terminal`: 24-bit ANSI colour blocks cropped to the terminal width, with a
  legend, readable without colour (``NO_COLOR``, or output to a file or a pipe).

In Jupyter a picture displays itself (``_repr_svg_``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .model import LegendEntry, Panel
from .raster import render_png
from .svg import render_svg
from .terminal import render_terminal
from .tikz import render_tikz

__all__ = ["Picture"]


@dataclass(frozen=True)
class Picture:
    """A titled set of panels with a legend and notes (immutable).

    ``columns``: how many panels the SVG puts side by side before wrapping.
    """

    title: str
    panels: tuple[Panel, ...]
    legend: tuple[LegendEntry, ...] = ()
    notes: tuple[str, ...] = ()
    columns: int = 4

    def svg(self, compact: bool = False) -> str:
        """The picture as an SVG document (``compact``: cells sized by a page's stylesheet, see
        :mod:`linear_layout.draw.svg`)."""
        return render_svg(self.title, self.panels, self.legend, self.notes, self.columns, compact)

    def png(self, zoom: float = 1.0) -> bytes:
        """The picture as PNG bytes (8-bit RGB, white background), ``zoom`` times the SVG's size."""
        return render_png(self.title, self.panels, self.legend, self.notes, self.columns, zoom)

    def tikz(self) -> str:
        """The picture as a TikZ ``tikzpicture`` (:mod:`linear_layout.draw.tikz`), for LaTeX."""
        return render_tikz(self.title, self.panels, self.legend, self.notes, self.columns)

    def terminal(self, width: int | None = None, color: bool | None = None) -> str:
        """ANSI text at most ``width`` columns wide; ``color=None``: colour only when standard
        output is a terminal and ``NO_COLOR`` is not set."""
        return render_terminal(self.title, self.panels, self.legend, self.notes, width, color)

    def save(self, path: str | Path) -> None:
        """Write ``.svg``, ``.png``, ``.tex`` (TikZ) or ``.txt`` (terminal text without colour) by
        the file's extension."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".svg":
            target.write_text(self.svg(), encoding="utf-8")
        elif suffix == ".png":
            target.write_bytes(self.png())
        elif suffix == ".tex":
            target.write_text(self.tikz(), encoding="utf-8")
        elif suffix == ".txt":
            target.write_text(self.terminal(width=10_000, color=False), encoding="utf-8")
        else:
            raise ValueError(f"cannot write {target.name!r}: the extension must be .svg, .png, .tex or .txt")

    def _repr_svg_(self) -> str:
        return self.svg()

    def __str__(self) -> str:
        return self.terminal(color=False)
