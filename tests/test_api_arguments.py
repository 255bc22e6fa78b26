"""Every public function and method of the pure API, argument by argument, with hypothesis-drawn
values of the wrong type: the call raises a TypeError naming the argument and saying what it got,
never another exception (no KeyError, IndexError, AttributeError, MemoryError from inside).  Values
of the right type but outside the domain (an unknown dimension name, a negative size) give a
ValueError or a result, never another exception.

What counts as the right type is read from the annotation of each parameter (``str``, ``int``,
``bool``, ``LinearLayout``, ``Sequence[...]``, ``Mapping[...]``, ``tuple[...]``, unions with
``None``), so a new method or parameter is covered by adding one row of valid arguments to
``TARGETS``; ``test_every_public_callable_has_a_row`` fails until it is added."""

from __future__ import annotations

import collections.abc as abc
import inspect
import types
import typing
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linear_layout
from linear_layout import LinearLayout, planning
from linear_layout import encodings as E
from linear_layout.core import layout as core_layout

LL = LinearLayout
L = LL.from_bases([("register", [[1, 0]]), ("lane", [[0, 1], [2, 0]]), ("warp", [[0, 2]]), ("block", [])],
                  ["dim0", "dim1"])
S = LL.from_bases([("offset", [[1, 0], [0, 1], [2, 0], [0, 2]]), ("block", [])], ["dim0", "dim1"])
IDENTITY = LL.identity_1d(4, "dim0", "dim0") * LL.identity_1d(4, "dim1", "dim1")
EXTRA = LL.from_bases([("extra", [[1, 0]])], ["dim0", "dim1"], [4, 4], require_surjective=False)
SAME_INS = LL.from_bases([("register", [[1]]), ("lane", [[0], [0]]), ("warp", [[0]]), ("block", [])], ["x"])
BLOCKED = E.BlockedLayout((1,), (32,), (1,), (0,))
BLOCKED_2D = E.BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0))
MMA = E.NVMMADistributedLayout((2, 0), (4, 1), (16, 8))
P32 = E.to_linear_layout(BLOCKED, (32,))
SWIZZLED = E.SwizzledSharedLayout(2, 1, 4, (1, 0))
ROTATING = E.AMDRotatingSharedLayout(2, 1, 4, (1, 0))
PADDED = E.PaddedSharedLayout(((16, 2),), ((0, 1), (1, 0)), (), (2, 2))
WMMA = E.AMDWMMALayout(2, False, ((0, 1), (1, 0)))
# Public methods that are not API: the per-family step of the shared builder (its annotations
# name a type that exists only for the type checker).
INTERNAL_METHODS = {"tile_factors"}

