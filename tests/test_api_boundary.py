"""The public Python API validates its arguments at the boundary: a wrong type is a TypeError naming
the argument and what it got, a size past the limits is a ValueError (never MemoryError, never an
AttributeError from deep inside), and `apply` refuses non-integer inputs instead of truncating them."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layout import LinearLayout, plan_conversion
from linear_layout.core.limits import MAX_MATERIALISED, LimitError

L = LinearLayout.identity_1d(4, "i", "o")


@pytest.mark.parametrize("call, message", [
    (lambda: L.compose(None), "LinearLayout.compose: argument 'outer' must be a LinearLayout, got NoneType"),
    (lambda: L.invert_and_compose("x"), "argument 'outer' must be a LinearLayout, got str"),
    (lambda: LinearLayout.lstsq(L, 3), "LinearLayout.lstsq: argument 'B' must be a LinearLayout, got int"),
    (lambda: LinearLayout.divide_left([], L), "argument 'A' must be a LinearLayout, got list"),
    (lambda: LinearLayout.divide_right(L, {}), "argument 'B' must be a LinearLayout, got dict"),
    (lambda: L.concat_ins(1.0), "argument 'other' must be a LinearLayout, got float"),
    (lambda: L.concat_outs(None), "argument 'other' must be a LinearLayout"),
    (lambda: L.equal_ignoring_out_dim_sizes(None), "argument 'other' must be a LinearLayout"),
    (lambda: L.sublayout("i", ["o"]), "argument 'in_dims' must be a sequence of dimension names, got str"),
    (lambda: L.sublayout(["i"], [1]), "argument 'out_dims' must hold dimension names (str), got int"),
    (lambda: L.transpose_outs(None), "argument 'new_order' must be a sequence of dimension names, got NoneType"),
    (lambda: L.quotient(5), "argument 'dims' must be a sequence of dimension names, got int"),
    (lambda: L.is_trivial_over("i"), "got str"),
    (lambda: L.reshape_ins(5), "argument 'new_in_dims' must be a sequence of (name, size) pairs, got int"),
    (lambda: L.reshape_outs(["o"]), "must hold (name, size) pairs"),
    (lambda: LinearLayout.from_bases({"i": [[1]]}, "o"), "argument 'out_dim_names' must be a sequence of dimension "
                                                          "names, got str"),
    (lambda: LinearLayout.from_bases(5, ["o"]), "argument 'bases' must be a mapping or a sequence of (name, bases) "
                                                "pairs, got int"),
    (lambda: LinearLayout.from_bases([("i",)], ["o"]), "must hold (name, bases) pairs"),
    (lambda: LinearLayout.from_bases({"i": 5}, ["o"]), "the bases of input dimension 'i' must be a sequence"),
    (lambda: LinearLayout.from_bases({"i": [1]}, ["o"]), "a basis of input dimension 'i' must be a sequence of "
                                                         "integers, got int"),
    (lambda: LinearLayout.from_bases({"i": [[1.0]]}, ["o"]), "basis coordinates must be integers, got float"),
    (lambda: LinearLayout.from_bases({"i": [[1]]}, ["o"], 5), "argument 'out_dim_sizes' must be a sequence"),
    (lambda: LinearLayout.from_bases({"i": [[1]]}, ["o"], [2.0]), "must be an integer, got float"),
    (lambda: LinearLayout.from_bases({1: [[1]]}, ["o"]), "must hold dimension names (str), got int"),
    (lambda: LinearLayout.identity_1d("4", "i", "o"), "LinearLayout.identity_1d: argument 'size' must be an integer, got str '4'"),
    (lambda: LinearLayout.identity_1d(4, 3, "o"), "LinearLayout.identity_1d: argument 'in_dim' must be a dimension name (str), got int 3"),
    (lambda: LinearLayout.strided_1d(4, 1.5, "i", "o"), "LinearLayout.strided_1d: argument 'stride' must be an integer, got float 1.5"),
    (lambda: LinearLayout.zeros_1d(4, "i", None), "LinearLayout.zeros_1d: argument 'out_dim' must be a dimension name (str), got NoneType"),
    (lambda: L.apply([1]), "argument 'ins' must be a mapping"),
    (lambda: L.apply({"i": 1.5}), "input 'i' must be an integer, got float"),
    (lambda: L.apply({"i": 2.0}), "input 'i' must be an integer, got float"),
    (lambda: L.apply({"i": np.float32(1)}), "input 'i' must be an integer, got float32"),
    (lambda: L.apply({"i": True}), "input 'i' must be an integer, got bool"),
    (lambda: L.apply({"i": "1"}), "input 'i' must be an integer, got str"),
    (lambda: L.apply({"i": np.array([1.0, 2.0])}), "input 'i' must be an integer array, got dtype float64"),
    (lambda: L.apply({"i": np.array([True])}), "input 'i' must be an integer array, got dtype bool"),
    (lambda: L * None, "unsupported operand"),
    (lambda: plan_conversion(None, None), "src must be a LinearLayout"),
    (lambda: plan_conversion(L, L, bitwidth=16.0), "plan_conversion: argument 'bitwidth' must be an integer, got float"),
    (lambda: plan_conversion(L, L, bitwidth=True), "argument 'bitwidth' must be an integer, got bool"),
    (lambda: plan_conversion(L, L, shape="16"), "argument 'shape' must be a sequence of integers"),
    (lambda: plan_conversion(L, L, [4.0]), "argument 'shape' must be a sequence of integers"),
    (lambda: plan_conversion(L, L, threads_per_warp=None), "argument 'threads_per_warp' must be an integer"),
    (lambda: plan_conversion(L, L, max_reps="all"), "argument 'max_reps' must be an integer or None, got str"),
])
def test_wrong_argument_type_is_a_type_error_naming_it(call, message):
    with pytest.raises(TypeError) as info:
        call()
    assert message in str(info.value)


def test_apply_still_takes_integers_and_integer_arrays():
    assert L.apply({"i": 3}) == {"o": 3}
    assert L.apply({"i": np.int8(2)}) == {"o": 2}
    out = L.apply({"i": np.array([3, 1], dtype=np.uint16)})["o"]
    assert out.tolist() == [3, 1] and out.dtype == np.int64


def test_size_limit_is_a_value_error_not_memory_error():
    huge = LinearLayout.identity_1d(2**100, "i", "o")  # 100 bases: fine as an algebraic object
    assert huge.apply({"i": 2**99 + 5}) == {"o": 2**99 + 5}
    with pytest.raises(ValueError, match=r"tabulate would enumerate 2\*\*100|more than the limit of 2\*\*30") as info:
        huge.tabulate()
    assert isinstance(info.value, LimitError)
    just_over = LinearLayout.identity_1d(2 * MAX_MATERIALISED, "i", "o")
    with pytest.raises(ValueError, match="more than the limit of 2\\*\\*30"):
        just_over.tabulate()


@pytest.mark.parametrize("call, exception", [
    (lambda: L.resize_in_dim({"i": [[[[1]]]]}, L), TypeError),
    (lambda: L.rename_in_dim("i", [1]), TypeError),
    (lambda: L.get_out_dim_size({"a": [[[]]]}), TypeError),
])
def test_names_of_the_wrong_type_are_user_errors(call, exception):
    with pytest.raises(exception):
        call()
