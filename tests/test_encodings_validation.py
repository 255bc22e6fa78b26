"""Bad input to the encodings is a user error: one clear line, the right exception class, nothing else.

Each class of bad input the fuzzer of issue 10 found (and the rules Triton's verifier intends) has a
test here: unknown keys and names, non-surjective layouts, non-permutation orders, wrong argument
types, huge shapes, deep nesting; and the alias tables of issue 12.
"""

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layout import encodings as E
from linear_layout.core.limits import MAX_NESTING_DEPTH, LimitError, check_text_limits
from linear_layout.encodings import EncodingError, EncodingSyntaxError

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>"
MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"


def one_line_error(exc_type, fn, *args, **kwargs):
    """Call ``fn``, expect ``exc_type``; return its message, checked to be one line."""
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message
    return message


# ---------------------------------------------------------------- the exception classes


def test_error_classes_are_value_errors():
    assert issubclass(EncodingError, ValueError)
    assert issubclass(EncodingSyntaxError, EncodingError)
    assert issubclass(LimitError, ValueError)


# ---------------------------------------------------------------- unknown keys and names


def test_unknown_key_is_an_error_with_a_suggestion():
    text = BLOCKED.replace("}>", ", sizePerWarp = [2, 2]}>")
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, text)
    assert "no key 'sizePerWarp'" in message
    assert "did you mean 'sizePerThread'?" in message
    assert "sizePerThread, threadsPerWarp, warpsPerCTA, order, CGALayout" in message


def test_unknown_key_without_a_near_miss_lists_the_keys():
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, MMA.replace("}>", ", zzz = 1}>"))
    assert "no key 'zzz'" in message and "did you mean" not in message
    assert "versionMajor, versionMinor, warpsPerCTA, instrShape, CGALayout" in message


def test_unknown_key_inside_wmma_cta_layout():
    text = "#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warps = [[0, 1]]}}>"
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, text)
    assert "ctaLayout has no key 'warps' (did you mean 'warp'?)" in message


def test_unknown_trailing_parameter():
    text = "#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignement = 16>"
    assert "did you mean 'alignment'?" in one_line_error(EncodingSyntaxError, E.parse_encoding, text)


def test_duplicate_key():
    text = BLOCKED.replace("}>", ", order = [0, 1]}>")
    assert "duplicate key 'order'" in one_line_error(EncodingSyntaxError, E.parse_encoding, text)


@pytest.mark.parametrize(
    "text, near",
    [
        ("#ttg.bloked<{sizePerThread = [1]}>", "#ttg.blocked"),
        ("#ttg.nvidia_mmaa<{versionMajor = 2}>", "#ttg.nvidia_mma"),
        ("#ttng.tensor_memory_encoding<{blockM = 128}>", None),
    ],
)
def test_unknown_encoding_name_lists_the_known_ones(text, near):
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, text)
    assert "unknown encoding" in message
    assert ", ".join(E.ENCODING_NAMES) in message
    if near:
        assert f"did you mean {near}?" in message


def test_a_non_layout_attribute_is_not_an_encoding():
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, "#ttg.shared_memory")
    assert "#ttg.shared_memory is not a layout encoding" in message


@pytest.mark.parametrize(
    "text, rule",
    [
        ("", "empty"),
        (BLOCKED + " x", "trailing"),
        ("#ttg.blocked<{sizePerThread = [1, 1],", "expected"),
        ("#ttg.blocked<{sizePerThread = @}>", "unexpected"),
        ("[1, 2]", "not an encoding"),
        (
            "#ttg.blocked<{sizePerThread = true, threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>",
            "size_per_thread must be a sequence of integers, got bool",
        ),
        ("#ttg.padded_shared<[x:+4] {order = [0], shape = [4]}>", "expected an integer"),
    ],
)
def test_syntax_errors_are_one_line_value_errors(text, rule):
    assert rule in one_line_error(EncodingSyntaxError, E.parse_encoding, text)


