"""Differential tests: ``linear_layout.LinearLayout`` against Triton 3.9's ``triton.tools.LinearLayout``.

Every method both have is run on the same hypothesis-generated layouts -- several input
dimensions, broadcast (zero) bases, non-injective and non-surjective layouts, up to 18 input and
18 output bits -- and the results must agree exactly: ``str()``, bases, output dimensions, names,
predicates, ``apply``, ``compose``, ``invert_and_compose``, ``pseudoinvert``, ``invert``, ``*``,
``==``, the matrix and the text views. Ours returns tuples where Triton returns lists, so results
are compared after normalising both to plain lists.

Triton's C++ aborts the process on invalid input, so the strategies (``strategies.py``) only
draw valid input. ``invert_and_compose`` additionally depends on which solution Triton's
heuristic picks, so it runs Triton in a forked child: an abort there fails one test with the
offending layouts instead of killing the whole run.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

TL = pytest.importorskip("triton.tools").LinearLayout

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import strategies as S  # noqa: E402
from linear_layout import LinearLayout  # noqa: E402
from linear_layout.core import layout as layout_module  # noqa: E402

pytestmark = pytest.mark.triton


# ---------------------------------------------------------------- comparing results

def plain(value):
    """Tuples and lists, recursively, as lists: Triton returns lists where we return tuples."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def snapshot(layout) -> dict:
    """Everything observable through the shared binding API, as plain data."""
    return {
        "str": str(layout),
        "bases": plain(layout.bases),
        "out_dims": plain(layout.out_dims),
        "in_names": plain(layout.get_in_dim_names()),
        "out_names": plain(layout.get_out_dim_names()),
        "num_dims": (layout.num_in_dims, layout.num_out_dims),
        "predicates": (layout.is_surjective(), layout.is_injective(), layout.is_invertible()),
        "matrix": plain(layout.get_matrix_view()),
    }


def assert_same(ours: LinearLayout, theirs) -> None:
    assert snapshot(ours) == snapshot(theirs)


def in_child(fn):
    """Run ``fn`` in a forked process; return its (picklable) result, or fail if Triton aborts."""
    if not hasattr(os, "fork"):
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        os.close(read_end)
        try:
            payload = pickle.dumps(("ok", fn()))
        except BaseException as error:
            payload = pickle.dumps(("raised", repr(error)))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not payload:
        pytest.fail(f"Triton aborted (wait status {status}) on this input")
    kind, value = pickle.loads(payload)
    if kind == "raised":
        pytest.fail(f"Triton raised {value}")
    return value


# ---------------------------------------------------------------- construction and queries

@given(S.layout_specs())
def test_from_bases_with_sizes(spec):
    assert_same(spec.ours(), spec.triton())


@given(S.layout_specs(surjective=True))
def test_from_bases_infers_sizes(spec):
    # Surjective specs reach the top bit of every output, so inference recovers their sizes and
    # both sides accept them; Triton would abort on an inferred non-surjective layout.
    bases = [(name, [list(b) for b in bs]) for name, bs in spec.bases]
    ours = LinearLayout.from_bases(bases, list(spec.out_names))
    assert_same(ours, TL.from_bases(bases, list(spec.out_names)))
    assert ours.out_dims == tuple(zip(spec.out_names, spec.out_sizes))


sizes_or_zero = st.sampled_from([0, 1, 2, 4, 8, 64, 1024])
powers_of_two = st.sampled_from([1, 2, 4, 8, 64, 1024])


@given(sizes_or_zero, st.sampled_from(["register", "lane"]), st.sampled_from(["dim0", "lane"]))
def test_identity_1d(size, in_dim, out_dim):
    assert_same(LinearLayout.identity_1d(size, in_dim, out_dim), TL.identity_1d(size, in_dim, out_dim))


@given(sizes_or_zero, powers_of_two)
def test_strided_1d(size, stride):
    assert_same(LinearLayout.strided_1d(size, stride, "i", "o"), TL.strided_1d(size, stride, "i", "o"))


@given(sizes_or_zero, powers_of_two)
def test_zeros_1d(size, out_size):
    assert_same(LinearLayout.zeros_1d(size, "i", "o"), TL.zeros_1d(size, "i", "o"))
    assert_same(LinearLayout.zeros_1d(size, "i", "o", out_size), TL.zeros_1d(size, "i", "o", out_size))


def test_default_constructor_is_the_empty_layout():
    assert_same(LinearLayout(), TL())
    assert LinearLayout() == LinearLayout.empty()


