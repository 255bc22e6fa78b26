"""linear-layout: Triton's GF(2) linear layouts for the upstream MLIR Python bindings.

The layers (see docs/architecture.md): ``core`` (the GF(2) algebra), ``encodings``, ``planning``
(all pure: numpy only, never ``mlir``), then ``ir``/``dialects``/``patterns``/``passes``, ``simt`` and ``tools``.
"""

# Pictures (pure); importing them registers the Jupyter display of layouts, encodings and plans.
from . import draw  # noqa: F401
from .core.layout import (
    ColumnAction,
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    standard_out_dim_names,
    supremum,
    zeros_like,
)
from .planning import bank_conflicts, plan_conversion

__version__ = "0.1.0"

__all__ = [
    "ColumnAction",
    "LinearLayout",
    "bank_conflicts",
    "plan_conversion",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "identity_standard_nd",
    "standard_out_dim_names",
    "supremum",
    "zeros_like",
]
