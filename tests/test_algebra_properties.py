"""Hypothesis properties of the LinearLayout algebra: the laws every layout must satisfy.

Layouts come from ``strategies.py``: several input dimensions (some of size 1), broadcast and
repeated bases, non-surjective outputs, up to 18 input and 18 output bits, and -- for the
beyond-Triton checks -- invertible layouts of 65 to 100 bits. The number of examples comes from
the hypothesis profile in ``conftest.py`` (200 in CI, 10,000 with ``HYPOTHESIS_PROFILE=thorough``).
"""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import strategies as S
from linear_layout import LinearLayout


def identity_on(dims) -> LinearLayout:
    """The identity over ``dims`` (``(name, size)`` pairs), in that order."""
    result = LinearLayout.empty()
    for name, size in dims:
        result = result * LinearLayout.identity_1d(size, name, name)
    return result


def xor_dicts(x: dict, y: dict) -> dict:
    return {k: x[k] ^ y[k] for k in x}


def unflatten(layout: LinearLayout, index: int) -> dict:
    """The input whose flattened index is ``index`` (first input dimension in the low bits)."""
    point = {}
    for name in layout.get_in_dim_names():
        bits = layout.get_in_dim_size_log2(name)
        point[name] = index & ((1 << bits) - 1)
        index >>= bits
    return point


# ---------------------------------------------------------------- apply


@given(st.data())
def test_apply_is_linear(data):
    layout = data.draw(S.layouts())
    x = data.draw(S.in_values(layout))
    y = data.draw(S.in_values(layout))
    assert layout.apply(xor_dicts(x, y)) == xor_dicts(layout.apply(x), layout.apply(y))
    assert layout.apply({name: 0 for name in layout.get_in_dim_names()}) == {
        name: 0 for name in layout.get_out_dim_names()}


@given(st.data())
def test_apply_is_the_xor_of_the_selected_bases(data):
    layout = data.draw(S.layouts())
    point = data.draw(S.in_values(layout))
    expected = [0] * layout.num_out_dims
    for name, bases in layout.bases:
        for i, basis in enumerate(bases):
            if point[name] >> i & 1:
                expected = [e ^ b for e, b in zip(expected, basis)]
    assert layout.apply(point) == dict(zip(layout.get_out_dim_names(), expected))


@given(st.data())
def test_first_and_later_points_agree(data):
    """The first apply on a fresh layout goes bit by bit, later ones through byte tables."""
    layout = data.draw(S.layouts())
    points = [data.draw(S.in_values(layout)) for _ in range(3)]
    fresh = [LinearLayout.from_bases(layout.bases, list(layout.get_out_dim_names()),
                                     [size for _, size in layout.out_dims], require_surjective=False)
             for _ in points]
    firsts = [f.apply(p) for f, p in zip(fresh, points)]  # each layout's first point
    assert firsts == [layout.apply(p) for p in points] == [fresh[0].apply(p) for p in points]


@given(st.data())
def test_vectorised_apply_agrees_with_scalar_apply(data):
    layout = data.draw(S.layouts())
    points = [data.draw(S.in_values(layout)) for _ in range(5)]
    arrays = {name: np.array([p[name] for p in points]) for name in layout.get_in_dim_names()}
    if not arrays:  # no inputs: nothing to vectorise over
        return
    out = layout.apply(arrays)
    for k, point in enumerate(points):
        assert {name: int(values[k]) for name, values in out.items()} == layout.apply(point)


@given(st.data())
def test_tabulate_agrees_with_apply(data):
    layout = data.draw(S.layouts(max_in_bits=12))
    table = layout.tabulate()
    assert table.shape == (layout.get_total_in_dim_size(), layout.num_out_dims)
    rows = data.draw(st.lists(st.integers(0, table.shape[0] - 1), min_size=1, max_size=8))
    for x in rows:
        assert dict(zip(layout.get_out_dim_names(), table[x].tolist())) == layout.apply(unflatten(layout, x))


