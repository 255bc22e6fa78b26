"""Rules about the types the `ll` and `ttg` ops take, shared by the op classes and the verifier."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from ..ir.bridge import MemDesc, attribute_kind, is_layout_attribute, memdesc_of

__all__ = ["describe", "is_layout_tensor", "memdesc_or_problem", "same_shape_and_element", "tile_problem"]


def describe(shape: Sequence[int], element_type: ir.Type) -> str:
    return f"{list(shape)} x {element_type}"


def is_layout_tensor(t: ir.Type) -> bool:
    """A ranked tensor type whose encoding is a `#ttg` layout or an `#ll.layout`."""
    return isinstance(t, ir.RankedTensorType) and t.encoding is not None and is_layout_attribute(t.encoding)


def same_shape_and_element(
    a: tuple[Sequence[int], ir.Type], b: tuple[Sequence[int], ir.Type], a_name: str, b_name: str
) -> str | None:
    if list(a[0]) != list(b[0]) or a[1] != b[1]:
        return f"must keep shape and element type: {a_name} is {describe(*a)} but {b_name} is {describe(*b)}"
    return None


def memdesc_or_problem(t: ir.Type) -> tuple[MemDesc | None, str | None]:
    try:
        return memdesc_of(t), None
    except (TypeError, ValueError) as error:
        return None, str(error)


def tile_problem(tensor: ir.Type, memref: ir.Type, offsets: int) -> str | None:
    """What is wrong with a tile access (`ll.load`/`ll.store`) of `tensor` in `memref`."""
    if not is_layout_tensor(tensor):
        return f"needs a tensor with a layout encoding, got {tensor}"
    if not isinstance(memref, ir.MemRefType):
        return f"needs a memref, got {memref}"
    if tensor.element_type != memref.element_type:
        return f"element types differ: the tensor has {tensor.element_type}, the memref {memref.element_type}"
    if memref.rank != tensor.rank:
        return f"ranks differ: the tensor has rank {tensor.rank}, the memref rank {memref.rank}"
    if offsets not in (0, tensor.rank):
        return f"takes no offsets or one per dimension ({tensor.rank}), got {offsets}"
    for dim, (t, m) in enumerate(zip(tensor.shape, memref.shape)):
        if not ir.ShapedType.is_dynamic_size(m) and t > m:
            return f"the tile {list(tensor.shape)} does not fit the memref {list(memref.shape)} (dimension {dim})"
    return None


def kind_of(attr: ir.Attribute) -> str:
    """`#ttg.blocked` for a `#ttg.blocked<...>` attribute."""
    return "#" + attribute_kind(attr)
