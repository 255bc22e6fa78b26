"""``draw_shared``: the shared-memory image of a shared layout, in rows of 32 banks.

Row ``r`` shows the 128 bytes at byte offsets ``[128 r, 128 (r + 1))``: ``1024 / bitwidth``
elements, each cell as wide as its share of a bank (a 16-bit element is half a bank wide), the
bank numbers across the top. Each cell names the tensor element stored there (label ``i,j``,
tooltip ``(i, j) offset <o> bank <b>``, ``b`` the bank of the element's first byte), coloured by
the element's 16-byte chunk (``color_by="chunk"``: its coordinate along the last dimension times
the element size // 16 bytes, the unit swizzles permute), row (``"row"``: its coordinate along
the second-to-last dimension; rank 1: index // elements per bank row) or column (``"column"``:
along the last dimension). A swizzle shows as chunk colours that change place from row to row.

With ``access=`` (a distributed layout), one warp's ``ld.shared`` (``kind="load"``) or
``st.shared`` (``kind="store"``) of that layout is highlighted: the cells each phase of its first
instruction touches are outlined in the phase's colour, and the notes state each phase's
wavefronts, counted from the addresses (:mod:`linear_layout.draw.phases`), next to
:func:`linear_layout.bank_conflicts`' count for the whole access.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.hardware import BANK_BYTES, MAX_ACCESS_BYTES, NUM_BANKS, SHARED_DIMS, WAVEFRONT_BYTES
from ..core.layout import LinearLayout
from ..planning import bank_conflicts, plan_local_access
from .grids import DEFAULT_LIMITS, Limits, coordinate_texts
from .layout import legend_for
from .model import Panel
from .owners import as_layout
from .palette import index_colour
from .phases import AccessPhases, access_phases
from .picture import Picture

__all__ = ["SHARED_COLOR_BY", "draw_shared", "phase_marks", "shared_panels"]

SHARED_COLOR_BY = ("chunk", "row", "column")


def elements_per_row(bitwidth: int) -> int:
    """Elements in one row of 32 banks (128 bytes)."""
    return max(1, WAVEFRONT_BYTES * 8 // bitwidth)


def _keys(coords: np.ndarray, color_by: str, per_row: int, bitwidth: int) -> np.ndarray:
    if color_by not in SHARED_COLOR_BY:
        raise ValueError(
            f"unknown color_by {color_by!r} for shared memory; expected one of {', '.join(SHARED_COLOR_BY)}"
        )
    last = coords[:, -1] % per_row if coords.shape[1] == 1 else coords[:, -1]
    if color_by == "chunk":
        return last * bitwidth // (8 * MAX_ACCESS_BYTES)
    if color_by == "column":
        return last
    return coords[:, 0] // per_row if coords.shape[1] == 1 else coords[:, -2]


def _bank_names(cols: int, bitwidth: int) -> tuple[str, ...]:
    element_bytes = bitwidth / 8
    names = []
    for col in range(cols):
        start = col * element_bytes
        names.append(str(int(start // BANK_BYTES) % NUM_BANKS) if start % BANK_BYTES == 0 else "")
    return tuple(names)


def shared_panels(
    smem: LinearLayout,
    bitwidth: int,
    color_by: str = "chunk",
    title: str = "",
    marks: np.ndarray | None = None,
    element_keys: np.ndarray | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[tuple[Panel, ...], np.ndarray]:
    """One panel per block of ``smem`` (input dims ``offset, block``); ``marks[o]`` outlines offset
    ``o`` of block 0; ``element_keys[e]`` (optional) colours the cell of element ``e`` instead of
    ``color_by``. Returns the panels and the colour keys used."""
    shape = tuple(s for _, s in smem.out_dims)
    offsets = smem.get_in_dim_size("offset")
    per_row = elements_per_row(bitwidth)
    cols = min(offsets, per_row)
    rows = min(offsets // cols, limits.shared_rows, max(1, limits.shared_cells // cols))
    shown = rows * cols
    element_bytes = max(1, bitwidth // 8) if bitwidth >= 8 else 1
    offset = np.arange(shown, dtype=np.int64)
    banks = ((offset * bitwidth // 8) // BANK_BYTES % NUM_BANKS).tolist()
    panels, used = [], []
    for block in range(smem.get_in_dim_size("block")):
        out = smem.apply({"offset": offset, "block": np.full(shown, block, dtype=np.int64)})
        coords = np.stack([np.asarray(out[name], dtype=np.int64) for name, _ in smem.out_dims], axis=1)
        flat = np.ravel_multi_index(tuple(coords.T), shape)
        texts = coordinate_texts(shape, flat)
        keys = _keys(coords, color_by, per_row, bitwidth) if element_keys is None else element_keys[flat]
        used.append(keys)
        cell_marks = [0] * shown if marks is None or block else marks[:shown].tolist()
        notes = (f"bank rows 0-{rows - 1} of {offsets // cols} shown",) if rows * cols < offsets else ()
        name = f"{title} block {block}" if smem.get_in_dim_size("block") > 1 else title
        panels.append(
            Panel(
                title=name,
                rows=rows,
                cols=cols,
                fills=tuple(index_colour(k) for k in keys.tolist()),
                labels=tuple(t[1:-1].replace(" ", "") for t in texts),
                keys=tuple(str(k) for k in keys.tolist()),
                titles=tuple(f"{t} offset {o} bank {b}" for t, o, b in zip(texts, offset.tolist(), banks)),
                marks=tuple(int(m) for m in cell_marks),
                duplicates=(1,) * shown,
                row_names=tuple(str(r * cols) for r in range(rows)),
                col_names=_bank_names(cols, bitwidth),
                notes=notes,
                cell_units=2.0 * bitwidth / 32 if element_bytes else 0.5,
            )
        )
    return tuple(panels), np.concatenate(used)


def phase_marks(phases: AccessPhases, offsets: int) -> np.ndarray:
    """``marks[o]``: the (1-based) phase of the highlighted instruction that touches offset ``o``."""
    marks = np.zeros(offsets, dtype=np.int64)
    for number, phase in enumerate(phases.phases, start=1):
        for lane_offsets in phase.offsets:
            marks[list(lane_offsets)] = number
    return marks


def _access_notes(
    access: LinearLayout, smem: LinearLayout, bitwidth: int, kind: str
) -> tuple[np.ndarray, tuple[str, ...]]:
    local = plan_local_access(access, smem, bitwidth, kind=kind)
    phases = access_phases(local, bitwidth, kind)
    counted = bank_conflicts(access, smem, bitwidth, kind=kind)
    notes = phases.notes() + (f"  bank_conflicts: {counted.wavefronts} wavefront(s), ideal {counted.ideal_wavefronts}",)
    return phase_marks(phases, smem.get_in_dim_size("offset")), notes


def draw_shared(
    shared_layout_or_encoding: Any,
    shape: Sequence[int] | None = None,
    *,
    bitwidth: int,
    access: Any = None,
    kind: str = "load",
    color_by: str = "chunk",
    limits: Limits = DEFAULT_LIMITS,
) -> Picture:
    """The shared-memory image of a shared layout (see the module docstring).

    ``shared_layout_or_encoding``: a LinearLayout with input dims ``offset[, block]``, a shared
    encoding or its text; ``shape`` the tensor's shape (optional for a LinearLayout);
    ``bitwidth`` the element size in bits. ``access``: a distributed layout (or encoding) whose
    ``kind`` access to this memory is highlighted.
    """
    if bitwidth < 8 or bitwidth & (bitwidth - 1):
        raise ValueError(f"bitwidth must be a power of two >= 8, got {bitwidth}")
    if kind not in ("load", "store"):
        raise ValueError(f"kind must be 'load' or 'store', got {kind!r}")
    smem, name = as_layout(shared_layout_or_encoding, shape, SHARED_DIMS)
    shape = tuple(s for _, s in smem.out_dims)
    marks: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    if access is not None:
        distributed, _ = as_layout(access, None if isinstance(access, LinearLayout) else shape)
        marks, notes = _access_notes(distributed, smem, bitwidth, kind)
    panels, keys = shared_panels(smem, bitwidth, color_by, "shared memory", marks, limits=limits)
    legend, more = legend_for(keys, color_by)
    size = "x".join(map(str, shape))
    return Picture(
        title=f"{name} on {size}, {bitwidth}-bit elements, rows of {NUM_BANKS} banks",
        panels=panels,
        legend=legend,
        notes=more + tuple(notes),
    )