@given(S.layouts(max_in_bits=10, max_out_bits=10))
def test_predicates_agree_with_the_table(layout):
    # Surjective: every output is reached; injective: no two inputs share an output.
    distinct = len({tuple(row) for row in layout.tabulate().tolist()})
    assert layout.is_surjective() == (distinct == layout.get_total_out_dim_size())
    assert layout.is_injective() == (distinct == layout.get_total_in_dim_size())
    assert layout.is_invertible() == (layout.is_surjective() and layout.is_injective())


# ---------------------------------------------------------------- compose and product


@given(st.data())
def test_compose_applies_in_sequence(data):
    a, b = (spec.ours() for spec in data.draw(S.composable_pairs()))
    x = data.draw(S.in_values(a))
    assert a.compose(b).apply(x) == b.apply(a.apply(x))


@st.composite
def composable_triples(draw):
    a, b = draw(S.composable_pairs(max_bits=10))
    c_in = [(name, bits + draw(st.integers(0, 1))) for name, bits in b.out_bits.items()]
    c = draw(S.layout_specs(in_dims=draw(st.permutations(c_in)), max_out_bits=10))
    return a.ours(), b.ours(), c.ours()


@given(composable_triples())
def test_compose_is_associative(triple):
    a, b, c = triple
    assert a.compose(b).compose(c) == a.compose(b.compose(c))


@given(S.product_triples())
def test_product_is_associative(triple):
    a, b, c = (spec.ours() for spec in triple)
    assert (a * b) * c == a * (b * c)


@given(S.layouts())
def test_empty_is_the_unit_of_product(layout):
    assert LinearLayout.empty() * layout == layout == layout * LinearLayout.empty()


@given(st.data())
def test_product_is_the_direct_sum(data):
    # (A * B)(x) on a shared input d: A reads d's low bits, B the high ones; on a shared output
    # o, B's value lands above A's: (A * B)(lo + 2**n hi) = A(lo) + B(hi) * A.out_size.
    a, b = (spec.ours() for spec in data.draw(S.product_pairs()))
    x, y = data.draw(S.in_values(a)), data.draw(S.in_values(b))
    point = {}
    for name in (a * b).get_in_dim_names():
        low_bits = a.get_in_dim_size_log2(name) if a.has_in_dim(name) else 0
        point[name] = x.get(name, 0) | (y.get(name, 0) << low_bits)
    ax, by = a.apply(x), b.apply(y)
    expected = {}
    for name in (a * b).get_out_dim_names():
        scale = a.get_out_dim_size(name) if a.has_out_dim(name) else 1
        expected[name] = ax.get(name, 0) + by.get(name, 0) * scale
    assert (a * b).apply(point) == expected


# ---------------------------------------------------------------- inverses


@given(S.invert_and_compose_pairs())
def test_invert_and_compose_postcondition(pair):
    # C = self.invert_and_compose(outer) satisfies outer(C(x)) == self(x): composing back gives
    # self, in self's output order, up to output sizes (outer's may be larger).
    self_layout, outer = (spec.ours() for spec in pair)
    c = self_layout.invert_and_compose(outer)
    assert c.get_in_dim_names() == self_layout.get_in_dim_names()
    assert c.out_dims == tuple((n, outer.get_in_dim_size(n)) for n in outer.get_in_dim_names())
    back = c.compose(outer).transpose_outs(self_layout.get_out_dim_names())
    assert back.equal_ignoring_out_dim_sizes(self_layout)


@given(st.data())
def test_invert_and_compose_is_unique_when_outer_is_invertible(data):
    outer = data.draw(S.layout_specs(surjective=True, square=True, min_out_dims=1, max_out_bits=12))
    outs = data.draw(st.permutations(list(outer.out_bits.items())))
    self_layout = data.draw(S.layout_specs(out_dims=outs, max_in_bits=12)).ours()
    outer = outer.ours()
    # With an invertible outer there is one solution: self followed by outer's inverse.
    assert self_layout.invert_and_compose(outer) == self_layout.compose(outer.invert())


@given(S.layouts(surjective=True))
def test_pseudoinvert_is_a_right_inverse(layout):
    inverse = layout.pseudoinvert()
    assert inverse.compose(layout) == identity_on(layout.out_dims)


