"""`ll-linearize-encodings`: rewrite every layout encoding in the module's types into its
canonical linear form.

- A tensor with a distributed `#ttg.*` encoding (blocked, slice, nvidia_mma, dot_op, amd_mfma,
  amd_wmma, linear, generic_linear) gets the `#ttg.linear` encoding of
  `to_linear_layout(encoding, shape)`, or Triton 3.9's `#ttg.generic_linear` when that layout is
  not a permutation matrix once its broadcast bases are dropped (which `#ttg.linear` requires).
- A `!ttg.memdesc` with a shared encoding (swizzled_shared, nvmma_shared, shared_linear) gets
  the `#ttg.shared_linear` of its layout, keeping the buffer's shape, element type and
  mutability. `padded_shared` is not linear and is kept as it is.
- `#ll.layout` encodings are already linear and are kept.
- The encodings Triton 3.9 requires as they are written are kept, on every tensor that has
  them (`kept_encodings`): the operand and the result of `tt.expand_dims`
  (`inferExpandDimsOpEncoding` demands a `SliceEncodingAttr` operand, "ExpandDimsOp operand
  encoding must be SliceEncodingAttr", and infers the result as exactly its parent), of
  `tt.broadcast` (`SameOperandsAndResultEncoding`: one attribute for two shapes, which no
  `#ttg.linear` is), and of `tt.dot` (`#ttg.dot_op` operands whose parent is the result's
  encoding), with the parent of every kept slice or dot operand. Triton parses and compiles the
  output (`tests/test_linearize_corpus.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

from mlir import ir

from ..core.hardware import HW_DIMS
from ..core.layout import LinearLayout
from ..encodings import DistributedLinearLayout, PaddedSharedLayout, SharedLinearLayout, to_linear_layout
from ..ir.bridge import (
    attribute_kind,
    from_attribute,
    layout_of,
    memdesc_of,
    memdesc_parameters,
    per_type,
    to_attribute,
)
from ..ir.text import is_memdesc, retyped_dense
from ..ir.walk import walk
from ..ttgir.foreign import foreign_problems, materialize
from . import Pass


class _Unsupported(ValueError):
    pass


def linear_encoding(layout: LinearLayout, shape) -> object:
    """The `#ttg.linear` encoding dataclass of a distributed layout."""
    bases = dict(layout.bases)
    unknown = set(bases) - set(HW_DIMS)
    if unknown:
        raise _Unsupported(f"input dimensions {sorted(unknown)} are not distributed hardware dimensions")
    return DistributedLinearLayout(
        bases.get("register", ()), bases.get("lane", ()), bases.get("warp", ()), bases.get("block", ()), tuple(shape)
    )


#: The ops whose operand and result encodings Triton 3.9 requires as they are written.
KEPT_OPS = ("tt.expand_dims", "tt.broadcast", "tt.dot")


class _Converter:
    def __init__(self, kept: frozenset[ir.Attribute] = frozenset()) -> None:
        self.cache: dict[ir.Type, ir.Type | None] = {}
        self.kept = kept  # encodings kept as they are

    def convert(self, t: ir.Type) -> ir.Type | None:
        """The linearized type, or None when `t` is already canonical or carries no encoding."""
        if t not in self.cache:  # types hash and compare by their uniqued storage: no printing
            self.cache[t] = self._convert(t)
        return self.cache[t]

    def _convert(self, t: ir.Type) -> ir.Type | None:
        if isinstance(t, ir.RankedTensorType):
            return self._tensor(t)
        if isinstance(t, ir.FunctionType):
            inputs = [self.convert(x) or x for x in t.inputs]
            results = [self.convert(x) or x for x in t.results]
            if inputs == list(t.inputs) and results == list(t.results):
                return None
            return ir.FunctionType.get(inputs, results, t.context)
        if is_memdesc(t):
            return self._memdesc(t)
        return None

    def _tensor(self, t: ir.RankedTensorType) -> ir.Type | None:
        if t.encoding is not None and t.encoding in self.kept:  # an encoding Triton requires as written
            return None
        text = per_type(_linear_tensor_encoding, t)  # the pass's check and its rewrite both ask
        if text is None:
            return None
        return ir.RankedTensorType.get(list(t.shape), t.element_type, ir.Attribute.parse(text, t.context))

    def _memdesc(self, t: ir.Type) -> ir.Type | None:
        text = per_type(_linear_memdesc, t)
        return None if text is None else ir.Type.parse(text, t.context)


def _linear_tensor_encoding(t: ir.RankedTensorType) -> str | None:
    """The text of the linear encoding of tensor type `t`, or None when `t` is already canonical
    or carries no `#ttg` encoding; _Unsupported when it has no linear form."""
    encoding = t.encoding
    if encoding is None or not attribute_kind(encoding).startswith("ttg."):
        return None
    try:
        from_attribute(encoding)
        layout = layout_of(t)
    except (TypeError, ValueError) as error:
        raise _Unsupported(f"cannot linearize {t}: {error}") from None
    try:
        linear = linear_encoding(layout, t.shape)
    except ValueError as error:  # a swizzled register/lane/block basis: no #ttg.(generic_)linear holds it
        raise _Unsupported(f"cannot linearize {t}: {error}") from None
    new_encoding = to_attribute(linear, t.context)
    if new_encoding == encoding:
        return None
    new_type = ir.RankedTensorType.get(list(t.shape), t.element_type, new_encoding)
    if layout_of(new_type) != layout:
        raise _Unsupported(f"internal error: the linear form of {t} changes its layout")
    return str(new_encoding)


def _linear_memdesc(t: ir.Type) -> str | None:
    """The text of memdesc type `t` with its linear shared encoding, or None when `t` keeps its
    encoding; _Unsupported when it has no linear form."""
    try:
        memdesc = memdesc_of(t)
        encoding = from_attribute(memdesc.encoding)
        if isinstance(encoding, PaddedSharedLayout | LinearLayout):
            return None
        tile = buffer_tile(t, encoding)
        layout = to_linear_layout(encoding, tile)
    except (TypeError, ValueError) as error:
        raise _Unsupported(f"cannot linearize {t}: {error}") from None
    bases = dict(layout.bases)
    if not bases.get("offset"):  # one element: no offset bases, nothing to linearize
        return None
    linear = SharedLinearLayout(bases.get("offset", ()), bases.get("block", ()), getattr(encoding, "alignment", 16))
    new_encoding = to_attribute(linear, t.context)
    if new_encoding == memdesc.encoding:
        return None
    if to_linear_layout(linear, tile) != layout:
        raise _Unsupported(f"internal error: the linear form of {t} changes its layout")
    params = memdesc_parameters(t)  # the encoding is the type's third parameter: shape and element precede it
    return str(t).replace(params.encoding, str(new_encoding), 1)


def buffer_tile(t: ir.Type, encoding: object) -> list[int]:
    """The shape an encoding lays out in a memdesc: Triton's `toLinearLayout(MemDescType)`, the
    trailing dims of the allocation shape, as many as the encoding has.

    A multi-buffered allocation (`!ttg.memdesc<2x32x32xf16, #shared>` with a rank-2 encoding) has
    leading buffer dims that `ttg.memdesc_index` selects; a subslice view
    (`!ttg.memdesc<32x16xf16, #shared, #smem, mutable, 32x32>`) keeps its buffer's allocation
    shape. Each of the family thus gets the same linear encoding, as `ttg.memdesc_index` and
    `ttg.memdesc_subslice` require. Example: `2x32x32` under `#ttg.swizzled_shared` -> [32, 32].
    """
    params = memdesc_parameters(t)
    rank = getattr(encoding, "rank", len(params.allocation))
    return list(params.allocation[len(params.allocation) - rank :])


def _parent(encoding: ir.Attribute) -> ir.Attribute | None:
    """The `parent` of a `#ttg.slice` or `#ttg.dot_op` encoding (None: another family)."""
    if attribute_kind(encoding) not in ("ttg.slice", "ttg.dot_op"):
        return None
    try:
        return to_attribute(from_attribute(encoding).parent, encoding.context)
    except (TypeError, ValueError):  # an unreadable encoding: the type checks report it
        return None


def kept_encodings(op: ir.Operation) -> frozenset[ir.Attribute]:
    """The tensor encodings under ``op`` that :data:`KEPT_OPS` read or produce, with the parents
    of the slices and dot operands among them (transitively)."""
    found: set[ir.Attribute] = set()

    def visit(child: ir.Operation) -> ir.WalkResult:
        if child.name in KEPT_OPS:
            for value in (*child.operands, *child.results):
                t = value.type
                if isinstance(t, ir.RankedTensorType) and t.encoding is not None:
                    found.add(t.encoding)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    pending = list(found)
    while pending:
        parent = _parent(pending.pop())
        if parent is not None and parent not in found:
            found.add(parent)
            pending.append(parent)
    return frozenset(found)


class _Changes:
    """Every type change of a module, collected before the first one is made."""

    def __init__(self, kept: frozenset[ir.Attribute] = frozenset()) -> None:
        self.converter = _Converter(kept)
        self.changes: list[tuple[Callable[[ir.Type], None], ir.Type]] = []
        self.errors: list[tuple[ir.Location, str]] = []

    def visit_type(self, t: ir.Type, apply: Callable[[ir.Type], None], location: ir.Location) -> None:
        try:
            new = self.converter.convert(t)
        except _Unsupported as error:
            if (str(location), str(error)) not in {(str(where), what) for where, what in self.errors}:
                self.errors.append((location, str(error)))  # once, though a function's type and argument share it
            return
        if new is not None:
            self.changes.append((apply, new))

    def visit_op(self, op: ir.Operation) -> ir.WalkResult:
        attributes = op.attributes
        if "function_type" in attributes and isinstance(attributes["function_type"], ir.TypeAttr):
            self.visit_type(attributes["function_type"].value, partial(_set_function_type, op), op.location)
        for name in list(attributes):
            attr = attributes[name]
            if isinstance(attr, ir.DenseElementsAttr) and isinstance(attr.type, ir.RankedTensorType):
                self.visit_type(attr.type, partial(_set_dense, op, name), op.location)
        for result in op.results:
            self.visit_type(result.type, result.set_type, op.location)
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    self.visit_type(argument.type, argument.set_type, op.location)
        return ir.WalkResult.ADVANCE


def _set_function_type(op: ir.Operation, new: ir.Type) -> None:
    op.attributes["function_type"] = ir.TypeAttr.get(new)


def _set_dense(op: ir.Operation, name: str, new: ir.Type) -> None:
    # Dense attributes carry the tensor type; re-read the same data with the new one.
    op.attributes[name] = retyped_dense(op.attributes[name], new)


def _collect(op: ir.Operation) -> _Changes:
    with op.context, ir.Location.unknown():
        changes = _Changes(kept_encodings(op))
        walk(op, changes.visit_op)
    return changes


@dataclasses.dataclass(frozen=True)
class LLLinearizeEncodings(Pass):
    argument = "ll-linearize-encodings"
    summary = "Rewrite every layout encoding into its canonical #ttg.linear / #ttg.shared_linear form"

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        return foreign_problems(op) or _collect(op).errors

    def apply(self, op: ir.Operation) -> None:
        materialize(op)  # the text of a foreign op names its types: it must be a real op first
        with op.context, ir.Location.unknown():
            for apply, new in _collect(op).changes:
                apply(new)


PASS = LLLinearizeEncodings
