"""Interoperability with Gluon (``triton.experimental.gluon``): :func:`to_gluon`.

Gluon's layout classes have the same names and fields as ours, so a layout built here can be
handed to a Gluon kernel.  Triton is an optional dependency, imported only when a conversion
actually needs it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .amd import AMDMFMALayout, AMDWMMALayout
from .base import type_name
from .blocked import BlockedLayout, DistributedLinearLayout, SliceLayout
from .dot import DotOperandLayout
from .nvidia import NVMMADistributedLayout
from .shared import NVMMASharedLayout, SharedLinearLayout, SwizzledSharedLayout

__all__ = ["to_gluon"]

_CONVERTIBLE = (
    BlockedLayout,
    SliceLayout,
    DistributedLinearLayout,
    NVMMADistributedLayout,
    DotOperandLayout,
    AMDMFMALayout,
    AMDWMMALayout,
    SwizzledSharedLayout,
    NVMMASharedLayout,
    SharedLinearLayout,
)


def _gluon_modules() -> tuple[Any, Any]:
    try:
        import triton.experimental.gluon.language._layouts as gluon
        import triton.experimental.gluon.language.amd._layouts as gluon_amd
    except ImportError as error:
        raise ValueError(f"to_gluon needs Triton 3.9 (pip install triton==3.9.0): {error}") from None
    return gluon, gluon_amd


def _argument(value: Any) -> Any:
    """A field value as Gluon takes it: nested encodings converted, tuples as lists (recursively)."""
    if isinstance(value, _CONVERTIBLE):
        return to_gluon(value)
    if isinstance(value, tuple):
        return [_argument(v) for v in value]
    return value


def to_gluon(layout: object) -> Any:
    """The Gluon object for one of our encodings.

    Gluon's class has our class's name and takes our dataclass fields, in order, as its arguments
    (tuples as lists), so the conversion is field by field; the AMD classes live in Gluon's ``amd``
    module.

    Requires: ``layout`` is one of our encodings other than :class:`PaddedSharedLayout` (a
    ``ValueError`` otherwise, raised before Triton is imported); Triton 3.9 is installed.
    Postcondition: Gluon converts the result to the same linear layout as ``to_linear_layout``.
    """
    if not isinstance(layout, _CONVERTIBLE):
        raise ValueError(f"to_gluon: {type_name(layout)} has no Gluon counterpart")
    gluon, gluon_amd = _gluon_modules()
    module = gluon_amd if isinstance(layout, (AMDMFMALayout, AMDWMMALayout)) else gluon
    arguments = [_argument(getattr(layout, f.name)) for f in fields(layout) if f.init]
    return getattr(module, type(layout).__name__)(*arguments)
