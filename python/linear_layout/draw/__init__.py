"""Pictures of layouts, shared memory and conversions (pure: never imports ``mlir``).

* :func:`draw_layout` -- which thread and register own each element of a distributed layout;
* :func:`draw_shared` -- the shared-memory image, rows of 32 banks;
* :func:`draw_conversion` -- source, scratch and destination side by side, with one warp's store
  and load phases and their wavefronts (or the shuffle rounds of an in-warp conversion);
* :func:`draw_compare` -- two candidate layouts (or conversions from one source) side by side,
  with their costs.

Each returns a :class:`Picture` with ``.svg()``, ``.png()``, ``.tikz()`` and ``.terminal()``. Every SVG cell
has a ``<title>`` tooltip in a fixed format that scripts may rely on:

* distributed: ``(i, j) T<thread> r<register> lane <l> warp <w>`` (`` block <b>`` appended when
  there are several blocks), every owner of a broadcast element joined by ``; ``;
  ``(i, j) none`` for an element no thread holds;
* shared: ``(i, j) offset <o> bank <b>``;
* rank 1 writes ``(i)``, rank 3 ``(k, i, j)``; tiles of big tensors are described in
  :mod:`linear_layout.draw.grids`.

Importing this package registers the Jupyter display of LinearLayouts, encodings and conversion
plans (:mod:`linear_layout.core.display`).
"""

from . import display  # noqa: F401  (registers the Jupyter renderers)
from .compare import draw_compare
from .conversion import draw_conversion
from .html import PageRow, conversion_rows, html_page
from .layout import draw_layout
from .picture import Picture
from .shared import draw_shared

__all__ = [
    "PageRow",
    "Picture",
    "conversion_rows",
    "draw_compare",
    "draw_conversion",
    "draw_layout",
    "draw_shared",
    "html_page",
]
