"""The pure core: the GF(2) kernel, :class:`LinearLayout`, its builders, text views and hardware constants.

Nothing in this package imports ``mlir`` or any other layer of ``linear_layout``.
"""

# `layout` first: it re-exports the builders of `builders`, which import `LinearLayout` from it, so
# loading it before anything else lets `import linear_layout.core.builders` work on its own too.
from . import layout  # noqa: F401