# name -> (callable, valid keyword arguments). Methods of LinearLayout are called on `L` (or `S`).
TARGETS: dict[str, tuple[Any, dict[str, Any]]] = {
    "LinearLayout.apply": (L.apply, {"ins": {"register": 1, "lane": 2, "warp": 1, "block": 0}}),
    "LinearLayout.compose": (L.compose, {"outer": IDENTITY}),
    "LinearLayout.concat_ins": (L.concat_ins, {"other": EXTRA}),
    "LinearLayout.concat_outs": (L.concat_outs, {"other": SAME_INS}),
    "LinearLayout.contiguous_elems_along_output_dim": (L.contiguous_elems_along_output_dim,
                                                       {"in_dim": "lane", "out_dim": "dim1"}),
    "LinearLayout.divide_left": (LL.divide_left, {"A": L, "B": LL.identity_1d(2, "register", "dim0")}),
    "LinearLayout.divide_right": (LL.divide_right, {"A": L, "B": LL.identity_1d(1, "block", "dim1")}),
    "LinearLayout.equal_ignoring_out_dim_sizes": (L.equal_ignoring_out_dim_sizes, {"other": L}),
    "LinearLayout.from_bases": (LL.from_bases, {"bases": [("i", [[1]])], "out_dim_names": ["o"],
                                                "out_dim_sizes": [2], "require_surjective": True}),
    "LinearLayout.get_basis": (L.get_basis, {"in_dim": "lane", "pos": 1, "out_dim": "dim0"}),
    "LinearLayout.get_distributed_view": (L.get_distributed_view, {"use_hw_point_of_view": True}),
    "LinearLayout.get_shared_view": (S.get_shared_view, {"use_hw_point_of_view": False}),
    "LinearLayout.get_in_dim_size": (L.get_in_dim_size, {"name": "lane"}),
    "LinearLayout.get_in_dim_size_log2": (L.get_in_dim_size_log2, {"name": "lane"}),
    "LinearLayout.get_out_dim_index": (L.get_out_dim_index, {"name": "dim1"}),
    "LinearLayout.get_out_dim_size": (L.get_out_dim_size, {"name": "dim1"}),
    "LinearLayout.get_out_dim_size_log2": (L.get_out_dim_size_log2, {"name": "dim1"}),
    "LinearLayout.has_in_dim": (L.has_in_dim, {"name": "lane"}),
    "LinearLayout.has_out_dim": (L.has_out_dim, {"name": "dim0"}),
    "LinearLayout.identity_1d": (LL.identity_1d, {"size": 4, "in_dim": "i", "out_dim": "o"}),
    "LinearLayout.invert_and_compose": (L.invert_and_compose, {"outer": L}),
    "LinearLayout.is_trivial_over": (L.is_trivial_over, {"dims": ["block"]}),
    "LinearLayout.lstsq": (LL.lstsq, {"A": L, "B": L}),
    "LinearLayout.quotient": (L.quotient, {"dims": ["block"]}),
    "LinearLayout.remove_zero_bases_along_dim": (L.remove_zero_bases_along_dim, {"dim": "lane"}),
    "LinearLayout.rename_in_dim": (L.rename_in_dim, {"old": "lane", "new": "thread"}),
    "LinearLayout.reshape_ins": (L.reshape_ins, {"new_in_dims": [("x", 16)]}),
    "LinearLayout.reshape_outs": (L.reshape_outs, {"new_out_dims": [("y", 16)]}),
    "LinearLayout.resize_in_dim": (L.resize_in_dim, {"in_dim": "lane", "new_size": 8}),
    "LinearLayout.resize_out_dim": (L.resize_out_dim, {"out_dim": "dim0", "new_size": 8}),
    "LinearLayout.square_sublayout_is_identity": (L.square_sublayout_is_identity, {"dims": []}),
    "LinearLayout.squeeze_ins": (L.squeeze_ins, {"dim": "block"}),
    "LinearLayout.squeeze_outs": (L.squeeze_outs, {"dim": None}),
    "LinearLayout.strided_1d": (LL.strided_1d, {"size": 4, "stride": 2, "in_dim": "i", "out_dim": "o"}),
    "LinearLayout.sublayout": (L.sublayout, {"in_dims": ["lane"], "out_dims": ["dim0"]}),
    "LinearLayout.sublayout_is_zero": (L.sublayout_is_zero, {"in_dims": ["lane"], "out_dims": ["dim0"]}),
    "LinearLayout.transpose_ins": (L.transpose_ins, {"new_order": ["block", "warp", "lane", "register"]}),
    "LinearLayout.transpose_outs": (L.transpose_outs, {"new_order": ["dim1", "dim0"]}),
    "LinearLayout.zeros_1d": (LL.zeros_1d, {"size": 4, "in_dim": "i", "out_dim": "o", "out_dim_size": 2}),
    "ensure_layout_not_larger_than": (linear_layout.ensure_layout_not_larger_than,
                                      {"layout": L, "shape": {"dim0": 2, "dim1": 4}, "broadcast_registers": True}),
    "ensure_layout_not_smaller_than": (linear_layout.ensure_layout_not_smaller_than,
                                       {"layout": L, "shape": {"dim0": 8, "dim1": 4}}),
    "identity_standard_nd": (linear_layout.identity_standard_nd,
                             {"in_dim": "register", "shape": [2, 4], "order": [1, 0]}),
    "standard_out_dim_names": (linear_layout.standard_out_dim_names, {"rank": 2}),
    "supremum": (linear_layout.supremum, {"x": ["a", "b"], "y": ["b", "c"], "what": "dims"}),
    "zeros_like": (linear_layout.zeros_like, {"layout": L}),
    "plan_conversion": (linear_layout.plan_conversion,
                        {"src": P32, "dst": P32, "shape": None, "bitwidth": 32, "threads_per_warp": 32,
                         "max_reps": None, "in_warp": True, "chip": None}),
    "bank_conflicts": (linear_layout.bank_conflicts,
                       {"distributed": BLOCKED, "shared": E.SwizzledSharedLayout(1, 1, 1, (0,)), "bitwidth": 32,
                        "shape": [32], "kind": "load"}),
    "encodings.to_linear_layout": (E.to_linear_layout, {"layout": BLOCKED, "shape": [32]}),
    "encodings.parse_encoding": (E.parse_encoding, {"text": str(BLOCKED), "aliases": None}),
    "encodings.collect_aliases": (E.collect_aliases, {"module_text": f"#b = {BLOCKED}\n"}),
    "encodings.format_tensor_view": (E.format_tensor_view, {"layout": BLOCKED, "shape": [32]}),
    "encodings.format_hardware_view": (E.format_hardware_view, {"layout": BLOCKED, "shape": [32]}),
    "encodings.launch_sizes": (E.launch_sizes, {"layout": BLOCKED, "shape": [32]}),
    "encodings.verify_module_sizes": (E.verify_module_sizes,
                                      {"layout": BLOCKED, "num_warps": 1, "threads_per_warp": 32, "num_ctas": 1}),
    "encodings.to_gluon": (E.to_gluon, {"layout": BLOCKED}),
    "BlockedLayout": (E.BlockedLayout, {"size_per_thread": (1, 4), "threads_per_warp": (8, 4),
                                        "warps_per_cta": (2, 1), "order": (1, 0), "cga_layout": ()}),
    "BlockedLayout.to_linear_layout": (BLOCKED_2D.to_linear_layout, {"shape": (16, 16)}),
    "BlockedLayout.bases": (BLOCKED_2D.bases, {"shape": (16, 16)}),
    "BlockedLayout.format_tensor_view": (BLOCKED_2D.format_tensor_view, {"shape": (16, 16)}),
    "BlockedLayout.format_hardware_view": (BLOCKED_2D.format_hardware_view, {"shape": (16, 16)}),
    "SwizzledSharedLayout.row_phase": (SWIZZLED.row_phase, {"row": 3}),
    "SwizzledSharedLayout.tile_shape": (SWIZZLED.tile_shape, {"shape": (16, 16)}),
    "AMDRotatingSharedLayout.row_phase": (ROTATING.row_phase, {"row": 3}),
    "AMDRotatingSharedLayout.tile_shape": (ROTATING.tile_shape, {"shape": (16, 16)}),
    "PaddedSharedLayout.padded_offset": (PADDED.padded_offset, {"offset": 5}),
    "AMDWMMALayout.cta_layout": (WMMA.cta_layout, {"project_dim": None, "row_major": False}),
    "SliceLayout": (E.SliceLayout, {"dim": 0, "parent": BLOCKED_2D}),
    "DistributedLinearLayout": (E.DistributedLinearLayout,
                                {"reg_bases": ((0, 1),), "lane_bases": ((1, 0), (2, 0), (4, 0), (8, 0), (16, 0)),
                                 "warp_bases": (), "block_bases": (), "shape": (32, 2)}),
    "NVMMADistributedLayout": (E.NVMMADistributedLayout,
                               {"version": (2, 0), "warps_per_cta": (4, 1), "instr_shape": (16, 8), "cga_layout": ()}),
    "DotOperandLayout": (E.DotOperandLayout, {"operand_index": 0, "parent": MMA, "k_width": 2}),
    "AMDMFMALayout": (E.AMDMFMALayout, {"version": 3, "instr_shape": (32, 32, 8), "transposed": False,
                                        "warps_per_cta": (2, 2), "element_bitwidth": None, "tiles_per_warp": None,
                                        "cga_layout": ()}),
    "AMDWMMALayout": (E.AMDWMMALayout, {"version": 2, "transposed": False, "warp_bases": ((0, 1), (1, 0)),
                                        "reg_bases": None, "instr_shape": None, "cga_layout": (), "rank": None}),
    "SwizzledSharedLayout": (E.SwizzledSharedLayout, {"vec": 2, "per_phase": 1, "max_phase": 4, "order": (1, 0),
                                                      "cga_layout": ()}),
    "AMDRotatingSharedLayout": (E.AMDRotatingSharedLayout, {"vec": 2, "per_phase": 1, "max_phase": 4,
                                                            "order": (1, 0), "cga_layout": ()}),
    "NVMMASharedLayout": (E.NVMMASharedLayout, {"swizzle_byte_width": 128, "element_bitwidth": 16, "rank": 2,
                                                "transposed": False, "fp4_padded": False, "cga_layout": ()}),
    "SharedLinearLayout": (E.SharedLinearLayout, {"offset_bases": ((0, 1), (1, 0)), "block_bases": (),
                                                  "alignment": 16}),
    "PaddedSharedLayout": (E.PaddedSharedLayout, {"interval_padding_pairs": ((16, 2),),
                                                  "offset_bases": ((0, 1), (1, 0)), "cga_layout": (),
                                                  "shape": (2, 2)}),
}

