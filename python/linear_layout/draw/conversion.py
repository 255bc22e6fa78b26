"""``draw_conversion``: a ``convert_layout`` as the planner will lower it.

Through shared memory (``plan.strategy.uses_shared_memory``: shared, packed, matrix): four panels, two by two -- the source
layout and the scratch buffer as stored, then the scratch buffer as loaded and the destination
layout (the scratch in rows of 32 banks, the first repetition's contents, each element coloured
like its source owner). Warp 0's first store instruction is
highlighted in the source and the scratch, one outline colour per phase, and its first load
instruction in the scratch and the destination; the notes give each phase's wavefronts, counted
from the addresses (:mod:`linear_layout.draw.phases`), the totals over every warp and
instruction, and the plan's own figures, which they must equal.

A no-op (``"noop"``: the two layouts place every element in the same register of the same
thread) is one panel, the source, and a line saying so.

In a warp (``"shuffle"``, ``"register"``): source and destination, and one *round*
per destination register ``i``: every lane ``l`` of a warp fetches the element of its register
``i`` from ``src lane(l)``, register ``r(l)``; a round is ``own lane`` (no shuffle), ``xor x``
(``src lane = l ^ x``) or ``idx`` (any other lane map). Round 1's elements are outlined in both
panels. The rounds are derived from the two layouts, independently of the plan.

Every field of the plan this module reads is read once, by :func:`plan_fields`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.layout import LinearLayout
from ..planning import plan_conversion
from .grids import DEFAULT_LIMITS, Limits
from .layout import highlight_marks, layout_panels, legend_for
from .owners import Ownership, as_layout, ownership
from .phases import AccessPhases, access_phases
from .picture import Picture
from .shared import phase_marks, shared_panels

__all__ = [
    "PlanFields",
    "Round",
    "plan_fields",
    "conversion_picture",
    "conversion_rounds",
    "draw_conversion",
    "scratch_layout",
]

#: Rounds listed in the notes before the rest are summarised.
MAX_ROUNDS = 16


@dataclass(frozen=True)
class Round:
    """Destination register ``register``: each lane's source lane and source register (warp 0)."""

    register: int
    source_lanes: tuple[int, ...]
    source_registers: tuple[int, ...]

    @property
    def mode(self) -> str:
        """``own lane``, ``xor <x>`` or ``idx``."""
        moves = [src ^ lane for lane, src in enumerate(self.source_lanes)]
        if not any(moves):
            return "own lane"
        if len(set(moves)) == 1:
            return f"xor {moves[0]}"
        return "idx"

    def describe(self) -> str:
        registers = sorted(set(self.source_registers))
        shown = ", ".join(f"r{r}" for r in registers[:8]) + (", ..." if len(registers) > 8 else "")
        return f"round {self.register + 1}: dst r{self.register} <- {self.mode}, src {shown}"


def scratch_layout(smem: LinearLayout) -> LinearLayout:
    """The plan's shared layout ``(vector, bank, segment, reps[, block])`` as ``(offset, block)``:
    offset = the first three in-dims flattened (repetition 0)."""
    bases = dict(smem.bases)
    offset = [list(b) for name in ("vector", "bank", "segment") for b in bases.get(name, ())]
    block = [list(b) for b in bases.get("block", ())]
    return LinearLayout.from_bases(
        [("offset", offset), ("block", block)],
        list(smem.get_out_dim_names()),
        [s for _, s in smem.out_dims],
        require_surjective=False,
    )


