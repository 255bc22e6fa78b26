"""The algebra builders the encodings are made of, checked against their definitions (no Triton needed).

``product_1d`` must be the fold of ``*`` over its one-dimensional factors, with the rank it records
right; the shape fits keep checking their shapes once their plans are cached; a ``#ttg.slice`` of a
:class:`~linear_layout.encodings.base.FactoredLayout` parent, built from the parent's factors, must be
Triton's definition: the parent on the shape with a 1 at ``dim``, that out dim squeezed, the later
ones renamed down, and the zero register bases dropped.
"""

import functools
import operator
import re

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from linear_layout import LinearLayout  # noqa: E402
from linear_layout import encodings as E  # noqa: E402
from linear_layout.core.layout import (  # noqa: E402
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    identity_standard_nd,
    product_1d,
)
from linear_layout.encodings import base  # noqa: E402
from strategies import rank as independent_rank  # noqa: E402

# ---------------------------------------------------------------- product_1d


def factor_layout(factor):
    """The layout a product_1d factor stands for, built with the algebra's one-dimensional builders."""
    size, in_dim, out_dim = factor[:3]
    stride = factor[3] if len(factor) == 4 else 1
    if stride == 0:
        return LinearLayout.zeros_1d(size, in_dim, out_dim)
    if stride == 1:
        return LinearLayout.identity_1d(size, in_dim, out_dim)
    return LinearLayout.strided_1d(size, stride, in_dim, out_dim)


