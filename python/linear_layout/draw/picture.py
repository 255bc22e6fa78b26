"""``Picture``: what every ``draw_*`` function returns, and its three outputs.

* :meth:`Picture.svg`: an SVG document (every cell a ``<rect>`` with a ``<title>`` tooltip);
* :meth:`Picture.png`: that SVG rasterised by resvg (the ``resvg-py`` binding: a Rust SVG
  renderer in one wheel, no system libraries);
* :meth:`Picture.terminal`: 24-bit ANSI colour blocks cropped to the terminal width, with a
  legend, readable without colour (``NO_COLOR``).

In Jupyter a picture displays itself (``_repr_svg_``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import resvg_py

from .model import LegendEntry, Panel
from .svg import render_svg
from .terminal import render_terminal

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

    def svg(self) -> str:
        """The picture as an SVG document."""
        return render_svg(self.title, self.panels, self.legend, self.notes, self.columns)

    def png(self, zoom: float = 1.0) -> bytes:
        """The picture as PNG bytes (the SVG rendered by resvg on a white background)."""
        return bytes(resvg_py.svg_to_bytes(svg_string=self.svg(), background="#ffffff", zoom=zoom))

    def terminal(self, width: int | None = None, color: bool | None = None) -> str:
        """ANSI text at most ``width`` columns wide; ``color=None`` follows ``NO_COLOR``."""
        return render_terminal(self.title, self.panels, self.legend, self.notes, width, color)

    def save(self, path: str | Path) -> None:
        """Write ``.svg``, ``.png`` or ``.txt`` (terminal text without colour) by the file's extension."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".svg":
            target.write_text(self.svg(), encoding="utf-8")
        elif suffix == ".png":
            target.write_bytes(self.png())
        elif suffix == ".txt":
            target.write_text(self.terminal(width=10_000, color=False), encoding="utf-8")
        else:
            raise ValueError(f"cannot write {target.name!r}: the extension must be .svg, .png or .txt")

    def _repr_svg_(self) -> str:
        return self.svg()

    def __str__(self) -> str:
        return self.terminal(color=False)