@given(st.data())
def test_apply(data):
    spec = data.draw(S.layout_specs())
    ours, theirs = spec.ours(), spec.triton()
    for _ in range(4):
        # In range, both agree. Bits above an input's size: Triton masks them off silently, we
        # refuse the input (a ValueError naming the dimension); masked by hand, both agree again.
        point = data.draw(S.in_values(ours, overflow=True))
        masked = {name: value % ours.get_in_dim_size(name) for name, value in point.items()}
        outside = [name for name in point if point[name] != masked[name]]
        if outside:
            with pytest.raises(ValueError, match=f"input '{outside[0]}' = {point[outside[0]]} is out of range"):
                ours.apply(point)
            assert theirs.apply(point) == theirs.apply(masked)
        assert ours.apply(masked) == theirs.apply(masked)


@given(st.data())
def test_apply_through_every_state_of_its_tables(data):
    """``apply`` XORs the set bits of an index below 256 directly; an index from 256 on goes bit by
    bit the first time, then builds byte tables on the second and looks them up after: every state
    agrees with Triton, for plain ints and numpy integer scalars alike."""
    wide = data.draw(st.integers(9, 20))
    outs = [data.draw(st.integers(1, 12)), data.draw(st.integers(0, 6))]
    bases = [
        (name, [[data.draw(st.integers(0, (1 << size) - 1)) for size in outs] for _ in range(count)])
        for name, count in (("offset", wide), ("lane", 3), ("block", 0))
    ]
    ours = LinearLayout.from_bases(bases, ["o0", "o1"], [1 << size for size in outs], require_surjective=False)
    theirs = TL.from_bases(bases, ["o0", "o1"], [1 << size for size in outs], require_surjective=False)
    for _ in range(5):
        point = {"offset": data.draw(st.integers(0, (1 << wide) - 1)), "lane": data.draw(st.integers(0, 7)), "block": 0}
        assert ours.apply(point) == theirs.apply(point)
        assert ours.apply({name: np.int64(value) for name, value in point.items()}) == theirs.apply(point)


# ---------------------------------------------------------------- algebra

@given(S.composable_pairs())
def test_compose(pair):
    a, b = pair
    assert_same(a.ours().compose(b.ours()), a.triton().compose(b.triton()))


@given(S.product_pairs())
def test_product(pair):
    a, b = pair
    assert_same(a.ours() * b.ours(), a.triton() * b.triton())


@given(S.product_pairs())
def test_the_first_product_of_a_signature_and_the_planned_one_are_tritons(pair):
    """The first product of a dimension signature is computed directly, later ones through the
    cached plan (core/layout.py): both equal Triton's product, and so do their known ranks."""
    a, b = pair
    ours_a, ours_b = a.ours(), b.ours()
    key = (ours_a._ins, ours_a._outs, ours_b._ins, ours_b._outs)
    layout_module._PRODUCT_PLANS.pop(key, None)
    layout_module._PRODUCT_SEEN.pop(key, None)
    first = ours_a * ours_b
    assert key in layout_module._PRODUCT_SEEN and key not in layout_module._PRODUCT_PLANS
    second = ours_a * ours_b
    assert key in layout_module._PRODUCT_PLANS
    theirs = a.triton() * b.triton()
    for product in (first, second):
        assert_same(product, theirs)
        assert product.rank() == LinearLayout.from_bases(
            product.bases, product.get_out_dim_names(), [s for _, s in product.out_dims], require_surjective=False
        ).rank()


@st.composite
def _one_dimensional_outers(draw):
    """An inner layout and an outer one of one input and one output dimension (the usual right
    operand of ``*``), each name drawn from the inner layout's or new."""
    in_pool = tuple(draw(st.permutations(S.IN_NAMES)))
    out_pool = tuple(draw(st.permutations(S.OUT_NAMES)))
    inner = draw(S.layout_specs(in_pool=in_pool, out_pool=out_pool, keep_pool_order=True, max_in_bits=8,
                                max_out_bits=8, max_dim_bits=4))
    in_name = draw(st.sampled_from(in_pool))
    out_name = draw(st.sampled_from(out_pool))
    outer = draw(S.layout_specs(in_names=[in_name], out_names=[out_name], max_in_bits=4, max_out_bits=4,
                                max_dim_bits=4))
    return inner, outer


