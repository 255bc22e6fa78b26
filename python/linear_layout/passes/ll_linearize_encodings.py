"""`ll-linearize-encodings`: rewrite every layout encoding in the module's types into its
canonical linear form.

- A tensor with a distributed `#ttg.*` encoding (blocked, slice, nvidia_mma, dot_op, amd_mfma,
  amd_wmma, linear) gets the `#ttg.linear` encoding of `to_linear_layout(encoding, shape)`.
- A `!ttg.memdesc` with a shared encoding (swizzled_shared, nvmma_shared, shared_linear) gets
  the `#ttg.shared_linear` of its layout, keeping the buffer's shape, element type and
  mutability. `padded_shared` is not linear and is kept as it is.
- `#ll.layout` encodings are already linear and are kept.

The rewritten types mean exactly the same layouts (the pass checks this for every type it
changes). It rewrites op results, block arguments, and function types (`func.func`,
`gpu.func`). Every type is converted before the first one is changed, so a failure leaves the
module unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..core.layout import LinearLayout
from ..ir.bridge import from_attribute, layout_of, memdesc_of, to_attribute
from ..ir.ttg import memdesc_type
from . import Pass


class _Unsupported(ValueError):
    pass


def linear_encoding(layout: LinearLayout, shape) -> object:
    """The `#ttg.linear` encoding dataclass of a distributed layout."""
    from ..encodings import DistributedLinearLayout

    bases = dict(layout.bases)
    unknown = set(bases) - {"register", "lane", "warp", "block"}
    if unknown:
        raise _Unsupported(f"input dimensions {sorted(unknown)} are not distributed hardware dimensions")
    return DistributedLinearLayout(bases.get("register", ()), bases.get("lane", ()), bases.get("warp", ()),
                                   bases.get("block", ()), tuple(shape))


class _Converter:
    def __init__(self) -> None:
        self.cache: dict[str, ir.Type | None] = {}

    def convert(self, t: ir.Type) -> ir.Type | None:
        """The linearized type, or None when `t` is already canonical or carries no encoding."""
        key = str(t)
        if key not in self.cache:
            self.cache[key] = self._convert(t)
        return self.cache[key]

    def _convert(self, t: ir.Type) -> ir.Type | None:
        if isinstance(t, ir.RankedTensorType):
            encoding = t.encoding
            if encoding is None or not str(encoding).startswith("#ttg."):
                return None
            try:
                from_attribute(encoding)
                layout = layout_of(t)
            except (TypeError, ValueError) as error:
                raise _Unsupported(f"cannot linearize {t}: {error}") from None
            new_encoding = to_attribute(linear_encoding(layout, t.shape), t.context)
            if new_encoding == encoding:
                return None
            new_type = ir.RankedTensorType.get(list(t.shape), t.element_type, new_encoding)
            if layout_of(new_type) != layout:
                raise _Unsupported(f"internal error: the linear form of {t} changes its layout")
            return new_type
        if isinstance(t, ir.FunctionType):
            inputs = [self.convert(x) or x for x in t.inputs]
            results = [self.convert(x) or x for x in t.results]
            if inputs == list(t.inputs) and results == list(t.results):
                return None
            return ir.FunctionType.get(inputs, results, t.context)
        if str(t).startswith("!ttg.memdesc<"):
            from ..encodings import PaddedSharedLayout, SharedLinearLayout, to_linear_layout

            memdesc = memdesc_of(t)
            try:
                encoding = from_attribute(memdesc.encoding)
            except (TypeError, ValueError) as error:
                raise _Unsupported(f"cannot linearize {t}: {error}") from None
            if isinstance(encoding, PaddedSharedLayout) or isinstance(encoding, LinearLayout):
                return None
            try:
                layout = to_linear_layout(encoding, list(memdesc.shape))
            except ValueError as error:
                raise _Unsupported(f"cannot linearize {t}: {error}") from None
            bases = dict(layout.bases)
            alignment = getattr(encoding, "alignment", 16)
            linear = SharedLinearLayout(bases.get("offset", ()), bases.get("block", ()), alignment)
            new_encoding = to_attribute(linear, t.context)
            if new_encoding == memdesc.encoding:
                return None
            new_type = memdesc_type(memdesc.shape, memdesc.element_type, new_encoding, mutable=memdesc.mutable,
                                    context=t.context)
            if to_linear_layout(linear, list(memdesc.shape)) != layout:
                raise _Unsupported(f"internal error: the linear form of {t} changes its layout")
            return new_type
        return None


def _collect(op: ir.Operation, converter: _Converter, changes: list, errors: list) -> None:
    def visit(t, apply, location):
        try:
            new = converter.convert(t)
        except _Unsupported as error:
            errors.append((location, str(error)))
            return
        if new is not None:
            changes.append((apply, new))

    for name in ("function_type",):
        if name in op.attributes and isinstance(op.attributes[name], ir.TypeAttr):
            def set_attr(new, op=op, name=name):
                op.attributes[name] = ir.TypeAttr.get(new)
            visit(op.attributes[name].value, set_attr, op.location)
    for attr_name in list(op.attributes):
        attr = op.attributes[attr_name]
        if isinstance(attr, ir.DenseElementsAttr) and isinstance(attr.type, ir.RankedTensorType):
            def set_dense(new, op=op, name=attr_name, attr=attr):
                # Dense attributes carry the tensor type; re-read the same data with the new one.
                text, suffix = str(attr), " : " + str(attr.type)
                head = text[:-len(suffix)] if text.endswith(suffix) else text.rpartition(" : ")[0]
                op.attributes[name] = ir.Attribute.parse(f"{head} : {new}")
            visit(attr.type, set_dense, op.location)
    for result in op.results:
        visit(result.type, result.set_type, op.location)
    for region in op.regions:
        for block in region.blocks:
            for argument in block.arguments:
                visit(argument.type, argument.set_type, op.location)
            for child in block.operations:
                _collect(child.operation, converter, changes, errors)


@dataclasses.dataclass
class LLLinearizeEncodings(Pass):
    argument = "ll-linearize-encodings"
    summary = "Rewrite every layout encoding into its canonical #ttg.linear / #ttg.shared_linear form"

    def run(self, op: ir.Operation) -> bool:
        with op.context, ir.Location.unknown():
            changes, errors = [], []
            _collect(op, _Converter(), changes, errors)
            for location, message in errors:
                location.emit_error(message)
            if errors:
                return False
            for apply, new in changes:
                apply(new)
            return True


PASS = LLLinearizeEncodings
