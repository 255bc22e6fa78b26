"""The in-warp planner's self-check: `_rounds_reproduce` simulates the rounds on every hardware
point at once (numpy lookup tables, linear in the points). It must agree with the plain
per-point simulation (one `apply` per register, lane, warp and block) on the rounds the planner
builds and on corrupted ones, and it must reject rounds that deliver a wrong element."""

from __future__ import annotations

import dataclasses
import random

import pytest

from linear_layout import LinearLayout, plan_conversion
from linear_layout.core.gf2 import apply_columns
from linear_layout.planning import in_warp
from linear_layout.planning.layouts import as_hardware_layout
from lowering_cases import random_case


def _reference(src: LinearLayout, dst: LinearLayout, plan: in_warp.InWarpPlan, maps) -> bool:
    """The plain simulation: every destination point, one at a time."""
    for warp in range(dst.get_in_dim_size("warp")):
        for lane in range(dst.get_in_dim_size("lane")):
            for register in range(dst.get_in_dim_size("register")):
                r = plan.rounds[register ^ apply_columns(maps.reindex, lane)]
                source_lane = lane if r.source_lane is None else apply_columns(maps.lanes, lane) ^ r.lane_xor
                source_register = r.register_base ^ apply_columns(maps.select, source_lane)
                point = {"register": register, "lane": lane, "warp": warp, "block": 0}
                source = {"register": source_register, "lane": source_lane, "warp": warp, "block": 0}
                if dst.apply(point) != src.apply(source):
                    return False
    return True


def _planned(src: LinearLayout, dst: LinearLayout):
    """(reduced src, reduced dst, rounds, lane maps) as `in_warp_rounds` builds them, or None."""
    src = as_hardware_layout(src, None, "src").remove_zero_bases_along_dim("register")
    dst = as_hardware_layout(dst, None, "dst").remove_zero_bases_along_dim("register")
    gather = in_warp._gather_map(src, dst)
    if isinstance(gather, in_warp.InWarpRefusal):
        return None
    blocks = in_warp._gather_blocks(gather, dst)
    maps = in_warp._lane_maps(blocks)
    if isinstance(maps, in_warp.InWarpRefusal):
        return None
    return src, dst, in_warp._rounds(blocks, maps, dst.get_in_dim_size("register")), maps


def _corrupted(plan: in_warp.InWarpPlan, rng: random.Random, num_lanes: int) -> in_warp.InWarpPlan | None:
    """The plan with one round reading another register (or, for a shuffle round, another
    lane); None when there is no other register or lane to read."""
    rounds = list(plan.rounds)
    k = rng.randrange(len(rounds))
    if rounds[k].source_lane is not None and rng.random() < 0.5:
        rounds[k] = dataclasses.replace(rounds[k], lane_xor=rounds[k].lane_xor ^ rng.randrange(1, num_lanes))
    elif len(rounds) > 1:
        rounds[k] = dataclasses.replace(rounds[k], register_base=rounds[k].register_base ^ rng.randrange(1, len(rounds)))
    else:
        return None
    return dataclasses.replace(plan, rounds=tuple(rounds))


def _corruptions(plan: in_warp.InWarpPlan, seed: int, num_lanes: int) -> list[in_warp.InWarpPlan]:
    rng = random.Random(seed)
    return [wrong for wrong in (_corrupted(plan, rng, num_lanes) for _ in range(4)) if wrong is not None]


# Seeds of tests/lowering_cases.py whose conversion has in-warp rounds (computed, not listed).
IN_WARP_SEEDS = [seed for seed in range(120) if _planned(*random_case(seed)[:2]) is not None][:40]


def test_the_seeds_cover_enough_cases():
    assert len(IN_WARP_SEEDS) == 40


@pytest.mark.parametrize("seed", IN_WARP_SEEDS)
def test_check_agrees_with_the_plain_simulation(seed):
    planned = _planned(*random_case(seed)[:2])
    assert planned is not None
    src, dst, plan, maps = planned
    assert in_warp._rounds_reproduce(src, dst, plan, maps)
    assert _reference(src, dst, plan, maps)
    for wrong in _corruptions(plan, seed, dst.get_in_dim_size("lane")):
        assert in_warp._rounds_reproduce(src, dst, wrong, maps) == _reference(src, dst, wrong, maps)


def test_corrupted_rounds_of_injective_layouts_are_rejected():
    """Without broadcasting, a round that reads another register or lane delivers another
    element: the check rejects every such corruption."""
    injective = []
    for seed in IN_WARP_SEEDS:
        src, dst, plan, maps = _planned(*random_case(seed)[:2])
        if src.rank() == src.get_total_in_dim_size_log2():
            injective.append((seed, src, dst, plan, maps))
    corruptions = [
        (src, dst, wrong, maps)
        for seed, src, dst, plan, maps in injective
        for wrong in _corruptions(plan, seed, dst.get_in_dim_size("lane"))
    ]
    assert len(corruptions) >= 10
    for src, dst, wrong, maps in corruptions:
        assert not in_warp._rounds_reproduce(src, dst, wrong, maps)


def test_noop_plan_of_many_registers():
    """A no-op conversion of a layout with 256 registers per thread plans (and checks) its rounds."""
    registers = [[1 << i] for i in range(8)]
    lanes = [[1 << (8 + i)] for i in range(5)]
    layout = LinearLayout.from_bases(
        [("register", registers), ("lane", lanes), ("warp", [[1 << 13]]), ("block", [])], ["dim0"], [1 << 14]
    )
    plan = plan_conversion(layout, layout)
    assert plan.strategy == "noop" and len(plan.rounds) == 256 and plan.shuffles == 0
