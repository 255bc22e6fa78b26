"""Triton's layout inference for its ops that carry a layout, as rules `ll-verify` checks.

Triton infers the result encoding of these ops from their operands and refuses a file whose
written encoding differs (`'tt.trans' op inferred type(s) ... are incompatible with return
type(s)`); an edited TTGIR that breaks one is refused here too, with the rule named:

    tt.trans        the result layout is the source layout with its dimensions in `order`
                    (inferTransOpEncoding; layouts compared as linear layouts, as Triton does)
    tt.expand_dims  the source is `#ttg.slice<{dim = axis, parent = P}>` and the result is laid
                    out as P (inferExpandDimsOpEncoding)
    tt.reduce       each result is laid out as `#ttg.slice<{dim = axis, parent = source}>`
                    (inferReduceOpEncoding)
    tt.broadcast    the result's encoding lays out the source shape as the source's does (the
                    corpus has broadcasts between different #ttg.blocked that agree there)
    tt.scan         each result has its operand's layout
    tt.dot          a and b are `#ttg.dot_op` with opIdx 0 and 1 whose parent is the result's
                    encoding, and c has the result's encoding
    ttg.memdesc_index   the result is the buffer without its leading dimension, with its
                    element type and encoding
    ttg.memdesc_trans   the result's shape is the buffer's in `order`, its encoding the buffer's
                    with its dimensions in `order` (as linear layouts)
    ttg.memdesc_reshape the result's encoding is the buffer's renumbered row-major (as linear
                    layouts), its element type the buffer's
    ttg.memdesc_subslice the slice lies in the buffer and keeps its element type and encoding
    tt.reshape      the result layout is the source layout with its elements renumbered row-major
                    into the result shape, as linear layouts; with allow_reorder, any result layout
                    that is not an expensive view (the same free-variable masks and registers per
                    thread: isExpensiveView) is kept as written (inferReshapeOpEncoding; the
                    efficient_layout hint is not checked)
    tt.join         the result layout is the operands' with a new minor dimension of size 2 held
                    by one register, in any register order (inferDefaultJoinOpEncoding)
    tt.split        the source's last dimension (size 2) is held by one register, and each result
                    is the source layout without it, in any register order (inferSplitOpEncoding)

Each rule reads only the op's types and attributes (the verifier checks an op once per
signature) and returns the broken rule's message, or None. An encoding that cannot be read is
left to the type checks, which report it.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from ..core.layout import LinearLayout
from ..encodings import DotOperandLayout, SliceLayout, to_linear_layout
from ..ir.bridge import from_attribute, layout_of, memdesc_of
from ..ir.text import is_memdesc
from .triton_attributes import attribute_problem

__all__ = ["TRITON_RULES", "triton_rule_problem"]


def _layout_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and t.encoding is not None


def _integers(attr: ir.Attribute) -> list[int]:
    if isinstance(attr, ir.IntegerAttr):
        return [attr.value]
    return [int(v) for v in attr]


def _permutation_problem(order: list[int], source: list[int], result: list[int], owner: str) -> str | None:
    """Why `order` is not a permutation of the `source` shape giving `result` (`owner`: "the source", ...)."""
    if sorted(order) != list(range(len(source))):
        return f"order {order} is not a permutation of {owner}'s {len(source)} dimensions"
    if result != [source[o] for o in order]:
        return f"result shape {result} is not {owner}'s shape {source} in order {order}"
    return None


def _permuted(layout: LinearLayout, order: list[int]) -> LinearLayout:
    """`layout` with output dimension i taken from its dimension order[i] (`tt.trans`)."""
    names = [name for name, _ in layout.out_dims]
    sizes = [size for _, size in layout.out_dims]
    bases = [(name, [tuple(basis[o] for o in order) for basis in vectors]) for name, vectors in layout.bases]
    return LinearLayout.from_bases(bases, names, [sizes[o] for o in order], require_surjective=False)


def _trans(op: ir.Operation) -> str | None:
    source, result = op.operands[0].type, op.results[0].type
    if not (_layout_tensor(source) and _layout_tensor(result)) or "order" not in op.attributes:
        return None
    order = _integers(op.attributes["order"])
    problem = _permutation_problem(order, list(source.shape), list(result.shape), "the source")
    if problem is not None:
        return problem
    if layout_of(result) != _permuted(layout_of(source), order):
        return (
            f"result layout is not the source layout with its dimensions in order {order} "
            "(Triton's inferTransOpEncoding)"
        )
    return None


def _expand_dims(op: ir.Operation) -> str | None:
    source, result = op.operands[0].type, op.results[0].type
    if not (_layout_tensor(source) and _layout_tensor(result)) or "axis" not in op.attributes:
        return None
    axis = _integers(op.attributes["axis"])[0]
    encoding = from_attribute(source.encoding)
    if not isinstance(encoding, SliceLayout) or encoding.dim != axis:
        return f"source encoding must be #ttg.slice with dim = {axis} (Triton's inferExpandDimsOpEncoding)"
    if to_linear_layout(encoding.parent, list(result.shape)) != layout_of(result):
        return "result layout is not the parent of the source's #ttg.slice (Triton's inferExpandDimsOpEncoding)"
    return None


def _reduce(op: ir.Operation) -> str | None:
    if "axis" not in op.attributes:
        return None
    axis = _integers(op.attributes["axis"])[0]
    for operand, result in zip(op.operands, op.results):
        source, reduced = operand.type, result.type
        if not (_layout_tensor(source) and _layout_tensor(reduced)):
            continue
        sliced = SliceLayout(axis, from_attribute(source.encoding))
        if to_linear_layout(sliced, list(reduced.shape)) != layout_of(reduced):
            return (
                f"result layout is not #ttg.slice<{{dim = {axis}, parent = <the source's encoding>}}> "
                "(Triton's inferReduceOpEncoding)"
            )
    return None


def _broadcast(op: ir.Operation) -> str | None:
    source, result = op.operands[0].type, op.results[0].type
    if not (_layout_tensor(source) and _layout_tensor(result)):
        return None
    if to_linear_layout(from_attribute(result.encoding), list(source.shape)) != layout_of(source):
        return (
            "the result's encoding does not lay out the source shape as the source's encoding does "
            "(Triton's broadcast: the same layout on the source shape)"
        )
    return None


def _scan(op: ir.Operation) -> str | None:
    for operand, result in zip(op.operands, op.results):
        both = _layout_tensor(operand.type) and _layout_tensor(result.type)
        if both and layout_of(operand.type) != layout_of(result.type):
            return "each result must have its operand's layout (Triton's scan: the same layout)"
    return None


def _dot(op: ir.Operation) -> str | None:
    if len(op.operands) < 3 or not all(_layout_tensor(v.type) for v in (*op.operands[:3], op.results[0])):
        return None
    result = op.results[0].type
    if op.operands[2].type.encoding != result.encoding:
        return "the accumulator c must have the result's encoding"
    parent = from_attribute(result.encoding)
    for index, name in ((0, "a"), (1, "b")):
        encoding = from_attribute(op.operands[index].type.encoding)
        if not isinstance(encoding, DotOperandLayout):
            continue  # operands from shared memory (warp-group dots) or FMA dots of another kind
        if encoding.operand_index != index:
            return f"operand {name} must be a #ttg.dot_op with opIdx = {index}"
        if encoding.parent != parent:
            return f"the parent of operand {name}'s #ttg.dot_op must be the result's encoding"
    return None


def _memdesc_index(op: ir.Operation) -> str | None:
    if not op.operands or not op.results or not (is_memdesc(op.operands[0].type) and is_memdesc(op.results[0].type)):
        return None
    source, result = memdesc_of(op.operands[0].type), memdesc_of(op.results[0].type)
    if list(result.shape) != list(source.shape[1:]):
        return (
            f"result shape {list(result.shape)} must be the buffer's shape {list(source.shape)} "
            "without its leading dimension"
        )
    if result.element_type != source.element_type or result.encoding != source.encoding:
        return "result must keep the buffer's element type and encoding"
    return None


def _memdesc_trans(op: ir.Operation) -> str | None:
    if "order" not in op.attributes or not (is_memdesc(op.operands[0].type) and is_memdesc(op.results[0].type)):
        return None
    source, result = memdesc_of(op.operands[0].type), memdesc_of(op.results[0].type)
    order = _integers(op.attributes["order"])
    problem = _permutation_problem(order, list(source.shape), list(result.shape), "the buffer")
    if problem is not None:
        return problem
    if _shared_layout(result) != _permuted(_shared_layout(source), order):
        return (
            f"result encoding is not the buffer's with its dimensions in order {order} "
            "(Triton's inferTransOpEncoding, compared as linear layouts)"
        )
    return None


def _shared_layout(memdesc) -> LinearLayout:
    return to_linear_layout(from_attribute(memdesc.encoding), list(memdesc.shape))


def _memdescs(op: ir.Operation):
    if not op.operands or not op.results or not (is_memdesc(op.operands[0].type) and is_memdesc(op.results[0].type)):
        return None
    return memdesc_of(op.operands[0].type), memdesc_of(op.results[0].type)


def _memdesc_reshape(op: ir.Operation) -> str | None:
    pair = _memdescs(op)
    if pair is None:
        return None
    source, result = pair
    if result.element_type != source.element_type:
        return "result must keep the buffer's element type"
    if _shared_layout(result) != _row_major_reshape(_shared_layout(source), list(result.shape)):
        return (
            "result encoding is not the buffer's renumbered row-major into the result shape "
            "(Triton's inferReshapeOpEncoding, compared as linear layouts)"
        )
    return None


def _memdesc_subslice(op: ir.Operation) -> str | None:
    pair = _memdescs(op)
    if pair is None or "offsets" not in op.attributes:
        return None
    source, result = pair
    offsets = _integers(op.attributes["offsets"])
    if len(offsets) != len(source.shape) or len(result.shape) != len(source.shape):
        return f"offsets {offsets} and the result must have the buffer's rank {len(source.shape)}"
    if any(o < 0 or o + r > s for o, r, s in zip(offsets, result.shape, source.shape)):
        return f"the slice at offsets {offsets} of shape {list(result.shape)} leaves the buffer {list(source.shape)}"
    if result.element_type != source.element_type or result.encoding != source.encoding:
        return "result must keep the buffer's element type and encoding (Triton's memdesc_subslice)"
    return None


def _row_major_reshape(layout: LinearLayout, shape: list[int]) -> LinearLayout:
    """`layout` with its output renumbered row-major into `shape` (dimensions `dim0`...): the
    flattened index keeps its value, the last dimension the fastest (Triton's reshapeLayout)."""
    names = [name for name, _ in layout.out_dims]
    flat = layout.transpose_outs(list(reversed(names)))
    new = [(f"dim{i}", size) for i, size in enumerate(shape)]
    return flat.reshape_outs(list(reversed(new))).transpose_outs([name for name, _ in new])


def _is_expensive_view(source: LinearLayout, result: LinearLayout) -> bool:
    """Whether a view from `source` to `result` moves data between threads or registers
    (Triton's isExpensiveView): their free-variable masks differ, or their numbers of
    registers (elements per thread) differ.

    Requires: both layouts of one number of elements, with the same input dimensions.
    Postcondition: False for two layouts that are each other's row-major reshape.
    Example: a 256x2 blocked [2, 2] and a 512 blocked [1] (both 4 registers, no broadcast): False.
    """
    same_free_variables = source.get_free_variable_masks() == result.get_free_variable_masks()
    same_registers = source.get_in_dim_size("register") == result.get_in_dim_size("register")
    return not (same_free_variables and same_registers)


def _reshape(op: ir.Operation) -> str | None:
    """Triton's ReshapeOp::verify: with `allow_reorder`, the written encoding is kept whenever the
    view is not expensive; otherwise (and without it) the result must equal, as linear layouts,
    the source layout renumbered row-major (`efficient_layout` is only a hint: not checked)."""
    source, result = op.operands[0].type, op.results[0].type
    if not (_layout_tensor(source) and _layout_tensor(result)):
        return None
    source_layout, result_layout = layout_of(source), layout_of(result)
    if "allow_reorder" in op.attributes and not _is_expensive_view(source_layout, result_layout):
        return None
    if result_layout != _row_major_reshape(source_layout, list(result.shape)):
        if "allow_reorder" in op.attributes:
            return (
                "allow_reorder: the result layout moves elements between threads or changes their number "
                "per thread, and is not the source layout renumbered row-major (Triton's inferReshapeOpEncoding)"
            )
        return (
            "result layout is not the source layout renumbered row-major into the result shape "
            "(Triton's inferReshapeOpEncoding)"
        )
    return None


def _with_minor_register_dim(layout: LinearLayout) -> LinearLayout:
    """`layout` with a new last output dimension of size 2, held by a new first register basis."""
    rank = len(layout.out_dims)
    bases = []
    for name, vectors in layout.bases:
        widened = [tuple(basis) + (0,) for basis in vectors]
        if name == "register":
            widened = [tuple([0] * rank + [1])] + widened
        bases.append((name, widened))
    if "register" not in [name for name, _ in layout.bases]:
        bases.insert(0, ("register", [tuple([0] * rank + [1])]))
    names = [name for name, _ in layout.out_dims] + [f"dim{rank}"]
    sizes = [size for _, size in layout.out_dims] + [2]
    return LinearLayout.from_bases(bases, names, sizes, require_surjective=False)


def _same_up_to_register_order(first: LinearLayout, second: LinearLayout) -> bool:
    """Whether the layouts differ at most in the order of their register bases (Triton accepts a
    join whose result numbers its registers in another order)."""
    if first.out_dims != second.out_dims:
        return False
    left, right = dict(first.bases), dict(second.bases)
    if set(left) != set(right):
        return False
    return all(
        sorted(left[name]) == sorted(right[name]) if name == "register" else left[name] == right[name] for name in left
    )


def _join(op: ir.Operation) -> str | None:
    source, result = op.operands[0].type, op.results[0].type
    if not (_layout_tensor(source) and _layout_tensor(result)):
        return None
    if not _same_up_to_register_order(layout_of(result), _with_minor_register_dim(layout_of(source))):
        return (
            "result layout is not the operands' layout with a new minor dimension held by one register "
            "(Triton's inferDefaultJoinOpEncoding)"
        )
    return None


def _split(op: ir.Operation) -> str | None:
    source = op.operands[0].type
    if not _layout_tensor(source) or not all(_layout_tensor(r.type) for r in op.results):
        return None
    for result in op.results:
        if not _same_up_to_register_order(_with_minor_register_dim(layout_of(result.type)), layout_of(source)):
            return (
                "the source's last dimension must be held by one register and each result be the "
                "source layout without it (Triton's inferSplitOpEncoding)"
            )
    return None


TRITON_RULES: dict[str, Callable[[ir.Operation], str | None]] = {
    "tt.trans": _trans,
    "tt.expand_dims": _expand_dims,
    "tt.reduce": _reduce,
    "tt.broadcast": _broadcast,
    "tt.scan": _scan,
    "tt.dot": _dot,
    "ttg.memdesc_index": _memdesc_index,
    "ttg.memdesc_trans": _memdesc_trans,
    "ttg.memdesc_reshape": _memdesc_reshape,
    "ttg.memdesc_subslice": _memdesc_subslice,
    "tt.reshape": _reshape,
    "tt.join": _join,
    "tt.split": _split,
}


def triton_rule_problem(op: ir.Operation) -> str | None:
    """The broken layout-inference rule of Triton op `op` (None: none broken, or no rule), after
    the attributes Triton requires of it (`triton_attributes`). An encoding that cannot be read
    is not this rule's to report: the type checks report it."""
    problem = attribute_problem(op)
    if problem:
        return problem
    rule = TRITON_RULES.get(op.name)
    if rule is None:
        return None
    try:
        return rule(op)
    except (TypeError, ValueError):
        return None
