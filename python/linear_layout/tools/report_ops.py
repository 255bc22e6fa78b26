"""The layout work of a kernel besides its conversions and shared-memory accesses, listed by
``linear-layout-report`` with its predicted cost: ``tt.reduce``, ``tt.scan``, ``tt.gather``,
``tt.histogram`` and the atomics (``tt.atomic_rmw``, ``tt.atomic_cas``, AMD's
``amdg.buffer_atomic_rmw``).

For each the report says what the layouts tell (:func:`describe`) and what the op costs
(:func:`predict`, by ``planning/layout_ops.py``, the decisions the SIMT patterns make):

* a reduction or scan along ``axis``: how many registers, lanes and warps of the operand's layout
  lie along it -- the registers combine in each thread, the lanes by ``shuffle xor`` rounds, and,
  when several warps lie along the axis, the partials go through shared memory;
* a gather: the source through shared memory (its load wavefronts depend on the indices);
* a histogram: the operand through shared memory, every slot read back per result register;
* an atomic on a tensor: the elements each thread holds (one atomic each); on a scalar: one;
* a ``tt.dot``: its path (``mma.sync m16n8kK`` or FMA), the ``mma.sync`` per warp (or ``fma`` per
  thread), the ``ldmatrix`` per warp of its operands loaded from shared memory (for a chip that
  has it: the module's ``ttg.target``) with their wavefronts against the floor, and the dot's
  instructions (``planning.dot.dot_cost``, the decisions of ``patterns/dot.py``).

So a kernel whose only layout work is a reduction (softmax, layernorm) no longer shows an empty
table without a word: the report lists these ops, and says so when a kernel has none at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.layout import LinearLayout
from ..passes.ll_explain_conversions import (
    DOTS,
    LAYOUT_OPS,
    axis_of,
    is_atomic,
    ldmatrix_loads,
    predict,
    predict_dot,
)
from ..planning.dot import DotCost
from ..planning.layout_ops import OpCost

__all__ = [
    "DOTS",
    "LISTED",
    "OtherOp",
    "along_axis",
    "axis_of",
    "describe",
    "is_atomic",
    "ldmatrix_loads",
    "no_layout_work",
    "predict",
    "predict_dot",
]

#: The ops listed after the table: the layout ops of ``ll-explain-conversions`` and the dots.
LISTED = (*LAYOUT_OPS, *DOTS)


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
    cost: OpCost | DotCost | None = None  # None: not modelled (``detail`` says why)
    # a dot: the kernel lines of the ``ttg.local_load`` rows whose loads its ldmatrix replace
    loads: tuple[int, ...] = ()

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


def describe(op: str, layout: LinearLayout | None, axis: int | None, cost: OpCost | DotCost) -> str:
    """What the layouts tell about ``op`` (see the module docstring) and its ``cost``;
    ``layout`` None: a scalar."""
    if op in DOTS:
        assert isinstance(cost, DotCost)
        return cost.summary()
    assert isinstance(cost, OpCost)
    if layout is None or is_atomic(op) or axis is None:
        return cost.summary()
    counts = along_axis(layout, axis)
    spread = (
        f"axis {axis}: {counts['register']} register(s), {counts['lane']} lane(s), {counts['warp']} warp(s) along it"
    )
    if op == "tt.gather":
        return f"{spread}; through shared memory; {cost.summary()}"
    across = "; then shared memory across the warps" if counts["warp"] > 1 else "; no shared memory"
    return f"{spread}; {_rounds(counts['lane'])} shuffle round(s){across}; {cost.summary()}"


def no_layout_work() -> str:
    """The line of a kernel with no row and nothing listed."""
    return (
        "no layout work: this kernel has no convert_layout, shared-memory access, reduction, scan, gather, atomic "
        "or dot"
    )