def test_syntax_errors_give_the_column():
    assert "at column 31" in one_line_error(EncodingSyntaxError, E.parse_encoding, "#ttg.blocked<{sizePerThread = @}>")


# ---------------------------------------------------------------- Triton's verifier rules


@pytest.mark.parametrize(
    "text",
    [
        "#ttg.linear<{register = [[0, 3]], lane = [], warp = [], block = []}>",  # elements 1 and 2 have no owner
        "#ttg.linear<{register = [[1], [1]], lane = [[4]], warp = [], block = []}>",  # 2 and 6 have no owner
        "#ttg.linear<{register = [], lane = [[0, 0], [2, 0]], warp = [], block = []}>",
    ],
)
def test_non_surjective_distributed_linear_is_rejected(text):
    assert "must be surjective" in one_line_error(EncodingError, E.parse_encoding, text)


def test_non_surjective_linear_constructor_is_rejected():
    with pytest.raises(EncodingError, match="surjective"):
        E.DistributedLinearLayout(((1,),), (), (), (), (4,))  # the shape says 4, the bases reach 2


def test_non_surjective_padded_shared_is_rejected():
    with pytest.raises(EncodingError, match="surjective"):
        E.PaddedSharedLayout(((2, 1),), ((0, 1), (1, 0)), (), (8, 2))


@pytest.mark.parametrize("order", ["[0, 0]", "[1, 2]", "[0]", "[2, 1, 0]"])
def test_padded_shared_needs_a_permutation_order(order):
    text = f"#ttg.padded_shared<[32:+4] {{order = {order}, shape = [64, 64]}}>"
    assert "permutation" in one_line_error(EncodingError, E.parse_encoding, text)


@pytest.mark.parametrize("text", [
    "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = []}>",
    "#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = []}>",
    "#ttg.blocked<{sizePerThread = [], threadsPerWarp = [], warpsPerCTA = [], order = []}>",
    "#ttg.padded_shared<[4:+4] {order = [], shape = []}>",
])
def test_an_empty_order_is_rank_zero_and_an_error(text):
    """Rank 0 parsed, then failed deep inside the conversion (IndexError; a fuzz finding in -draw)."""
    assert "order must not be empty: the layout needs rank >= 1" in one_line_error(EncodingError, E.parse_encoding,
                                                                                   text)


def test_padded_shared_order_and_offsets_do_not_mix():
    text = "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64], offset = [[0, 1]]}>"
    assert "no key 'offset'" in one_line_error(EncodingSyntaxError, E.parse_encoding, text)


def test_padded_shared_round_trips():
    text = "#ttg.padded_shared<[32:+4] {order = [0, 1], shape = [16, 64]}>"
    assert str(E.parse_encoding(text)) == text


@st.composite
def layouts_and_shapes(draw):
    """Blocked, MMA, swizzled and nvmma layouts with shapes smaller and larger than their tiles."""
    rank = draw(st.integers(1, 3))
    pow2 = st.integers(0, 3).map(lambda k: 1 << k)
    shape = tuple(draw(st.integers(0, 8).map(lambda k: 1 << k)) for _ in range(rank))
    kind = draw(st.sampled_from(["blocked", "swizzled", "mma"] if rank >= 2 else ["blocked", "swizzled"]))
    order = tuple(draw(st.permutations(range(rank))))
    if kind == "blocked":
        lanes = [1] * rank
        for _ in range(5):
            lanes[draw(st.integers(0, rank - 1))] *= 2
        layout = E.BlockedLayout(
            tuple(draw(pow2) for _ in range(rank)), tuple(lanes), tuple(draw(pow2) for _ in range(rank)), order
        )
    elif kind == "swizzled":
        layout = E.SwizzledSharedLayout(draw(pow2), draw(pow2), draw(pow2), order)
    else:
        warps = tuple(draw(pow2) for _ in range(rank))
        layout = E.NVMMADistributedLayout((2, 0), warps, (16, 8) if rank == 2 else (1, 16, 8))
    return layout, shape


