"""Jupyter display of LinearLayouts, encodings and conversion plans (registered on import).

The pure layers only carry the hooks of :mod:`linear_layout.core.display`; this module gives
them renderers:

* a ``LinearLayout`` whose input dims are among ``register, lane, warp, block`` draws as
  :func:`draw_layout`; one with ``offset[, block]`` as :func:`draw_shared` of 32-bit elements;
  others (and layouts of rank above 3 or with more than 2**20 inputs) have no picture;
* a distributed encoding draws on its CTA tile (:func:`~linear_layout.draw.owners.natural_shape`),
  a shared one with its own element width (``nvmma_shared``) or 16 bits;
* a ``ConversionPlan`` draws as :func:`draw_conversion` would draw it (the plan itself, not re-planned).

A value that cannot be drawn displays as its text ``repr`` (the renderer returns None).

Only the SVG renderer is registered: a notebook stores one representation of each picture
(``image/svg+xml``), not the same SVG again as ``text/html``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core import display
from ..core.hardware import HW_DIMS, SHARED_DIMS
from ..core.layout import LinearLayout
from ..encodings import DistributedLayout, SharedLayout
from ..planning import ConversionPlan
from .conversion import conversion_picture
from .layout import draw_layout
from .picture import Picture
from .shared import draw_shared

__all__ = ["picture_of", "register"]

#: Layouts with more inputs than this are not drawn in a notebook.
MAX_DISPLAY_INPUTS_LOG2 = 20


def _linear_layout(layout: LinearLayout) -> Picture | None:
    names = set(layout.get_in_dim_names())
    if not 1 <= layout.num_out_dims <= 3 or layout.get_total_in_dim_size_log2() > MAX_DISPLAY_INPUTS_LOG2:
        return None
    if names <= set(HW_DIMS):
        return draw_layout(layout)
    if names <= set(SHARED_DIMS):
        return draw_shared(layout, bitwidth=32)
    return None


def _shared(encoding: SharedLayout) -> Picture:
    return draw_shared(encoding, bitwidth=getattr(encoding, "element_bitwidth", 16))


def _plan(plan: ConversionPlan) -> Picture:
    return conversion_picture(plan)


_PICTURES: tuple[tuple[type, Callable[..., Picture | None]], ...] = (
    (LinearLayout, _linear_layout),
    (DistributedLayout, draw_layout),
    (SharedLayout, _shared),
    (ConversionPlan, _plan),
)


def picture_of(value: object) -> Picture | None:
    """The picture Jupyter shows for ``value``, or None."""
    for cls, make in _PICTURES:
        if isinstance(value, cls):
            try:
                return make(value)
            except ValueError:
                return None
    return None


def _svg(value: object) -> str | None:
    picture = picture_of(value)
    return None if picture is None else picture.svg()


def register() -> None:
    """Register the SVG renderer of every drawable class (idempotent); no HTML renderer, so a
    notebook keeps one copy of each picture."""
    for cls, _ in _PICTURES:
        display.register_renderer(cls, "svg", _svg)
        display.unregister_renderer(cls, "html")


register()