factors = st.lists(
    st.tuples(
        st.sampled_from([0, 1, 2, 4, 8, 32]),
        st.sampled_from(["register", "lane", "warp"]),
        st.sampled_from(["dim0", "dim1", "dim2"]),
    ).flatmap(lambda f: st.sampled_from([f, f + (0,), f + (1,), f + (2,), f + (4,)])),
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(factors)
def test_product_1d_is_the_fold_of_star(fs):
    built = product_1d(fs)
    folded = functools.reduce(operator.mul, [factor_layout(f) for f in fs], LinearLayout.empty())
    assert built == folded
    assert built.get_in_dim_names() == folded.get_in_dim_names()
    assert built.out_dims == folded.out_dims
    assert built.rank() == independent_rank(folded._cols)


def test_product_1d_lists_dims_in_first_appearance_order():
    layout = product_1d(
        [(1, "register", "dim1"), (1, "register", "dim0"), (4, "lane", "dim0"), (2, "register", "dim1")]
    )
    assert layout.out_dims == (("dim1", 2), ("dim0", 4))
    assert layout.bases == (("register", ((1, 0),)), ("lane", ((0, 1), (0, 2))))


@pytest.mark.parametrize(
    ("factor", "error", "message"),
    [
        ((3, "a", "b"), ValueError, "product_1d size must be a power of two, got 3"),
        ((True, "a", "b"), TypeError, "product_1d size must be an integer, got bool"),
        (("4", "a", "b"), TypeError, "product_1d size must be an integer, got str"),
        ((2, "a", "b", 3), ValueError, "product_1d stride must be a power of two, got 3"),
        ((2, 1, "b"), TypeError, "dimension names must be strings, got int 1"),
        ((2, "a"), TypeError, "a factor must be (size, in_dim, out_dim[, stride])"),
        (5, TypeError, "a factor must be (size, in_dim, out_dim[, stride])"),
        ("abc", TypeError, "a factor must be (size, in_dim, out_dim[, stride])"),
    ],
)
def test_product_1d_names_a_bad_factor(factor, error, message):
    with pytest.raises(error, match=re.escape(message)):
        product_1d([(2, "register", "dim0"), factor])


def test_identity_standard_nd_is_product_1d_over_the_order():
    fs = [(4, "lane", "dim2"), (2, "lane", "dim0"), (8, "lane", "dim1")]
    assert identity_standard_nd("lane", [2, 8, 4], [2, 0, 1]) == product_1d(fs)
    assert identity_standard_nd("lane", [2, 8, 4], [2, 0, 1]).out_dims == product_1d(fs).out_dims


# ---------------------------------------------------------------- ranks carried through builders


@settings(max_examples=200, deadline=None)
@given(factors, st.tuples(*[st.sampled_from([1, 2, 8, 64])] * 3), st.tuples(*[st.sampled_from([1, 4, 16])] * 3))
def test_ranks_carried_through_the_shape_fits_are_right(fs, grow, shrink):
    layout = product_1d(fs)
    names = layout.get_out_dim_names()
    grown = ensure_layout_not_smaller_than(layout, dict(zip(names, grow)))
    assert grown.rank() == independent_rank(grown._cols)
    fitted = ensure_layout_not_larger_than(grown, dict(zip(names, shrink))) if grown.is_surjective() else grown
    assert fitted.rank() == independent_rank(fitted._cols)


tile_factors = st.integers(1, 3).flatmap(
    lambda rank: st.tuples(
        st.permutations([f"dim{d}" for d in range(rank)]),
        st.lists(
            st.tuples(
                st.sampled_from([1, 2, 4, 32]),
                st.sampled_from(["register", "lane", "warp"]),
                st.sampled_from([f"dim{d}" for d in range(rank)]),
            ).flatmap(lambda f: st.sampled_from([f, f, f + (0,), f + (2,)])),
            max_size=8,
        ),
        st.lists(st.sampled_from([1, 2, 8, 64]), min_size=rank, max_size=rank).map(tuple),
    )
)


@settings(max_examples=200, deadline=None)
@given(tile_factors)
def test_fitted_tile_is_the_fitted_product(case):
    # With one CTA, fitted_tile builds a tile fitted to a shape with one product_1d where it can;
    # it must equal the product fitted step by step (grow, shrink, out dims in standard order,
    # block in-dim). Strided factors (stride 2) take the general path.
    order, fs, shape = case
    fs = [(1, "register", name) for name in order] + fs  # every dim listed, in a random order
    try:
        expected = base.combine_cta_cga(product_1d([*fs, base.BLOCK]), (), shape)
    except ValueError as error:
        with pytest.raises(type(error)):
            base.fitted_tile(fs, (), shape)
        return
    built = base.fitted_tile(fs, (), shape)
    assert built == expected
    assert built.get_in_dim_names() == expected.get_in_dim_names()
    assert built.out_dims == expected.out_dims
    assert built.rank() == independent_rank(built._cols)


def test_shape_fits_check_the_shape_after_their_plan_is_cached():
    layout = product_1d([(4, "register", "dim0"), (2, "lane", "dim1")])
    assert ensure_layout_not_smaller_than(layout, {"dim0": 8, "dim1": 2}).out_dims == (("dim0", 8), ("dim1", 2))
    assert ensure_layout_not_larger_than(layout, {"dim0": 2, "dim1": 2}).out_dims == (("dim0", 2), ("dim1", 2))
    for fit in (ensure_layout_not_smaller_than, ensure_layout_not_larger_than):
        with pytest.raises(ValueError, match="must be the output dimensions"):
            fit(layout, {"dim0": 8, "dim1": 2, "dim2": 4})
        with pytest.raises(ValueError, match="must be the output dimensions"):
            fit(layout, {"dim0": 8})
        with pytest.raises(ValueError, match="power of two"):
            fit(layout, {"dim0": 8, "dim1": 3})


# ---------------------------------------------------------------- slices of factored parents


def pow2(lo, hi):
    return st.integers(lo, hi).map(lambda e: 1 << e)


@st.composite
def factored_parents(draw):
    kind = draw(st.sampled_from(["blocked", "mma", "mfma"]))
    if kind == "blocked":
        rank = draw(st.integers(2, 3))
        per_dim = [pow2(0, 2) for _ in range(rank)]
        lanes = [1] * rank
        for _ in range(5):
            lanes[draw(st.integers(0, rank - 1))] *= 2
        order = tuple(draw(st.permutations(range(rank))))
        return E.BlockedLayout(draw(st.tuples(*per_dim)), tuple(lanes), draw(st.tuples(*per_dim)), order)
    if kind == "mma":
        return E.NVMMADistributedLayout((2, 0), draw(st.tuples(pow2(0, 2), pow2(0, 2))), (16, 8))
    instr = draw(st.sampled_from([(32, 32, 8), (16, 16, 16), (4, 64, 4), (64, 4, 4)]))
    transposed = instr[:2] == (64, 4) or draw(st.booleans())
    return E.AMDMFMALayout(3, instr, transposed, draw(st.tuples(pow2(0, 2), pow2(0, 2))))


def slice_by_definition(parent, dim, shape):
    """Triton's SliceEncodingAttr::toLinearLayout, from the parent's own layout."""
    parent_shape = shape[:dim] + (1,) + shape[dim:]
    layout = parent.to_linear_layout(parent_shape).squeeze_outs(f"dim{dim}")
    names = [f"dim{d}" for d in range(len(shape))]
    return layout.reshape_outs(list(zip(names, shape))).remove_zero_bases_along_dim("register")


@settings(max_examples=150, deadline=None)
@given(factored_parents(), st.data())
def test_slice_of_a_factored_parent_is_the_sliced_parent(parent, data):
    dim = data.draw(st.integers(0, parent.rank - 1))
    shape = data.draw(st.tuples(*[pow2(0, 7) for _ in range(parent.rank - 1)]))
    sliced = E.SliceLayout(dim, parent).to_linear_layout(shape)
    expected = slice_by_definition(parent, dim, shape)
    assert sliced == expected
    assert sliced.out_dims == expected.out_dims


# ---------------------------------------------------------------- launch sizes without the layout

@st.composite
def blocked_and_shape(draw):
    rank = draw(st.integers(1, 3))
    sizes = [tuple(draw(st.lists(pow2(0, 4), min_size=rank, max_size=rank))) for _ in range(3)]
    order = tuple(draw(st.permutations(range(rank))))
    cga = draw(st.sampled_from([(), ((0,) * (rank - 1) + (1,),)]))
    # shapes the layout may refuse too: a size that is not a power of two, a wrong rank
    shape = draw(st.lists(st.sampled_from([1, 2, 4, 64, 256, 3]), min_size=rank, max_size=rank + (rank < 3)))
    return E.BlockedLayout(*sizes, order, cga), shape


@settings(max_examples=150, deadline=None)
@given(blocked_and_shape())
def test_launch_sizes_are_the_built_layouts(case):
    # A blocked layout with one CTA gives its lane, warp and block sizes from its parameters,
    # without being built: they must be the built layout's, and a shape it refuses must raise the
    # same error (with a CGA layout the sizes are read from the built layout).
    layout, shape = case
    try:
        built = E.to_linear_layout(layout, shape)
    except ValueError as error:
        with pytest.raises(type(error)) as info:
            E.launch_sizes(layout, shape)
        assert str(info.value) == str(error)
        return
    expected = {dim: built.get_in_dim_size(dim) for dim in ("lane", "warp", "block")}
    assert E.launch_sizes(layout, shape) == expected
    sliced = E.SliceLayout(0, layout) if layout.rank > 1 else None  # a family without the shortcut
    if sliced is not None:
        slice_built = E.to_linear_layout(sliced, shape[1:])
        assert E.launch_sizes(sliced, shape[1:]) == {d: slice_built.get_in_dim_size(d) for d in ("lane", "warp", "block")}
