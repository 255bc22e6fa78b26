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

from mlir import ir

from ..core.launch import pad_to_launch
from ..core.layout import LinearLayout
from ..ir.bridge import layout_of
from ..passes.ll_explain_conversions import LAYOUT_OPS, axis_of, is_atomic, predict
from ..patterns.dot import operand_ldmatrix_side
from ..planning.dot import DotCost, dot_cost
from ..planning.layout_ops import OpCost
from ..planning.matrix import MatrixSide

__all__ = [
    "DOTS",
    "LISTED",
    "OtherOp",
    "along_axis",
    "axis_of",
    "chip_of",
    "describe",
    "is_atomic",
    "ldmatrix_loads",
    "no_layout_work",
    "predict",
    "predict_dot",
]

#: The dots: ``tt.dot`` (costed), and sm_90's wgmma (listed, not costed: not lowered).
DOTS = ("tt.dot", "ttng.warp_group_dot")
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


def chip_of(module: ir.Module) -> str | None:
    """The NVIDIA chip of the module's ``ttg.target`` (``"cuda:80"`` -> ``"sm_80"``), else None."""
    attributes = module.operation.attributes
    if "ttg.target" not in attributes:
        return None
    target = ir.StringAttr(attributes["ttg.target"]).value
    return f"sm_{target.split(':', 1)[1]}" if target.startswith("cuda:") else None


def _operand_side(value: ir.Value, layout: LinearLayout, num_warps: int, chip: str | None) -> MatrixSide | None:
    """The ldmatrix of a dot operand that a ``ttg.local_load`` reads (None: none)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "ttg.local_load":
        return None
    memdesc = owner.operation.operands[0].type
    return operand_ldmatrix_side(layout, memdesc, value.type.element_type, num_warps, chip)


def _operand_loads(
    op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None
) -> tuple[tuple[ir.Operation | None, MatrixSide | None], ...]:
    """For operands a and b of ``tt.dot`` ``op``: the ``ttg.local_load`` that loads it (None: none)
    and its ldmatrix side (None: plain shared loads, or no local_load)."""
    found = []
    for value in (op.operands[0], op.operands[1]):
        layout = pad_to_launch(layout_of(value.type), threads_per_warp, num_warps)
        side = _operand_side(value, layout, num_warps, chip)
        owner = value.owner
        load = owner.operation if isinstance(owner, ir.OpView) and owner.operation.name == "ttg.local_load" else None
        found.append((load, side))
    return tuple(found)


def ldmatrix_loads(op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None) -> list[ir.Operation]:
    """The ``ttg.local_load`` ops of ``tt.dot`` ``op``'s operands that the lowering for ``chip``
    turns into ldmatrix (:func:`predict_dot` costs them; their plain loads do not happen)."""
    if op.name != "tt.dot":
        return []
    return [load for load, side in _operand_loads(op, num_warps, threads_per_warp, chip) if load and side]


def predict_dot(op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None) -> DotCost:
    """The predicted cost of ``tt.dot`` ``op`` (`planning.dot.dot_cost`), its operands loaded
    from shared memory with ldmatrix where the lowering for ``chip`` would.

    Requires: tensors with layouts (ValueError/TypeError otherwise); PlannerError (a ValueError)
    when the layouts fit neither the FMA nor the mma.sync path; a ValueError for sm_90's wgmma
    (``ttng.warp_group_dot``) and for a dot off the FMA path without an NVIDIA target (AMD's
    MFMA/WMMA), which the lowering does not build."""
    if op.name != "tt.dot":
        raise ValueError(f"{op.name} (wgmma, #ttg.nvidia_mma version 3) is not lowered")
    a, b = op.operands[0], op.operands[1]
    a_layout, b_layout, c_layout = (
        pad_to_launch(layout_of(v.type), threads_per_warp, num_warps) for v in (a, b, op.results[0])
    )
    sides = tuple(side for _load, side in _operand_loads(op, num_warps, threads_per_warp, chip))
    element = str(a.type.element_type)
    cost = dot_cost(a_layout, b_layout, c_layout, element, threads_per_warp, sides, mma=chip is not None)
    if cost is None:
        raise ValueError("a dot off the FMA path for a target that is not NVIDIA's (MFMA/WMMA) is not lowered")
    return cost
