"""Triton's layout encodings as Python values that convert to a ``LinearLayout``.

Each encoding is a frozen dataclass with Gluon's class and field names (tuples inside).
``layout.to_linear_layout(shape)`` builds the same linear layout as Triton 3.9's ``toLinearLayout``,
from the algebra's own builders; ``str(layout)`` prints Triton's attribute syntax and
``parse_encoding(text, aliases)`` reads it back.

Distributed layouts map (register, lane, warp, block) to (dim0, ..., dimN-1); shared layouts map
(offset, block) to the same outputs.

Modules: ``base`` (errors, checks, the CGA combination, the cache, views), ``blocked``
(blocked, slice, linear), ``nvidia`` (nvidia_mma), ``amd`` (amd_mfma, amd_wmma), ``dot`` (dot_op),
``shared`` (swizzled, amd_rotating, nvmma, shared_linear, padded), ``syntax`` (the text syntax), ``gluon``
(``to_gluon``).  Pure: never imports ``mlir``.
"""

from .amd import AMDMFMALayout, AMDWMMALayout
from .base import (
    MAX_RANK,
    DistributedLayout,
    EncodingError,
    EncodingSyntaxError,
    Layout,
    SharedLayout,
    format_hardware_view,
    format_tensor_view,
    launch_sizes,
    to_linear_layout,
    verify_module_sizes,
)
from .blocked import BlockedLayout, DistributedLinearLayout, SliceLayout
from .dot import DotOperandLayout
from .gluon import to_gluon
from .nvidia import NVMMADistributedLayout
from .shared import (
    AMDRotatingSharedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
)
from .syntax import ENCODING_NAMES, collect_aliases, parse_encoding

__all__ = [
    "BlockedLayout",
    "SliceLayout",
    "DistributedLinearLayout",
    "NVMMADistributedLayout",
    "DotOperandLayout",
    "AMDMFMALayout",
    "AMDWMMALayout",
    "SwizzledSharedLayout",
    "AMDRotatingSharedLayout",
    "NVMMASharedLayout",
    "SharedLinearLayout",
    "PaddedSharedLayout",
    "DistributedLayout",
    "SharedLayout",
    "Layout",
    "launch_sizes",
    "to_linear_layout",
    "parse_encoding",
    "collect_aliases",
    "ENCODING_NAMES",
    "format_tensor_view",
    "format_hardware_view",
    "verify_module_sizes",
    "to_gluon",
    "EncodingError",
    "EncodingSyntaxError",
    "MAX_RANK",
]
