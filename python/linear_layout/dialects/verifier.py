"""The rules IRDL cannot express, checked in Python (run by the `ll-verify` pass).

`verify(op)` walks `op` with `Operation.walk` and returns `(location, message)` pairs, one per
broken rule; each message names the attribute or op and the rule. Two kinds of rules:

- type rules: every layout encoding of a tensor or `!ttg.memdesc` type must lay out its shape
  (and match the launch: lanes, warps, CTAs of the nearest enclosing `"ttg.num-warps"`-style
  attributes). Each distinct (type, launch facts) pair is checked once per context, so the cost
  grows with the number of ops, not with the size of their encodings;
- op rules: the `verify_rules()` method of each op class (`linear_layout.dialects.ll`/`ttg`), and
  Triton's layout inference for the Triton ops that carry a layout (`triton_rules`).

An op without regions is checked once per signature (name, operand and result types, attributes,
launch facts) per run: a kernel of 100,000 ops in a few types costs one Python lookup per op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mlir import ir

from ..core.layout import LinearLayout
from ..core.targets import TargetError, target_chip
from ..encodings import ENCODING_NAMES, SharedLayout, parse_encoding, to_linear_layout
from ..encodings.base import launch_sizes
from ..ir._dialects import context_state
from ..ir.bridge import from_attribute, memdesc_of, type_pointer
from ..ir.text import attribute_kind, is_layout_kind, is_memdesc, memdesc_parameters
from ..ir.walk import walk
from ._base import LayoutOp
from .triton_regions import region_problem
from .triton_rules import triton_rule_problem
from .types import kind_of

__all__ = [
    "FACT_ATTRIBUTES",
    "LaunchFacts",
    "encoding_text_problem",
    "layout_launch_problem",
    "module_chip",
    "target_holder",
    "verify",
]

_UNCHECKED = object()
_ADVANCE = ir.WalkResult.ADVANCE
FACT_ATTRIBUTES = {
    "ttg.num-warps": "num_warps",
    "ttg.threads-per-warp": "threads_per_warp",
    "ttg.num-ctas": "num_ctas",
}
_FACT_SOURCE = {"lane": "ttg.threads-per-warp", "warp": "ttg.num-warps", "block": "ttg.num-ctas"}


@dataclass(frozen=True)
class LaunchFacts:
    """Kernel launch sizes, from the nearest enclosing `"ttg.num-warps"`-style attributes."""

    num_warps: int | None = None
    threads_per_warp: int | None = None
    num_ctas: int | None = None
    # The three sizes as a plain tuple, for signatures: a tuple of ints hashes in C, where the
    # dataclass's own hash is a Python call (about 0.4 µs on every op of a large module).
    key: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.num_warps, self.threads_per_warp, self.num_ctas))

    def updated_by(self, op: ir.Operation) -> LaunchFacts:
        changes = {}
        for name, fact in FACT_ATTRIBUTES.items():
            if name in op.attributes:
                value = op.attributes[name]
                if isinstance(value, ir.IntegerAttr):
                    changes[fact] = value.value
        return replace(self, **changes) if changes else self

    def expected(self) -> dict[str, int]:
        """Sizes of the hardware in-dims (Triton's defaults: 32 threads, 1 CTA) once the warp
        count is known; nothing otherwise, because a layout alone does not fix the launch."""
        if self.num_warps is None:
            return {}
        return {"lane": self.threads_per_warp or 32, "warp": self.num_warps, "block": self.num_ctas or 1}


#: The attribute naming the chip a TTGIR module was compiled for (``"cuda:80"``, ``"hip:gfx942"``).
TARGET_ATTRIBUTE = "ttg.target"


def target_holder(op: ir.Operation) -> ir.Operation | None:
    """``op`` or the nearest op around it with a ``ttg.target`` attribute (None: none)."""
    current: ir.Operation | None = op
    while current is not None:
        if TARGET_ATTRIBUTE in current.attributes:
            return current
        parent = current.parent
        current = parent.operation if parent is not None else None
    return None


def _chip_of_target(attr: ir.Attribute) -> str | None:
    return target_chip(ir.StringAttr(attr).value if isinstance(attr, ir.StringAttr) else str(attr))


def module_chip(op: ir.Operation) -> str | None:
    """The chip of the ``ttg.target`` around ``op`` (``"cuda:80"`` -> ``"sm_80"``,
    ``"hip:gfx942"`` -> ``"gfx942"``: ``core.targets.target_chip``), None without one.

    Requires: a target naming a known chip (the verifier's rule); a TargetError otherwise."""
    holder = target_holder(op)
    return None if holder is None else _chip_of_target(holder.attributes[TARGET_ATTRIBUTE])


def _target_problem(op: ir.Operation) -> str | None:
    """The rule on ``op``'s own ``ttg.target``: it names a known chip (an unknown one would be
    lowered and costed as some other chip's code)."""
    if TARGET_ATTRIBUTE not in op.attributes:
        return None
    try:
        _chip_of_target(op.attributes[TARGET_ATTRIBUTE])
    except TargetError as error:
        return str(error)
    return None


def _invalid(kind: str, error: ValueError) -> str:
    message = str(error)
    return message if message.startswith("invalid ") else f"invalid encoding {kind}: {message}"


def _is_shared(encoding) -> bool:
    return isinstance(encoding, SharedLayout) or (isinstance(encoding, LinearLayout) and encoding.has_in_dim("offset"))


def _shape_problem(
    encoding, kind: Callable[[], str], shape, what: Callable[[], str], lay_out: Callable = to_linear_layout
):
    """What keeps `encoding` from laying out `shape`, or else `lay_out(encoding, shape)` (the layout,
    or with `launch_sizes` only its launch sizes; an `#ll.layout` is its own layout); `kind()` and
    `what()` name the encoding and the type (printed only for a message: printing an attribute or
    a type costs a Python call per token)."""
    if isinstance(encoding, LinearLayout):
        sizes = [size for _, size in encoding.out_dims]
        if sizes != list(shape):
            return f"#ll.layout does not cover {what()}: its output dimension sizes are {sizes}"
        if not encoding.is_surjective():
            return (
                f"#ll.layout does not cover {what()}: its bases reach only 2**{encoding.rank()} "
                f"of the {encoding.get_total_out_dim_size()} elements"
            )
        return encoding
    if encoding.rank != len(shape):
        return f"{kind()} has rank {encoding.rank} but {what()} has rank {len(shape)}"
    try:
        return lay_out(encoding, list(shape))
    except ValueError as error:
        return f"{kind()} cannot lay out {what()}: {error}"


def layout_launch_problem(
    layout: LinearLayout | dict[str, int], kind: str | Callable[[], str], facts: LaunchFacts
) -> str | None:
    """Whether `layout` (of encoding `kind`, or `kind()`: named only for a message; or just its
    sizes per in-dim, `encodings.launch_sizes`) spreads over the lanes, warps and CTAs `facts` say."""
    for dim, expected in facts.expected().items():
        if isinstance(layout, dict):
            got = layout.get(dim, expected)
        else:
            got = layout.get_in_dim_size(dim) if layout.has_in_dim(dim) else expected
        if got != expected:
            return (
                f"{kind if isinstance(kind, str) else kind()} spreads the tensor over {got} {dim}s, "
                f"but the kernel has {_FACT_SOURCE[dim]} = {expected}"
            )
    return None


_ENCODING_KIND = re.compile(r"#ttg\.(\w+)<")


def encoding_text_problem(text: str, facts: LaunchFacts) -> str | None:
    """What is wrong with a `#ttg` layout encoding written on its own (a TTGIR alias definition):
    its fields (`encodings.parse_encoding`), then, for a distributed one, its lanes, warps and
    CTAs against `facts`. None for a sound encoding and for text that is no layout encoding.

    >>> encoding_text_problem("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [16], "
    ...                       "warpsPerCTA = [4], order = [0]}>", LaunchFacts(4, 32))
    '#ttg.blocked spreads the tensor over 16 lanes, but the kernel has ttg.threads-per-warp = 32'
    """
    match = _ENCODING_KIND.match(text)
    if match is None or f"#ttg.{match.group(1)}" not in ENCODING_NAMES:
        return None
    kind = f"#ttg.{match.group(1)}"
    try:
        encoding = parse_encoding(text)
        if isinstance(encoding, SharedLayout):
            return None
        layout = to_linear_layout(encoding, [1] * encoding.rank)
    except ValueError as error:
        return _invalid(kind, error)
    return layout_launch_problem(layout, kind, facts)


def _tensor_problem(t: ir.RankedTensorType, attr: ir.Attribute, facts: LaunchFacts) -> str | None:
    """What is wrong with tensor type `t`, whose encoding `attr` is a layout (None: nothing, or
    `attr` is no layout). The attribute is printed once, to decode it (`from_attribute`, cached
    per context); its kind is printed again only for a message."""
    try:
        encoding = from_attribute(attr)
    except TypeError:
        if is_layout_kind(attribute_kind(attr)):
            raise
        return None
    except ValueError as error:
        return _invalid(kind_of(attr), error)
    if isinstance(encoding, SharedLayout):
        return f"a tensor needs a distributed encoding, got the shared-memory {kind_of(attr)} on {t}"
    # The launch sizes only: a blocked layout gives them without being built (`launch_sizes`).
    found = _shape_problem(encoding, lambda: kind_of(attr), list(t.shape), lambda: str(t), launch_sizes)
    if isinstance(found, str):
        return found
    return layout_launch_problem(found, lambda: kind_of(attr), facts)


def _memdesc_problem(t: ir.Type) -> str | None:
    try:
        memdesc = memdesc_of(t)
    except (TypeError, ValueError) as error:
        return f"invalid {t}: {error}"
    kind = kind_of(memdesc.encoding)
    try:
        encoding = from_attribute(memdesc.encoding)
    except TypeError:
        return f"!ttg.memdesc needs a shared-memory encoding, got {memdesc.encoding}"
    except ValueError as error:
        return _invalid(kind, error)
    if not _is_shared(encoding):
        return f"!ttg.memdesc needs a shared-memory encoding, got the distributed {kind}"
    shape = list(memdesc_parameters(t).allocation)  # a subslice view is laid out as its buffer
    rank = len(encoding.out_dims) if isinstance(encoding, LinearLayout) else encoding.rank
    if 0 < rank < len(shape):
        shape = shape[len(shape) - rank :]  # Triton's leading buffer dimensions (multi-buffering)
    found = _shape_problem(encoding, lambda: kind, shape, lambda: f"!ttg.memdesc of shape {list(memdesc.shape)}")
    return found if isinstance(found, str) else None


def type_problem(t: ir.Type, facts: LaunchFacts) -> str | None:
    """What is wrong with the layout of type `t` under `facts` (None: nothing, or no layout)."""
    if isinstance(t, ir.RankedTensorType):
        attr = t.encoding
        return None if attr is None else _tensor_problem(t, attr, facts)
    if not isinstance(t, ir.ShapedType) and is_memdesc(t):
        return _memdesc_problem(t)
    return None


class _Verifier:
    """One run of `verify`: the type checks (cached per context), the op checks (cached per
    signature for the run) and the launch facts of the ops with regions.

    The launch facts of an op are its parent's, updated by its own attributes; ops with regions
    record theirs (`facts_of`). While every op with regions met so far has the same facts
    (`uniform`, the usual kernel: the facts sit on the module), an op's parent is one of them
    (the walk visits the root first, and parents before their children), so no op needs a
    lookup of its parent until an op with regions brings other facts (`mixed`)."""

    def __init__(self, context: ir.Context, check_launch: bool, root_facts: LaunchFacts) -> None:
        self.check_launch = check_launch
        self.root_facts = root_facts
        self.errors: list[tuple[ir.Location, str]] = []
        # (type storage pointer, facts.key) -> message or None, shared per context with the
        # attribute cache (and its hit/miss counters).
        self.state = context_state(context)
        self.facts_of: dict[ir.Operation, LaunchFacts] = {}
        self.uniform: LaunchFacts | None = None  # None until the root is visited
        self.mixed = False
        self.signatures: dict[tuple, tuple[str, ...]] = {}

    def type_message(self, t: ir.Type, facts: LaunchFacts) -> str | None:
        if isinstance(t, ir.ShapedType) and not isinstance(t, ir.RankedTensorType):
            return None  # memrefs and unranked tensors carry no layout
        key = (type_pointer(t), facts.key)  # the facts as a tuple of ints: hashed in C
        message = self.state.verified_types.get(key, _UNCHECKED)
        if message is _UNCHECKED:
            self.state.misses += 1
            message = self.state.verified_types[key] = type_problem(t, facts)
        else:
            self.state.hits += 1
        return message if isinstance(message, str) else None

    def parent_facts(self, op: ir.Operation) -> LaunchFacts:
        """The launch facts of `op`'s parent (the root's: `root_facts`). Pre-order walks visit
        parents first."""
        if not self.mixed:
            return self.root_facts if self.uniform is None else self.uniform
        parent = op.parent
        return self.facts_of.get(parent.operation, self.root_facts) if parent is not None else self.root_facts

    def own_facts(self, op: ir.Operation, parent_facts: LaunchFacts) -> LaunchFacts:
        """`parent_facts` updated by `op`'s own launch attributes."""
        if not self.check_launch or not len(op.attributes):
            return parent_facts
        return parent_facts.updated_by(op)

    def check_op(self, op: ir.Operation) -> ir.WalkResult:
        """An op with regions is checked in full; an op without is checked once per signature
        (its signature): its messages hold for every op of the same signature."""
        # parent_facts(op), inlined: one Python call less on every op
        if self.mixed:
            parent_facts = self.parent_facts(op)
        else:
            parent_facts = self.root_facts if self.uniform is None else self.uniform
        if len(op.regions):
            facts = self.own_facts(op, parent_facts)
            self.facts_of[op] = facts
            if self.uniform is None:
                self.uniform = facts
            elif facts != self.uniform:
                self.mixed = True
            self.report(op, self.messages(op, facts, True))
            return _ADVANCE
        # The signature: what the checks of an op without regions read: its name, operand and
        # result types, attributes and its parent's launch facts (types and attributes are
        # uniqued per context, so equal signatures compare equal). The result types come in one
        # call (`results.types`); built inline, as the parent's facts above: one Python call
        # less per op each.
        attributes = op.attributes
        count = len(attributes)
        signature = (
            op.name,
            tuple([operand.type for operand in op.operands]),
            tuple(op.results.types),
            tuple([(a.name, a.attr) for a in map(attributes.__getitem__, range(count))]) if count else (),
            parent_facts.key,
        )
        messages = self.signatures.get(signature)
        if messages is None:  # the op's attributes are in the signature, so its own facts too
            messages = self.signatures[signature] = self.messages(op, self.own_facts(op, parent_facts), False)
        else:
            self.state.hits += 1
        if messages:
            self.report(op, messages)
        return _ADVANCE

    def report(self, op: ir.Operation, messages: tuple[str, ...]) -> None:
        if messages:
            location = op.location
            self.errors.extend((location, message) for message in messages)

    def messages(self, op: ir.Operation, facts: LaunchFacts, has_regions: bool) -> tuple[str, ...]:
        """What is wrong with `op` under `facts`: its result and (`has_regions`) block argument
        types, then its op rule."""
        found = [self.type_message(t, facts) for t in op.results.types]
        if has_regions:
            for region in op.regions:
                for block in region.blocks:
                    found.extend(self.type_message(argument.type, facts) for argument in block.arguments)
        if has_regions:
            found.append(_target_problem(op))
        regions = region_problem(op)
        if regions:
            found.append(f"'{op.name}' op {regions}")
        view = op.opview
        if isinstance(view, LayoutOp):
            message = view.verify_rules()
            if message:
                found.append(f"'{op.name}' op {message}")
        inferred = triton_rule_problem(op)
        if inferred:
            found.append(f"'{op.name}' op {inferred}")
        return tuple(message for message in found if message)


def _root_facts(op: ir.Operation, check_launch: bool) -> LaunchFacts:
    """A nested anchor (func.func) still sees the launch facts of its enclosing ops."""
    facts = LaunchFacts()
    if not check_launch:
        return facts
    ancestors = []
    parent = op.parent
    while parent is not None:
        ancestors.append(parent.operation)
        parent = parent.parent
    for ancestor in reversed(ancestors):
        facts = facts.updated_by(ancestor)
    return facts


def verify(op: ir.Operation | ir.Module, *, check_launch: bool = True) -> list[tuple[ir.Location, str]]:
    """Every broken rule in `op` and its nested ops, as (location, message) pairs. With
    `check_launch`, distributed layouts must match the enclosing ttg.num-warps and friends."""
    if isinstance(op, ir.Module):
        op = op.operation
    op = op.operation
    verifier = _Verifier(op.context, check_launch, _root_facts(op, check_launch))
    walk(op, verifier.check_op)
    return verifier.errors