# Parameters typed `Any` or `object` (they take encodings or layouts, checked inside) are drawn too:
# any wrong value must still be a TypeError or ValueError.
_ANY = (Any, object)


def _hints(function: Any) -> dict[str, Any]:
    target = function.__func__ if inspect.ismethod(function) else function
    if inspect.isclass(target):
        return typing.get_type_hints(target)
    return typing.get_type_hints(target)


def _accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` has the type the annotation ``hint`` asks for (not whether it is valid)."""
    if hint in _ANY:
        return True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(arg, value) for arg in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, (bool, np.bool_))
    if hint is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if hint is str:
        return isinstance(value, str)
    if origin is None:
        return isinstance(value, hint)
    if origin in (abc.Mapping, dict):
        return isinstance(value, abc.Mapping) and all(
            _accepts(args[0], k) and _accepts(args[1], v) for k, v in value.items())
    if isinstance(value, np.ndarray) and value.ndim > 0:
        value = list(value)  # a 1-d array is a sequence of numpy scalars
    if isinstance(value, (str, bytes, abc.Mapping)) or not isinstance(value, (list, tuple)):
        return False
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        # A tuple of the wrong length has the right type (a ValueError says the length is wrong).
        return all(_accepts(args[min(k, len(args) - 1)], v) for k, v in enumerate(value))
    item = args[0]
    return all(_accepts(item, v) for v in value)


_ODD_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3), st.binary(max_size=2), st.complex_numbers(max_magnitude=2),
    st.sampled_from([object(), np.float32(1.5), np.int64(-1), np.bool_(True), np.array([1, 2]), np.array(2.5),
                     Ellipsis, L, BLOCKED, int, "lane", "dim0", "register"]),
)
WRONG_VALUES = st.recursive(
    _ODD_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=2), st.integers(), st.none()), inner, max_size=2),
        st.frozensets(st.integers(-3, 3), max_size=2),
    ),
    max_leaves=6,
)

_CASES = [(name, parameter) for name, (_, kwargs) in TARGETS.items() for parameter in kwargs]


def _call(name: str, parameter: str, value: Any) -> Any:
    function, kwargs = TARGETS[name]
    return function(**{**kwargs, parameter: value})


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_valid_arguments_of_each_row_are_valid(name):
    function, kwargs = TARGETS[name]
    function(**kwargs)


@pytest.mark.parametrize("name, parameter", _CASES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=WRONG_VALUES)
def test_a_wrong_argument_is_a_type_error_naming_it(name, parameter, value):
    function, _ = TARGETS[name]
    hint = _hints(function).get(parameter, Any)
    wrong_type = hint not in _ANY and not _accepts(hint, value)
    call = f"{name}({parameter}={value!r:.60})"
    try:
        _call(name, parameter, value)
    except TypeError as error:
        message = str(error)
        if wrong_type:
            assert parameter in message and "got" in message, f"{call}: {message}"
    except ValueError as error:
        assert not wrong_type, f"{call} has the wrong type but raised a ValueError: {error}"
    else:
        assert not wrong_type, f"{call} has the wrong type but was accepted"


def test_every_public_callable_has_a_row():
    """A public method or function without a row here would escape the test above."""
    public = {f"LinearLayout.{n}" for n, member in inspect.getmembers(LL)
              if not n.startswith("_") and callable(member) and inspect.signature(member).parameters
              and list(inspect.signature(member).parameters) != ["self"]}
    public |= {n for n in linear_layout.__all__ if inspect.isfunction(getattr(linear_layout, n))}
    public |= {f"encodings.{n}" for n in E.__all__ if inspect.isfunction(getattr(E, n))}
    families = {n for n in E.__all__ if inspect.isclass(getattr(E, n)) and n not in
                ("DistributedLayout", "SharedLayout", "Layout") and not issubclass(getattr(E, n), Exception)}
    public |= families
    common = {"to_linear_layout", "bases", "format_tensor_view", "format_hardware_view"}  # one row: BlockedLayout's
    public |= {f"{n}.{m}" for n in families for m, member in inspect.getmembers(getattr(E, n))
               if not m.startswith("_") and inspect.isfunction(member) and m not in common | INTERNAL_METHODS
               and list(inspect.signature(member).parameters) != ["self"]}
    missing = public - set(TARGETS)
    assert not missing, f"add a row of valid arguments to TARGETS for {sorted(missing)}"
    assert core_layout and planning  # the modules whose functions the rows call


@pytest.mark.parametrize("call", [
    lambda: L.apply({"lane": 1, None: 1}),
    lambda: L.get_basis("warp", [("warp", np.array([4]))], "lane"),
    lambda: L.remove_zero_bases_along_dim(["register", "register"]),
    lambda: L.contiguous_elems_along_output_dim("warp", float("inf")),
])
def test_the_issue_examples_are_type_errors(call):
    with pytest.raises(TypeError, match=r"argument '\w+' must"):
        call()


def test_the_ragged_padded_shared_basis_is_an_encoding_error():
    text = "#ttg.padded_shared<[16:+2] {offset = [[0, 1], [2], [1, 0]], block = []}>"
    with pytest.raises(E.EncodingError, match=r"offset: every basis must have 2 entries \(the rank\), got \[2\]"):
        E.to_linear_layout(E.parse_encoding(text), [4, 4])


@pytest.mark.parametrize("view", [E.format_hardware_view, E.format_tensor_view])
def test_a_view_past_the_picture_limit_is_a_value_error_before_any_allocation(view):
    dot = E.DotOperandLayout(0, MMA, 2)
    with pytest.raises(ValueError, match=r"a distributed view would enumerate 67108864 points, more than the limit"):
        view(dot, [64, 1048576])
    with pytest.raises(ValueError, match=r"a shared view would enumerate"):
        view(E.SwizzledSharedLayout(1, 1, 1, (1, 0)), [2048, 1024])


def test_a_huge_rank_is_a_value_error_not_a_hang():
    with pytest.raises(ValueError, match=r"standard_out_dim_names would enumerate 1180591620717411303424 points"):
        linear_layout.standard_out_dim_names(2**70)
    assert linear_layout.standard_out_dim_names(20)[-1] == "dim19"
