"""The rules IRDL cannot express, checked in Python (run by the `ll-verify` pass).

`verify(op)` returns `(location, message)` pairs, one per broken rule; each message names the
attribute or op and the rule. Types are checked once per distinct (type, launch facts) pair, so
the cost grows with the number of ops, not with the size of their encodings.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..core.layout import LinearLayout
from ._dialects import context_state
from .bridge import from_attribute, layout_of, memdesc_of, type_pointer

__all__ = ["LaunchFacts", "verify"]

_UNCHECKED = object()
_FACT_ATTRIBUTES = {"ttg.num-warps": "num_warps", "ttg.threads-per-warp": "threads_per_warp",
                    "ttg.num-ctas": "num_ctas"}


@dataclass(frozen=True)
class LaunchFacts:
    """Kernel launch sizes, from the nearest enclosing `"ttg.num-warps"`-style attributes."""

    num_warps: int | None = None
    threads_per_warp: int | None = None
    num_ctas: int | None = None

    def updated_by(self, op: ir.Operation) -> LaunchFacts:
        changes = {}
        for name, field in _FACT_ATTRIBUTES.items():
            if name in op.attributes:
                value = op.attributes[name]
                if isinstance(value, ir.IntegerAttr):
                    changes[field] = value.value
        return LaunchFacts(**{**self.__dict__, **changes}) if changes else self

    def expected(self) -> dict[str, int]:
        """Sizes of the hardware in-dims (Triton's defaults: 32 threads, 1 CTA) once the warp
        count is known; nothing otherwise, because a layout alone does not fix the launch."""
        if self.num_warps is None:
            return {}
        return {"lane": self.threads_per_warp or 32, "warp": self.num_warps, "block": self.num_ctas or 1}


def _kind(attr: ir.Attribute) -> str:
    text = str(attr)
    end = text.find("<")
    return text[:end if end >= 0 else len(text)]


def _is_layout_attribute(attr: ir.Attribute) -> bool:
    kind = _kind(attr)
    return kind == "#ll.layout" or (kind.startswith("#ttg.") and kind != "#ttg.shared_memory")


def _shape(t: ir.Type) -> list[int]:
    return list(t.shape)


def _describe(shape, element_type) -> str:
    return f"{list(shape)} x {element_type}"


class _Verifier:
    def __init__(self, context: ir.Context, check_launch: bool) -> None:
        self.check_launch = check_launch
        self.errors: list[tuple[ir.Location, str]] = []
        # (type storage pointer, facts) -> message or None: each distinct type is checked once
        # per context, like the attribute cache, which shares these hit/miss counters.
        self.state = context_state(context)
        self.type_results: dict[tuple[int, LaunchFacts], str | None] = self.state.verified_types

    def error(self, location: ir.Location, message: str) -> None:
        self.errors.append((location, message))

    # ---------------------------------------------------------------- types

    def check_type(self, t: ir.Type, facts: LaunchFacts, location: ir.Location) -> None:
        if isinstance(t, ir.ShapedType) and not isinstance(t, ir.RankedTensorType):
            return  # memrefs and unranked tensors carry no layout
        key = (type_pointer(t), facts)
        message = self.type_results.get(key, _UNCHECKED)
        if message is _UNCHECKED:
            self.state.misses += 1
            message = self.type_results[key] = self._type_problem(t, facts)
        else:
            self.state.hits += 1
        if message:
            self.error(location, message)

    def _type_problem(self, t: ir.Type, facts: LaunchFacts) -> str | None:
        if isinstance(t, ir.RankedTensorType):
            if t.encoding is None or not _is_layout_attribute(t.encoding):
                return None
            return self._tensor_problem(t, facts)
        if not str(t).startswith("!ttg.memdesc<"):
            return None
        try:
            memdesc = memdesc_of(t)
        except (TypeError, ValueError) as error:
            return f"invalid {t}: {error}"
        kind = _kind(memdesc.encoding)
        try:
            encoding = from_attribute(memdesc.encoding)
        except TypeError:
            return f"!ttg.memdesc needs a shared-memory encoding, got {memdesc.encoding}"
        except ValueError as error:
            return _invalid(kind, error)
        if not _is_shared(encoding) and not _is_shared_ll_layout(encoding):
            return f"!ttg.memdesc needs a shared-memory encoding, got the distributed {kind}"
        return self._shape_problem(encoding, kind, memdesc.shape, f"!ttg.memdesc of shape {list(memdesc.shape)}")

    def _tensor_problem(self, t: ir.RankedTensorType, facts: LaunchFacts) -> str | None:
        kind = _kind(t.encoding)
        try:
            encoding = from_attribute(t.encoding)
        except ValueError as error:
            return _invalid(kind, error)
        if _is_shared(encoding):
            return f"a tensor needs a distributed encoding, got the shared-memory {kind} on {t}"
        problem = self._shape_problem(encoding, kind, _shape(t), str(t))
        if problem:
            return problem
        layout = layout_of(t)
        for dim, expected in facts.expected().items():
            if layout.has_in_dim(dim) and layout.get_in_dim_size(dim) != expected:
                source = {"lane": "ttg.threads-per-warp", "warp": "ttg.num-warps", "block": "ttg.num-ctas"}[dim]
                return (f"{kind} spreads the tensor over {layout.get_in_dim_size(dim)} {dim}s, "
                        f"but the kernel has {source} = {expected}")
        return None

    def _shape_problem(self, encoding, kind: str, shape, what: str) -> str | None:
        if isinstance(encoding, LinearLayout):
            sizes = [size for _, size in encoding.out_dims]
            if sizes != list(shape):
                return f"#ll.layout does not cover {what}: its output dimension sizes are {sizes}"
            if not encoding.is_surjective():
                return (f"#ll.layout does not cover {what}: its bases reach only 2**{encoding.rank()} "
                        f"of the {encoding.get_total_out_dim_size()} elements")
            return None
        if encoding.rank != len(shape):
            return f"{kind} has rank {encoding.rank} but {what} has rank {len(shape)}"
        from ..encodings import to_linear_layout

        try:
            to_linear_layout(encoding, list(shape))
        except ValueError as error:
            return f"{kind} cannot lay out {what}: {error}"
        return None

    # ---------------------------------------------------------------- ops

    def check_op(self, op: ir.Operation, facts: LaunchFacts) -> None:
        location = op.location
        for result in op.results:
            self.check_type(result.type, facts, location)
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    self.check_type(argument.type, facts, location)
        rule = _OP_RULES.get(op.name)
        if rule is not None:
            message = rule(op)
            if message:
                self.error(location, f"'{op.name}' op {message}")

    def walk(self, op: ir.Operation, facts: LaunchFacts) -> None:
        if self.check_launch:
            facts = facts.updated_by(op)
        self.check_op(op, facts)
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    self.walk(child, facts)


def _invalid(kind: str, error: ValueError) -> str:
    message = str(error)
    return message if message.startswith("invalid ") else f"invalid encoding {kind}: {message}"


def _is_shared(encoding) -> bool:
    from ..encodings import SharedLayout

    return isinstance(encoding, SharedLayout)


def _is_shared_ll_layout(layout) -> bool:
    return isinstance(layout, LinearLayout) and layout.has_in_dim("offset")


def _same_shape_and_element(a_shape, a_element, b_shape, b_element, a_name, b_name) -> str | None:
    if list(a_shape) != list(b_shape) or a_element != b_element:
        return (f"must keep shape and element type: {a_name} is {_describe(a_shape, a_element)} "
                f"but {b_name} is {_describe(b_shape, b_element)}")
    return None


def _convert_layout(op) -> str | None:
    src, result = op.operands[0].type, op.results[0].type
    return _same_shape_and_element(_shape(src), src.element_type, _shape(result), result.element_type,
                                   "the source", "the result")


def _memdesc_or_problem(t):
    try:
        return memdesc_of(t), None
    except (TypeError, ValueError) as error:
        return None, str(error)


def _local_alloc(op) -> str | None:
    if len(op.operands) == 0:
        return None
    src = op.operands[0].type
    memdesc, problem = _memdesc_or_problem(op.results[0].type)
    if problem:
        return problem
    return _same_shape_and_element(_shape(src), src.element_type, memdesc.shape, memdesc.element_type,
                                   "the source", "the buffer")


def _local_load(op) -> str | None:
    result = op.results[0].type
    memdesc, problem = _memdesc_or_problem(op.operands[0].type)
    if problem:
        return problem
    return _same_shape_and_element(memdesc.shape, memdesc.element_type, _shape(result), result.element_type,
                                   "the buffer", "the result")


def _local_store(op) -> str | None:
    src = op.operands[0].type
    memdesc, problem = _memdesc_or_problem(op.operands[1].type)
    if problem:
        return problem
    if not memdesc.mutable:
        return "cannot store into an immutable buffer (its !ttg.memdesc is \"immutable\")"
    return _same_shape_and_element(_shape(src), src.element_type, memdesc.shape, memdesc.element_type,
                                   "the value", "the buffer")


def _apply(op) -> str | None:
    try:
        layout = from_attribute(op.attributes["layout"])
    except (TypeError, ValueError) as error:
        return f"has an invalid layout: {error}"
    if not isinstance(layout, LinearLayout):
        return "needs an #ll.layout"
    if len(op.operands) != layout.num_in_dims:
        return (f"takes one index per input dimension {list(layout.get_in_dim_names())}, "
                f"got {len(op.operands)}")
    if len(op.results) != layout.num_out_dims:
        return (f"returns one coordinate per output dimension {list(layout.get_out_dim_names())}, "
                f"got {len(op.results)}")
    return None


def _tile_problem(tensor: ir.Type, memref: ir.Type, offsets: int) -> str | None:
    if not isinstance(tensor, ir.RankedTensorType) or tensor.encoding is None \
            or not _is_layout_attribute(tensor.encoding):
        return f"needs a tensor with a layout encoding, got {tensor}"
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


def _load(op) -> str | None:
    return _tile_problem(op.results[0].type, op.operands[0].type, len(op.operands) - 1)


def _store(op) -> str | None:
    return _tile_problem(op.operands[0].type, op.operands[1].type, len(op.operands) - 2)


_OP_RULES = {
    "ttg.convert_layout": _convert_layout,
    "ttg.local_alloc": _local_alloc,
    "ttg.local_load": _local_load,
    "ttg.local_store": _local_store,
    "ll.apply": _apply,
    "ll.load": _load,
    "ll.store": _store,
}


def verify(op: ir.Operation | ir.Module, *, check_launch: bool = True) -> list[tuple[ir.Location, str]]:
    """Every broken rule in `op` and its nested ops, as (location, message) pairs. With
    `check_launch`, distributed layouts must match the enclosing ttg.num-warps and friends."""
    if isinstance(op, ir.Module):
        op = op.operation
    facts = LaunchFacts()
    if check_launch:
        # A nested anchor (func.func) still sees the launch facts of its enclosing module.
        ancestors = []
        parent = op.parent
        while parent is not None:
            ancestors.append(parent)
            parent = parent.parent
        for ancestor in reversed(ancestors):
            facts = facts.updated_by(ancestor)
    verifier = _Verifier(op.context, check_launch)
    verifier.walk(op, facts)
    return verifier.errors