@given(S.layouts(surjective=True))
def test_pseudoinvert_takes_minimum_norm_preimages(layout):
    # Free input bits (duplicates of earlier ones) are never used by the chosen preimage.
    masks = layout.get_free_variable_masks()
    free = 0
    for name, count in ((n, layout.get_in_dim_size_log2(n)) for n in reversed(layout.get_in_dim_names())):
        free = (free << count) | masks[name]
    for _, bases in layout.pseudoinvert().flatten_outs().bases:
        for (value,) in bases:
            assert value & free == 0


@given(S.layouts(surjective=True, square=True))
def test_invert_is_a_two_sided_inverse(layout):
    inverse = layout.invert()
    ins = tuple((n, layout.get_in_dim_size(n)) for n in layout.get_in_dim_names())
    assert layout.compose(inverse) == identity_on(ins)
    assert inverse.compose(layout) == identity_on(layout.out_dims)
    assert inverse.invert() == layout


@st.composite
def lstsq_problems(draw):
    """``(A, B)`` with B in A's image: B = X0 then A for a random X0 into A's inputs."""
    a = draw(S.layout_specs(min_in_dims=1, max_in_bits=12, max_out_bits=12))
    x0 = draw(S.layout_specs(out_dims=list(a.in_bits.items()), max_in_bits=10))
    return a.ours(), x0.ours().compose(a.ours())


@given(lstsq_problems())
def test_lstsq_postcondition(problem):
    a, b = problem
    x = LinearLayout.lstsq(a, b)
    assert x.compose(a) == b


@given(S.layouts())
def test_free_variables_count_the_rank_deficit(layout):
    free_bits = sum(bin(mask).count("1") for mask in layout.get_free_variable_masks().values())
    assert free_bits == layout.get_total_in_dim_size_log2() - layout.rank()


# ---------------------------------------------------------------- reshaping


@given(st.data())
def test_reshape_ins_round_trip(data):
    layout = data.draw(S.layouts())
    total = layout.get_total_in_dim_size_log2()
    widths = data.draw(st.lists(st.integers(0, total), min_size=1, max_size=3))
    widths[-1] = max(0, total - sum(widths[:-1]))
    if sum(widths) != total:
        widths = [total]
    new = [(f"n{i}", 1 << w) for i, w in enumerate(widths)]
    old = [(n, layout.get_in_dim_size(n)) for n in layout.get_in_dim_names()]
    reshaped = layout.reshape_ins(new)
    assert reshaped.reshape_ins(old) == layout
    # Reshaping relabels inputs without changing the map on flattened indices.
    assert (reshaped.tabulate() == layout.tabulate()).all() if total <= 12 else True


@given(st.data())
def test_reshape_outs_round_trip(data):
    layout = data.draw(S.layouts())
    total = layout.get_total_out_dim_size_log2()
    split = data.draw(st.integers(0, total))
    reshaped = layout.reshape_outs([("lo", 1 << split), ("hi", 1 << (total - split))])
    assert reshaped.reshape_outs(list(layout.out_dims)) == layout
    # Both flatten to the same single output: reshaping only relabels output bits.
    flat = [("all", 1 << total)]
    assert reshaped.reshape_outs(flat) == layout.reshape_outs(flat)


@given(st.data())
def test_flatten_round_trip(data):
    layout = data.draw(S.layouts(min_in_dims=1, min_out_dims=1))
    ins = [(n, layout.get_in_dim_size(n)) for n in layout.get_in_dim_names()]
    assert layout.flatten_ins().reshape_ins(ins) == layout
    assert layout.flatten_outs().reshape_outs(list(layout.out_dims)) == layout


@given(st.data())
def test_transpose_round_trips_and_preserves_the_map(data):
    layout = data.draw(S.layouts())
    ins, outs = layout.get_in_dim_names(), layout.get_out_dim_names()
    new_ins = data.draw(st.permutations(ins))
    new_outs = data.draw(st.permutations(outs))
    moved = layout.transpose_ins(new_ins).transpose_outs(new_outs)
    assert moved.transpose_ins(ins).transpose_outs(outs) == layout
    point = data.draw(S.in_values(layout))
    assert moved.apply(point) == layout.apply(point)  # dicts: order does not matter


