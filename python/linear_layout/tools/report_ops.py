"""The layout work of a kernel besides its conversions and shared-memory accesses, listed by
``linear-layout-report`` with its predicted cost: ``tt.reduce``, ``tt.scan``, ``tt.gather``,
``tt.histogram`` and the atomics (``tt.atomic_rmw``, ``tt.atomic_cas``).

For each the report says what the layouts tell (:func:`describe`) and what the op costs
(:func:`predict`, by ``planning/layout_ops.py``, the decisions the SIMT patterns make):

* a reduction or scan along ``axis``: how many registers, lanes and warps of the operand's layout
  lie along it -- the registers combine in each thread, the lanes by ``shuffle xor`` rounds, and,
  when several warps lie along the axis, the partials go through shared memory;
* a gather: the source through shared memory (its load wavefronts depend on the indices);
* a histogram: the operand through shared memory, every slot read back per result register;
* an atomic on a tensor: the elements each thread holds (one atomic each); on a scalar: one.

So a kernel whose only layout work is a reduction (softmax, layernorm) no longer shows an empty
table without a word: the report lists these ops, and says so when a kernel has none at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..core.launch import pad_to_launch
from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from ..patterns.vectors import element_bits
from ..planning.layout_ops import (
    OpCost,
    atomic_cost,
    gather_cost,
    histogram_cost,
    reduce_cost,
    scan_cost,
)

__all__ = ["LISTED", "OtherOp", "along_axis", "describe", "no_layout_work", "predict"]

#: The ops listed (in the order of the kernel) besides the costed rows.
LISTED = ("tt.reduce", "tt.scan", "tt.gather", "tt.histogram", "tt.atomic_rmw", "tt.atomic_cas")


@dataclass(frozen=True)
class OtherOp:
    """One listed op: its kernel line, Python line, name, operand layout (as the kernel spells
    it; empty for a scalar), shape (empty for a scalar), and what the layouts tell (``detail``)."""

    op: str
    mlir_line: int
    python: str
    layout: str
    shape: tuple[int, ...]
    detail: str
    cost: OpCost | None = None  # None: not modelled (``detail`` says why)

    def line(self) -> str:
        shape = "x".join(map(str, self.shape)) or "scalar"
        where = f"{self.mlir_line}" + (f" ({self.python})" if self.python else "")
        layout = f" {self.layout}" if self.layout else ""
        return f"  {where}: {self.op.split('.', 1)[1]} {shape}{layout}: {self.detail}"


def along_axis(layout: LinearLayout, axis: int) -> dict[str, int]:
    """How many registers, lanes and warps of ``layout`` lie along output dimension ``axis``
    (2 ** the number of its bases with a non-zero component there).

    >>> L = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", [[1, 0], [0, 2]]), ("warp", [[2, 0]])],
    ...                             ["dim0", "dim1"])
    >>> along_axis(L, 1)
    {'register': 2, 'lane': 2, 'warp': 1}
    """
    bases = dict(layout.bases)
    return {dim: 1 << sum(1 for b in bases.get(dim, ()) if b[axis]) for dim in ("register", "lane", "warp")}


def _rounds(lanes: int) -> int:
    return lanes.bit_length() - 1


def describe(op: str, layout: LinearLayout | None, axis: int | None, cost: OpCost) -> str:
    """What the layouts tell about ``op`` (see the module docstring) and its ``cost``;
    ``layout`` None: a scalar."""
    if layout is None or op.startswith("tt.atomic") or axis is None:
        return cost.summary()
    counts = along_axis(layout, axis)
    spread = (
        f"axis {axis}: {counts['register']} register(s), {counts['lane']} lane(s), {counts['warp']} warp(s) along it"
    )
    if op == "tt.gather":
        return f"{spread}; through shared memory; {cost.summary()}"
    across = "; then shared memory across the warps" if counts["warp"] > 1 else "; no shared memory"
    return f"{spread}; {_rounds(counts['lane'])} shuffle round(s){across}; {cost.summary()}"


def _padded(value: ir.Value, num_warps: int, threads_per_warp: int) -> LinearLayout | None:
    """The layout of ``value``'s tensor padded to the launch (None: a scalar)."""
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    return pad_to_launch(layout_of(value.type), threads_per_warp, num_warps)


def predict(op: ir.Operation, num_warps: int, threads_per_warp: int) -> OpCost:
    """The predicted cost of listed op ``op`` (``planning/layout_ops.py``).

    Requires: ``op.name`` in :data:`LISTED`; its tensors have layouts (ValueError/TypeError
    otherwise)."""

    def padded(value: ir.Value) -> LinearLayout | None:
        return _padded(value, num_warps, threads_per_warp)

    operands = list(op.operands)
    layout = padded(operands[0])
    if op.name.startswith("tt.atomic"):
        return atomic_cost(padded(op.results[0]) if op.results else layout)
    if layout is None:
        raise ValueError(f"{op.name} of a scalar")
    if op.name == "tt.gather":
        indices = padded(operands[1])
        assert indices is not None
        return gather_cost(layout, indices, element_bits(operands[0].type.element_type))
    if op.name == "tt.histogram":
        result = padded(op.results[0])
        assert result is not None
        return histogram_cost(layout, result)
    axis = axis_of(op)
    assert axis is not None
    bits = [element_bits(v.type.element_type) for v in operands]
    if op.name == "tt.scan":
        return scan_cost(layout, axis, bits)
    return reduce_cost(layout, axis, bits, padded(op.results[0]))


def axis_of(op: ir.Operation) -> int | None:
    """The op's ``axis`` attribute, or None."""
    attributes = op.attributes
    return ir.IntegerAttr(attributes["axis"]).value if "axis" in attributes else None


def no_layout_work() -> str:
    """The line of a kernel with no row and nothing listed."""
    return "no layout work: this kernel has no convert_layout, shared-memory access, reduction, scan, gather or atomic"
