"""``draw_compare``: two candidate layouts, or two candidate conversions from one source, side by
side with their costs.

* ``draw_compare(a, b, shape)``: the two layouts (as :func:`~linear_layout.draw.draw_layout` draws
  them), and the cost of converting ``a`` to ``b`` (the plan's summary);
* ``draw_compare(a, b, shape, src=s)``: the conversions ``s -> a`` and ``s -> b`` (as
  :func:`~linear_layout.draw.draw_conversion` draws them), each with its plan's summary.

The panels of ``a`` come first, titled ``A: ...``, then those of ``b`` (``B: ...``): in one row,
or (conversions through shared memory, four panels each) ``a``'s row above ``b``'s; the legends are merged, and each picture's notes follow its costs, prefixed ``A:`` / ``B:``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..planning import plan_conversion
from .conversion import draw_conversion
from .grids import DEFAULT_LIMITS, Limits
from .layout import draw_layout
from .model import LegendEntry, Panel
from .owners import as_layout
from .picture import Picture

__all__ = ["compare_pictures", "draw_compare"]


def _titled(panel: Panel, name: str) -> Panel:
    return dataclasses.replace(panel, title=f"{name}: {panel.title}".rstrip(": "))


def compare_pictures(first: Picture, second: Picture, title: str, costs: Sequence[str] = ()) -> Picture:
    """``first`` (A) and ``second`` (B) side by side (see the module docstring), their legends
    merged, ``costs`` then their notes (prefixed ``A:`` / ``B:``) under them."""
    legend: dict[tuple[str, str], LegendEntry] = {}
    for entry in first.legend + second.legend:
        legend.setdefault((entry.key, entry.text), entry)
    panels = tuple(_titled(p, "A") for p in first.panels) + tuple(_titled(p, "B") for p in second.panels)
    notes = tuple(costs) + tuple(f"A: {n}" for n in first.notes) + tuple(f"B: {n}" for n in second.notes)
    columns = len(first.panels) if len(first.panels) == len(second.panels) > 2 else len(panels)
    return Picture(title=title, panels=panels, legend=tuple(legend.values()), notes=notes, columns=columns)


def draw_compare(
    a: Any,
    b: Any,
    shape: Sequence[int] | None = None,
    bitwidth: int = 32,
    *,
    src: Any = None,
    color_by: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    highlight: int | None = None,
) -> Picture:
    """Layouts (or encodings, or encoding text) ``a`` and ``b`` side by side with their costs, see
    the module docstring; ``bitwidth`` is the element size the costs are planned for."""
    a_layout, a_name = as_layout(a, shape)
    b_layout, b_name = as_layout(b, shape)
    lanes = a_layout.get_in_dim_size("lane")
    if src is None:
        plan = plan_conversion(a_layout, b_layout, bitwidth=bitwidth, threads_per_warp=lanes)
        pictures = [
            draw_layout(x, color_by=color_by or "warp", limits=limits, highlight=highlight)
            for x in (a_layout, b_layout)
        ]
        costs = [f"A: {a_name}", f"B: {b_name}", f"cost of converting A to B ({bitwidth}-bit): {plan.summary()}"]
        return compare_pictures(pictures[0], pictures[1], "compare two layouts", costs)
    src_layout, src_name = as_layout(src, shape)
    pictures = [
        draw_conversion(src_layout, x, bitwidth=bitwidth, color_by=color_by, limits=limits, highlight=highlight)
        for x in (a_layout, b_layout)
    ]
    plans = [plan_conversion(src_layout, x, bitwidth=bitwidth, threads_per_warp=lanes) for x in (a_layout, b_layout)]
    costs = [f"src: {src_name}", f"A: {a_name}", f"B: {b_name}"]
    costs += [f"cost {side} ({bitwidth}-bit): {plan.summary()}" for side, plan in zip("AB", plans)]
    return compare_pictures(pictures[0], pictures[1], "compare two conversions from one source", costs)