@settings(max_examples=200, deadline=None)
@given(layouts_and_shapes())
def test_to_linear_layout_is_always_surjective(case):
    layout, shape = case
    ll = E.to_linear_layout(layout, shape)
    assert ll.is_surjective()
    assert ll.out_dims == tuple((f"dim{d}", s) for d, s in enumerate(shape))
    assert ll.get_in_dim_names() == layout.IN_DIMS


# ---------------------------------------------------------------- argument types at the API boundary

LAYOUT = E.BlockedLayout((1,), (32,), (1,), (0,))


@pytest.mark.parametrize(
    "call, argument, got",
    [
        (lambda: E.parse_encoding(None), "text", "NoneType"),
        (lambda: E.parse_encoding(b"#ttg.blocked<{}>"), "text", "bytes"),
        (lambda: E.parse_encoding(BLOCKED, aliases=[("#a", BLOCKED)]), "aliases", "list"),
        (lambda: E.parse_encoding("#a", aliases={"#a": 3}), "aliases['#a']", "int"),
        (lambda: E.collect_aliases(None), "module_text", "NoneType"),
        (lambda: E.to_linear_layout(None, (4,)), "layout", "NoneType"),
        (lambda: E.to_linear_layout("#ttg.blocked", (4,)), "layout", "str"),
        (lambda: E.to_linear_layout(LAYOUT, 4), "shape", "int"),
        (lambda: E.to_linear_layout(LAYOUT, "ab"), "shape", "str"),
        (lambda: E.to_linear_layout(LAYOUT, (4.0,)), "shape", "float"),
        (lambda: E.to_linear_layout(LAYOUT, (True,)), "shape", "bool"),
        (lambda: LAYOUT.to_linear_layout(None), "shape", "NoneType"),
        (lambda: E.BlockedLayout(1, (32,), (1,), (0,)), "size_per_thread", "int"),
        (lambda: E.BlockedLayout((1.5,), (32,), (1,), (0,)), "size_per_thread", "float"),
        (lambda: E.BlockedLayout((1,), (32,), (1,), "0"), "order", "str"),
        (lambda: E.BlockedLayout((1,), (32,), (1,), (0,), cga_layout=5), "cga_layout", "int"),
        (lambda: E.SliceLayout(0, None), "parent", "NoneType"),
        (lambda: E.SliceLayout("0", LAYOUT), "dim", "str"),
        (lambda: E.DotOperandLayout(0, "blocked", 0), "parent", "str"),
        (lambda: E.DotOperandLayout(0.0, LAYOUT, 0), "operand_index", "float"),
        (lambda: E.NVMMADistributedLayout((2, 0), (2, 2), None), "instr_shape", "NoneType"),
        (lambda: E.AMDMFMALayout("3", (32, 32, 8), True, (2, 2)), "version", "str"),
        (lambda: E.AMDWMMALayout(2, "yes", ((0, 1),)), "transposed", "str"),
        (lambda: E.SwizzledSharedLayout(8, None, 8, (1, 0)), "per_phase", "NoneType"),
        (lambda: E.NVMMASharedLayout(128.0, 16), "swizzle_byte_width", "float"),
        (lambda: E.SharedLinearLayout(((0, 1),), alignment="16"), "alignment", "str"),
        (lambda: E.DistributedLinearLayout((("a",),), (), (), (), (2,)), "reg_bases", "str"),
        (lambda: E.verify_module_sizes("blocked", 4), "layout", "str"),
    ],
)
def test_wrong_argument_types_are_type_errors_naming_the_argument(call, argument, got):
    message = one_line_error(TypeError, call)
    assert argument in message and got in message


