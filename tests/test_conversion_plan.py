"""plan_conversion and bank_conflicts: reference cases, exact store/load simulation, and the
bank model checked against the SIMT interpreter's own wavefront counter."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import linear_layout
import linear_layout.planning as planning
from linear_layout import LinearLayout
from linear_layout.encodings import BlockedLayout as B
from linear_layout.encodings import DotOperandLayout, NVMMADistributedLayout, SliceLayout, SwizzledSharedLayout
from linear_layout.planning import (
    PlannerError,
    bank_conflicts,
    plan_conversion,
    plan_local_access,
    triton_scratch_bytes,
)
from linear_layout.planning import plan as plan_module
from linear_layout.planning.in_warp import InWarpRefusal, in_warp_rounds, warp_decomposition

simt = pytest.importorskip("linear_layout.simt.interpreter")


# ---------------------------------------------------------------- reference cases

def test_case12_shuffle_and_shared():
    src = B((1, 4), (8, 4), (1, 1), (1, 0))
    p = plan_conversion(src, B((1, 4), (16, 2), (1, 1), (1, 0)), (16, 16), 32)
    assert p.strategy == "shuffle" and p.scratch_bytes == 0 and len(p.decomposition.mixed) == 1
    p = plan_conversion(src, B((4, 1), (4, 8), (1, 1), (0, 1)), (16, 16), 32)
    assert p.strategy == "shared" and p.scratch_bytes == 1024 and p.bank_conflicts == 0


def test_case13_scratch():
    al = B((1, 4), (4, 8), (4, 1), (1, 0))
    bl = B((1, 4), (1, 32), (4, 1), (1, 0))
    p = plan_conversion(al, bl, (16, 32), 16)
    assert p.strategy == "shared" and p.scratch_bytes == 1024
    assert p.shared.vector == 4  # the 4 contiguous f16 common to both: 64-bit accesses
    p = plan_conversion(B((1,), (32,), (4,), (0,)), SliceLayout(0, bl), (128,), 32)
    assert p.strategy == "shared" and p.scratch_bytes == 512


def test_noop_and_register():
    a = B((2, 2), (8, 4), (2, 2), (1, 0))
    assert plan_conversion(a, a, (32, 32), 32).strategy == "noop"
    ll = a.to_linear_layout((32, 32))
    regs = dict(ll.bases)["register"]
    swapped = LinearLayout.from_bases([("register", regs[::-1])] + [(d, b) for d, b in ll.bases if d != "register"],
                                      list(ll.get_out_dim_names()), [s for _, s in ll.out_dims])
    assert plan_conversion(ll, swapped, bitwidth=32).strategy == "register"


def test_reps_shrink_scratch():
    # rows 32, 64, 128 are registers on both sides: two become the vector, one a repetition
    src = B((1, 1), (1, 32), (4, 1), (1, 0))
    dst = B((1, 1), (32, 1), (1, 4), (0, 1))
    full = plan_conversion(src, dst, (256, 32), 32, max_reps=0)
    small = plan_conversion(src, dst, (256, 32), 32)
    assert small.shared.num_reps > 1 and small.scratch_bytes * small.shared.num_reps == full.scratch_bytes
    assert small.barriers == 2 * small.shared.num_reps - 1


# Triton 3.9's sm_90 scratch bytes (compiled.metadata.shared, benchmarks/bench_codegen.py) for
# conversions where it turns common register directions into rounds (ldmatrix/stmatrix tiles)
TRITON_SCRATCH = [
    (B((1, 2), (8, 4), (8, 1), (1, 0)), B((2, 1), (4, 8), (1, 8), (0, 1)), (256, 128), 16, 32768),
    (B((1, 8), (8, 4), (4, 1), (1, 0)), NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), (64, 64), 16, 2048),
    (B((1, 8), (8, 4), (8, 1), (1, 0)), NVMMADistributedLayout((2, 0), (4, 2), (16, 8)), (128, 128), 32, 4096),
    (B((1, 8), (8, 4), (4, 1), (1, 0)), NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), (128, 64), 8, 2048),
    (NVMMADistributedLayout((2, 0), (2, 2), (16, 8)),
     DotOperandLayout(1, NVMMADistributedLayout((2, 0), (2, 2), (16, 8)), 2), (128, 64), 16, 2048),
    (B((1, 4), (8, 4), (4, 1), (1, 0)), B((4, 1), (4, 8), (1, 4), (0, 1)), (32, 32), 32, 4096),
]


@pytest.mark.parametrize("src,dst,shape,bits,triton", TRITON_SCRATCH)
def test_scratch_within_triton(src, dst, shape, bits, triton):
    """The model of Triton's choice reproduces its scratch, and the plan never uses more, with
    conflict-free accesses and the minimum wavefronts."""
    assert triton_scratch_bytes(src, dst, bits, shape) == triton
    p = plan_conversion(src, dst, shape, bits)
    assert p.strategy == "shared" and p.scratch_bytes <= triton and p.bank_conflicts == 0
    assert p.barriers == 2 * p.shared.num_reps - 1


def test_bank_conflicts_swizzle():
    reg = B((1, 1), (1, 32), (4, 1), (1, 0))  # each warp reads one column-major... row of 32
    dst_t = B((1, 1), (32, 1), (1, 4), (0, 1))  # each warp holds a column: 32 rows
    plain = SwizzledSharedLayout(1, 1, 1, (1, 0))
    swz = SwizzledSharedLayout(1, 1, 32, (1, 0))
    assert bank_conflicts(reg, plain, 32, (32, 32)).conflicts == 0
    assert bank_conflicts(dst_t, plain, 32, (32, 32)).phase_cost == 32
    assert bank_conflicts(dst_t, swz, 32, (32, 32)).conflicts == 0


# ---------------------------------------------------------------- random layouts

@st.composite
def distributed(draw, n_bits, warp_bits, lane_bits=5, mix=True):
    """A random distributed layout on 2**n_bits elements (two dims) with broadcasts and swizzles."""
    hw_zero_lane = draw(st.integers(0, max(0, lane_bits + warp_bits - n_bits)))
    threads = lane_bits + warp_bits - hw_zero_lane
    threads = min(threads, n_bits)
    hw_zero = lane_bits + warp_bits - threads
    nreg = n_bits - threads
    perm = draw(st.permutations(list(range(n_bits))))
    vecs = [1 << p for p in perm]
    if mix and draw(st.booleans()):
        for _ in range(draw(st.integers(1, 3))):
            i, j = draw(st.integers(0, n_bits - 1)), draw(st.integers(0, n_bits - 1))
            if i != j:
                vecs[i] ^= vecs[j]
    regs, thr = vecs[:nreg], vecs[nreg:]
    zero_pos = draw(st.sets(st.integers(0, lane_bits + warp_bits - 1), min_size=hw_zero, max_size=hw_zero))
    it = iter(thr)
    thread_cols = [0 if k in zero_pos else next(it) for k in range(lane_bits + warp_bits)]
    if draw(st.booleans()):
        regs = regs + [0]  # a broadcast register
    half = n_bits // 2
    def coords(v):
        return [v & ((1 << half) - 1), v >> half]
    return LinearLayout.from_bases(
        [("register", [coords(v) for v in regs]), ("lane", [coords(v) for v in thread_cols[:lane_bits]]),
         ("warp", [coords(v) for v in thread_cols[lane_bits:]]), ("block", [])],
        ["dim0", "dim1"], [1 << half, 1 << (n_bits - half)])


@st.composite
def conversions(draw):
    n_bits = draw(st.integers(5, 12))
    warp_bits = draw(st.integers(0, 3))
    src = draw(distributed(n_bits, warp_bits))
    dst = draw(distributed(n_bits, warp_bits))
    bitwidth = draw(st.sampled_from([8, 16, 32, 64]))
    return src, dst, bitwidth


def _hw(ll):
    r, l, w = (ll.get_in_dim_size(d) for d in ("register", "lane", "warp"))
    return r, l, w


def _elements(ll):
    """elements[r, lane, warp] = flattened element index."""
    tab = ll.flatten_outs().tabulate()[:, 0]
    r, l, w = _hw(ll)
    return tab.reshape(w, l, r).transpose(2, 1, 0)  # first in-dim lowest bits


def _thread_base(acc, lanes, warps):
    cols = dict(acc.thread_offset.bases)
    out = np.zeros(lanes.shape, np.int64)
    for k, b in enumerate(cols["lane"]):
        out ^= np.where((lanes >> k) & 1, b[0], 0)
    for k, b in enumerate(cols["warp"]):
        out ^= np.where((warps >> k) & 1, b[0], 0)
    return out


def _simulate(plan):
    """Run the plan's stores and loads on every thread; return the destination registers and
    the wavefronts the interpreter's bank model charges."""
    sp = plan.shared
    exchanged = plan.packed or plan  # a packed plan's shared exchange moves the swapped layouts
    src_el, dst_el = _elements(exchanged.src), _elements(exchanged.dst)
    _, L, W = _hw(plan.src)
    lanes, warps = np.meshgrid(np.arange(L), np.arange(W), indexing="ij")
    lanes, warps = lanes.ravel(), warps.ravel()
    pred = (lanes & sp.store.predicate["lane"]) == 0
    pred &= (warps & sp.store.predicate["warp"]) == 0
    size = sp.scratch_bytes * 8 // plan.bitwidth
    got = np.full((dst_el.shape[0], len(lanes)), -1, np.int64)
    st_base, ld_base = _thread_base(sp.store, lanes, warps), _thread_base(sp.load, lanes, warps)
    waves = [0, 0, 0, 0]
    for rep in range(sp.num_reps):
        smem = np.full(size, -1, np.int64)
        st_ins = [i for i in sp.store.instructions if i.rep == rep]
        ld_ins = [i for i in sp.load.instructions if i.rep == rep]
        addrs = []
        for ins in st_ins:
            start = st_base[pred] ^ ins.offset
            assert (start % len(ins.registers) == 0).all()
            addrs.append(start)
            for k, r in enumerate(ins.registers):
                vals = src_el[r, lanes[pred], warps[pred]]
                old = smem[start + k]
                assert ((old == -1) | (old == vals)).all(), "two writers disagree"
                smem[start + k] = vals
        for acc, ins_list, base, mask, slot in ((sp.store, st_ins, st_base, pred, 0), (sp.load, ld_ins, ld_base, np.ones_like(pred), 2)):
            if not ins_list:
                continue
            a = np.stack([(base[mask] ^ i.offset) for i in ins_list], axis=1) * (plan.bitwidth // 8)
            w, i = simt._wavefronts(warps[mask], lanes[mask], a, acc.instruction_bytes, W, L, ("store", "", "load")[slot])
            waves[slot] += int(w.sum())
            waves[slot + 1] += int(i.sum())
        for ins in ld_ins:
            start = ld_base ^ ins.offset
            for k, r in enumerate(ins.registers):
                got[r] = smem[start + k]
    for r, s in sp.load.copies:
        got[r] = got[s]
    return got, dst_el, lanes, warps, waves


@given(conversions())
def test_shared_plans_are_exact_and_predicted(case):
    src, dst, bitwidth = case
    plan = plan_conversion(src, dst, bitwidth=bitwidth)
    if not plan.strategy.uses_shared_memory:
        return
    sp = plan.shared
    # the shared layout is invertible on its (per-CTA) part
    assert sp.smem.is_invertible() or sp.smem.squeeze_ins().is_invertible()
    # the offset maps are src/dst invert_and_compose smem
    store_cvt = plan.src.invert_and_compose(sp.smem)
    for name in ("lane", "warp"):
        assert all(b[store_cvt.get_out_dim_index("reps")] == 0 for b in dict(store_cvt.bases)[name])
    got, want, lanes, warps, waves = _simulate(plan)
    want = want[:, lanes, warps]
    assert np.array_equal(got, want)
    assert waves == [sp.store.wavefronts, sp.store.ideal_wavefronts, sp.load.wavefronts, sp.load.ideal_wavefronts]
    assert plan.bank_conflicts == 0
    total = plan.src.get_total_out_dim_size() * bitwidth // 8
    assert sp.scratch_bytes * sp.num_reps == total and sp.scratch_bytes <= total
    assert max(sp.store.instruction_bytes, sp.load.instruction_bytes) <= 16


@st.composite
def shared_pairs(draw):
    n_bits = draw(st.integers(5, 11))
    warp_bits = draw(st.integers(0, 2))
    reg = draw(distributed(n_bits, warp_bits))
    perm = draw(st.permutations(list(range(n_bits))))
    vecs = [1 << p for p in perm]
    if draw(st.booleans()):  # an XOR swizzle
        for _ in range(draw(st.integers(1, 4))):
            i, j = draw(st.integers(0, n_bits - 1)), draw(st.integers(0, n_bits - 1))
            if i != j:
                vecs[i] ^= vecs[j]
    half = n_bits // 2
    smem = LinearLayout.from_bases([("offset", [[v & ((1 << half) - 1), v >> half] for v in vecs])],
                                   ["dim0", "dim1"], [1 << half, 1 << (n_bits - half)])
    return reg, smem, draw(st.sampled_from([8, 16, 32, 64])), draw(st.sampled_from(["load", "store"]))


@given(shared_pairs())
def test_bank_conflicts_match_the_interpreter(case):
    reg, smem, bitwidth, kind = case
    res = bank_conflicts(reg, smem, bitwidth, kind=kind)
    cvt = reg.invert_and_compose(smem)
    off = cvt.tabulate()[:, 0]
    R, L, W = _hw(reg)
    off = off.reshape(W, L, R)
    free = reg.get_free_variable_masks()
    regs = [r for r in range(R) if not r & free["register"]]
    starts = sorted({int(off[0, 0, r]) & ~(res.vector - 1) for r in regs})
    # registers of one access share (offset // vector) at lane 0; pick one start per group
    groups = {}
    for r in regs:
        groups.setdefault(int(off[0, 0, r]) // res.vector, r)
    lanes, warps = np.meshgrid(np.arange(L), np.arange(W), indexing="ij")
    lanes, warps = lanes.ravel(), warps.ravel()
    mask = np.ones(len(lanes), bool)
    if kind == "store":
        mask = ((lanes & free["lane"]) == 0) & ((warps & free["warp"]) == 0)
    cols = []
    for _, r in sorted(groups.items()):
        starts = off[warps, lanes, r] & ~(res.vector - 1)
        cols.append(starts[mask])
    assert len(cols) == res.instructions
    a = np.stack(cols, axis=1) * (bitwidth // 8)
    w, i = simt._wavefronts(warps[mask], lanes[mask], a, res.instruction_bytes, W, L, kind)
    assert (int(w.sum()), int(i.sum())) == (res.wavefronts, res.ideal_wavefronts)


# ---------------------------------------------------------------- the single planner: decision, rounds, errors

def _span(basis, t):
    out = 0
    for k, b in enumerate(basis):
        if t >> k & 1:
            out ^= b
    return out


def _lane_map(layout, lane, out):
    return 0 if layout is None else layout.apply({"lane": lane})[out]


def _run_rounds(plan):
    """Execute the in-warp rounds as the emitter does, on every register, lane and warp; return
    (element each destination register receives, element it must hold)."""
    src, dst = plan.src, plan.dst
    got, want = [], []
    for warp in range(dst.get_in_dim_size("warp")):
        for lane in range(dst.get_in_dim_size("lane")):
            reader = _span(plan.reader_basis, _lane_map(plan.reader_select, lane, "register"))
            for full in range(dst.get_in_dim_size("register")):
                r = plan.rounds[plan.dst_registers.reduced_of[full] ^ reader]
                source = lane if r.source_lane is None else _lane_map(r.source_lane, lane, "lane") ^ r.lane_xor
                register = r.register_base ^ _span(plan.select_basis, _lane_map(r.register_select, source, "register"))
                hw = {"register": plan.src_registers.full_of[register], "lane": source, "warp": warp, "block": 0}
                got.append(tuple(src.apply(hw).values()))
                want.append(tuple(dst.apply({"register": full, "lane": lane, "warp": warp, "block": 0}).values()))
    return got, want


@given(conversions())
def test_in_warp_plans_execute_exactly(case):
    """Every noop/register/shuffle plan's rounds deliver every destination element; shuffles
    only under Triton's criterion (a bit permutation with at most one mixed transposition)."""
    src, dst, bitwidth = case
    plan = plan_conversion(src, dst, bitwidth=bitwidth)
    if plan.strategy.uses_shared_memory:
        assert plan.shared is not None and not plan.rounds
        return
    assert plan.shared is None and len(plan.rounds) == 1 << len(plan.dst_registers.full_of).bit_length() - 1
    got, want = _run_rounds(plan)
    assert got == want
    assert plan.shuffles == sum(r.source_lane is not None for r in plan.rounds)
    if plan.strategy == "shuffle":
        assert plan.shuffles > 0 and bitwidth <= 32 and len(plan.decomposition.mixed) <= 1
    else:
        assert plan.shuffles == 0


# A broadcast source lane mixed with a register transposition (tests/lowering_cases.py seed 94):
# Triton's criterion accepts the permutation, but lanes 0 and 1 (same source data) would need
# different registers of their common provider, so no shuffle rounds exist.
BROADCAST_SRC = LinearLayout.from_bases([("register", [[1]]), ("lane", [[0], [16], [8], [2], [32]]),
                                         ("warp", [[4]]), ("block", [])], ["dim0"], [64])
BROADCAST_DST = LinearLayout.from_bases([("register", []), ("lane", [[1], [2], [8], [16], [32]]),
                                         ("warp", [[4]]), ("block", [])], ["dim0"], [64])


def test_former_fallback_is_a_decision_of_the_planner():
    """What used to be a second planning pass (rounds fail -> re-plan with in_warp=False) is one
    decision: shared memory, with the reason, and the shared plan executes exactly."""
    decomposition = warp_decomposition(BROADCAST_SRC, BROADCAST_DST, 16)
    assert decomposition is not None and len(decomposition.mixed) <= 1  # Triton would shuffle
    refusal = in_warp_rounds(BROADCAST_SRC, BROADCAST_DST, 16)
    assert isinstance(refusal, InWarpRefusal) and "different registers" in refusal.reason
    plan = plan_conversion(BROADCAST_SRC, BROADCAST_DST, bitwidth=16)
    assert plan.strategy == "shared" and "no in-warp rounds" in plan.reason and "different registers" in plan.reason
    got, want, lanes, warps, _ = _simulate(plan)
    assert np.array_equal(got, want[:, lanes, warps])


def test_wide_elements_are_not_shuffled():
    src, dst = B((1, 4), (8, 4), (1, 1), (1, 0)), B((1, 4), (16, 2), (1, 1), (1, 0))
    assert plan_conversion(src, dst, (16, 16), 32).strategy == "shuffle"
    plan = plan_conversion(src, dst, (16, 16), 64)
    assert plan.strategy == "shared" and "64-bit elements cannot be shuffled" in plan.reason
    assert plan_conversion(src, dst, (16, 16), 32, in_warp=False).strategy == "shared"


def test_one_planner():
    """One definition, one plan type, exported at the top level and from the package."""
    assert linear_layout.plan_conversion is planning.plan_conversion is plan_module.plan_conversion
    assert linear_layout.bank_conflicts is planning.bank_conflicts
    assert not hasattr(planning.in_warp, "plan_conversion") and not hasattr(planning.shared, "plan_conversion")


def test_plans_are_immutable_and_errors_are_not_cached():
    src = B((1, 4), (8, 4), (4, 1), (1, 0))
    dst = B((4, 1), (4, 8), (1, 4), (0, 1))
    plan = plan_conversion(src, dst, (32, 32), 32)
    assert plan_conversion(src, dst, (32, 32), 32) is plan  # cached: safe because immutable
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.strategy = "noop"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.shared.store.wavefronts = 0
    with pytest.raises(TypeError):
        plan.shared.store.predicate["lane"] = 1
    assert isinstance(plan.rounds, tuple) and isinstance(plan.shared.store.instructions, tuple)
    errors = []
    for _ in range(2):
        with pytest.raises(PlannerError, match="different shapes") as info:
            plan_conversion(src.to_linear_layout((32, 32)), dst.to_linear_layout((32, 64)))
        errors.append(info.value)
    assert errors[0] is not errors[1]


def _cross_cta():
    layout = B((1, 1), (1, 32), (4, 1), (1, 0))
    a = layout.to_linear_layout((64, 32)) * LinearLayout.identity_1d(2, "block", "dim0")
    b = layout.to_linear_layout((128, 16)) * LinearLayout.identity_1d(2, "block", "dim1")
    return plan_conversion(a.transpose_outs(["dim0", "dim1"]), b.transpose_outs(["dim0", "dim1"]))


PLANNER_ERRORS = [
    (lambda: plan_conversion(B((1, 1), (1, 32), (4, 1), (1, 0)), B((1, 1), (1, 32), (2, 1), (1, 0)), (64, 32)),
     "different numbers of warps"),
    (lambda: plan_conversion(B((1, 1), (1, 32), (4, 1), (1, 0)), B((1, 1), (1, 32), (4, 1), (1, 0)), (64, 32),
                             bitwidth=12), "power of two"),
    (lambda: plan_conversion(B((1, 1), (1, 32), (4, 1), (1, 0)), B((1, 1), (1, 32), (4, 1), (1, 0))),
     "an encoding needs a shape"),
    (lambda: plan_conversion(LinearLayout.identity_1d(32, "lane", "d"), LinearLayout.identity_1d(32, "thread", "d")),
     "not among"),
    (lambda: plan_conversion(LinearLayout.identity_1d(32, "lane", "d"), LinearLayout.zeros_1d(32, "lane", "d", 32)),
     "cover the whole tensor"),
    (lambda: plan_conversion(LinearLayout.identity_1d(16, "lane", "d"), LinearLayout.identity_1d(16, "lane", "d")),
     "16 lanes, expected 32"),
    (_cross_cta, "between CTAs"),
    (lambda: bank_conflicts(B((1, 1), (1, 32), (4, 1), (1, 0)), SwizzledSharedLayout(1, 1, 1, (1, 0)), 32, (32, 32),
                            kind="copy"), "kind must be"),
    (lambda: plan_local_access(LinearLayout.identity_1d(32, "lane", "d"), LinearLayout.zeros_1d(32, "offset", "d", 32),
                               32), "one-to-one"),
]


@pytest.mark.parametrize("call,message", PLANNER_ERRORS)
def test_planner_errors(call, message):
    """User-reachable conditions raise PlannerError (a ValueError), never AssertionError."""
    with pytest.raises(PlannerError, match=message) as info:
        call()
    assert isinstance(info.value, ValueError)
