"""The predicted cost of reductions, scans, gathers, histograms and atomics
(`planning/layout_ops.py`, listed by `linear-layout-report`) against what the SIMT interpreter
measures when it runs the lowered corpus kernel: shuffles, barriers, store/load wavefronts, their
ideal, the distinct bytes moved, and the shared memory, per CTA times the blocks of the grid.
The kernels' conversions are costed by their own plans (the report's rows) and added in."""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from linear_layout.passes import ll_to_simt
from linear_layout.patterns import insert_barriers
from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel
from linear_layout.tools.opt import main as opt_main
from linear_layout.tools.report import report_ttgir

CORPUS = Path(__file__).parent / "kernel_corpus"
#: Every corpus kernel with a listed op and no loop or branch around it (tile_loop's conversion
#: runs once per iteration; the others run each op once per CTA), on NVIDIA and on 64-lane AMD.
KERNELS = ("softmax", "layernorm", "row_sum", "col_sum", "argmax", "cumsum", "cumsum_reverse", "gather",
           "histogram", "scatter_add", "atomic_old")
FILES = [CORPUS / "ttgir" / f"{name}.{chip}.w{warps}.ttgir" for name in KERNELS for chip in ("sm80", "sm90", "gfx942")
         for warps in (1, 4, 8)]


def _predicted(report):
    """Per CTA: shuffles (all warps), barriers, store/load wavefronts and their ideal, of the
    conversions (the report's rows) and the listed ops; the listed ops' distinct bytes, atomics
    and whether a load depends on the data."""
    total = collections.Counter()
    for item in (*report.rows, *report.others):
        cost = item.cost
        assert cost is not None, item
        total["shuffles"] += cost.shuffles * report.num_warps
        total["barriers"] += cost.barriers
        total["store"] += cost.store_wavefronts
        total["load"] += cost.load_wavefronts
        total["ideal"] += cost.ideal
    for other in report.others:
        total["store_bytes"] += other.cost.store_bytes
        total["load_bytes"] += other.cost.load_bytes
        total["data_dependent"] += other.cost.data_dependent
        total["atomics"] += other.cost.atomics + other.cost.shared_atomics
    return total


def _barriers_between_ops(monkeypatch) -> list[int]:
    """Counts the `gpu.barrier`s Membar (`patterns/barriers.py`) puts between ops (where one op
    reuses the scratch another read) when the kernel is lowered: they belong to no op's plan."""
    added: list[int] = []

    def counting(kernel, uses=None):
        before = _count_barriers(kernel)
        insert_barriers(kernel, uses)
        added.append(_count_barriers(kernel) - before)

    monkeypatch.setattr(ll_to_simt, "insert_barriers", counting)
    return added


def _count_barriers(kernel) -> int:
    count = 0

    def visit(op):
        nonlocal count
        count += op.name == "gpu.barrier"
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    return count


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_predicted_costs_match_the_interpreter(path, monkeypatch):
    sys.path.insert(0, str(CORPUS))
    from corpus import case

    text = path.read_text()
    report = report_ttgir(text)
    assert report.others, "every kernel here has a listed op"
    predicted = _predicted(report)
    scratches = {c.cost.scratch_bytes for c in (*report.rows, *report.others) if c.cost.scratch_bytes}
    kernel = case(path.stem.split(".")[0])
    launch = kernel.make_inputs(np.random.default_rng(5))
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    between_ops = _barriers_between_ops(monkeypatch)
    measured = run_triton_kernel(lower_ttgir(text), args, launch.grid)
    blocks = len(measured.blocks)
    waves = collections.Counter()
    for access in measured.shared_accesses:
        waves[access.kind] += access.wavefronts
    if path.stem.startswith("argmax"):
        # argmax's indices are a broadcast row: its accumulators start equal, and CSE merges
        # their first-round shuffles into one; the plan, from the layout alone, counts every one.
        (reduce,) = report.others
        rounds = int(re.search(r"(\d+) shuffle round", reduce.detail).group(1))
        accumulators = reduce.cost.shuffles // (2 * rounds)  # two 32-bit operands
        merged = (accumulators - 1) * report.num_warps * blocks
        assert predicted["shuffles"] * blocks - merged <= measured.shuffles <= predicted["shuffles"] * blocks
    else:
        assert measured.shuffles == predicted["shuffles"] * blocks
    assert len(between_ops) == 1
    assert measured.barriers == (predicted["barriers"] + between_ops[0]) * blocks
    assert waves["store"] == predicted["store"] * blocks
    if not predicted["data_dependent"]:
        assert waves["load"] == predicted["load"] * blocks
        assert measured.ideal_wavefronts == predicted["ideal"] * blocks
    # the interpreter runs each op once per block for all its threads: one atomic op per element
    atomics = sum(n for name, n in measured.op_counts.items() if "atomic" in name)
    assert atomics == predicted["atomics"] * blocks
    # the scratch: each workgroup buffer (a view of the kernel's bytes) is some op's, the largest
    # the largest op's (buffers of ops that never live together share bytes, allocation.py)
    sizes = {buffer.data.nbytes for buffer in measured.workgroup_buffers}
    assert sizes <= scratches and max(sizes, default=0) == max(scratches, default=0)
    if not report.rows:  # the distinct bytes the listed ops move (a conversion's plan has no such sum)
        assert measured.shared_bytes("store") == predicted["store_bytes"] * blocks
        if not predicted["data_dependent"]:
            assert measured.shared_bytes("load") == predicted["load_bytes"] * blocks


@pytest.mark.parametrize("name", ["argmax.sm90.w8", "cumsum.sm80.w4", "gather.sm80.w4", "histogram.sm90.w1",
                                  "scatter_add.sm80.w8"])
def test_ll_explain_annotates_each_layout_op_with_the_reports_cost(name, tmp_path, capsys):
    path = CORPUS / "ttgir" / f"{name}.ttgir"
    report = report_ttgir(path.read_text())
    assert opt_main(["-p", "builtin.module(ll-explain-conversions)", str(path)]) == 0
    explained = re.findall(r'll\.explain = "([^"]*)"', capsys.readouterr().out)
    assert len(explained) == len(report.rows) + len(report.others)  # each conversion, access and op
    costs = iter(explained)  # the ops' summaries, in kernel order, among the conversions'
    assert all(other.cost.summary() in costs for other in report.others) and report.others
