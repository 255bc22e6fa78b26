"""Rich-display hooks (Jupyter's ``_repr_svg_`` / ``_repr_html_``) without upward imports.

The pure layers (core, encodings, planning) must not import the picture code in
:mod:`linear_layout.draw`, yet their values should draw themselves in a notebook. This module
inverts the dependency: a class takes ``_repr_svg_ = display.repr_svg`` and
``_repr_html_ = display.repr_html`` as methods, and the drawing package registers a renderer
per class with :func:`register_renderer` when it is imported (``import linear_layout`` does).
With nothing registered the hooks return ``None``, which tells Jupyter to fall back to the
text ``repr``.

Lookup follows the method resolution order, so a renderer registered for a base class
(``DistributedLayout``) serves every subclass. A renderer that cannot draw a value (a layout
with unusual input dimensions, say) returns ``None`` too.

>>> class Point:
...     _repr_svg_ = repr_svg
>>> Point()._repr_svg_() is None
True
>>> register_renderer(Point, "svg", lambda value: "<svg/>")
>>> Point()._repr_svg_()
'<svg/>'
>>> unregister_renderer(Point, "svg")
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["FORMATS", "register_renderer", "render", "repr_html", "repr_svg", "unregister_renderer"]

#: The rich formats a renderer may provide.
FORMATS = ("svg", "html")

Renderer = Callable[[object], "str | None"]

_RENDERERS: dict[tuple[type, str], Renderer] = {}


def register_renderer(cls: type, fmt: str, renderer: Renderer) -> None:
    """Use ``renderer(value)`` for the ``fmt`` display of ``cls`` and its subclasses."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown display format {fmt!r}; expected one of {', '.join(FORMATS)}")
    _RENDERERS[(cls, fmt)] = renderer


def unregister_renderer(cls: type, fmt: str) -> None:
    """Forget the ``fmt`` renderer of ``cls`` (no error if there is none)."""
    _RENDERERS.pop((cls, fmt), None)


def render(value: object, fmt: str) -> str | None:
    """The ``fmt`` rendering of ``value`` by the renderer of its nearest registered class, or None."""
    for cls in type(value).__mro__:
        renderer = _RENDERERS.get((cls, fmt))
        if renderer is not None:
            return renderer(value)
    return None


def repr_svg(self: object) -> str | None:
    """Jupyter's SVG hook: the registered SVG rendering, or None."""
    return render(self, "svg")


def repr_html(self: object) -> str | None:
    """Jupyter's HTML hook: the registered HTML rendering, or None."""
    return render(self, "html")