def _flat(layout: LinearLayout, registers: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    zeros = np.zeros_like(registers)
    out = layout.apply({"register": registers, "lane": lanes, "warp": zeros, "block": zeros})
    shape = tuple(s for _, s in layout.out_dims)
    return np.ravel_multi_index(tuple(np.asarray(out[name], dtype=np.int64) for name, _ in layout.out_dims), shape)


def _element_marks(layout: LinearLayout, phases: AccessPhases, access: Any) -> np.ndarray:
    """Marks on the elements that warp 0's highlighted instruction moves, by phase."""
    marks = np.zeros(layout.get_total_out_dim_size(), dtype=np.int64)
    registers = access.instructions[phases.instruction].registers
    for number, phase in enumerate(phases.phases, start=1):
        for lane in phase.lanes:
            regs = np.asarray(registers, dtype=np.int64)
            marks[_flat(layout, regs, np.full_like(regs, lane))] = number
    return marks


@dataclass(frozen=True)
class PlanFields:
    """What a picture needs of a conversion plan: ``strategy`` as text, whether it goes through
    shared memory, the two layouts, the element width, the plan's one-line summary, and
    ``plan.drawing()`` (the shared-memory accesses drawn with the layouts whose registers they
    move -- a packed plan's swapped layouts, a matrix plan's replaced vector accesses -- or the
    in-warp rounds, and notes)."""

    strategy: str
    through_shared: bool
    src: LinearLayout
    dst: LinearLayout
    bitwidth: int
    summary: str
    drawing: Any


def plan_fields(plan: Any) -> PlanFields:
    """The fields of ``plan`` (a :class:`~linear_layout.planning.ConversionPlan`) a picture reads."""
    return PlanFields(
        strategy=str(plan.strategy),
        through_shared=bool(plan.strategy.uses_shared_memory),
        src=plan.src,
        dst=plan.dst,
        bitwidth=plan.bitwidth,
        summary=plan.summary(),
        drawing=plan.drawing(),
    )


@dataclass(frozen=True)
class Style:
    """How the panels are drawn: colour index, size limits, the thread outlined (or None)."""

    color_by: str
    limits: Limits
    highlight: int | None = None


def _distributed(layout: LinearLayout, style: Style, title: str, marks: np.ndarray | None = None):
    owned = ownership(layout)
    marks, _ = highlight_marks(owned, style.highlight, marks)
    return layout_panels(owned, style.color_by, title, marks, limits=style.limits)


def _shared_picture(fields: PlanFields, style: Style):
    src, dst, bitwidth, moved = fields.src, fields.dst, fields.bitwidth, fields.drawing
    shared = moved.shared
    store = access_phases(shared.store, bitwidth, "store")
    load = access_phases(shared.load, bitwidth, "load")
    scratch = scratch_layout(shared.smem)
    offsets = scratch.get_in_dim_size("offset")
    src_panels, src_cells = _distributed(src, style, "source", _element_marks(moved.src, store, shared.store))
    keys = src_cells.key_values
    stored, loaded = (
        shared_panels(
            scratch,
            bitwidth,
            title=f"scratch: warp 0 {verb}",
            marks=phase_marks(phases, offsets),
            element_keys=keys,
            limits=style.limits,
        )[0]
        for verb, phases in (("stores", store), ("loads", load))
    )
    dst_panels, _ = _distributed(dst, style, "destination", _element_marks(moved.dst, load, shared.load))
    reps = f"; the scratch holds repetition 1 of {shared.num_reps}" if shared.num_reps > 1 else ""
    notes = (
        (f"plan: {fields.summary}",)
        + store.notes()
        + load.notes()
        + (f"plan: store {shared.store.wavefronts} wavefront(s), load {shared.load.wavefronts} wavefront(s){reps}",)
    )
    return src_panels + stored + loaded + dst_panels, src_cells, notes


def _source_owner(src: Ownership, element: int, lane: int) -> tuple[int, int]:
    """The (lane, register) of warp 0 that holds ``element``, preferring ``lane`` itself."""
    parts = src.split(src.owners(element))
    in_warp = np.flatnonzero((parts["warp"] == 0) & (parts["block"] == 0))
    if in_warp.size == 0:
        raise ValueError(f"element {element} is not held by warp 0 of the source: not an in-warp conversion")
    own = in_warp[parts["lane"][in_warp] == lane]
    pick = int(own[0] if own.size else in_warp[0])
    return int(parts["lane"][pick]), int(parts["register"][pick])


def conversion_rounds(src: LinearLayout, dst: LinearLayout) -> tuple[Round, ...]:
    """One round per destination register (see the module docstring); layouts with exactly the
    input dims ``register, lane, warp, block``."""
    owned = ownership(src)
    lanes = dst.get_in_dim_size("lane")
    rounds = []
    for register in range(dst.get_in_dim_size("register")):
        flat = _flat(dst, np.full(lanes, register, dtype=np.int64), np.arange(lanes, dtype=np.int64))
        sources = [_source_owner(owned, int(e), lane) for lane, e in enumerate(flat.tolist())]
        rounds.append(Round(register, tuple(s[0] for s in sources), tuple(s[1] for s in sources)))
    return tuple(rounds)


def _noop_picture(fields: PlanFields, style: Style):
    panels, cells = _distributed(fields.src, style, "source = destination")
    notes = (
        f"plan: {fields.summary}",
        "no-op: both layouts put every element in the same register of the same thread, so nothing "
        "moves; one panel is drawn",
    )
    return panels, cells, notes


def _in_warp_picture(fields: PlanFields, style: Style):
    src, dst = fields.src, fields.dst
    rounds = conversion_rounds(src, dst)
    first = rounds[0]
    lanes = np.arange(len(first.source_lanes), dtype=np.int64)
    dst_marks = np.zeros(dst.get_total_out_dim_size(), dtype=np.int64)
    dst_marks[_flat(dst, np.zeros_like(lanes), lanes)] = 1
    src_marks = np.zeros_like(dst_marks)
    src_marks[
        _flat(src, np.asarray(first.source_registers, dtype=np.int64), np.asarray(first.source_lanes, dtype=np.int64))
    ] = 1
    src_panels, src_cells = _distributed(src, style, "source", src_marks)
    dst_panels, _ = _distributed(dst, style, "destination", dst_marks)
    moving = sum(1 for r in rounds if r.mode != "own lane")
    notes = [
        f"plan: {fields.summary}",
        f"{len(rounds)} round(s), {moving} move data between lanes; "
        "round 1 outlined (destination register 0 of warp 0 and its sources)",
    ]
    notes += [r.describe() for r in rounds[:MAX_ROUNDS]]
    if len(rounds) > MAX_ROUNDS:
        notes.append(f"... {len(rounds) - MAX_ROUNDS} more round(s)")
    return src_panels + dst_panels, src_cells, tuple(notes)


def conversion_picture(
    plan: Any,
    src_name: str = "",
    dst_name: str = "",
    color_by: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    highlight: int | None = None,
) -> Picture:
    """The picture of a :class:`~linear_layout.planning.ConversionPlan` (see the module docstring).

    Cells are coloured by ``color_by``; by default the warp for a conversion through shared memory
    and the lane for one inside a warp. A plan that uses ``ldmatrix``/``stmatrix``
    (``plan.matrix``) is drawn with the plain shared memory accesses it was compared against
    (``plan.shared``), and a note says so. ``highlight``: a thread whose elements are outlined in
    black in the source and the destination."""
    fields = plan_fields(plan)
    src, bitwidth = fields.src, fields.bitwidth
    color_by = color_by or ("warp" if fields.through_shared else "lane")
    if fields.through_shared:
        draw = _shared_picture
    else:
        draw = _noop_picture if fields.strategy == "noop" else _in_warp_picture
    panels, cells, notes = draw(fields, Style(color_by, limits, highlight))
    if highlight is not None:
        notes += (f"thread {highlight} outlined in black in the source and the destination",)
    notes += fields.drawing.notes
    legend, more = legend_for(cells.key_values, color_by)
    size = "x".join(str(s) for _, s in src.out_dims)
    names = tuple(f"{side}: {name}" for side, name in (("src", src_name), ("dst", dst_name)) if name)
    return Picture(
        title=f"convert_layout {size} x {bitwidth}-bit: {fields.strategy}",
        panels=panels,
        legend=legend,
        notes=names + more + notes,
        columns=2,
    )


def draw_conversion(
    src: Any,
    dst: Any,
    shape: Sequence[int] | None = None,
    bitwidth: int = 32,
    *,
    color_by: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    highlight: int | None = None,
) -> Picture:
    """The conversion from ``src`` to ``dst`` (LinearLayouts, encodings or encoding text) of a
    tensor of ``shape`` with ``bitwidth``-bit elements, as :func:`linear_layout.plan_conversion`
    plans it for warps of the layouts' own lane count (32, or 64 on AMD), see the module docstring."""
    src_ll, src_name = as_layout(src, shape)
    dst_ll, dst_name = as_layout(dst, shape)
    plan = plan_conversion(src_ll, dst_ll, bitwidth=bitwidth, threads_per_warp=src_ll.get_in_dim_size("lane"))
    return conversion_picture(plan, src_name, dst_name, color_by, limits, highlight)
