"""One plan class per strategy (issue 17): the class of every plan is its strategy's, every
rejected alternative says why, the reasons reach `ll-explain-conversions` and the report, and the
planner's signatures hold no `Any`."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from linear_layout import LinearLayout
from linear_layout.encodings import BlockedLayout
from linear_layout.planning import ConversionPlan, Rejection, Strategy, plan_conversion, triton_scratch_bytes
from linear_layout.planning.floor import explain
from linear_layout.planning.plan import (
    MatrixConversion,
    NoopConversion,
    PackedConversion,
    RegisterConversion,
    SharedConversion,
    ShuffleConversion,
)
from linear_layout.tools.report import Cost, KernelReport, ReportRow, format_json, format_text

ROW = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
COL = BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1))
SHUFFLE_SRC = BlockedLayout((1, 4), (8, 4), (1, 1), (1, 0))
SHUFFLE_DST = BlockedLayout((1, 4), (16, 2), (1, 1), (1, 0))
PLANNING = Path(__file__).resolve().parents[1] / "python" / "linear_layout" / "planning"

CLASSES = {
    Strategy.NOOP: NoopConversion,
    Strategy.REGISTER: RegisterConversion,
    Strategy.SHUFFLE: ShuffleConversion,
    Strategy.SHARED: SharedConversion,
    Strategy.PACKED: PackedConversion,
    Strategy.MATRIX: MatrixConversion,
}


def _register_swap():
    """A layout and the same layout with its two register bases swapped: a register permutation."""
    ll = ROW.to_linear_layout([64, 64])
    bases = dict(ll.bases)
    swapped = LinearLayout.from_bases(
        [(d, bases[d][::-1] if d == "register" else bases[d]) for d in ll.get_in_dim_names()],
        list(ll.get_out_dim_names()),
        [s for _, s in ll.out_dims],
    )
    return ll, swapped


def _plans():
    """One plan of each strategy."""
    ll, swapped = _register_swap()
    return {
        Strategy.NOOP: plan_conversion(ROW, ROW, (64, 64), 32),
        Strategy.REGISTER: plan_conversion(ll, swapped, bitwidth=32),
        Strategy.SHUFFLE: plan_conversion(SHUFFLE_SRC, SHUFFLE_DST, (16, 16), 32),
        Strategy.SHARED: plan_conversion(ROW, COL, (64, 64), 32),
        Strategy.PACKED: plan_conversion(ROW, COL, (64, 64), 16),
        Strategy.MATRIX: plan_conversion(ROW, COL, (64, 64), 16, chip="sm_90"),
    }


PLANS = _plans()


def test_every_strategy_has_its_own_frozen_class():
    assert set(CLASSES) == set(Strategy) and len(set(CLASSES.values())) == len(Strategy)
    for strategy, plan in PLANS.items():
        assert type(plan) is CLASSES[strategy] and plan.strategy is strategy, (strategy, type(plan))
        assert isinstance(plan, ConversionPlan)
        with pytest.raises(dataclasses.FrozenInstanceError):
            plan.reason = "changed"  # type: ignore[misc]


def test_the_strategy_is_a_string_and_says_whether_it_uses_shared_memory():
    assert Strategy.SHARED == "shared" and f"{Strategy.PACKED}" == "packed"
    through_shared = {s for s in Strategy if s.uses_shared_memory}
    assert through_shared == {Strategy.SHARED, Strategy.PACKED, Strategy.MATRIX}
    for strategy, plan in PLANS.items():
        # only a plan through shared memory has scratch, and only an in-warp plan has rounds
        assert (plan.scratch_bytes > 0) == strategy.uses_shared_memory, strategy
        assert bool(plan.rounds) == (not strategy.uses_shared_memory), strategy


def test_each_class_summarises_and_costs_what_runs():
    assert PLANS[Strategy.NOOP].summary() == "noop (the layouts agree)"
    shuffle = PLANS[Strategy.SHUFFLE]
    assert shuffle.summary() == f"shuffle: {shuffle.shuffles} shuffles, {shuffle.selects} selects per thread"
    packed = PLANS[Strategy.PACKED]
    assert packed.summary().endswith(packed.packed.describe())
    matrix = PLANS[Strategy.MATRIX]
    assert matrix.summary() == matrix.matrix.summary()
    assert matrix.scratch_bytes == matrix.matrix.scratch_bytes
    assert matrix.costs().store_wavefronts + matrix.costs().load_wavefronts == matrix.matrix.wavefronts
    assert matrix.floor_wavefronts == matrix.matrix.floor
    shared = PLANS[Strategy.SHARED]
    assert (shared.costs().store_wavefronts, shared.costs().load_wavefronts) == (
        shared.shared.store.wavefronts,
        shared.shared.load.wavefronts,
    )


def test_the_drawing_of_each_class():
    packed = PLANS[Strategy.PACKED].drawing()
    assert (packed.src, packed.dst) == (PLANS[Strategy.PACKED].packed.src, PLANS[Strategy.PACKED].packed.dst)
    matrix = PLANS[Strategy.MATRIX].drawing()
    assert matrix.shared is PLANS[Strategy.MATRIX].shared and "matrix instructions" in matrix.notes[0]
    shuffle = PLANS[Strategy.SHUFFLE].drawing()
    assert shuffle.shared is None and shuffle.rounds == PLANS[Strategy.SHUFFLE].rounds


def test_rejected_alternatives_say_why():
    shared = PLANS[Strategy.SHARED]  # 32-bit data crossing warps, no chip: only the shuffles were an alternative
    assert shared.rejected == (Rejection(Strategy.SHUFFLE, "data moves between warps"),)
    packed = PLANS[Strategy.PACKED]
    assert [r.strategy for r in packed.rejected] == [Strategy.SHUFFLE, Strategy.SHARED]
    assert "above the floor" in packed.rejected[1].reason
    matrix = PLANS[Strategy.MATRIX]
    assert [r.strategy for r in matrix.rejected] == [Strategy.SHUFFLE, Strategy.SHARED]
    assert f"matrix plan's {matrix.matrix.wavefronts} and {matrix.matrix.shared_instructions}" in matrix.rejected[1].reason
    for plan in (PLANS[Strategy.NOOP], PLANS[Strategy.SHUFFLE]):
        assert plan.rejected == () and plan.rejections() == ""


@pytest.mark.parametrize(
    "kwargs, why",
    [
        ({"bitwidth": 64}, "ldmatrix/stmatrix move 8, 16 or 32-bit elements, not 64-bit ones"),
        ({"bitwidth": 16, "max_reps": 0}, "max_reps fixes the repetitions of the exchange"),
    ],
)
def test_a_rejected_matrix_plan_says_why(kwargs, why):
    plan = plan_conversion(ROW, COL, (64, 64), chip="sm_90", **kwargs)
    assert not isinstance(plan, MatrixConversion)
    assert Rejection(Strategy.MATRIX, why) in plan.rejected
    assert f"matrix ({why})" in explain(plan)


def _matrix_rejection(plan) -> str:
    (why,) = [r.reason for r in plan.rejected if r.strategy == Strategy.MATRIX]
    return why


def test_a_matrix_plan_without_a_candidate_at_the_floor_counts_the_causes():
    plan = plan_conversion(ROW, COL, (64, 64), 8, chip="sm_90")
    bound = triton_scratch_bytes(plan.src, plan.dst, 8, ldmatrix=True, stmatrix=True)
    why = _matrix_rejection(plan)
    assert why.startswith(f"no candidate at the floor within {bound} B of scratch (") and why.endswith(
        " no tile geometry)"
    ), why


def test_a_matrix_plan_that_is_not_cheaper_says_by_how_much():
    src = BlockedLayout((2, 2), (4, 8), (2, 2), (1, 0))
    dst = BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0))
    plan = plan_conversion(src, dst, (64, 64), 32, chip="sm_90")
    assert isinstance(plan, SharedConversion)
    shared = plan.shared
    why = _matrix_rejection(plan)
    assert why.endswith(
        f"not fewer than the vector exchange's {shared.store.wavefronts + shared.load.wavefronts} and "
        f"{len(shared.store.instructions) + len(shared.load.instructions)}"
    ), why


def test_a_layout_repeating_data_other_than_by_zero_bases_rules_the_matrix_plan_out():
    # Zero bases (broadcasts) are planned (issue 20: predicated stores, copied registers); a
    # register equal to another one is not.
    dst = LinearLayout.from_bases(
        [("register", [[0, 1], [0, 2], [0, 16], [0, 32], [0, 1]]), ("lane", [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]),
         ("warp", [[8, 0], [0, 0]]), ("block", [])],
        ["dim0", "dim1"],
    )
    plan = plan_conversion(COL.to_linear_layout([16, 64]), dst, None, 16, chip="sm_90")
    assert _matrix_rejection(plan).startswith("a layout repeats data other than by zero bases")


def test_explain_and_the_report_print_the_rejections():
    plan = PLANS[Strategy.PACKED]
    assert explain(plan).endswith("; " + plan.rejections())
    assert plan.rejections().startswith("rejected: shuffle (data moves between warps); shared (")
    cost = Cost(plan.strategy, rejected=tuple(map(str, plan.rejected)))
    row = ReportRow("ttg.convert_layout", 7, "k.py:3", "#a", "#b", (64, 64), 16, "f16", cost)
    report = KernelReport("k", 4, 32, (row,))
    text = format_text(report)
    assert f"  7: {'; '.join(cost.rejected)}" in text.splitlines()
    assert '"rejected": [' in format_json(report)


def test_the_planner_signatures_hold_no_any():
    for path in sorted(PLANNING.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert "Any" not in names and "Any" not in attributes, path.name
