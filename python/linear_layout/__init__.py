"""linear-layout: Triton's GF(2) linear layouts for the upstream MLIR Python bindings.

The algebra lives in :mod:`linear_layout.algebra` and needs nothing but numpy.
"""

from .algebra import (
    ColumnAction,
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    standard_out_dim_names,
    supremum,
    zeros_like,
)

__version__ = "0.1.0"

__all__ = [
    "ColumnAction",
    "LinearLayout",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "identity_standard_nd",
    "standard_out_dim_names",
    "supremum",
    "zeros_like",
]
