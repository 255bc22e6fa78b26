"""The layout work of a kernel that ``linear-layout-report`` lists but does not cost yet:
``tt.reduce``, ``tt.scan``, ``tt.gather`` and the atomics (``tt.atomic_rmw``, ``tt.atomic_cas``).

For each the report says what the layouts already tell (:func:`describe`):

* a reduction or scan along ``axis``: how many registers, lanes and warps of the operand's layout
  lie along it -- Triton's lowering combines the registers in each thread, then
  ``log2(lanes along it)`` butterfly shuffle rounds, then, when several warps lie along the axis,
  an exchange through shared memory;
* a gather along ``axis``: the same counts for the source; with one warp along the axis Triton
  gathers inside the warp (shuffles), else through shared memory;
* an atomic on a tensor: the elements each thread holds (one atomic instruction per element or
  vector); on a scalar: one atomic for the program.

So a kernel whose only layout work is a reduction (softmax, layernorm) no longer shows an empty
table without a word: the report lists these ops, and says so when a kernel has none at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..core.layout import LinearLayout

__all__ = ["LISTED", "OtherOp", "along_axis", "describe", "no_layout_work"]

#: The ops listed (in the order of the kernel) besides the costed rows.
LISTED = ("tt.reduce", "tt.scan", "tt.gather", "tt.atomic_rmw", "tt.atomic_cas")


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


def describe(op: str, layout: LinearLayout | None, axis: int | None) -> str:
    """What the layouts tell about ``op`` (see the module docstring); ``layout`` None: a scalar."""
    if layout is None:
        return "one atomic for the program" if op.startswith("tt.atomic") else "a scalar operand"
    if op.startswith("tt.atomic"):
        registers = layout.get_in_dim_size("register")
        return f"{registers} element(s) per thread, one atomic each (or per vector); not costed yet"
    if axis is None:
        return "no axis attribute; not costed yet"
    counts = along_axis(layout, axis)
    spread = (
        f"axis {axis}: {counts['register']} register(s), {counts['lane']} lane(s), {counts['warp']} warp(s) along it"
    )
    if op == "tt.gather":
        where = "inside a warp (shuffles)" if counts["warp"] == 1 else "through shared memory (several warps)"
        return f"{spread}; gathers {where}; not costed yet"
    across = "; then shared memory across the warps" if counts["warp"] > 1 else "; no shared memory"
    return f"{spread}; {_rounds(counts['lane'])} shuffle round(s){across}; not costed yet"


def axis_of(op: ir.Operation) -> int | None:
    """The op's ``axis`` attribute, or None."""
    attributes = op.attributes
    return ir.IntegerAttr(attributes["axis"]).value if "axis" in attributes else None


def no_layout_work() -> str:
    """The line of a kernel with no row and nothing listed."""
    return "no layout work: this kernel has no convert_layout, shared-memory access, reduction, scan, gather or atomic"