def test_numpy_integers_are_integers():
    np = pytest.importorskip("numpy")
    layout = E.BlockedLayout(np.array([1, 4]), [np.int64(4), 8], (4, 1), (1, 0))
    assert layout == E.BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    assert E.to_linear_layout(layout, np.array([64, 64])) == E.to_linear_layout(layout, (64, 64))


def test_plain_int_tuples_pass_through_and_bools_are_still_refused():
    # The readers pass tuples of plain ints, which are kept as they are (no per-entry check) ...
    spt = (1, 4)
    layout = E.BlockedLayout(spt, (4, 8), (4, 1), (1, 0))
    assert layout.size_per_thread is spt
    # ... but a tuple holding a bool (an int subclass) or too many entries still takes the checks.
    assert "bool" in one_line_error(TypeError, E.BlockedLayout, (1, True), (4, 8), (4, 1), (1, 0))
    assert "rank limit" in one_line_error(LimitError, E.BlockedLayout, (1,) * 40, (1,) * 40, (1,) * 40, tuple(range(40)))


@pytest.mark.parametrize(
    "fields, rule",
    [
        (((1, 3), (4, 8), (4, 1), (1, 0)), "size_per_thread must contain only powers of two"),
        (((1, 4), (4, 6), (4, 1), (1, 0)), "threads_per_warp must contain only powers of two"),
        (((1, 4), (4, 8), (0, 1), (1, 0)), "warps_per_cta must contain only powers of two"),
        (((1, 4), (4, 8), (4, 1), (1, 1)), "order must be a permutation"),
        (((1, 4), (4, 8), (4,), (1, 0)), "must all have the same rank"),
        (((), (), (), ()), "order must not be empty"),
    ],
)
def test_blocked_rules_hold_on_the_fast_path_and_the_general_one(fields, rule):
    # Tuples of plain ints with one CTA (the readers' case) skip normalising, not the rules: the
    # same message as for lists, which take the general path.
    fast = one_line_error(EncodingError, E.BlockedLayout, *fields)
    general = one_line_error(EncodingError, E.BlockedLayout, *[list(f) for f in fields])
    assert rule in fast and fast == general


# ---------------------------------------------------------------- size and depth limits


@pytest.mark.parametrize(
    "call",
    [
        lambda: E.to_linear_layout(LAYOUT, (1 << 41,)),
        lambda: E.to_linear_layout(E.BlockedLayout((1, 1), (1, 32), (1, 1), (1, 0)), (1 << 30, 1 << 30)),
        lambda: E.parse_encoding("#ttg.linear<{register = [[1099511627776]], lane = [], warp = [], block = []}>"),
        lambda: E.SharedLinearLayout(((1 << 45,),)),
    ],
)
def test_huge_shapes_are_a_value_error_naming_the_limit(call):
    assert "limit of 2**40 elements" in one_line_error(LimitError, call)


def test_rank_is_limited():
    assert "rank limit" in one_line_error(LimitError, E.BlockedLayout, (1,) * 40, (1,) * 40, (1,) * 40, range(40))


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10000 + "]" * 10000,
        "#ttg.slice<{dim = 0, parent = " * 500 + BLOCKED + "}>" * 500,
        "#ttg.blocked<{sizePerThread = " + "[" * 3000,
    ],
)
def test_deep_nesting_is_a_value_error_not_a_recursion_error(text):
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, text)
    assert f"nesting deeper than {MAX_NESTING_DEPTH} levels (the limit)" in message


