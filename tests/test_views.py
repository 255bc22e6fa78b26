"""Text pictures of layouts: hand-checked examples, and differential tests against Triton 3.9.

The differential tests draw only layouts Triton accepts (the right input dimensions, at least one
output dimension), since its C++ aborts the process on anything else. Within that they cover
broadcasts (zero bases), non-injective and non-surjective maps, several blocks, more blocks than
elements, input dimensions in any order, ranks 1 to 3, and sizes large enough that labels and
coordinates need two or three digits of alignment.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layout import LinearLayout
from linear_layout.core.views import distributed_view, shared_view

# The example count comes from the Hypothesis profile (tests/conftest.py: 200 in CI); the
# deadline is off because an example can print a few thousand cells.
EXAMPLES = settings(deadline=None)

MAX_OUT_BITS = 10  # up to 1024 elements: three-digit coordinates
MAX_IN_BITS = 11  # up to 2048 hardware slots: three-digit thread ids, two-digit registers


# ---------------------------------------------------------------- hand-checked pictures


def test_distributed_view_by_hand():
    # register -> (0, 1), lane -> (1, 0) over a 2x2 tensor: L(register=r, lane=l) = (l, r).
    # Element (i, j) is held by thread i in register j; the hardware view lists, per register,
    # the coordinates of lanes 0 and 1.
    layout = LinearLayout.from_bases(
        [("register", [[0, 1]]), ("lane", [[1, 0]]), ("warp", []), ("block", [])], ["dim0", "dim1"]
    )
    assert distributed_view(layout, False) == "[[T0:0, T0:1]\n[ T1:0, T1:1]]\n"
    assert distributed_view(layout, True) == "Warp0:\n(0,0), (1,0)\n(0,1), (1,1)\n"
    assert layout.get_distributed_view(False) == distributed_view(layout, False)


def test_distributed_view_broadcast_and_blocks_by_hand():
    # lane -> 1, warp -> 0 (broadcast), block -> 0 (broadcast), over 2 elements.
    # Threads are numbered within a block: lane + 2 * warp, so T0 and T2 hold element 0 in each
    # block, T1 and T3 element 1; holders are listed block, warp, lane, register order.
    layout = LinearLayout.from_bases(
        [("register", []), ("lane", [[1]]), ("warp", [[0]]), ("block", [[0]])], ["dim0"]
    )
    assert distributed_view(layout, False) == (
        "[B0:T0:0|B0:T2:0|B1:T0:0|B1:T2:0, B0:T1:0|B0:T3:0|B1:T1:0|B1:T3:0]\n"
    )
    assert distributed_view(layout, True) == (
        "Block0:\nWarp0:\n(0), (1)\nWarp1:\n(0), (1)\n"
        "Block1:\nWarp0:\n(0), (1)\nWarp1:\n(0), (1)\n"
    )


def test_distributed_view_alignment_by_hand():
    # 16 registers along a size-16 dim0, register r holding element r. Registers 0..9 have one
    # digit fewer than the register count 16, so their labels get one leading space; in the
    # hardware view coordinates are right-aligned to the width of the size 16.
    layout = LinearLayout.from_bases(
        [("register", [[1], [2], [4], [8]]), ("lane", []), ("warp", []), ("block", [])], ["dim0"]
    )
    cells = [f" T0:{r}" for r in range(10)] + [f"T0:{r}" for r in range(10, 16)]
    assert distributed_view(layout, False) == "[" + ", ".join(cells) + "]\n"
    rows = [f"({r:>2})" for r in range(16)]
    assert distributed_view(layout, True) == "Warp0:\n" + "\n".join(rows) + "\n"


def test_distributed_view_unheld_element_by_hand():
    # register -> 2 over a size-4 dim0: only elements 0 and 2 are held; 1 and 3 stay blank.
    layout = LinearLayout.from_bases(
        [("register", [[2]]), ("lane", []), ("warp", []), ("block", [])], ["dim0"], [4], False
    )
    assert distributed_view(layout, False) == "[T0:0, , T0:1, ]\n"


def test_shared_view_by_hand():
    # offset -> (1, 0), (0, 1) over a 2x2 tensor: offsets 0..3 store (0,0), (1,0), (0,1), (1,1).
    # The tensor view lays that same list out in the tensor's shape, with ':' separators, so
    # cell (0, 1) shows (1:0), the element stored at offset 1.
    layout = LinearLayout.from_bases([("offset", [[1, 0], [0, 1]]), ("block", [])], ["dim0", "dim1"])
    assert shared_view(layout, False) == "[[(0:0),(1:0)]\n[ (0:1),(1:1)]]\n"
    assert shared_view(layout, True) == (
        "Block: 0:\nOffset: 0 -> (0,0)\nOffset: 1 -> (1,0)\nOffset: 2 -> (0,1)\nOffset: 3 -> (1,1)\n"
    )
    assert layout.get_shared_view(True) == shared_view(layout, True)


def test_shared_view_more_blocks_than_elements_by_hand():
    # 2 elements, 4 blocks: each block gets 2 // 4 = 0 offsets, so every cell is blank.
    layout = LinearLayout.from_bases([("offset", [[1]]), ("block", [[0], [0]])], ["dim0"])
    assert shared_view(layout, False) == "[,]\n"
    assert shared_view(layout, True) == "Block: 0:\nBlock: 1:\nBlock: 2:\nBlock: 3:\n"


@pytest.mark.parametrize(
    "in_dims",
    [
        ["register", "lane", "warp"],  # no block
        ["register", "lane", "warp", "block", "extra"],
        ["offset", "block"],
    ],
)
def test_distributed_view_rejects_wrong_in_dims(in_dims):
    layout = LinearLayout.from_bases([(name, []) for name in in_dims], ["dim0"])
    with pytest.raises(ValueError, match="register, lane, warp, block"):
        distributed_view(layout, False)


@pytest.mark.parametrize("in_dims", [["offset"], ["offset", "block", "extra"], ["register", "block"]])
def test_shared_view_rejects_wrong_in_dims(in_dims):
    layout = LinearLayout.from_bases([(name, []) for name in in_dims], ["dim0"])
    with pytest.raises(ValueError, match="offset, block"):
        shared_view(layout, True)


def test_views_reject_no_out_dims():
    distributed = LinearLayout.from_bases([(n, []) for n in ["register", "lane", "warp", "block"]], [])
    shared = LinearLayout.from_bases([("offset", []), ("block", [])], [])
    with pytest.raises(ValueError, match="output dimension"):
        distributed_view(distributed, True)
    with pytest.raises(ValueError, match="output dimension"):
        shared_view(shared, False)


# ---------------------------------------------------------------- differential tests


@pytest.fixture(scope="module")
def triton_layout():
    return pytest.importorskip("triton.tools").LinearLayout


@st.composite
def layouts(draw, in_dims, max_bits):
    """``(bases, out_sizes)``: random bases -- zero, unit or arbitrary -- for ``in_dims`` in a
    random order, over a tensor of rank 1 to 3."""
    rank = draw(st.integers(1, 3))
    out_bits = []
    for _ in range(rank):
        out_bits.append(draw(st.integers(0, MAX_OUT_BITS - sum(out_bits))))
    sizes = [1 << b for b in out_bits]

    def basis():
        zero = st.just([0] * rank)
        unit = st.sampled_from([
            [1 << i if k == dim else 0 for k in range(rank)] for dim in range(rank) for i in range(out_bits[dim])
        ] or [[0] * rank])
        arbitrary = st.tuples(*(st.integers(0, size - 1) for size in sizes)).map(list)
        return st.one_of(zero, unit, unit, arbitrary)

    bases = []
    used = 0
    for name in draw(st.permutations(in_dims)):
        count = draw(st.integers(0, min(max_bits[name], MAX_IN_BITS - used)))
        used += count
        bases.append((name, draw(st.lists(basis(), min_size=count, max_size=count))))
    return bases, sizes


def both(triton_layout, bases, sizes):
    names = [f"dim{k}" for k in range(len(sizes))]
    ours = LinearLayout.from_bases(bases, names, sizes, require_surjective=False)
    theirs = triton_layout.from_bases(bases, names, sizes, False)
    return ours, theirs


@pytest.mark.triton
@EXAMPLES
@given(layouts(["register", "lane", "warp", "block"], {"register": 5, "lane": 5, "warp": 3, "block": 4}),
       st.booleans())
def test_distributed_view_matches_triton(triton_layout, drawn, hw):
    ours, theirs = both(triton_layout, *drawn)
    assert distributed_view(ours, hw) == theirs.get_distributed_view(hw)


@pytest.mark.triton
@EXAMPLES
@given(layouts(["offset", "block"], {"offset": MAX_OUT_BITS + 1, "block": 5}), st.booleans())
def test_shared_view_matches_triton(triton_layout, drawn, hw):
    ours, theirs = both(triton_layout, *drawn)
    assert shared_view(ours, hw) == theirs.get_shared_view(hw)
