"""One unit test per law or edge case of the LinearLayout algebra, in the spirit of Triton's
``unittest/Tools/LinearLayoutTest.cpp``.

Every expected value is derived by hand in the comments (never copied from the oracle). Notation:
a layout is written by its bases, ``in: [b0, b1, ...]`` meaning ``L(in = 2**i) = b_i``; applying
it XORs the bases selected by the set bits of each input.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from linear_layout import (
    ColumnAction,
    LinearLayout,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    standard_out_dim_names,
    supremum,
    zeros_like,
)

L = LinearLayout
identity_1d, zeros_1d, strided_1d = L.identity_1d, L.zeros_1d, L.strided_1d


def make(bases, outs, sizes=None, surjective=None):
    """``from_bases`` with inferred sizes (surjective) or explicit sizes (not required surjective)."""
    if sizes is None:
        return L.from_bases(bases, outs)
    return L.from_bases(bases, outs, sizes, require_surjective=bool(surjective))


# ================================================================ the seed's worked examples


def test_seed_lane_warp_example():
    # lane: [(1,1), (2,2)], warp: [(0,1), (0,2)].
    # lane=3 selects (1,1)^(2,2) = (3,3); warp=2 selects (0,2); (3,3)^(0,2) = (3,1).
    layout = make([("lane", [[1, 1], [2, 2]]), ("warp", [[0, 1], [0, 2]])], ["dim0", "dim1"])
    assert layout.apply({"lane": 3, "warp": 2}) == {"dim0": 3, "dim1": 1}
    # The map is (lane, warp) -> (lane, lane ^ warp): a bijection of 4x4.
    assert layout.is_invertible()


def test_seed_blocked_32x32():
    # sizePerThread [1,1], threadsPerWarp [1,32], warpsPerCTA [4,1], order [1,0] over 32x32.
    layout = make(
        [("register", [[4, 0], [8, 0], [16, 0]]),
         ("lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
         ("warp", [[1, 0], [2, 0]])],
        ["dim0", "dim1"],
    )
    # register 5 = 0b101 -> (4,0)^(16,0) = (20,0); lane 3 -> (0,1)^(0,2) = (0,3); warp 2 -> (2,0).
    # (20,0)^(0,3)^(2,0) = (22,3).
    assert layout.apply({"register": 5, "lane": 3, "warp": 2}) == {"dim0": 22, "dim1": 3}
    # 8 registers * 32 lanes * 4 warps = 1024 = 32*32 slots, each element held once.
    assert layout.out_dims == (("dim0", 32), ("dim1", 32))
    assert layout.is_invertible()
    assert layout.invert().apply({"dim0": 22, "dim1": 3}) == {"register": 5, "lane": 3, "warp": 2}


def test_matrix_view_orientation():
    # Rows are output bits (dim0 low bits first), columns input bits (lane bits, then warp bits).
    # Row dim1.bit0 is set by lane=1 (1,1) and warp=1 (0,1): [1, 0, 1, 0].
    layout = make([("lane", [[1, 1], [2, 2]]), ("warp", [[0, 1], [0, 2]])], ["dim0", "dim1"])
    assert layout.get_matrix_view() == ((1, 0, 0, 0), (0, 1, 0, 0), (1, 0, 1, 0), (0, 1, 0, 1))


# ================================================================ construction


def test_empty():
    empty = L.empty()
    assert empty.bases == () and empty.out_dims == ()
    assert empty.get_in_dim_names() == () and empty.get_out_dim_names() == ()
    assert str(empty) == "\n(empty layout)"
    # Triton's binding: LinearLayout() is the empty layout.
    assert L() == empty and hash(L()) == hash(empty)


def test_identity_1d():
    layout = identity_1d(32, "testIns", "testOuts")
    assert layout == make([("testIns", [[1], [2], [4], [8], [16]])], ["testOuts"])
    assert layout.get_in_dim_size_log2("testIns") == 5
    assert layout.get_out_dim_size_log2("testOuts") == 5


def test_identity_1d_size_1_and_0():
    # Size 1: the dimensions exist with no bases; size 0: the empty layout.
    assert identity_1d(1, "i", "o") == make([("i", [])], ["o"])
    assert identity_1d(1, "i", "o").out_dims == (("o", 1),)
    assert identity_1d(0, "i", "o") == L.empty()


def test_zeros_1d():
    assert zeros_1d(32, "ins", "outs") == make([("ins", [[0]] * 5)], ["outs"])
    # The output size can be chosen; the layout is then not surjective.
    wide = zeros_1d(4, "i", "o", 8)
    assert wide.out_dims == (("o", 8),) and not wide.is_surjective()


def test_strided_1d():
    # L(i = x) = 4x into an output of size 4 * 4 = 16: bases 4, 8.
    layout = strided_1d(4, 4, "i", "o")
    assert layout.bases == (("i", ((4,), (8,))),) and layout.out_dims == (("o", 16),)
    assert layout.is_injective() and not layout.is_surjective()


def test_from_bases_infers_sizes_and_accepts_a_mapping():
    # Inferred size: smallest power of two above every coordinate used (at least 1).
    layout = L.from_bases({"in0": [[0], [0], [0]], "in1": [[1], [2]]}, ["dim0"])
    assert layout.get_out_dim_size_log2("dim0") == 2
    assert layout.get_in_dim_names() == ("in0", "in1")


def test_from_bases_copies_its_input():
    # Mutating the argument afterwards must not reach the (immutable) layout.
    bases = [("i", [[1], [2]])]
    layout = L.from_bases(bases, ["o"])
    bases[0][1][0][0] = 3
    bases[0][1].append([0])
    assert layout.bases == (("i", ((1,), (2,))),)


@pytest.mark.parametrize("row", [tuple, list])
def test_from_bases_takes_bases_as_lists_or_tuples_of_any_integers(row):
    # The same layout whatever holds a basis, sizes given or inferred (coordinates 3 and 1: size
    # 4); numpy integers are converted; a float or a bool is a TypeError naming the coordinate.
    for sizes in (None, [4]):
        for value in (3, np.int64(3)):
            layout = L.from_bases([("i", [row([value]), row([1])])], ["o"], sizes)
            assert layout.bases == (("i", ((3,), (1,))),) and layout.out_dims == (("o", 4),)
            assert type(layout.get_basis("i", 0, "o")) is int
    for bad in (1.5, True):
        with pytest.raises(TypeError, match=f"basis coordinates must be integers, got {type(bad).__name__}"):
            L.from_bases([("i", [row([bad])])], ["o"])


def test_str_matches_triton_format():
    layout = make([("a", [[1, 0], [0, 2]]), ("b", [])], ["x", "y"], [2, 4])
    assert str(layout) == (
        "\n - a=1 -> (1, 0)\n   a=2 -> (0, 2)\n - b is a size 1 dimension\n"
        "where out dims are: [x (size 2), y (size 4)]"
    )
    assert str(make([], ["o"], [4])) == "\n(empty layout with out-dims [o (size 4)])"


def test_get_basis():
    layout = make([("a", [[1, 0], [0, 2]])], ["x", "y"], [2, 4])
    assert layout.get_basis("a", 1) == (0, 2)
    assert layout.get_basis("a", 1, "y") == 2


# ================================================================ apply


def test_apply_triton_example():
    # in1: [(4,2), (2,1), (1,0)], in2: [(1,2), (2,1)], outs out1 (8), out2 (4).
    layout = make([("in1", [[4, 2], [2, 1], [1, 0]]), ("in2", [[1, 2], [2, 1]])],
                  ["out1", "out2"], [8, 4])
    assert layout.apply({"in1": 0, "in2": 0}) == {"out1": 0, "out2": 0}
    # in1=1 selects (4,2); argument order does not matter.
    assert layout.apply({"in2": 0, "in1": 1}) == {"out1": 4, "out2": 2}
    # in2=1 selects (1,2).
    assert layout.apply({"in2": 1, "in1": 0}) == {"out1": 1, "out2": 2}


def test_apply_is_the_xor_of_the_selected_bases_on_every_path():
    # 44 input bits: "a" (20 bits) starts at column 0, "b" (13) at 20 and "c" (11) at 33, past
    # apply's table of byte positions (32 starts); zero, byte and wider inputs, each three times
    # (a wide input goes bit by bit once, then through byte tables). Expected: the formula itself.
    rng = random.Random(7)
    bases = [(d, [[rng.randrange(1 << 24)] for _ in range(n)]) for d, n in (("a", 20), ("b", 13), ("c", 11))]
    layout = L.from_bases(bases, ["o"], [1 << 24], require_surjective=False)
    for values in [(0, 0, 0), (5, 200, 7), (300, 8191, 2047), (2**20 - 1, 1, 255), (0, 256, 0)]:
        ins = dict(zip("abc", values))
        expected = 0
        for name, in_bases in bases:
            for i, (basis,) in enumerate(in_bases):
                if ins[name] >> i & 1:
                    expected ^= basis
        for _ in range(3):
            assert layout.apply(ins) == {"o": expected}


@pytest.mark.parametrize("value", [0b1110, 4, -1, 2**40, np.int64(-3), np.array([0, 3, 4]), np.array([-1, 2])])
def test_apply_refuses_inputs_outside_the_dimension(value):
    # Triton masks the bits above log2(size) silently (apply({"i": 0b1110}) == {"o": 0b10} there);
    # we refuse them, as our ll.apply op refuses out-of-range constants, naming the dimension and its size.
    layout = identity_1d(4, "i", "o")
    for _ in range(2):  # the first call (bit by bit) and the cached byte tables
        with pytest.raises(ValueError, match=r"input 'i' = -?\d+ is out of range for dimension 'i' of size 4"):
            layout.apply({"i": value})


def test_apply_refuses_any_index_into_a_size_1_dimension_but_0():
    layout = make([("lane", [[1], [2]]), ("warp", [])], ["o"])
    assert layout.apply({"lane": 3, "warp": 0}) == {"o": 3}
    with pytest.raises(ValueError, match="input 'warp' = 1099511627776 is out of range for dimension 'warp' of size 1"):
        layout.apply({"lane": 3, "warp": 2**40})


def test_apply_is_xor_not_addition():
    # L(i=3) = L(1) ^ L(2) = 3 ^ 1 = 2 (integer addition would give 4, out of range).
    layout = make([("i", [[3], [1]])], ["o"])
    assert layout.apply({"i": 3}) == {"o": 2}


# ================================================================ products


def test_multiply_identity():
    # Same dims: inner takes the low bits, so 16 * 32 = identity of size 512.
    assert identity_1d(16, "in", "out") * identity_1d(32, "in", "out") == identity_1d(512, "in", "out")


def test_multiply_disjoint():
    prod = identity_1d(32, "in1", "out1") * identity_1d(16, "in2", "out2")
    assert prod == make([("in1", [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]),
                         ("in2", [[0, 1], [0, 2], [0, 4], [0, 8]])], ["out1", "out2"])


def test_multiply_by_empty_is_unit():
    layout = identity_1d(32, "in", "out")
    assert L.empty() * layout == layout == layout * L.empty()


def test_multiply_by_zeros():
    # zeros_1d has out size 1, so the outer bases shift by 0 bits: three units then four zeros.
    assert identity_1d(8, "in", "out") * zeros_1d(16, "in", "out") == make(
        [("in", [[1], [2], [4], [0], [0], [0], [0]])], ["out"])


def test_multiply_zeros_by_degenerate():
    # The degenerate layout adds out2 (size 1) and no bases.
    prod = zeros_1d(16, "in", "out1") * make([("in", [])], ["out2"])
    assert prod == make([("in", [[0, 0]] * 4)], ["out1", "out2"])


def test_multiply_empty_identity_and_zeros():
    assert identity_1d(0, "in", "out") * zeros_1d(4, "in", "out") == make([("in", [[0], [0]])], ["out"])


def test_multiply_overlapping_ins_distinct_outs():
    # in's first two bits walk out1, the next three walk out2.
    prod = identity_1d(4, "in", "out1") * identity_1d(8, "in", "out2")
    assert prod == make([("in", [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]])], ["out1", "out2"])


def test_multiply_merges_dimension_orders_by_supremum():
    # ins [a, c] * [b, c] -> [a, b, c]: a only in the first, b only in the second, both before c.
    x = identity_1d(2, "a", "o") * identity_1d(2, "c", "o")
    y = identity_1d(2, "b", "o") * identity_1d(2, "c", "o")
    assert (x * y).get_in_dim_names() == ("a", "b", "c")


def test_multiply_rejects_inconsistent_orders():
    x = identity_1d(2, "a", "o") * identity_1d(2, "b", "o")
    y = identity_1d(2, "b", "o") * identity_1d(2, "a", "o")
    with pytest.raises(ValueError, match="same relative order"):
        x * y


# ================================================================ compose


def test_compose_reference_case_1():
    l1 = make([("in1", [[1, 1], [0, 1]]), ("in2", [[1, 0], [1, 2]])], ["out1", "out2"])
    l2 = make([("out1", [[2, 2], [1, 0]]), ("out2", [[1, 1], [2, 1]])], ["out3", "out4"])
    # l2: out1=1 -> (2,2), out1=2 -> (1,0), out2=1 -> (1,1), out2=2 -> (2,1).
    # in1=1 -> l2(out1=1, out2=1) = (2,2)^(1,1) = (3,3);  in1=2 -> l2(out2=1) = (1,1)
    # in2=1 -> l2(out1=1) = (2,2);                        in2=2 -> l2(1, 2) = (2,2)^(2,1) = (0,3)
    composition = l1.compose(l2)
    assert composition == make([("in1", [[3, 3], [1, 1]]), ("in2", [[2, 2], [0, 3]])],
                               ["out3", "out4"], [4, 4])
    # (3,3) = (1,1)^(2,2): rank 3 < 4 output bits.
    assert not composition.is_surjective()


def test_compose_4d_with_shuffled_dims():
    l1 = make([("in0", [[1, 0, 0, 0], [2, 0, 0, 0]]),
               ("in1", [[4, 0, 0, 0], [8, 0, 0, 0], [16, 0, 0, 0], [32, 0, 0, 0]]),
               ("in2", [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 2]]),
               ("in3", [])], ["out3", "out0", "out1", "out2"])
    l2 = make([("out3", [[1, 0, 0, 0], [2, 0, 0, 0]] + [[0, 0, 0, 0]] * 4),
               ("out0", [[0, 1, 0, 0]]), ("out1", [[0, 0, 1, 0]]),
               ("out2", [[0, 0, 0, 1], [0, 0, 0, 2]])], ["out3", "out2", "out1", "out0"])
    # In l2's output order (out3, out2, out1, out0): l2 keeps out3's two low bits and zeroes its
    # four high ones, maps out1 -> out1 and out2 -> out0. So in0 (out3 = 1, 2) stays, in1
    # (out3 = 4..32) vanishes, and in2 = [out1 1, out2 1, out2 2] -> [(0,0,1,0), (0,0,0,1), (0,0,0,2)].
    # Output sizes are l2's, inferred from its coordinates: out3 4, out2 2, out1 2, out0 4.
    expected = make([("in0", [[1, 0, 0, 0], [2, 0, 0, 0]]),
                     ("in1", [[0, 0, 0, 0]] * 4),
                     ("in2", [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 2]]),
                     ("in3", [])], ["out3", "out2", "out1", "out0"], [4, 2, 2, 4])
    assert l1.compose(l2) == expected


def test_compose_requires_matching_dims_and_sizes():
    a = identity_1d(8, "i", "t")
    with pytest.raises(ValueError, match="input dimensions of the outer layout"):
        a.compose(identity_1d(8, "u", "o"))
    with pytest.raises(ValueError, match="larger than the outer layout's input size"):
        a.compose(identity_1d(4, "t", "o"))


# ================================================================ invert_and_compose


def test_invert_and_compose_reference_case_2():
    l1 = make([("in1", [[2], [1], [4]])], ["out"])
    l2 = make([("in2", [[4], [1], [2]])], ["out"])
    # l2^-1: out 1 -> in2 2, out 2 -> in2 4, out 4 -> in2 1.
    # l1 then l2^-1: 1 -> 2 -> 4, 2 -> 1 -> 2, 4 -> 4 -> 1.
    composition = l1.invert_and_compose(l2)
    assert composition == make([("in1", [[4], [2], [1]])], ["in2"])
    assert composition.compose(l2) == l1


def test_invert_and_compose_reference_case_3_non_injective():
    l1 = make([("in1", [[2], [1], [4]])], ["out"])
    l2 = make([("in2", [[0], [2], [1], [4]])], ["out"])
    # in2 bit 0 is a broadcast (free variable): the minimum-norm preimage leaves it 0.
    # out 1 <- in2 4, out 2 <- in2 2, out 4 <- in2 8; so in1 1 -> 2 -> 2, 2 -> 1 -> 4, 4 -> 4 -> 8.
    composition = l1.invert_and_compose(l2)
    assert composition == make([("in1", [[2], [4], [8]])], ["in2"], [16])
    assert not composition.is_surjective()
    assert composition.compose(l2) == l1


def test_invert_and_compose_broadcasted_in_dim():
    # in2 broadcasts in l1 (zero basis) and has no counterpart in l2: it maps to 0.
    l1 = make([("in1", [[2], [1], [4]]), ("in2", [[0]])], ["out"])
    l2 = make([("in", [[4], [1], [2]])], ["out"])
    composition = l1.invert_and_compose(l2)
    assert composition == make([("in1", [[4], [2], [1]]), ("in2", [[0]])], ["in"], [8])
    assert composition.compose(l2) == l1


def test_invert_and_compose_broadcast_at_beginning_and_end():
    identity = identity_1d(8, "in", "out")
    # l2 = [0, 4, 1, 2]: out 1 <- 4, out 2 <- 8, out 4 <- 2 (bit 0 free, left 0).
    begin = make([("in", [[0], [4], [1], [2]])], ["out"])
    assert identity.invert_and_compose(begin) == make([("in", [[4], [8], [2]])], ["in"], [16])
    # l2 = [4, 1, 2, 0]: out 1 <- 2, out 2 <- 4, out 4 <- 1 (bit 3 free).
    end = make([("in2", [[4], [1], [2], [0]])], ["out"])
    assert identity.rename_in_dim("in", "in1").invert_and_compose(end) == make(
        [("in1", [[2], [4], [1]])], ["in2"], [16])
    # Both: [0, 4, 1, 2, 0] -> out 1 <- 4, out 2 <- 8, out 4 <- 2, into 32 offsets.
    both = make([("in", [[0], [4], [1], [2], [0]])], ["out"])
    composition = identity.invert_and_compose(both)
    assert composition == make([("in", [[4], [8], [2]])], ["in"], [32])
    assert composition.compose(both) == identity


def test_invert_and_compose_multidim_postcondition():
    l1 = make([("in1", [[1, 0], [0, 1], [2, 0], [3, 2]]), ("in2", [[2, 2]])], ["out1", "out2"])
    l2 = make([("in3", [[0, 1], [1, 0], [0, 0], [0, 2], [2, 1]])], ["out2", "out1"])
    # C = l1.invert_and_compose(l2) satisfies l2(C(x)) = l1(x), in l2's output order.
    c1 = l1.invert_and_compose(l2)
    assert c1.compose(l2) == l1.transpose_outs(l2.get_out_dim_names())
    c2 = l2.invert_and_compose(l1)
    assert c2.compose(l1) == l2.transpose_outs(l1.get_out_dim_names())


def test_invert_and_compose_broadcasted_dims_map_identically():
    # in2 and in4 both broadcast; in2 is not in l2, so it is solved (to 0).
    l1 = make([("in1", [[1], [2], [4]]), ("in2", [[0]])], ["out"])
    l2 = make([("in3", [[1], [2], [4]]), ("in4", [[0]])], ["out"])
    c = l1.invert_and_compose(l2)
    assert c == make([("in1", [[1, 0], [2, 0], [4, 0]]), ("in2", [[0, 0]])], ["in3", "in4"], [8, 2])
    assert c.compose(l2) == l1.transpose_outs(l2.get_out_dim_names())


def test_invert_and_compose_keeps_a_shared_identical_dimension():
    # warp broadcasts identically in both layouts and touches no output bit: it maps warp -> warp
    # (no data crosses warps) rather than to warp 0 as the minimum-norm solution would.
    src = make([("lane", [[1], [2]]), ("warp", [[0]])], ["o"])
    dst = make([("lane", [[2], [1]]), ("warp", [[0]])], ["o"])
    c = src.invert_and_compose(dst)
    # lane: out 1 <- lane 2, out 2 <- lane 1, so lane 1 -> 2, lane 2 -> 1.
    assert c == make([("lane", [[2, 0], [1, 0]]), ("warp", [[0, 1]])], ["lane", "warp"], [4, 2])


def test_invert_and_compose_identity_rule_ignores_output_sizes():
    # lane is [0] in both, touching nothing; only the output sizes differ (1 vs 2): still lane -> lane.
    src = make([("lane", [[0]])], ["dim0"], [1])
    dst = make([("register", [[1]]), ("lane", [[0]])], ["dim0"])
    c = src.invert_and_compose(dst)
    assert c == make([("lane", [[0, 1]])], ["register", "lane"], [2, 2])


def test_invert_and_compose_identical_dimension_overlapping_another_is_solved():
    # warp is [1] in both, but lane also touches output bit 0, so warp is solved by least squares:
    # out 1 has preimages lane=1 and warp=1; the minimum-norm one (lowest bits first) is lane=1.
    layout = make([("lane", [[1], [2]]), ("warp", [[1]])], ["o"])
    c = layout.invert_and_compose(layout)
    assert c == make([("lane", [[1, 0], [2, 0]]), ("warp", [[1, 0]])], ["lane", "warp"], [4, 2])


def test_invert_and_compose_identity_in_dim_conversion():
    # Triton's IdentityInDim case: registers identical in src and dst, lanes and warps permuted.
    outs = [f"dim{i}" for i in range(9)]

    def unit(k):
        return [1 if j == k else 0 for j in range(9)]

    src = make([("register", [unit(8), unit(7)]), ("lane", [unit(6), unit(5), unit(4), unit(3), unit(2)]),
                ("warp", [unit(1), unit(0)]), ("block", [])], outs)
    dst = make([("register", [unit(8), unit(7)]), ("lane", [unit(0), unit(1), unit(2), unit(3), unit(4)]),
                ("warp", [unit(5), unit(6)]), ("block", [])], outs)
    cvt = dst.invert_and_compose(src)
    k = {"register": 3, "lane": 0, "warp": 2, "block": 0}
    assert dst.apply(k) == src.apply(cvt.apply(k))
    # Registers are identical and disjoint from the rest: they stay put.
    assert cvt.sublayout(["register"], ["register"]) == identity_1d(4, "register", "register")


def test_invert_and_compose_requires_surjective_outer():
    with pytest.raises(ValueError, match="surjective"):
        identity_1d(4, "i", "o").invert_and_compose(strided_1d(4, 2, "j", "o"))


def test_invert_and_compose_requires_same_out_dims():
    with pytest.raises(ValueError, match="same output dimensions"):
        identity_1d(4, "i", "o").invert_and_compose(identity_1d(4, "j", "p"))


# ================================================================ invert, pseudoinvert, lstsq


def test_invert_permutation():
    # [2, 1] swaps the two bits; its inverse is itself (with the names swapped).
    assert make([("i", [[2], [1]])], ["o"]).invert() == make([("o", [[2], [1]])], ["i"])


def test_invert_rejects_non_invertible():
    with pytest.raises(ValueError, match="invertible"):
        zeros_1d(4, "i", "o", 4).invert()
    # Surjective but not injective is not enough either.
    with pytest.raises(ValueError, match="invertible"):
        make([("i", [[1], [1]])], ["o"]).invert()


def test_pseudoinvert_takes_minimum_norm_preimage():
    # [1, 0, 2]: out 1 <- i 1, out 2 <- i 4 (bit 1 is free, left 0).
    layout = make([("i", [[1], [0], [2]])], ["o"])
    inverse = layout.pseudoinvert()
    assert inverse == make([("o", [[1], [4]])], ["i"], [8])
    assert inverse.compose(layout) == identity_1d(4, "o", "o")


def test_pseudoinvert_rejects_non_surjective():
    with pytest.raises(ValueError, match="surjective"):
        strided_1d(4, 2, "i", "o").pseudoinvert()


def test_lstsq():
    # A = [1, 0, 2] over o; B = identity(4) over o. X with A(X(r)) = r, free bit left 0:
    # r 1 -> s 1, r 2 -> s 4.
    a = make([("s", [[1], [0], [2]])], ["o"])
    x = L.lstsq(a, identity_1d(4, "r", "o"))
    assert x == make([("r", [[1], [4]])], ["s"], [8])


def test_lstsq_with_no_solution_raises():
    # B reaches 2, but A's image is {0, 1}.
    a = make([("s", [[1]])], ["o"], [4])
    with pytest.raises(ValueError, match="no solution"):
        L.lstsq(a, identity_1d(4, "r", "o"))


# ================================================================ reshaping


def test_transpose_outs():
    layout = (identity_1d(32, "in1", "out1") * identity_1d(16, "in2", "out2")).transpose_outs(["out2", "out1"])
    assert layout.get_out_dim_names() == ("out2", "out1")
    assert layout == make([("in1", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
                           ("in2", [[1, 0], [2, 0], [4, 0], [8, 0]])], ["out2", "out1"])


def test_transpose_outs_degenerate():
    layout = (identity_1d(32, "in1", "out1") * identity_1d(1, "in2", "out2")).transpose_outs(["out2", "out1"])
    assert layout == make([("in1", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]), ("in2", [])], ["out2", "out1"])


def test_transpose_ins():
    layout = (identity_1d(32, "in1", "out1") * identity_1d(16, "in2", "out2")).transpose_ins(["in2", "in1"])
    assert layout.get_in_dim_names() == ("in2", "in1")
    assert layout == make([("in2", [[0, 1], [0, 2], [0, 4], [0, 8]]),
                           ("in1", [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])], ["out1", "out2"])


def test_transpose_requires_a_permutation():
    layout = identity_1d(2, "a", "o") * identity_1d(2, "b", "o")
    with pytest.raises(ValueError, match="permutation"):
        layout.transpose_ins(["a"])
    with pytest.raises(ValueError, match="permutation"):
        layout.transpose_outs(["o", "o"])


def test_reshape_ins():
    # Flattened bases [1, 4, 8, 2] split into in3 (size 2) and in4 (size 8).
    layout = make([("in1", [[1], [4], [8]]), ("in2", [[2]])], ["out"])
    assert layout.reshape_ins([("in3", 2), ("in4", 8)]) == make([("in3", [[1]]), ("in4", [[4], [8], [2]])], ["out"])


def test_reshape_ins_degenerate_dims():
    layout = make([("in1", [[1], [4], [2]]), ("in2", [])], ["out"])
    assert layout.reshape_ins([("in3", 4), ("in4", 2)]) == make([("in3", [[1], [4]]), ("in4", [[2]])], ["out"])
    layout = make([("in1", [[1], [4]]), ("in2", [[2]])], ["out"])
    assert layout.reshape_ins([("in3", 8), ("in4", 1)]) == make([("in3", [[1], [4], [2]]), ("in4", [])], ["out"])
    assert layout.reshape_ins([("in3", 1), ("in4", 8)]) == make([("in3", []), ("in4", [[1], [4], [2]])], ["out"])


def test_reshape_outs():
    # out (16) split into out2 (2, low bit) and out3 (8): 4 = 0b0100 -> (0, 2), 3 = 0b0011 -> (1, 1).
    layout = make([("in1", [[1], [4], [8]]), ("in2", [[3]])], ["out"])
    assert layout.get_total_out_dim_size() == 16
    assert layout.reshape_outs([("out2", 2), ("out3", 8)]) == make(
        [("in1", [[1, 0], [0, 2], [0, 4]]), ("in2", [[1, 1]])], ["out2", "out3"])


def test_reshape_outs_degenerate_dims():
    layout = make([("in1", [[1], [4], [2]]), ("in2", [])], ["out"])
    assert layout.reshape_outs([("out1", 4), ("out2", 2)]) == make(
        [("in1", [[1, 0], [0, 1], [2, 0]]), ("in2", [])], ["out1", "out2"])
    layout = make([("in1", [[1], [4]]), ("in2", [[2]])], ["out"])
    assert layout.reshape_outs([("out1", 8), ("out2", 1)]) == make(
        [("in1", [[1, 0], [4, 0]]), ("in2", [[2, 0]])], ["out1", "out2"])


def test_reshape_requires_same_total_size():
    layout = identity_1d(8, "i", "o")
    with pytest.raises(ValueError, match="multiply to"):
        layout.reshape_ins([("a", 4)])
    with pytest.raises(ValueError, match="multiply to"):
        layout.reshape_outs([("a", 16)])
    with pytest.raises(ValueError, match="power of two"):
        layout.reshape_ins([("a", 8), ("b", 3)])


def test_flatten_ins():
    layout = make([("in1", [[1], [4], [8]]), ("in2", [[2]])], ["out"])
    assert layout.flatten_ins() == make([("in1", [[1], [4], [8], [2]])], ["out"])


def test_flatten_ins_and_outs_edge_cases():
    for layout in [make([("in1", [])], ["out"]), make([("in1", [])], []), make([], ["out"], [1]), L.empty()]:
        assert layout.flatten_ins() == layout
        assert layout.flatten_outs() == layout


def test_flatten_outs():
    # out1 (16) is minor: (a, b) -> a + 16 b.
    layout = make([("in1", [[1, 0], [4, 1], [8, 4]]), ("in2", [[3, 2]])], ["out1", "out2"], [16, 8])
    assert layout.flatten_outs() == make([("in1", [[1], [4 + 16], [8 + 4 * 16]]), ("in2", [[3 + 2 * 16]])],
                                         ["out1"], [16 * 8])


def test_sublayout():
    l1 = make([("in1", [[1, 0], [0, 1], [2, 0]]), ("in2", [[0, 1]])], ["out1", "out2"])
    # The layout's own dimension order is kept whatever order the arguments list.
    expected = make([("in1", [[1], [0], [2]]), ("in2", [[0]])], ["out1"])
    assert l1.sublayout(["in1", "in2"], ["out1"]) == expected
    assert l1.sublayout(["in2", "in1"], ["out1"]) == expected
    assert l1.sublayout(["in2", "in1"], ["out2", "out1"]) == l1
    assert l1.sublayout(["in1"], ["out1"]) == make([("in1", [[1], [0], [2]])], ["out1"])
    assert l1.sublayout([], []) == L.empty()
    assert l1.sublayout(["in1"], []) == make([("in1", [[], [], []])], [])
    assert l1.sublayout([], ["out1"]) == make([], ["out1"], [4])
    with pytest.raises(ValueError, match="not dimensions of this layout"):
        l1.sublayout(["nope"], [])


def test_sublayout_is_zero():
    layout = identity_1d(4, "in", "out")
    assert not layout.sublayout_is_zero(["in"], ["out"])
    assert layout.sublayout_is_zero([], ["out"])
    assert layout.sublayout_is_zero(["in"], [])
    assert layout.sublayout_is_zero([], [])
    l1 = make([("in1", [[0, 1], [0, 2]]), ("in2", [[1, 1]])], ["out1", "out2"])
    assert l1.sublayout_is_zero(["in1"], ["out1"])
    assert not l1.sublayout_is_zero(["in1"], ["out2"])
    assert not l1.sublayout_is_zero(["in2"], ["out1"])
    assert not l1.sublayout_is_zero(["in2"], ["out2"])


def test_concat_ins():
    # L(a | b) = L1(a) ^ L2(b): a walks o, b broadcasts.
    layout = identity_1d(2, "a", "o").concat_ins(zeros_1d(2, "b", "o", 2))
    assert layout == make([("a", [[1]]), ("b", [[0]])], ["o"])
    with pytest.raises(ValueError, match="output dimensions differ"):
        identity_1d(2, "a", "o").concat_ins(identity_1d(4, "b", "o"))
    with pytest.raises(ValueError, match="disjoint input dimensions"):
        identity_1d(2, "a", "o").concat_ins(identity_1d(2, "a", "o"))


def test_concat_outs():
    # The same input drives both outputs: i=1 -> (1, 1).
    layout = identity_1d(2, "i", "a").concat_outs(identity_1d(2, "i", "b"))
    assert layout == make([("i", [[1, 1]])], ["a", "b"], [2, 2])
    with pytest.raises(ValueError, match="input dimensions differ"):
        identity_1d(2, "i", "a").concat_outs(identity_1d(4, "i", "b"))
    with pytest.raises(ValueError, match="disjoint output dimensions"):
        identity_1d(2, "i", "a").concat_outs(identity_1d(2, "i", "a"))


def test_squeeze():
    layout = make([("a", [[1, 0]]), ("b", []), ("c", [[0, 0]])], ["x", "y"], [2, 1])
    # Triton's form names one size-1 dimension; without a name every size-1 dimension goes.
    assert layout.squeeze_ins("b") == make([("a", [[1, 0]]), ("c", [[0, 0]])], ["x", "y"], [2, 1])
    assert layout.squeeze_ins() == layout.squeeze_ins("b")
    assert layout.squeeze_outs("y") == make([("a", [[1]]), ("b", []), ("c", [[0]])], ["x"], [2])
    assert layout.squeeze_outs() == layout.squeeze_outs("y")
    with pytest.raises(ValueError, match="must have size 1"):
        layout.squeeze_ins("a")
    with pytest.raises(ValueError, match="must have size 1"):
        layout.squeeze_outs("x")


def test_resize_in_dim():
    # Growing appends zero (broadcast) bases; shrinking drops the top ones.
    assert identity_1d(2, "i", "o").resize_in_dim("i", 8) == make([("i", [[1], [0], [0]])], ["o"])
    assert identity_1d(8, "i", "o").resize_in_dim("i", 2) == make([("i", [[1]])], ["o"], [8])
    with pytest.raises(ValueError, match="power of two"):
        identity_1d(2, "i", "o").resize_in_dim("i", 3)


def test_resize_out_dim():
    # Shrinking o to 4 zeroes every coordinate >= 4 (Triton's rule): 1 and 2 stay, 4 and 5 go,
    # although 5 has a low bit (5 & 3 = 1): the coordinate is dropped, not reduced.
    layout = make([("i", [[1], [2], [4], [5]])], ["o"], [8])
    assert layout.resize_out_dim("o", 4) == make([("i", [[1], [2], [0], [0]])], ["o"], [4])
    # Growing keeps the bases; the result is no longer surjective.
    grown = identity_1d(4, "i", "o").resize_out_dim("o", 16)
    assert grown == make([("i", [[1], [2]])], ["o"], [16]) and not grown.is_surjective()


def test_rename_in_dim():
    assert identity_1d(4, "i", "o").rename_in_dim("i", "j") == identity_1d(4, "j", "o")
    two = identity_1d(2, "a", "o") * identity_1d(2, "b", "o")
    with pytest.raises(ValueError, match="already an input dimension"):
        two.rename_in_dim("a", "b")
    with pytest.raises(ValueError, match="not an input dimension"):
        two.rename_in_dim("c", "d")


def test_remove_zero_bases_along_dim():
    # register [1, 0, 2]: the broadcast bit goes, the output size stays 4.
    layout = make([("register", [[1, 0], [0, 0], [2, 0]]), ("lane", [[0, 0]])], ["x", "y"], [4, 2])
    stripped = layout.remove_zero_bases_along_dim("register")
    assert stripped == make([("register", [[1, 0], [2, 0]]), ("lane", [[0, 0]])], ["x", "y"], [4, 2])
    # Other dimensions keep their zero bases.
    assert stripped.get_in_dim_size("lane") == 2


# ================================================================ quotient and triviality


def test_quotient_one_dimension():
    layout = make([("dim1", [[1, 0]]), ("dim2", [[0, 0]])], ["dim1", "dim2"], [2, 1])
    # dim1 maps to itself by the identity and touches nothing else: it can be divided out.
    quotient = layout.quotient(["dim1"])
    assert quotient == zeros_1d(2, "dim2", "dim2")
    # dim2 (input size 2, output size 1) is zero, not the identity.
    assert quotient.quotient(["dim2"]) is None


def test_quotient_several_dimensions():
    layout = make([("dim1", [[1, 0], [2, 0], [4, 0]]), ("dim2", [[0, 1], [0, 2]])], ["dim1", "dim2"])
    assert layout.quotient(["dim1", "dim2"]) == L.empty()


def test_quotient_multiple_trivial_dimensions():
    layout = make([("dim1", [[1, 0, 2], [2, 0, 1]]), ("dim2", [[0, 1, 0], [0, 2, 0], [0, 4, 0]]),
                   ("dim3", [[0, 0, 1], [0, 0, 2]])], ["dim1", "dim2", "dim3"])
    # dim2 is trivial even though dim1 and dim3 mix with each other: dividing it out leaves them.
    assert layout.quotient(["dim2"]) == make([("dim1", [[1, 2], [2, 1]]), ("dim3", [[0, 1], [0, 2]])], ["dim1", "dim3"])
    # Once dim3 also maps into dim2 (0,1,1), dim2 is no longer separable.
    layout = make([("dim1", [[1, 0, 2], [2, 0, 1]]), ("dim2", [[0, 1, 0], [0, 2, 0], [0, 4, 0]]),
                   ("dim3", [[0, 1, 1], [0, 0, 2]])], ["dim1", "dim2", "dim3"])
    assert layout.quotient(["dim2"]) is None


def test_quotient_empty_and_unknown_dimensions():
    assert L.empty().quotient(["dim1"]) is None
    assert not identity_1d(4, "a", "b").is_trivial_over(["a"])  # a is an input only


def test_quotient_identity_in_any_order():
    layout = identity_1d(8, "dim1", "dim1") * identity_1d(2, "dim2", "dim2") * identity_1d(4, "dim3", "dim3")
    quotient = layout.quotient(["dim3", "dim1"])
    assert quotient == identity_1d(2, "dim2", "dim2")
    assert quotient.quotient(["dim2"]) == L.empty()


def test_is_trivial_over_and_square_sublayout_is_identity():
    layout = identity_1d(4, "r", "r") * identity_1d(2, "w", "w")
    assert layout.is_trivial_over(["w"]) and layout.is_trivial_over(["r", "w"])
    assert layout.square_sublayout_is_identity(["r"]) and layout.square_sublayout_is_identity([])
    # A swap on r is not the identity.
    assert not make([("r", [[2], [1]])], ["r"]).square_sublayout_is_identity(["r"])


def test_equal_ignoring_out_dim_sizes():
    small = identity_1d(4, "in", "out")
    wide = make([("in", [[1], [2]])], ["out"], [8])
    assert small != wide  # == compares sizes
    assert small.equal_ignoring_out_dim_sizes(wide)
    assert not small.equal_ignoring_out_dim_sizes(identity_1d(4, "in", "other"))


# ================================================================ structure queries


def test_free_variable_masks_reference_case_4():
    # Triton's construction: one input "in" and one output "out" throughout. The zeros have
    # output size 1, so no shift: bases [1, 0, 0, 2, 4, 0]. Bits 1, 2, 5 are zero (free).
    layout = (identity_1d(2, "in", "out") * zeros_1d(4, "in", "out")
              * identity_1d(4, "in", "out") * zeros_1d(2, "in", "out"))
    assert layout.bases == (("in", ((1,), (0,), (0,), (2,), (4,), (0,))),)
    assert layout.get_free_variable_masks() == {"in": 0b100110}


def test_free_variable_masks_with_distinct_out_dims():
    # The same pattern with a fresh output per factor: a zero basis is free wherever it points.
    layout = (identity_1d(2, "a", "o") * zeros_1d(4, "a", "z")
              * identity_1d(4, "a", "p") * zeros_1d(2, "a", "q"))
    assert layout.get_free_variable_masks() == {"a": 0b100110}


def test_free_variable_masks_simple_cases():
    assert identity_1d(4, "in", "out").get_free_variable_masks() == {"in": 0}
    assert zeros_1d(16, "in", "out").get_free_variable_masks() == {"in": 0b1111}


def test_free_variable_masks_dependent_bases():
    # Packed (out1 low 2 bits, out2 high 2 bits): in1 = [5, 10, 0], in2 = [1, 4, 2].
    # Scanning from the lowest input bit: 5, 10 basic; 0 free; 1 basic; 4 = 5 ^ 1 free; 2 basic.
    layout = make([("in1", [[1, 1], [2, 2], [0, 0]]), ("in2", [[1, 0], [0, 1], [2, 0]])], ["out1", "out2"])
    assert layout.get_free_variable_masks() == {"in1": 0b100, "in2": 0b10}


def test_num_consecutive_in_out_reference_case_5():
    # [1, 2, 4, 9]: three unit steps, but 9 = 0b1001 touches bit 0, so only 2**0 = 1 is contiguous.
    assert make([("in", [[1], [2], [4], [9]])], ["out"]).get_num_consecutive_in_out() == 1
    # [1, 2, 4, 10]: 10 = 0b1010 touches bit 1: 2**1 = 2.
    assert make([("in", [[1], [2], [4], [10]])], ["out"]).get_num_consecutive_in_out() == 2
    # [1, 4, 2]: one unit step, then 4 breaks the run: 2.
    assert make([("in", [[1], [4], [2]])], ["out"]).get_num_consecutive_in_out() == 2


def test_num_consecutive_in_out_more_cases():
    assert identity_1d(1, "in", "out").get_num_consecutive_in_out() == 1
    assert identity_1d(4, "in", "out").get_num_consecutive_in_out() == 4
    # Only the first input dimension counts; in2's bases 4.. do not overlap bits 0..1.
    assert (identity_1d(4, "in1", "out") * identity_1d(8, "in2", "out")).get_num_consecutive_in_out() == 4
    # Bits past the first output's width are steps along out2, not out1: the run stops at out1's size.
    assert (identity_1d(4, "in", "out1") * identity_1d(8, "in", "out2")).get_num_consecutive_in_out() == 4
    assert (zeros_1d(4, "in", "out1") * identity_1d(4, "in", "out2")).get_num_consecutive_in_out() == 1
    # in2's 18 = 0b10010 touches bit 1 of out: 2.
    layout = make([("in", [[1], [2], [4]]), ("in2", [[8], [18]])], ["out"])
    assert layout.get_num_consecutive_in_out() == 2


def test_num_consecutive_in_out_does_not_run_into_the_next_output():
    # in: (1,0), (0,1): the second basis steps along out2, not out1 (size 2): 2 consecutive.
    layout = make([("in", [[1, 0], [0, 1]])], ["out1", "out2"])
    assert layout.get_num_consecutive_in_out() == 2


def test_contiguous_elems_along_output_dim():
    # r: [(1,0), (0,1), (2,0)]. Minimum-norm preimages: x=1 <- r=1, x=2 <- r=4. Along x, elements
    # 0, 1 sit at r = 0, 1 (contiguous); element 2 sits at r = 4, not 2: 2 contiguous.
    layout = make([("r", [[1, 0], [0, 1], [2, 0]])], ["x", "y"])
    assert layout.contiguous_elems_along_output_dim("r", "x") == 2
    # Along y: y=1 <- r=2 = 2**1, not 2**0: 1.
    assert layout.contiguous_elems_along_output_dim("r", "y") == 1
    # A blocked register layout with 4 contiguous elements along dim1.
    blocked = identity_1d(4, "register", "dim1") * identity_1d(8, "lane", "dim1") * identity_1d(2, "register", "dim0")
    assert blocked.contiguous_elems_along_output_dim("register", "dim1") == 4


# ================================================================ divide


def test_divide_left_basic():
    b = identity_1d(8, "in", "out")
    c = zeros_1d(16, "in", "out")
    assert L.divide_left(b * c, b) == c
    # c * b = [0, 0, 0, 0, 1, 2, 4]: the first four bases are c's; the rest, over c's size 1, are b.
    assert L.divide_left(c * b, c) == b


def test_divide_left_non_matching_dims():
    a = identity_1d(32, "in", "out")
    b = make([("in", [[1], [2], [4], [8]]), ("extra", [[0]])], ["out"])
    assert L.divide_left(a, b) is None


def test_divide_left_simple():
    assert L.divide_left(identity_1d(8, "in", "out"), identity_1d(4, "in", "out")) == identity_1d(2, "in", "out")
    assert L.divide_left(identity_1d(8, "in", "out"), identity_1d(8, "in", "out")) == identity_1d(1, "in", "out")


def test_divide_left_2d():
    l1 = make([("in1", [[1, 1], [2, 2], [0, 8], [0, 4]]), ("in2", [[0, 2], [0, 1]])], ["out1", "out2"])
    l2 = make([("in1", [[1, 1], [2, 2]]), ("in2", [[0, 2], [0, 1]])], ["out1", "out2"])
    # l2 has out sizes (4, 4): l1's remaining in1 bases (0,8), (0,4) divide to (0,2), (0,1).
    l3 = make([("in1", [[0, 2], [0, 1]]), ("in2", [])], ["out1", "out2"])
    assert l2 * l3 == l1
    assert L.divide_left(l1, l2) == l3


def test_divide_left_eliminates_in_dims():
    l1 = make([("in2", [[0, 1], [1, 0]]), ("in1", [[2, 0], [0, 2]])], ["out1", "out2"])
    l2 = make([("in2", [[0, 1], [1, 0]])], ["out1", "out2"])
    l3 = make([("in2", []), ("in1", [[1, 0], [0, 1]])], ["out1", "out2"])
    assert l2 * l3 == l1 and L.divide_left(l1, l2) == l3
    l4 = make([("in1", [[0, 1], [0, 2]]), ("in2", [])], ["out1", "out2"])
    l5 = make([("in1", [[0, 1], [0, 2]])], ["out1", "out2"])
    l6 = make([("in1", []), ("in2", [])], ["out1", "out2"])
    assert l5 * l6 == l4 and L.divide_left(l4, l5) == l6
    l7 = make([("in1", []), ("in2", [[0, 1]]), ("in3", [])], ["out1", "out2"])
    l8 = make([("in2", [[0, 1]])], ["out1", "out2"])
    l9 = make([("in1", []), ("in2", []), ("in3", [])], ["out1", "out2"])
    assert l8 * l9 == l7 and L.divide_left(l7, l8) == l9


def test_divide_left_eliminates_out_dims():
    l1 = make([("in2", [[1, 0], [1, 0]]), ("in1", [[2, 0], [0, 1]])], ["out1", "out2"])
    l2 = make([("in2", [[1, 0], [1, 0]])], ["out1", "out2"])
    l3 = make([("in2", []), ("in1", [[1, 0], [0, 1]])], ["out1", "out2"])
    assert l2 * l3 == l1 and L.divide_left(l1, l2) == l3
    l4 = make([("in1", [[0, 1], [0, 2]])], ["out1", "out2"])
    l5 = make([], ["out1"])
    assert l5 * l4 == l4 and L.divide_left(l4, l5) == l4


def test_divide_right():
    # identity(8) = identity(4) * identity(2): dividing the major factor off leaves identity(4).
    assert L.divide_right(identity_1d(8, "i", "o"), identity_1d(2, "i", "o")) == identity_1d(4, "i", "o")
    # A = C * B with C = [1, 2] over o (4) and B = lane [1] over o (2): A's lane basis is 1 * 4.
    a = identity_1d(4, "r", "o") * identity_1d(2, "lane", "o")
    assert L.divide_right(a, identity_1d(2, "lane", "o")) == identity_1d(4, "r", "o") * identity_1d(1, "lane", "o")


def test_divide_without_solution_returns_none():
    # The low bases of A are [1, 2], not B's [2, 1].
    assert L.divide_left(identity_1d(8, "in", "out"), make([("in", [[2], [1]])], ["out"])) is None
    # B's output (8) is larger than A's (4).
    assert L.divide_left(identity_1d(4, "in", "out"), identity_1d(8, "in", "out")) is None
    # A's high basis 3 is not a multiple of B's out size 2.
    assert L.divide_left(make([("in", [[1], [3]])], ["out"]), identity_1d(2, "in", "out")) is None
    assert L.divide_right(make([("in", [[2], [1]])], ["out"]), identity_1d(2, "in", "out")) is None


# ================================================================ ColumnAction


def test_column_action_apply_layout():
    layout = make([("in", [[1], [2], [4]])], ["out"])
    # action[j] is the old basis that becomes basis j: [2, 0, 1] -> [4, 1, 2].
    assert ColumnAction([2, 0, 1], "in", 3).apply(layout) == make([("in", [[4], [1], [2]])], ["out"])
    # Dropping basis 2 and swapping the others keeps the output size 8.
    assert ColumnAction([1, 0], "in", 3).apply(layout) == make([("in", [[2], [1]])], ["out"], [8])


def test_column_action_apply_values():
    values = list(range(1, 9))
    # New index i takes old index with bit action[j] set for each set bit j of i:
    # i=1 -> old 4, i=2 -> old 1, i=3 -> old 5, ...: [x0, x4, x1, x5, x2, x6, x3, x7].
    assert ColumnAction([2, 0, 1], "register", 3).apply_values(values) == (1, 5, 2, 6, 3, 7, 4, 8)
    # [2, 1] keeps the values whose bit 0 is clear: old 0, 4, 2, 6.
    assert ColumnAction([2, 1], "register", 3).apply_values(values) == (1, 5, 3, 7)


def test_column_action_inverse_and_identity():
    action = ColumnAction([2, 0, 1], "register", 3)
    layout = make([("register", [[1], [2], [4]])], ["o"])
    assert action.inverse().apply(action.apply(layout)) == layout
    assert ColumnAction([0, 1, 2], "register", 3).is_identity() and not action.is_identity()
    with pytest.raises(ValueError, match="no inverse"):
        ColumnAction([1], "register", 3).inverse()
    with pytest.raises(ValueError, match="distinct basis indices"):
        ColumnAction([0, 0], "register", 3)
    with pytest.raises(ValueError, match="expected 8 values"):
        action.apply_values([1, 2])


# ================================================================ layout utilities


def test_supremum():
    assert supremum(["a", "b", "c"], ["a", "b", "c"]) == ("a", "b", "c")
    assert supremum(["a", "b"], ["a", "c"]) == ("a", "b", "c")  # ties: the first list first
    assert supremum(["a", "b"], ["b", "c"]) == ("a", "b", "c")
    assert supremum(["a", "b", "c"], ["a", "d"]) == ("a", "b", "c", "d")
    assert supremum([], []) == ()
    assert supremum(["a", "b"], []) == ("a", "b")
    with pytest.raises(ValueError, match="same relative order"):
        supremum(["a", "b"], ["b", "a"])


def test_standard_out_dim_names():
    assert standard_out_dim_names(3) == ("dim0", "dim1", "dim2")


def test_identity_standard_nd_keeps_order_minor_first():
    # order [1, 0]: dim1 is fastest. lane 1, 2 walk dim1 (size 4), lane 4 walks dim0 (size 2);
    # as in Triton the outputs are listed in that order, dim1 first.
    layout = identity_standard_nd("lane", [2, 4], [1, 0])
    assert layout == make([("lane", [[1, 0], [2, 0], [0, 1]])], ["dim1", "dim0"])
    assert identity_standard_nd("lane", [2, 4], [0, 1]) == make([("lane", [[1, 0], [0, 1], [0, 2]])], ["dim0", "dim1"])
    with pytest.raises(ValueError, match="permutation"):
        identity_standard_nd("lane", [2, 4], [0, 0])


def test_blocked_layout_reference_case_7():
    # blocked {64,128}, sizePerThread {8,1}, threadsPerWarp {8,4}, warpsPerCTA {1,4}, order {0,1},
    # CTAsPerCGA {1,2}, CTASplitNum {1,2}: each block holds 64x64.
    order = [0, 1]
    cta = (identity_standard_nd("register", [8, 1], order) * identity_standard_nd("lane", [8, 4], order)
           * identity_standard_nd("warp", [1, 4], order))
    # registers walk dim0 1..4; lanes dim0 8..32 then dim1 1, 2; warps dim1 4, 8: covers 64x16.
    assert cta.out_dims == (("dim0", 64), ("dim1", 16))
    # Not smaller than 64x64: dim1 needs 4x more, so registers gain dim1 16 and 32.
    cta = ensure_layout_not_smaller_than(cta, {"dim0": 64, "dim1": 64})
    layout = cta * identity_1d(2, "block", "dim1")  # the second block takes dim1 64
    assert layout == make(
        [("register", [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]]),
         ("lane", [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]]),
         ("warp", [[0, 4], [0, 8]]),
         ("block", [[0, 64]])], ["dim0", "dim1"])


def test_ensure_layout_not_larger_than_broadcasts_largest_bases():
    # {8}, sizePerThread 4, threadsPerWarp 4, warpsPerCTA 4: bases reg 1, 2; lane 4, 8; warp 16, 32.
    layout = (identity_standard_nd("register", [4], [0]) * identity_standard_nd("lane", [4], [0])
              * identity_standard_nd("warp", [4], [0]))
    # Shrink 64 -> 8 by zeroing the three largest: 32, 16 (warps), 8 (lane 2).
    shrunk = ensure_layout_not_larger_than(layout, {"dim0": 8})
    assert shrunk == make([("register", [[1], [2]]), ("lane", [[4], [0]]), ("warp", [[0], [0]])], ["dim0"])


def test_ensure_layout_not_larger_than_can_drop_registers():
    # With broadcast_registers=False a register basis past the shape is removed, not zeroed.
    layout = identity_1d(8, "register", "dim0") * identity_1d(2, "lane", "dim0")
    # Bases: register 1, 2, 4; lane 8. Shrinking 16 -> 4 drops lane 8 (zeroed) and register 4 (removed).
    shrunk = ensure_layout_not_larger_than(layout, {"dim0": 4}, broadcast_registers=False)
    assert shrunk == make([("register", [[1], [2]]), ("lane", [[0]])], ["dim0"])


def test_ensure_layout_not_smaller_than_repeats_into_first_input():
    assert ensure_layout_not_smaller_than(identity_1d(2, "register", "dim0"), {"dim0": 8}) == identity_1d(
        8, "register", "dim0")
    # Already big enough: unchanged.
    layout = identity_1d(8, "register", "dim0")
    assert ensure_layout_not_smaller_than(layout, {"dim0": 4}) == layout
    with pytest.raises(ValueError, match="must be the output dimensions"):
        ensure_layout_not_smaller_than(layout, {"dim1": 4})


def test_zeros_like():
    layout = make([("a", [[1, 0], [0, 2]]), ("b", [[1, 1]])], ["x", "y"], [2, 4])
    assert zeros_like(layout) == make([("a", [[0, 0], [0, 0]]), ("b", [[0, 0]])], ["x", "y"], [2, 4])


# ================================================================ invalid input


@pytest.mark.parametrize(
    "build, fragment",
    [
        (lambda: make([("i", [[1]])], ["o"], [3]), "power of two"),
        (lambda: identity_1d(3, "i", "o"), "power of two"),
        (lambda: zeros_1d(4, "i", "o", 6), "power of two"),
        (lambda: strided_1d(4, 3, "i", "o"), "power of two"),
        (lambda: make([("i", [[4]])], ["o"], [4]), "out of range"),
        (lambda: make([("i", [[-1]])], ["o"], [4]), "non-negative"),
        (lambda: make([("i", [[1, 0]])], ["o"], [2]), "coordinates"),
        (lambda: L.from_bases([("i", [[1]])], ["o"], [2, 2]), "output dimension sizes"),
        (lambda: L.from_bases([("i", [[1]]), ("i", [[1]])], ["o"]), "distinct"),
        (lambda: L.from_bases([("i", [[1, 0]])], ["o", "o"]), "distinct"),
        (lambda: L.from_bases([("i", [[0]])], ["o"], [2]), "surjective"),
        (lambda: identity_1d(4, "i", "o").apply({"j": 1}), "apply needs exactly the input dimensions"),
        (lambda: identity_1d(4, "i", "o").apply({"i": 1, "j": 1}), "apply needs exactly the input dimensions"),
        (lambda: identity_1d(4, "i", "o").get_in_dim_size("x"), "not an input dimension"),
        (lambda: identity_1d(4, "i", "o").get_out_dim_size("x"), "not an output dimension"),
        (lambda: identity_1d(4, "i", "o").get_basis("i", 2), "out of range"),
    ],
)
def test_invalid_input_raises_value_error_naming_the_rule(build, fragment):
    with pytest.raises(ValueError, match=fragment):
        build()


def test_extra_constructor_arguments_are_rejected():
    with pytest.raises(TypeError):
        L([("i", [[1]])], ["o"])


# ================================================================ value semantics


def test_operations_never_mutate_operands():
    a = make([("register", [[1, 0], [0, 0]]), ("lane", [[0, 1], [2, 0]])], ["dim0", "dim1"], [4, 2])
    b = make([("dim0", [[1], [2]]), ("dim1", [[4]])], ["o"])
    before = [(x.bases, x.out_dims, str(x), hash(x)) for x in (a, b)]
    a.compose(b)
    a * b
    b * a
    a.invert_and_compose(a.resize_out_dim("dim0", 4))
    a.pseudoinvert()
    a.transpose_ins(["lane", "register"]).transpose_outs(["dim1", "dim0"])
    a.reshape_ins([("x", 16)]).reshape_outs([("y", 8)])
    a.flatten_ins(), a.flatten_outs(), a.sublayout(["lane"], ["dim1"])
    a.resize_in_dim("lane", 8), a.resize_out_dim("dim0", 2), a.rename_in_dim("lane", "l")
    a.remove_zero_bases_along_dim("register"), a.squeeze_ins(), a.squeeze_outs()
    a.concat_ins(zeros_like(a).rename_in_dim("lane", "x").rename_in_dim("register", "y"))
    a.get_free_variable_masks(), a.tabulate(), a.apply({"register": 3, "lane": 3})
    L.divide_left(a, a), L.lstsq(a, a), zeros_like(a)
    ColumnAction([1, 0], "lane", 2).apply(a)
    assert [(x.bases, x.out_dims, str(x), hash(x)) for x in (a, b)] == before


def test_layouts_are_immutable():
    layout = identity_1d(4, "i", "o")
    with pytest.raises(AttributeError):
        layout.extra = 1
    assert isinstance(layout.bases, tuple) and isinstance(layout.bases[0][1], tuple)


def test_layouts_are_hashable_values():
    # The same map built three ways is one dictionary key.
    by_bases = make([("i", [[1], [2], [4]])], ["o"])
    by_product = identity_1d(2, "i", "o") * identity_1d(4, "i", "o")
    by_identity = identity_1d(8, "i", "o")
    table = {by_bases: "first"}
    table[by_product] = "second"
    assert len(table) == 1 and table[by_identity] == "second"
    assert hash(by_bases) == hash(by_product) == hash(by_identity)
    # Different out size: a different value.
    assert make([("i", [[1], [2], [4]])], ["o"], [16]) not in table
    assert pickle.loads(pickle.dumps(by_bases)) == by_bases


# ================================================================ beyond Triton: no 64-bit cap


def test_80_bit_identity_and_its_inverse():
    size = 2 ** 80
    layout = identity_1d(size, "i", "o")
    assert layout.get_total_in_dim_size_log2() == 80 and layout.is_invertible()
    assert layout.invert() == identity_1d(size, "o", "i")
    assert layout.apply({"i": 2 ** 79 + 5}) == {"o": 2 ** 79 + 5}


def test_100_bit_reversal_is_its_own_inverse():
    # Basis i -> 2**(99 - i): the bit reversal of a 100-bit index. Reversing twice is the identity.
    layout = make([("i", [[2 ** (99 - i)] for i in range(100)])], ["o"])
    assert layout.apply({"i": 1}) == {"o": 2 ** 99}
    assert layout.invert() == make([("o", [[2 ** (99 - i)] for i in range(100)])], ["i"])
    assert layout.compose(layout.invert()) == identity_1d(2 ** 100, "i", "i")


def test_more_than_64_output_bits_across_dims():
    # 40 + 40 input bits into two 40-bit outputs: 80 rows and columns.
    layout = identity_1d(2 ** 40, "i", "o") * identity_1d(2 ** 40, "i", "p")
    assert layout.get_total_out_dim_size_log2() == 80 and layout.is_invertible()
    x = (3 << 40) | 7  # i's low 40 bits walk o, the high 40 walk p
    assert layout.apply({"i": x}) == {"o": 7, "p": 3}
    assert layout.invert().apply({"o": 7, "p": 3}) == {"i": x}


def test_vectorised_apply_needs_63_bit_outputs():
    layout = identity_1d(2 ** 70, "i", "o")
    with pytest.raises(ValueError, match="63 bits"):
        layout.apply({"i": np.arange(4)})


# ================================================================ beyond Triton: numpy


def test_vectorised_apply_matches_scalar_apply_and_broadcasts():
    layout = make(
        [("register", [[4, 0], [8, 0], [16, 0]]), ("lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
         ("warp", [[1, 0], [2, 0]])], ["dim0", "dim1"])
    register = np.arange(8)[:, None, None]
    lane = np.arange(32)[None, :, None]
    warp = np.arange(4)[None, None, :]
    out = layout.apply({"register": register, "lane": lane, "warp": warp})
    assert out["dim0"].shape == out["dim1"].shape == (8, 32, 4)
    assert out["dim0"].dtype == np.int64
    assert out["dim0"][5, 3, 2] == 22 and out["dim1"][5, 3, 2] == 3  # the seed example
    for r in range(8):
        for w in range(4):
            for lane_id in (0, 7, 31):
                assert layout.apply({"register": r, "lane": lane_id, "warp": w}) == {
                    "dim0": out["dim0"][r, lane_id, w], "dim1": out["dim1"][r, lane_id, w]}


def test_vectorised_apply_refuses_high_bits_and_keeps_the_in_range_ones():
    with pytest.raises(ValueError, match="input 'i' = 14 is out of range for dimension 'i' of size 4"):
        identity_1d(4, "i", "o").apply({"i": np.array([0b1110, 3])})
    assert identity_1d(4, "i", "o").apply({"i": np.array([0b10, 3])})["o"].tolist() == [0b10, 3]


def test_tabulate_order_first_input_is_minor():
    # a: [(1,0), (0,1)], b: [(1,1)]. Row x is the input a = x % 4, b = x // 4:
    # x=0 (0,0); 1 (1,0); 2 (0,1); 3 (1,1); 4 = b (1,1); 5 (0,1); 6 (1,0); 7 (0,0).
    layout = make([("a", [[1, 0], [0, 1]]), ("b", [[1, 1]])], ["o", "p"])
    table = layout.tabulate()
    assert table.shape == (8, 2)
    assert table.tolist() == [[0, 0], [1, 0], [0, 1], [1, 1], [1, 1], [0, 1], [1, 0], [0, 0]]


def test_tabulate_edge_cases():
    # One row (input 0) of zeros; no output columns when there are no outputs.
    assert make([], ["o"], [4]).tabulate().tolist() == [[0]]
    assert make([("i", [[], []])], []).tabulate().shape == (4, 0)