def _at_stack_depth(frames, call):
    """``call()`` with ``frames`` more Python frames below it (a caller deep in its own code)."""
    return call() if frames == 0 else _at_stack_depth(frames - 1, call)


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a = ", "}")])
def test_nesting_limit_is_the_projects_one_limit(opening, closing):
    """The encoding parser counts brackets as the driver's text guard does (core.limits), up to the
    same MAX_NESTING_DEPTH, and stays inside Python's recursion limit there even when called from
    200 frames deep; one level more is the nesting error."""

    def text(depth):  # `#ttg.x<{` opens 2 levels, the value's own bracket the third
        head = "#ttg.amd_wmma<{version = 2, ctaLayout = " if opening != "[" else "#ttg.blocked<{order = "
        return head + opening * (depth - 2) + "1" + closing * (depth - 2) + "}>"

    check_text_limits(text(MAX_NESTING_DEPTH))
    at_limit = one_line_error(EncodingSyntaxError, _at_stack_depth, 200, lambda: E.parse_encoding(text(MAX_NESTING_DEPTH)))
    assert "nesting" not in at_limit  # a different error: the value is not a layout
    with pytest.raises(LimitError):
        check_text_limits(text(MAX_NESTING_DEPTH + 1))
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, text(MAX_NESTING_DEPTH + 1))
    assert f"nesting deeper than {MAX_NESTING_DEPTH} levels (the limit)" in message


def test_alias_references_count_as_nesting_levels():
    """A chain of aliases recurses once per alias: each reference counts as two levels of the same limit."""
    chain = {f"#a{i}": f"#a{i + 1}" for i in range(2 * MAX_NESTING_DEPTH)}
    chain[f"#a{2 * MAX_NESTING_DEPTH}"] = BLOCKED
    message = one_line_error(EncodingSyntaxError, _at_stack_depth, 200, lambda: E.parse_encoding("#a0", chain))
    assert f"nesting deeper than {MAX_NESTING_DEPTH} levels (the limit)" in message
    short = {f"#a{i}": f"#a{i + 1}" for i in range(100)}
    short["#a100"] = BLOCKED
    assert str(E.parse_encoding("#a0", short)) == BLOCKED


def test_slices_nest_only_as_deep_as_the_rank():
    layout = E.BlockedLayout((1, 1, 1), (2, 4, 4), (1, 2, 2), (2, 1, 0))
    two = E.SliceLayout(0, E.SliceLayout(0, layout))
    assert two.rank == 1
    with pytest.raises(EncodingError, match="slice dim"):
        E.SliceLayout(0, E.SliceLayout(0, two))


# ---------------------------------------------------------------- aliases (issue 12)

MODULE = f"""#blocked = {BLOCKED}
#loc = loc("/tmp/kernel.py":12:0)
#mma = {MMA}
#dot = #ttg.dot_op<{{opIdx = 0, parent = #mma, kWidth = 2}}>
#shared = #ttg.swizzled_shared<{{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-warps" = 4 : i32}} {{
  tt.func public @k(%arg0: tensor<64xf32, #ttg.slice<{{dim = 1, parent = #blocked}}>>) {{
    tt.return
  }}
}}
"""


def test_collect_aliases_reads_every_alias_line():
    aliases = E.collect_aliases(MODULE)
    assert list(aliases) == ["#blocked", "#loc", "#mma", "#dot", "#shared", "#smem"]
    assert aliases["#blocked"] == BLOCKED
    assert aliases["#smem"] == "#ttg.shared_memory"


def test_parent_aliases_resolve():
    aliases = E.collect_aliases(MODULE)
    layout = E.parse_encoding("#ttg.slice<{dim = 1, parent = #blocked}>", aliases)
    assert layout == E.SliceLayout(1, E.parse_encoding(BLOCKED))
    assert E.parse_encoding("#dot", aliases) == E.DotOperandLayout(0, E.parse_encoding(MMA), 2)


def test_alias_values_may_be_layouts_and_names_may_omit_the_hash():
    parent = E.parse_encoding(BLOCKED)
    layout = E.parse_encoding("#ttg.slice<{dim = 0, parent = #b}>", {"b": parent})
    assert layout.parent is parent