@given(_one_dimensional_outers())
def test_products_with_a_one_dimensional_outer_are_tritons(pair):
    """``L * identity_1d(...)``-like products take a shortcut the first time (core/layout.py,
    `_times_1d`): equal to Triton's product and to the planned one, rank included."""
    a, b = pair
    ours_a, ours_b = a.ours(), b.ours()
    key = (ours_a._ins, ours_a._outs, ours_b._ins, ours_b._outs)
    layout_module._PRODUCT_PLANS.pop(key, None)
    layout_module._PRODUCT_SEEN.pop(key, None)
    ours_a.rank(), ours_b.rank()  # known ranks: the product's is their sum
    first, second = ours_a * ours_b, ours_a * ours_b  # the shortcut, then the plan
    theirs = a.triton() * b.triton()
    assert_same(first, theirs)
    assert_same(second, theirs)
    assert first.rank() == second.rank() == LinearLayout.from_bases(
        first.bases, first.get_out_dim_names(), [s for _, s in first.out_dims], require_surjective=False
    ).rank()


@given(S.product_triples(surjective=True))
def test_product_of_surjective_layouts(triple):
    a, b, c = triple
    assert_same(a.ours() * b.ours() * c.ours(), a.triton() * b.triton() * c.triton())


@given(S.invert_and_compose_pairs())
def test_invert_and_compose(pair):
    self_spec, outer = pair
    ours = self_spec.ours().invert_and_compose(outer.ours())
    theirs = in_child(lambda: snapshot(self_spec.triton().invert_and_compose(outer.triton())))
    assert snapshot(ours) == theirs


@given(S.layout_specs(surjective=True))
def test_pseudoinvert(spec):
    assert_same(spec.ours().pseudoinvert(), spec.triton().pseudoinvert())


@given(S.layout_specs(surjective=True, square=True))
def test_invert(spec):
    assert_same(spec.ours().invert(), spec.triton().invert())


@st.composite
def near_pairs(draw):
    """Two specs that are equal, or differ in one basis, one size, or one dimension order."""
    a = draw(S.layout_specs(max_in_bits=8, max_out_bits=8))
    change = draw(st.sampled_from(["none", "basis", "size", "in_order", "out_order"]))
    bases, names, sizes = [list(bs) for _, bs in a.bases], list(a.out_names), list(a.out_sizes)
    in_names = list(a.in_names)
    if change == "basis" and a.total_in_bits and a.total_out_bits:
        dim = draw(st.sampled_from([i for i, bs in enumerate(bases) if bs]))
        i = draw(st.integers(0, len(bases[dim]) - 1))
        k = draw(st.sampled_from([k for k, s in enumerate(sizes) if s > 1]))
        basis = list(bases[dim][i])
        basis[k] ^= 1 << draw(st.integers(0, sizes[k].bit_length() - 2))
        bases[dim][i] = tuple(basis)
    elif change == "size" and sizes:
        sizes[draw(st.integers(0, len(sizes) - 1))] *= 2
    elif change == "in_order":
        order = draw(st.permutations(range(len(in_names))))
        in_names, bases = [in_names[i] for i in order], [bases[i] for i in order]
    elif change == "out_order":
        order = draw(st.permutations(range(len(names))))
        names, sizes = [names[i] for i in order], [sizes[i] for i in order]
        bases = [[tuple(b[i] for i in order) for b in bs] for bs in bases]
    b = S.Spec(tuple(zip(in_names, map(tuple, bases))), tuple(names), tuple(sizes))
    return a, b


@given(near_pairs())
def test_equality(pair):
    a, b = pair
    assert (a.ours() == b.ours()) == (a.triton() == b.triton())
    assert (a.ours() != b.ours()) == (a.triton() != b.triton())


# ---------------------------------------------------------------- text views

@given(S.layout_specs(in_dims=None, in_pool=S.DISTRIBUTED_INS, min_in_dims=4, max_in_dims=4,
                      out_pool=("dim0", "dim1", "dim2"), keep_pool_order=True, min_out_dims=1,
                      max_in_bits=9, max_out_bits=8, max_dim_bits=5),
       st.booleans())
def test_distributed_view(spec, hw_view):
    assert spec.ours().get_distributed_view(hw_view) == spec.triton().get_distributed_view(hw_view)


@given(S.layout_specs(in_pool=S.SHARED_INS, min_in_dims=2, max_in_dims=2,
                      out_pool=("dim0", "dim1", "dim2"), keep_pool_order=True, min_out_dims=1,
                      max_in_bits=9, max_out_bits=8, max_dim_bits=6),
       st.booleans())
def test_shared_view(spec, hw_view):
    assert spec.ours().get_shared_view(hw_view) == spec.triton().get_shared_view(hw_view)
