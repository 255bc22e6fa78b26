"""Attribute <-> Python value bridge.

IRDL attributes are opaque to Python: the bindings cannot read the parameters of a dynamic
attribute. We therefore read its printed text once (through `linear_layout.ir.text`, the only
module that reads printed IR) and cache the decoded value per attribute (and per type, for
`!ttg.memdesc`). Attributes are uniqued by their context, so the storage pointer is an exact
cache key for the context's lifetime.

- `#ttg.*<{...}>` decodes to an encoding dataclass from `linear_layout.encodings`.
- `#ll.layout<[...], [...]>` decodes to a `LinearLayout`.
- A ranked tensor type with either encoding gives its `LinearLayout` through `layout_of`.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from mlir import ir

from ..core._packing import BoundedCache
from ..core.layout import LinearLayout
from ..encodings import (
    BlockedLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    SliceLayout,
    parse_encoding,
    to_linear_layout,
)
from . import text
from ._dialects import context_state, load_dialects
from .text import attribute_kind, is_layout_attribute

__all__ = [
    "MemDesc",
    "attribute_kind",
    "cache_info",
    "format_ll_layout",
    "from_attribute",
    "is_layout_attribute",
    "layout_of",
    "memdesc_of",
    "memdesc_parameters",
    "per_type",
    "to_attribute",
    "type_pointer",
]

V = TypeVar("V")

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_ATTRIBUTE_CAPSULE = b"mlir.ir.Attribute._CAPIPtr"
_TYPE_CAPSULE = b"mlir.ir.Type._CAPIPtr"


@dataclass(frozen=True)
class _Invalid:
    """A cached decoding failure, so that a bad attribute is diagnosed once, not once per use."""

    message: str


def _cached(cache_name: str, obj, capsule: bytes, decode):
    state = context_state(obj.context)
    cache = getattr(state, cache_name)
    key = _capsule_pointer(obj._CAPIPtr, capsule)
    value = cache.get(key)
    if value is None:
        state.misses += 1
        try:
            value = decode(obj)
        except ValueError as error:
            value = _Invalid(str(error))
        cache[key] = value
    else:
        state.hits += 1
    if isinstance(value, _Invalid):
        raise ValueError(value.message)
    return value


def type_pointer(t: ir.Type) -> int:
    """The storage pointer of a type: equal pointers mean equal types within one context."""
    return _capsule_pointer(t._CAPIPtr, _TYPE_CAPSULE)


def per_type(derive: Callable[[ir.Type], V], t: ir.Type) -> V:
    """`derive(t)`, computed once per distinct type `t` of its context (types are uniqued: the
    storage pointer is the key for the context's lifetime). The value must be immutable and hold
    no MLIR object; an exception `derive` raises is not remembered (it is raised again next time).

    Example: `per_type(text.memdesc_parameters, t)` reads a `!ttg.memdesc`'s text once."""
    cache = context_state(t.context).derived
    key = (derive, _capsule_pointer(t._CAPIPtr, _TYPE_CAPSULE))
    if key in cache:
        return cache[key]  # type: ignore[return-value]
    value = cache[key] = derive(t)
    return value


def cache_info(context: ir.Context | None = None) -> dict[str, int]:
    """Hits, misses and size of the attribute/type cache of `context`."""
    state = context_state(context or ir.Context.current)
    return {"hits": state.hits, "misses": state.misses, "size": len(state.attributes) + len(state.types)}


# ---------------------------------------------------------------------------- #ll.layout


def _decode_ll_layout(attr: ir.Attribute) -> LinearLayout:
    params = text.ll_layout_parameters(attr)
    if len(params) != 2:
        raise ValueError(f"#ll.layout takes 2 parameters (input and output dimensions), got {len(params)}")
    in_dims, out_dims = params

    def entry(item, what):
        if not isinstance(item, ir.ArrayAttr) or len(item) != 2 or not isinstance(item[0], ir.StringAttr):
            raise ValueError(f'#ll.layout: each {what} must be ["name", ...], got {item}')
        return item[0].value, item[1]

    def integer(value, what):
        if not isinstance(value, ir.IntegerAttr):
            raise ValueError(f"#ll.layout: {what} must be an integer, got {value}")
        return value.value

    bases = []
    for item in in_dims:
        name, vectors = entry(item, "input dimension")
        if not isinstance(vectors, ir.ArrayAttr):
            raise ValueError(f"#ll.layout: the bases of '{name}' must be an array, got {vectors}")
        rows = []
        for vector in vectors:
            if not isinstance(vector, ir.ArrayAttr):
                raise ValueError(f"#ll.layout: a basis of '{name}' must be an array, got {vector}")
            rows.append([integer(v, f"a basis coordinate of '{name}'") for v in vector])
        bases.append((name, rows))
    names, sizes = [], []
    for item in out_dims:
        name, size = entry(item, "output dimension")
        names.append(name)
        sizes.append(integer(size, f"the size of output dimension '{name}'"))
    try:
        return LinearLayout.from_bases(bases, names, sizes, require_surjective=False)
    except ValueError as error:
        raise ValueError(f"invalid #ll.layout: {error}") from None


def format_ll_layout(layout: LinearLayout) -> str:
    """The `#ll.layout` text of `layout`, dimension order preserved."""
    return text.format_ll_layout(layout.bases, layout.out_dims)


# ---------------------------------------------------------------------------- #ttg.*


def _decode_ttg(printed: str, depth: int = 0):
    """The encoding of the printed `#ttg` attribute `printed`: the common forms read by one match
    (a plain blocked or nvidia_mma; a slice or dot operand, its parent decoded from its text
    through the process-wide cache, so that the encodings sharing a parent read it once), every
    other text, and any the common forms refuse, by the general reader, which says what is wrong.
    `depth` counts the parents decoded so far: past `_NESTED_PARENTS` the general reader takes over
    (it bounds the nesting with a message; a recursion here would not)."""
    try:
        common = _decode_common(printed, depth)
    except (TypeError, ValueError):
        common = None  # the general reader's message, as for every other encoding
    return common if common is not None else parse_encoding(text.triton_encoding_text(printed))


# How deep a parent `_decode_common` decodes by its text (Triton's nest at most 3: a slice of a
# dot operand of an MMA layout); deeper texts are left to the general reader.
_NESTED_PARENTS = 4


def _decode_common(printed: str, depth: int):
    """The encoding of `printed` in one of the forms `_decode_ttg` reads by one match, or None."""
    blocked = text.plain_blocked_fields(printed)
    if blocked is not None:
        return BlockedLayout(*blocked)
    mma = text.plain_mma_fields(printed)
    if mma is not None:
        return NVMMADistributedLayout(*mma)
    nested = text.nested_fields(printed)
    if nested is None or depth >= _NESTED_PARENTS:
        return None
    parent = _decode_ttg_text(nested.parent, depth + 1)
    if nested.kind == "slice":
        return SliceLayout(nested.index, parent)
    return DotOperandLayout(nested.index, parent, nested.k_width)


# ---------------------------------------------------------------------------- public API


# The decoded value of each printed layout attribute, for every context of the process: the
# per-context cache (`context_state`) is keyed by the attribute's storage, which a new context
# does not share, so without this a module read in a fresh context (a new file, a new pass
# manager run) would read and validate each of its encodings again. Values are immutable:
# frozen encodings, `LinearLayout`s, or `_Invalid` (the message of a broken rule).
_DECODED: BoundedCache[str, object] = BoundedCache(4096)


def _decode(attr: ir.Attribute):
    """The value of layout attribute `attr`, read from its printed text (cached by that text)."""
    printed = str(attr)  # once: printing costs a Python call per token
    kind = text.printed_kind(printed)
    if not text.is_layout_kind(kind):
        raise TypeError(f"not a layout attribute: {printed}")
    if kind == "ll.layout":
        return _by_text(printed, lambda: _decode_ll_layout(attr))
    return _decode_ttg_text(printed)


def _decode_ttg_text(printed: str, depth: int = 0):
    """The encoding of a printed `#ttg` layout attribute (cached by its text, as `_decode`)."""
    return _by_text(printed, lambda: _decode_ttg(printed, depth))


def _by_text(printed: str, decode: Callable[[], object]):
    """The value of the printed attribute `printed`: `decode()` once per text for the process,
    a broken rule remembered as its message (raised again as a ValueError on every use)."""
    value = _DECODED.get(printed)
    if value is None:
        try:
            value = decode()
        except ValueError as error:
            value = _Invalid(str(error))
        _DECODED.store(printed, value)
    if isinstance(value, _Invalid):
        raise ValueError(value.message)
    return value


def from_attribute(attr: ir.Attribute | ir.RankedTensorType):
    """The Python value of a layout attribute (or of a tensor type's encoding): an encoding
    dataclass for `#ttg.*`, a `LinearLayout` for `#ll.layout`. Raises ValueError (naming the
    broken rule) for an invalid attribute and TypeError for one that is not a layout."""
    if isinstance(attr, ir.RankedTensorType):
        if attr.encoding is None:
            raise TypeError(f"{attr} has no encoding")
        attr = attr.encoding
    try:
        return _cached("attributes", attr, _ATTRIBUTE_CAPSULE, _decode)
    except TypeError:
        raise TypeError(f"not a layout attribute: {attr}") from None


def to_attribute(layout, context: ir.Context | None = None) -> ir.Attribute:
    """The attribute for a `LinearLayout` (`#ll.layout`) or an encoding dataclass (`#ttg.*`)."""
    context = load_dialects(context)
    if isinstance(layout, LinearLayout):
        source = format_ll_layout(layout)
    elif type(layout).__module__.startswith("linear_layout.encodings"):
        source = text.triton_to_mlir_text(str(layout))
    else:
        raise TypeError(f"expected a LinearLayout or an encoding, got {type(layout).__name__}")
    return ir.Attribute.parse(source, context)


def _decode_layout_of(tensor_type: ir.Type) -> LinearLayout:
    if not isinstance(tensor_type, ir.RankedTensorType) or tensor_type.encoding is None:
        raise TypeError(f"expected a ranked tensor type with a layout encoding, got {tensor_type}")
    layout = from_attribute(tensor_type.encoding)
    shape = list(tensor_type.shape)
    if isinstance(layout, LinearLayout):
        return layout
    if layout.rank != len(shape):
        raise ValueError(
            f"#{attribute_kind(tensor_type.encoding)} has rank {layout.rank} but the tensor has rank {len(shape)}"
        )
    return to_linear_layout(layout, shape)


def layout_of(tensor_type: ir.Type) -> LinearLayout:
    """The `LinearLayout` of a ranked tensor type: its `#ll.layout`, or its `#ttg` encoding
    applied to its shape. Cached per type."""
    return _cached("types", tensor_type, _TYPE_CAPSULE, _decode_layout_of)


@dataclass(frozen=True)
class MemDesc:
    """The parameters of `!ttg.memdesc<shape, element_type, encoding, memory_space, mutability>`."""

    shape: tuple[int, ...]
    element_type: ir.Type
    encoding: ir.Attribute
    mutable: bool


def memdesc_parameters(memdesc_type: ir.Type) -> text.MemDescText:
    """`text.memdesc_parameters` (the printed parameters of a `!ttg.memdesc`), read once per type."""
    return per_type(text.memdesc_parameters, memdesc_type)


def memdesc_of(memdesc_type: ir.Type) -> MemDesc:
    """The parameters of a `!ttg.memdesc` type (its text read once per type, `memdesc_parameters`;
    the type objects it returns belong to the context, and the cache holds no MLIR objects)."""
    params = memdesc_parameters(memdesc_type)
    context = memdesc_type.context
    return MemDesc(
        params.shape,
        ir.Type.parse(params.element_type, context),
        ir.Attribute.parse(params.encoding, context),
        params.mutable,
    )