def test_unknown_alias_lists_the_known_ones():
    aliases = E.collect_aliases(MODULE)
    message = one_line_error(
        EncodingSyntaxError, E.parse_encoding, "#ttg.slice<{dim = 1, parent = #blocked1}>", aliases
    )
    assert "unknown alias #blocked1 (did you mean #blocked?)" in message
    assert "#blocked, #dot, #loc, #mma, #shared, #smem" in message


def test_alias_cycles_are_errors():
    aliases = {"#a": "#ttg.slice<{dim = 0, parent = #b}>", "#b": "#ttg.slice<{dim = 0, parent = #a}>"}
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, "#a", aliases)
    assert "#a -> #b -> #a" in message


def test_an_alias_that_is_not_an_encoding():
    aliases = E.collect_aliases(MODULE)
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, "#ttg.slice<{dim = 0, parent = #smem}>", aliases)
    assert "in alias #smem" in message and "#ttg.shared_memory is not a layout encoding" in message
    with pytest.raises(EncodingError, match=r"slice parent must be a distributed layout|not an encoding"):
        E.parse_encoding("#ttg.slice<{dim = 0, parent = #shared}>", aliases)


def test_errors_inside_an_alias_name_it():
    aliases = {"#bad": "#ttg.blocked<{sizePerThread = [1]}>"}
    message = one_line_error(EncodingSyntaxError, E.parse_encoding, "#ttg.slice<{dim = 0, parent = #bad}>", aliases)
    assert message.startswith("in alias #bad:") and "missing the field" in message


# ---------------------------------------------------------------- #ttg.linear: exactly what Triton 3.9 accepts


@pytest.mark.parametrize(
    "text, rule",
    [
        ("#ttg.linear<{register = [[0, 1], [0, 3]], lane = [[1, 0]], warp = [], block = []}>", "[0, 3] is not a"),
        ("#ttg.linear<{register = [[0, 1], [1, 0]], lane = [], warp = [[1, 1]], block = []}>", "[1, 1] is not a"),
        ("#ttg.linear<{register = [[0, 1]], lane = [[0, 1], [1, 0]], warp = [], block = []}>", "[0, 1] is a repeat"),
        ("#ttg.linear<{register = [[1], [2]], lane = [[3]], warp = [], block = []}>", "[3] is not a"),
    ],
)
def test_surjective_linear_that_is_not_a_permutation_is_rejected(text, rule):
    """Surjective, but not a permutation matrix once the zero bases are dropped: Triton 3.9's
    LinearEncodingAttr::verify rejects these ("requires a permutation matrix layout")."""
    message = one_line_error(EncodingError, E.parse_encoding, text)
    assert "#ttg.linear without its zero bases must be a permutation matrix" in message and rule in message


@pytest.mark.parametrize("text", [
    "#ttg.linear<{register = [[1, 1], [0, 1]], lane = [[1, 0]], warp = [], block = []}>",
    "#ttg.generic_linear<{register = [[0, 1]], lane = [[1, 1], [1, 0]], warp = [], block = []}>",
    "#ttg.generic_linear<{register = [[0, 1]], lane = [[1, 0]], warp = [], block = [[1, 1]]}>",
])
def test_only_warp_bases_may_be_swizzled(text):
    """Triton 3.9's GenericLinearEncodingAttr::verify (and so Gluon's DistributedLinearLayout): register,
    lane and block bases move along at most one dim."""
    message = one_line_error(EncodingError, E.parse_encoding, text)
    assert "[1, 1] moves along several dims" in message and "only warp bases may be swizzled" in message


def test_generic_linear_holds_any_surjective_layout_with_swizzled_warps():
    layout = E.parse_encoding("#ttg.generic_linear<{register = [[0, 1], [0, 1]], lane = [[1, 0]], warp = [[1, 1]], "
                              "block = []}>")
    assert layout.is_generic and str(layout).startswith("#ttg.generic_linear<")
    assert E.parse_encoding(str(layout)) == layout
    linear = E.parse_encoding("#ttg.linear<{register = [[0, 1], [0, 0]], lane = [[1, 0]], warp = [], block = []}>")
    assert not linear.is_generic


