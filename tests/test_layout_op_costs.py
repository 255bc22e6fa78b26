"""The predicted cost of reductions, scans, gathers, histograms and atomics
(`planning/layout_ops.py`, listed by `linear-layout-report`) against what the SIMT interpreter
measures when it runs the lowered corpus kernel: shuffles, barriers, store/load wavefronts, their
ideal, the distinct bytes moved, and the shared memory, per CTA times the blocks of the grid.
The kernels' conversions are costed by their own plans (the report's rows) and added in."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np
import pytest

from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel
from linear_layout.tools.report import report_ttgir

CORPUS = Path(__file__).parent / "kernel_corpus"
#: Every corpus kernel with a listed op and no loop or branch around it (tile_loop's conversion
#: runs once per iteration; the others run each op once per CTA).
KERNELS = ("softmax", "layernorm", "row_sum", "col_sum", "argmax", "cumsum", "cumsum_reverse", "gather",
           "histogram", "scatter_add")
FILES = [CORPUS / "ttgir" / f"{name}.{chip}.w{warps}.ttgir" for name in KERNELS for chip in ("sm80", "sm90")
         for warps in (1, 4, 8)]


def _predicted(report):
    """Per CTA: shuffles (all warps), barriers, store/load wavefronts, ideal, store/load bytes."""
    total = collections.Counter()
    for row in report.rows:
        assert row.cost is not None, row.note
        cost = row.cost
        total["shuffles"] += cost.shuffles * report.num_warps
        total["barriers"] += cost.barriers
        total["store"] += cost.store_wavefronts
        total["load"] += cost.load_wavefronts
    for other in report.others:
        assert other.cost is not None, other.detail
        cost = other.cost
        total["shuffles"] += cost.shuffles * report.num_warps
        total["barriers"] += cost.barriers
        total["store"] += cost.store_wavefronts
        total["load"] += cost.load_wavefronts
        total["scratch"] = max(total["scratch"], cost.scratch_bytes)
        total["data_dependent"] += cost.data_dependent
    # Membar (patterns/barriers.py): the ops share the pooled scratch, so each op through shared
    # memory after the first writes what the one before read last: one barrier before it.
    through_shared = [r for r in report.rows if r.cost.barriers] + [o for o in report.others if o.cost.barriers]
    total["barriers"] += max(0, len(through_shared) - 1)
    return total


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_predicted_costs_match_the_interpreter(path):
    sys.path.insert(0, str(CORPUS))
    from corpus import case

    text = path.read_text()
    report = report_ttgir(text)
    assert report.others, "every kernel here has a listed op"
    predicted = _predicted(report)
    kernel = case(path.stem.split(".")[0])
    launch = kernel.make_inputs(np.random.default_rng(5))
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    measured = run_triton_kernel(lower_ttgir(text), args, launch.grid)
    blocks = len(measured.blocks)
    waves = collections.Counter()
    for access in measured.shared_accesses:
        waves[access.kind] += access.wavefronts
    assert measured.shuffles == predicted["shuffles"] * blocks
    assert measured.barriers == predicted["barriers"] * blocks
    assert waves["store"] == predicted["store"] * blocks
    if not predicted["data_dependent"]:
        assert waves["load"] == predicted["load"] * blocks
