"""The axis-info analysis (Triton's AxisInfo): its facts hold of the values they describe, and the
access widths it gives are exactly Triton's on every kernel of the corpus."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from linear_layout.core.layout import LinearLayout
from linear_layout.ir.bridge import layout_of
from linear_layout.patterns.axis_info import (
    MAX_DIVISOR,
    AxisInfo,
    OpFacts,
    analyze_axis_info,
    binary_axis_info,
    cmp_axis_info,
    contig_per_thread,
    highest_pow2_divisor,
    pointee_bytes,
    register_order,
)
from linear_layout.ttgir import parse_ttgir

CORPUS = Path(__file__).parent / "kernel_corpus"
TRITON_PTX = json.loads((CORPUS / "triton_ptx.json").read_text())
FILES = [path for path in sorted((CORPUS / "ttgir").glob("*.ttgir")) if path.stem in TRITON_PTX]  # cuda


# ---------------------------------------------------------------------------- soundness


def _facts_hold(values: np.ndarray, info: AxisInfo) -> bool:
    """Whether a 1-D array satisfies `info`: aligned runs of `contiguity` consecutive values whose
    first value is a multiple of `divisibility`, and aligned runs of `constancy` equal values."""
    contiguity, constancy = min(info.contiguity[0], values.size), min(info.constancy[0], values.size)
    runs = values.reshape(-1, contiguity)
    if not (np.diff(runs, axis=1) == 1).all():
        return False
    if info.divisibility[0] < MAX_DIVISOR and (runs[:, 0] % info.divisibility[0]).any():
        return False
    if info.constant is not None and not (values == info.constant).all():
        return False
    equal_runs = values.reshape(-1, constancy)
    return bool((equal_runs == equal_runs[:, :1]).all())


N = 64


@st.composite
def _operand(draw):
    """A value a kernel computes, with the facts the analysis gives it: a range `start + [0, n)`
    (start a multiple of a power of two) or a splat of a scalar known only by its divisibility."""
    if draw(st.booleans()):
        start = draw(st.integers(0, 8)) * 2 ** draw(st.integers(0, 6))
        return np.arange(start, start + N), AxisInfo((N,), (highest_pow2_divisor(start),), (1,))
    divisibility = 2 ** draw(st.integers(0, 6))
    value = draw(st.integers(0, 40)) * divisibility
    known = draw(st.booleans())
    info = AxisInfo((1,), (divisibility if not known else highest_pow2_divisor(value),), (N,), value if known else None)
    return np.full(N, value), info


_NUMPY = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and,
    "arith.remsi": lambda a, b: np.fmod(a, np.where(b == 0, 1, b)),
    "arith.divsi": lambda a, b: (a / np.where(b == 0, 1, b)).astype(np.int64),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_NUMPY)), _operand(), _operand())
def test_binary_facts_hold_of_the_values(name, lhs, rhs):
    (lhs_values, lhs_info), (rhs_values, rhs_info) = lhs, rhs
    if name in ("arith.remsi", "arith.divsi") and (rhs_values <= 0).any():
        return
    info = binary_axis_info(name, lhs_info, rhs_info, OpFacts((N,), True, 4))
    lost = max(lhs_info.contiguity[0], rhs_info.contiguity[0]) > info.contiguity[0]
    if name in ("arith.addi", "arith.subi") and lost:
        # Triton's own imprecision, kept for fidelity (test_two_ranges_keep_tritons_divisibility):
        # check what does hold, the constancy and contiguity.
        info = AxisInfo(info.contiguity, (1,), info.constancy, info.constant)
    assert _facts_hold(_NUMPY[name](lhs_values, rhs_values), info), (name, lhs_info, rhs_info, info)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["slt", "sle", "sgt", "sge", "eq", "ne"]), _operand(), _operand())
def test_comparison_constancy_holds_of_the_mask(predicate, lhs, rhs):
    (lhs_values, lhs_info), (rhs_values, rhs_info) = lhs, rhs
    compare = {"slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}[predicate]
    info = cmp_axis_info(predicate, lhs_info, rhs_info, (N,))
    mask = compare(lhs_values, rhs_values).astype(np.int64)
    runs = mask.reshape(-1, min(info.constancy[0], N))
    assert (runs == runs[:, :1]).all(), (predicate, lhs_info, rhs_info, info)


def test_two_ranges_keep_tritons_divisibility():
    """arange(0, 64) + arange(4, 68) = [4, 6, 8, ...]: Triton's AddSubOpAxisInfoVisitor gives
    contiguity 1 and divisibility gcd(2**62, 4) = 4, which 6 breaks (the divisibility of a
    contiguous operand is that of its runs' first values, not of every value; `0 - arange` is the
    same). We keep Triton's facts, as the access widths must be Triton's; no corpus kernel
    combines a range this way."""
    info = binary_axis_info("arith.addi", AxisInfo.of_range(0, 64), AxisInfo.of_range(4, 68), OpFacts((64,), True, 4))
    assert info == AxisInfo((1,), (4,), (1,))


def test_a_masked_tail_of_a_multiple_of_16_is_constant_over_16():
    offsets = AxisInfo((256,), (256,), (1,))  # pid * 256 + arange(0, 256)
    n = AxisInfo((1,), (16,), (256,))  # splat of an i32 argument with tt.divisibility = 16
    assert cmp_axis_info("slt", offsets, n, (256,)).constancy == (16,)
    unknown = AxisInfo((1,), (1,), (256,))
    assert cmp_axis_info("slt", offsets, unknown, (256,)).constancy == (1,)


def test_addptr_counts_divisibility_in_bytes():
    pointer = AxisInfo((1,), (16,), (128,))
    offsets = AxisInfo((128,), (MAX_DIVISOR,), (1,))
    info = binary_axis_info("tt.addptr", pointer, offsets, OpFacts((128,), True, 2))
    assert info == AxisInfo((128,), (16,), (1,))


def test_order_and_contiguity_per_thread_follow_the_register_bases():
    layout = LinearLayout.from_bases(
        [("register", [[0, 1], [0, 2], [1, 0]]), ("lane", [[0, 4], [2, 0]])], ["dim0", "dim1"]
    )
    assert register_order(layout) == (1, 0)
    assert contig_per_thread(layout) == (2, 4)
    broadcast = LinearLayout.from_bases([("register", [[0, 0], [1, 0]])], ["dim0", "dim1"])
    assert register_order(broadcast) == (0, 1) and contig_per_thread(broadcast) == (1, 1)


# ---------------------------------------------------------------------------- against Triton


def _accesses(path: Path) -> tuple[Counter, Counter]:
    """Per tt.load/tt.store of the kernel: (access width in bits) x (accesses per thread), the
    latter being the thread's distinct elements (register bases that move) over the vector."""
    module = parse_ttgir(path.read_text())  # kept alive while its ops are used
    kernel = module.body.operations[0]
    facts = analyze_axis_info(kernel)
    loads, stores = Counter(), Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("tt.load", "tt.store"):
            operands = list(op.operands)
            mask_index = 1 if op.name == "tt.load" else 2
            mask = operands[mask_index] if len(operands) > mask_index else None
            pointer = operands[0]
            bits = pointee_bytes(pointer.type) * 8
            if isinstance(pointer.type, ir.RankedTensorType):
                vector = facts.vector_size(pointer, mask)
                registers = dict(layout_of(pointer.type).bases)["register"]
                count = 2 ** sum(1 for basis in registers if any(basis)) // vector
            else:
                vector, count = 1, 1
            (loads if op.name == "tt.load" else stores)[vector * bits] += count
        return ir.WalkResult.ADVANCE

    kernel.walk(visit, ir.WalkOrder.PRE_ORDER)
    return loads, stores


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_global_access_widths_are_tritons(path):
    """Every global load and store of Triton's PTX (stored by generate.py), by width and count,
    is what the analysis predicts: the corpus has scalar (unknown n), 64-bit and 128-bit cases."""
    loads, stores = _accesses(path)
    assert loads == Counter(TRITON_PTX[path.stem]["global_loads"])
    assert stores == Counter(TRITON_PTX[path.stem]["global_stores"])


def test_the_corpus_exercises_vector_widths():
    widths = {width for figures in TRITON_PTX.values() for width in figures["global_loads"]}
    assert {32, 64, 128} <= widths


def test_loop_carried_values_reach_a_fixpoint():
    module = parse_ttgir((CORPUS / "ttgir" / "tile_loop.sm80.w4.ttgir").read_text())
    kernel = module.body.operations[0]
    facts = analyze_axis_info(kernel)
    loop = next(op for op in kernel.regions[0].blocks[0].operations if op.name == "scf.for")
    induction = loop.regions[0].blocks[0].arguments[0]
    assert facts.of(induction) == AxisInfo((1,), (32,), (1,))  # gcd(divisibility of 0, of the step 32)
    accumulator = loop.regions[0].blocks[0].arguments[1]
    assert facts.of(accumulator).rank == 2 and facts.of(loop.results[0]) == facts.of(accumulator)