def test_broadcast_bases_are_allowed_anywhere():
    text = "#ttg.linear<{register = [[0, 1], [0, 0]], lane = [[0, 0], [1, 0]], warp = [[0, 0]], block = [[0, 2]]}>"
    layout = E.parse_encoding(text)
    assert layout.shape == (2, 4) and E.parse_encoding(str(layout)) == layout


@st.composite
def linear_attribute_bases(draw):
    """Bases for a #ttg.linear, near the valid set: a permutation of the unit bits of a random box,
    spread over the hardware dims with zero bases, then 0-2 corruptions (a basis replaced by random
    entries, repeated, dropped, or one entry changed)."""
    rank = draw(st.integers(1, 3))
    sizes_log2 = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    bases = [tuple((1 << k) if d == dim else 0 for d in range(rank)) for dim in range(rank) for k in range(sizes_log2[dim])]
    bases += [(0,) * rank] * draw(st.integers(0, 2))
    bases = list(draw(st.permutations(bases)))
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["random", "repeat", "drop", "entry"]))
        index = draw(st.integers(0, max(len(bases) - 1, 0)))
        if kind == "random" or not bases:
            bases.insert(index, tuple(draw(st.lists(st.integers(0, 7), min_size=rank, max_size=rank))))
        elif kind == "repeat":
            bases.insert(draw(st.integers(0, len(bases))), bases[index])
        elif kind == "drop":
            del bases[index]
        else:
            entry = draw(st.integers(0, rank - 1))
            bases[index] = tuple(draw(st.integers(0, 7)) if d == entry else v for d, v in enumerate(bases[index]))
    if not bases:
        bases = [(0,) * rank]
    cuts = sorted(draw(st.lists(st.integers(0, len(bases)), min_size=3, max_size=3)))
    groups = [bases[a:b] for a, b in zip([0, *cuts], [*cuts, len(bases)])]
    return dict(zip(("register", "lane", "warp", "block"), groups)), rank


def _linear_text(groups, mnemonic="linear") -> str:
    body = ", ".join(f"{name} = {[list(b) for b in bases]}" for name, bases in groups.items())
    return f"#ttg.{mnemonic}<{{{body}}}>"


class _TritonLinearOracle:
    """Triton 3.9's verdict on a #ttg.linear, without letting it abort the test process: surjectivity
    (its parser aborts on a non-surjective layout) from Triton's own LinearLayout, then its parser and
    LinearEncodingAttr::verify on a module using the attribute."""

    def __init__(self, tmp_path):
        import warnings

        warnings.filterwarnings("ignore")
        from triton._C.libtriton import gluon_ir, ir
        from triton.tools import LinearLayout as TritonLayout

        self.ir, self.layout_class, self.path = ir, TritonLayout, tmp_path / "linear.mlir"
        self.context = ir.context()
        ir.load_dialects(self.context)
        self.builder = gluon_ir.GluonOpBuilder(self.context)

    def accepts(self, groups, rank, mnemonic="linear") -> bool:
        names = [f"dim{d}" for d in range(rank)]
        box = [1 << max((b[d] for bs in groups.values() for b in bs), default=0).bit_length() for d in range(rank)]
        bases = [(name, [list(b) for b in bs]) for name, bs in groups.items()]
        if not self.layout_class.from_bases(bases, names, box, require_surjective=False).is_surjective():
            return False  # Triton's parser aborts the process: a rejection
        shape = "x".join(map(str, box))
        self.path.write_text(
            'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32}'
            f" {{\n  tt.func public @f(%x: tensor<{shape}xf16, {_linear_text(groups, mnemonic)}>) {{ tt.return }}\n}}\n"
        )
        try:
            self.ir.parse_mlir_module(str(self.path), self.context)
        except RuntimeError:
            return False
        return True