@given(st.data())
def test_sublayout_restricts_apply(data):
    layout = data.draw(S.layouts())
    ins = data.draw(st.lists(st.sampled_from(layout.get_in_dim_names()), unique=True)) if layout.num_in_dims else []
    outs = data.draw(st.lists(st.sampled_from(layout.get_out_dim_names()), unique=True)) if layout.num_out_dims else []
    sub = layout.sublayout(ins, outs)
    point = data.draw(S.in_values(sub))
    full = layout.apply({n: point.get(n, 0) for n in layout.get_in_dim_names()})
    assert sub.apply(point) == {n: full[n] for n in sub.get_out_dim_names()}


@given(st.data())
def test_concat_ins_adds_the_images(data):
    a = data.draw(S.layouts(in_pool=("register", "lane")))
    b = data.draw(S.layout_specs(out_dims=list((n, s.bit_length() - 1) for n, s in a.out_dims),
                                 in_pool=("warp", "block"))).ours()
    both = a.concat_ins(b)
    x, y = data.draw(S.in_values(a)), data.draw(S.in_values(b))
    assert both.apply({**x, **y}) == xor_dicts(a.apply(x), b.apply(y))


# ---------------------------------------------------------------- divide


@given(S.product_pairs())
def test_divide_left_recovers_the_outer_factor(pair):
    b, c = (spec.ours() for spec in pair)
    product = b * c
    quotient = LinearLayout.divide_left(product, b)
    assert quotient is not None
    assert b * quotient == product


@given(S.product_pairs())
def test_divide_right_recovers_the_inner_factor(pair):
    c, b = (spec.ours() for spec in pair)
    product = c * b
    quotient = LinearLayout.divide_right(product, b)
    assert quotient is not None
    assert quotient * b == product


# ---------------------------------------------------------------- values


@given(S.layout_specs())
def test_equal_layouts_are_interchangeable(spec):
    layout = spec.ours()
    rebuilt = LinearLayout.from_bases(layout.bases, layout.get_out_dim_names(),
                                      [size for _, size in layout.out_dims], require_surjective=False)
    assert rebuilt == layout and hash(rebuilt) == hash(layout)
    assert {layout: 1}[rebuilt] == 1
    assert pickle.loads(pickle.dumps(layout)) == layout


# ---------------------------------------------------------------- beyond 64 bits


@st.composite
def big_invertible_layouts(draw):
    """An invertible layout of 65 to 100 bits: a permutation of unit vectors, then random column
    additions (``col_i ^= col_j``), which keep it invertible, split over a few dimensions."""
    bits = draw(st.integers(65, 100))
    rng = draw(st.randoms(use_true_random=False))  # hundreds of choices: one seed, not one draw each
    columns = [1 << k for k in rng.sample(range(bits), bits)]
    for _ in range(rng.randint(0, 3 * bits)):
        i, j = rng.sample(range(bits), 2)
        columns[i] ^= columns[j]
    cut_in = sorted(draw(st.lists(st.integers(0, bits), min_size=1, max_size=2)))
    cut_out = draw(st.integers(1, bits - 1))
    flat = LinearLayout.from_bases([("in", [[c] for c in columns])], ["out"], [1 << bits])
    ins = [("a", cut_in[0]), ("b", cut_in[-1] - cut_in[0]), ("c", bits - cut_in[-1])]
    return flat.reshape_ins([(n, 1 << w) for n, w in ins]).reshape_outs(
        [("x", 1 << cut_out), ("y", 1 << (bits - cut_out))])


@given(big_invertible_layouts(), st.data())
def test_inverse_of_big_layouts(layout, data):
    inverse = layout.invert()
    point = {n: data.draw(st.integers(0, layout.get_in_dim_size(n) - 1)) for n in layout.get_in_dim_names()}
    assert inverse.apply(layout.apply(point)) == point
    assert inverse.invert() == layout
    assert layout.invert_and_compose(layout) == identity_on(
        [(n, layout.get_in_dim_size(n)) for n in layout.get_in_dim_names()])
