"""The bridge's one-match readers of common printed encodings (plain blocked and nvidia_mma, slices
and dot operands with their parent decoded from its text) against the general reader
(`encodings.parse_encoding`): the same encoding for every valid text, the same message for every
invalid one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from linear_layout.encodings import parse_encoding
from linear_layout.ir import from_attribute, load_dialects, text

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>"
MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
HOPPER = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"

RANK6 = ("#ttg.blocked<{sizePerThread = [1, 1, 1, 1, 1, 1], threadsPerWarp = [1, 1, 1, 2, 4, 4], "
         "warpsPerCTA = [1, 1, 1, 1, 2, 2], order = [5, 4, 3, 2, 1, 0]}>")
DEEP = RANK6
for _ in range(5):  # deeper than the bridge decodes parents by their text: the general reader's
    DEEP = f"#ttg.slice<{{dim = 0, parent = {DEEP}}}>"

VALID = [
    DEEP,
    BLOCKED,
    MMA,
    HOPPER,
    f"#ttg.slice<{{dim = 0, parent = {BLOCKED}}}>",
    f"#ttg.slice<{{dim = 1 : i32, parent = {MMA}}}>",
    "#ttg.slice<{dim = 0, parent = #ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 1, 2], "
    "threadsPerWarp = [2, 4, 4], warpsPerCTA = [1, 2, 2], order = [2, 1, 0]}>}>}>",
    f"#ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 2}}>",
    f"#ttg.dot_op<{{opIdx = 1, parent = {MMA}, kWidth = 4}}>",
    f"#ttg.dot_op<{{opIdx = 0, parent = {HOPPER}, kWidth = 2}}>",
    f"#ttg.dot_op<{{opIdx = 1, parent = {BLOCKED}}}>",
    f"#ttg.slice<{{dim = 1, parent = #ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 2}}>}}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CGALayout = [[0, 1]], "
    "instrShape = [16, 8]}>",
]

INVALID = [
    f"#ttg.slice<{{dim = 2, parent = {BLOCKED}}}>",  # dim out of the parent's rank
    f"#ttg.slice<{{dim = 0, parent = {SHARED}}}>",  # a shared parent
    f"#ttg.dot_op<{{opIdx = 2, parent = {MMA}, kWidth = 2}}>",  # no third operand
    f"#ttg.dot_op<{{opIdx = 0, parent = {SHARED}, kWidth = 2}}>",
    "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [4, 8], "
    "warpsPerCTA = [2, 2], order = [1, 0]}>}>",  # a broken parent
    "#ttg.nvidia_mma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 3], instrShape = [16, 8]}>",
]


@pytest.fixture(scope="module")
def context():
    with ir.Context() as ctx, ir.Location.unknown():
        load_dialects(ctx)
        yield ctx


def general_reader(attr: ir.Attribute):
    """The encoding the general reader gives for the attribute's printed text (or its error)."""
    try:
        return parse_encoding(text.triton_encoding_text(str(attr)))
    except ValueError as error:
        return f"error: {error}"


def decoded(attr: ir.Attribute):
    try:
        return from_attribute(attr)
    except ValueError as error:
        return f"error: {error}"


@pytest.mark.parametrize("source", VALID)
def test_common_forms_decode_as_the_general_reader_reads_them(context, source):
    attr = ir.Attribute.parse(source)
    value = decoded(attr)
    assert not isinstance(value, str), value
    assert value == general_reader(attr)
    assert value == parse_encoding(text.triton_encoding_text(source))  # and as the text was written


@pytest.mark.parametrize("source", INVALID)
def test_refused_common_forms_give_the_general_readers_message(context, source):
    attr = ir.Attribute.parse(source)
    message = decoded(attr)
    assert isinstance(message, str) and message.startswith("error: "), message
    assert message == general_reader(attr)


def test_the_one_match_readers_take_the_printed_forms(context):
    # The forms MLIR prints (keys sorted, typed integers): read by one match, parent left as text.
    printed = str(ir.Attribute.parse(f"#ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 2}}>"))
    nested = text.nested_fields(printed)
    assert nested is not None and (nested.kind, nested.index, nested.k_width) == ("dot_op", 0, 2)
    assert text.plain_mma_fields(nested.parent) == ((2, 0), (2, 2), (16, 8))
    assert text.nested_fields(str(ir.Attribute.parse(BLOCKED))) is None


powers = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=25, deadline=None)
@given(spt=st.tuples(powers, powers), tpw=st.sampled_from([(1, 32), (4, 8), (8, 4), (2, 16)]),
       wpc=st.sampled_from([(1, 4), (2, 2), (4, 1)]), order=st.sampled_from([(1, 0), (0, 1)]),
       dim=st.integers(0, 2), op=st.integers(0, 2), k_width=st.sampled_from([None, 0, 1, 2]))
def test_slices_and_dot_operands_of_blocked_parents_match_the_general_reader(
    context, spt, tpw, wpc, order, dim, op, k_width
):
    parent = (f"#ttg.blocked<{{sizePerThread = [{spt[0]}, {spt[1]}], threadsPerWarp = [{tpw[0]}, {tpw[1]}], "
              f"warpsPerCTA = [{wpc[0]}, {wpc[1]}], order = [{order[0]}, {order[1]}]}}>")
    k = "" if k_width is None else f", kWidth = {k_width}"
    for source in (f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>", f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}{k}}}>"):
        attr = ir.Attribute.parse(source)
        assert decoded(attr) == general_reader(attr)