@pytest.fixture(scope="module")
def triton_linear_oracle(tmp_path_factory):
    pytest.importorskip("triton", reason="Triton 3.9 is the oracle for #ttg.linear validity")
    return _TritonLinearOracle(tmp_path_factory.mktemp("oracle"))


def test_linear_oracle_discriminates(triton_linear_oracle):
    """The oracle itself: a permutation layout with broadcast bases is accepted, a surjective
    non-permutation one and a non-surjective one are rejected."""
    ok = {"register": [(0, 1), (0, 0)], "lane": [(1, 0)], "warp": [], "block": []}
    assert triton_linear_oracle.accepts(ok, 2)
    assert not triton_linear_oracle.accepts({**ok, "register": [(0, 1), (0, 3)]}, 2)
    assert not triton_linear_oracle.accepts({**ok, "register": [(0, 2)]}, 2)


@pytest.mark.parametrize("mnemonic", ["linear", "generic_linear"])
@settings(max_examples=300, deadline=None)
@given(case=linear_attribute_bases())
def test_linear_validity_matches_triton(triton_linear_oracle, mnemonic, case):
    """We reject exactly the #ttg.linear (#ttg.generic_linear) layouts Triton 3.9 rejects (or aborts
    on), each with one line."""
    groups, rank = case
    text = _linear_text(groups, mnemonic)
    triton_ok = triton_linear_oracle.accepts(groups, rank, mnemonic)
    try:
        layout = E.parse_encoding(text)
    except EncodingError as error:
        assert "\n" not in str(error)
        assert not triton_ok, f"we reject what Triton accepts: {text}: {error}"
        return
    assert triton_ok, f"we accept what Triton rejects: {text}"
    assert E.parse_encoding(str(layout)) == layout


@settings(max_examples=150, deadline=None)
@given(linear_attribute_bases())
def test_linear_or_generic_linear_as_gluon_prints_it(triton_linear_oracle, case):
    """Gluon's DistributedLinearLayout becomes #ttg.linear or #ttg.generic_linear in Triton 3.9; ours
    prints the same attribute, word for word, for every surjective layout."""
    groups, rank = case
    from triton.experimental.gluon import language as gl  # the oracle's own module (Triton is optional)

    box = [1 << max((b[d] for bs in groups.values() for b in bs), default=0).bit_length() for d in range(rank)]
    bases = {name: [list(b) for b in bs] for name, bs in groups.items()}
    try:
        ours = E.DistributedLinearLayout(*(groups[name] for name in ("register", "lane", "warp", "block")), box)
    except EncodingError:
        hypothesis.assume(False)  # not surjective: Triton's parser aborts, nothing to print
    gluon = gl.DistributedLinearLayout(reg_bases=bases["register"], lane_bases=bases["lane"],
                                       warp_bases=bases["warp"], block_bases=bases["block"], shape=box)
    builder = triton_linear_oracle.builder
    printed = str(builder.get_distributed_ty(builder.get_half_ty(), box, gluon._to_ir(builder)))
    assert printed.split(", ", 1)[1][:-1] == str(ours)


@pytest.mark.parametrize("text", [
    "#ttg.blocked<{sizePerThread = [" + "1" * 5_000 + "], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
    "#ttg.padded_shared<[" + "1" * 5_000 + ":+2] {order = [0], shape = [16]}>",
])
def test_a_literal_longer_than_python_converts_is_a_short_syntax_error(text):
    """Python's `int()` refuses more than 4300 digits with its own ValueError: the parser names
    the literal and its column instead, in a message of bounded length."""
    with pytest.raises(EncodingSyntaxError, match=r"column (32|21): an integer literal of 5000 digits is longer than"
                                                  r" the limit of 4300 digits") as caught:
        E.parse_encoding(text)
    assert len(str(caught.value)) < 300
