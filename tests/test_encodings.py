"""Unit tests for linear_layout.encodings (no Triton needed).

The reference cases are the documented ones from ../shared/REFERENCE.md; each has
its derivation by hand.  Bases are written (dim0, dim1)."""

import pytest

from linear_layout import LinearLayout
from linear_layout import encodings as E


def bases(layout, shape):
    return {k: [tuple(b) for b in v] for k, v in layout.bases(shape).items()}


# ---------------------------------------------------------------- reference cases


def test_reference_7_blocked_with_cga():
    # order [0, 1]: dim0 is minor, so each level fills dim0 before dim1.
    #   registers: size_per_thread dim0 = 8            -> (1,0) (2,0) (4,0)
    #   lanes: 8 along dim0, scaled by 8               -> (8,0) (16,0) (32,0)
    #          4 along dim1                            -> (0,1) (0,2)
    #   warps: 4 along dim1, scaled by 4               -> (0,4) (0,8)
    # One CTA's tile is 64 x 16.  Two CTAs split dim1 (CTASplitNum {1, 2}, i.e.
    # cga_layout [[0, 1]]), so each CTA owns 64 x 64: dim1 wraps 16 -> 64 in
    # registers, (0,16) (0,32), and block 1 starts at column 64.
    layout = E.BlockedLayout((8, 1), (8, 4), (1, 4), (0, 1), cga_layout=((0, 1),))
    assert bases(layout, (64, 128)) == {
        "register": [(1, 0), (2, 0), (4, 0), (0, 16), (0, 32)],
        "lane": [(8, 0), (16, 0), (32, 0), (0, 1), (0, 2)],
        "warp": [(0, 4), (0, 8)],
        "block": [(0, 64)],
    }


def test_reference_7_blocked_broadcast():
    # 4 regs x 4 lanes x 4 warps cover 64 elements, the tensor only 8: the largest
    # bases, 32 and 16 (warps) and 8 (lane 2), are zeroed, i.e. broadcast.
    layout = E.BlockedLayout((4,), (4,), (4,), (0,))
    assert bases(layout, (8,)) == {"register": [(1,), (2,)], "lane": [(4,), (0,)], "warp": [(0,), (0,)], "block": []}


# Reference 8, swizzled_shared: order [1, 0]: columns first, (0,1)..(0,16). Row r shifts by
# vec * ((r // per_phase) % max_phase) = r % 4 columns: rows 1, 2 -> 1, 2; rows 4, 8, 16 -> 0 (the
# phase wraps every 4 rows).
# amd_rotating_shared: as swizzled_shared, but every block of per_phase * max_phase = 4 rows XORs
# its phase with the block number: rows 1, 2 -> phase 1, 2 (block 0); rows 4, 8 -> phase 0 ^ 1,
# 0 ^ 2 = 1, 2; row 16 -> block (16 // 4) % 4 = 0 -> phase 0.
COLUMN_BASES = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16)]


@pytest.mark.parametrize(
    "layout, row_bases",
    [
        (E.SwizzledSharedLayout(1, 1, 4, (1, 0)), [(1, 1), (2, 2), (4, 0), (8, 0), (16, 0)]),
        (E.AMDRotatingSharedLayout(1, 1, 4, (1, 0)), [(1, 1), (2, 2), (4, 1), (8, 2), (16, 0)]),
    ],
    ids=["swizzled_shared", "amd_rotating_shared"],
)
def test_reference_swizzled_shared_families(layout, row_bases):
    assert bases(layout, (32, 32))["offset"] == COLUMN_BASES + row_bases


def test_amd_rotating_shared_is_not_swizzled_shared_and_round_trips():
    layout = E.AMDRotatingSharedLayout(1, 1, 4, (1, 0))
    assert layout != E.SwizzledSharedLayout(1, 1, 4, (1, 0))
    text = "#ttg.amd_rotating_shared<{vec = 1, perPhase = 1, maxPhase = 4, order = [1, 0]}>"
    assert str(layout) == text and E.parse_encoding(text) == layout


def test_amd_rotating_shared_has_no_gluon_counterpart():
    with pytest.raises(ValueError, match="AMDRotatingSharedLayout has no Gluon counterpart"):
        E.to_gluon(E.AMDRotatingSharedLayout(1, 1, 4, (1, 0)))


def test_reference_9_mma_v2():
    # One m16n8 tile, k_width 2: register bit 0 -> next column (0,1); 4 lanes along
    # n scaled by 2 -> (0,2) (0,4); 8 lanes along m -> (1,0) (2,0) (4,0); m/8 = 2
    # register repeats -> (8,0).  The 16x16 tensor wraps n 8 -> 16: (0,8).
    layout = E.NVMMADistributedLayout((2, 0), (1, 1), (16, 8))
    assert bases(layout, (16, 16)) == {
        "register": [(0, 1), (8, 0), (0, 8)],
        "lane": [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)],
        "warp": [],
        "block": [],
    }


def test_reference_10_nvmma_shared_32b():
    # 32-byte swizzle of fp16: a core matrix is 8 rows x 16 columns (32 bytes);
    # vec = 128/16 = 8, per_phase = 128/32 = 4, max_phase = 32/16 = 2, so rows 1
    # and 2 are unshifted and row 4 shifts by 8 * ((4 // 4) % 2) = 8 columns.
    layout = E.NVMMASharedLayout(32, 16)
    assert bases(layout, (8, 16))["offset"] == [(0, 1), (0, 2), (0, 4), (0, 8), (1, 0), (2, 0), (4, 8)]


# ---------------------------------------------------------------- AMD and NVMMA cases (hand derivations)


def test_wmma_v1_tile_and_warps():
    # WMMA v1 (RDNA3, 32 lanes), one 16x16 tile: lanes 0-15 walk N (dim1) -> (0,1)..(0,8);
    # lane 16 is the next row -> (1,0); the 8 registers take every other row -> (2,0)
    # (4,0) (8,0).  warp_bases are in tile units: (0,1) is the next 16 columns -> (0,16).
    layout = E.AMDWMMALayout(1, False, ((0, 1),))
    assert bases(layout, (16, 32)) == {
        "register": [(2, 0), (4, 0), (8, 0)],
        "lane": [(0, 1), (0, 2), (0, 4), (0, 8), (1, 0)],
        "warp": [(0, 16)],
        "block": [],
    }


def test_wmma_v3_32x16_transposed():
    # v2/v3 give each half-wave 8 consecutive rows: registers (1) (2) (4) along M, lane 16
    # -> row 8; the 32x16 shape stacks a second 16-row tile in one more register (16).
    # Transposed swaps the dims of the whole tile, so it is 16 x 32 and the register
    # basis (1, 0) (next tile down) lands 16 rows down, the warp (0, 1) 32 columns right.
    layout = E.AMDWMMALayout(3, True, ((0, 1),), ((1, 0),), (32, 16, 64))
    assert bases(layout, (32, 64)) == {
        "register": [(0, 1), (0, 2), (0, 4), (0, 16), (16, 0)],
        "lane": [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)],
        "warp": [(0, 32)],
        "block": [],
    }


def test_wmma_dot_operand():
    # Operand A [M, K] of WMMA v2 16x16x16, k_width 8: registers (0,1) (0,2) (0,4) hold
    # 8 consecutive K; lanes 0-15 walk M; lane 16 takes the next 8 K -> (0,8);
    # 16 / (2 * 8) = 1 K repeat.  The parent's warps lose their K (dim1) component:
    # (1,0) -> 16 rows down, (0,1) -> (0,0), i.e. both N warps share the operand.
    parent = E.AMDWMMALayout(2, False, ((1, 0), (0, 1)))
    assert bases(E.DotOperandLayout(0, parent, 8), (32, 16)) == {
        "register": [(0, 1), (0, 2), (0, 4)],
        "lane": [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)],
        "warp": [(16, 0), (0, 0)],
        "block": [],
    }


def test_mfma_4x64():
    # 4x64 MFMA, 32-bit: each lane holds 4 consecutive rows (1,0) (2,0); the 64 lanes
    # all walk N.  Two warps along M (warps tile N first, then M) -> (4,0).
    layout = E.AMDMFMALayout(3, (4, 64, 4), False, (2, 1))
    assert bases(layout, (8, 64)) == {
        "register": [(1, 0), (2, 0)],
        "lane": [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (0, 32)],
        "warp": [(4, 0)],
        "block": [],
    }


def test_mfma_dot_operand():
    # Operand B [K, N] of a 32x32 MFMA, k_width 4: registers (1,0) (2,0) are 4
    # consecutive K; 32 lanes walk N, the other 32 the next 4 K -> (4,0).  K = 16 needs
    # 16 / 8 = 2 register repeats -> (8,0).  The parent's warp along N -> (0,32).
    parent = E.AMDMFMALayout(3, (32, 32, 8), False, (1, 2))
    assert bases(E.DotOperandLayout(1, parent, 4), (16, 64)) == {
        "register": [(1, 0), (2, 0), (8, 0)],
        "lane": [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (4, 0)],
        "warp": [(0, 32)],
        "block": [],
    }


def test_nvmma_unswizzled_transposed_rank3():
    # Triton 3.9 walks the box rotated left, (4, 8, 2), last dim first, and renames out
    # dim i to i - 1: dim2's 2 -> dim1 (0,1,0); dim1's 8 -> dim0 (1,0,0) and (2,0,0)
    # (4,0,0), which pass dim0's size 2 and become zero; dim0's 4 -> dim2 (0,0,1)
    # (0,0,2).  The short dims then wrap, last first: dim2 (0,0,4), dim1 (0,2,0).
    layout = E.NVMMASharedLayout(0, 16, rank=3, transposed=True)
    assert bases(layout, (2, 4, 8))["offset"] == [
        (0, 1, 0),
        (1, 0, 0),
        (0, 0, 0),
        (0, 0, 0),
        (0, 0, 1),
        (0, 0, 2),
        (0, 0, 4),
        (0, 2, 0),
    ]
    # At rank 2 the same rule is the plain column-major walk.
    assert bases(E.NVMMASharedLayout(0, 16, transposed=True), (4, 2))["offset"] == [(1, 0), (2, 0), (0, 1)]


def _doc_examples():
    """(text, shape, {in_dim: bases}, tensor view or None) for every worked example in
    docs/encodings.md: a fenced block of an encoding, `shape [...]`, the bases, and the view."""
    import ast
    import pathlib
    import re

    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "encodings.md").read_text()
    for block in re.findall(r"^```\n(#ttg\..*?)^```$", doc, re.S | re.M):
        lines = block.rstrip("\n").split("\n")
        if not lines[1].startswith("shape "):
            continue
        shape = tuple(ast.literal_eval(lines[1][len("shape ") :]))
        bases, i = {}, 2
        while i < len(lines) and lines[i]:
            name, value = lines[i].split(": ", 1)
            bases[name] = [tuple(b) for b in ast.literal_eval(value)]
            i += 1
        view = "\n".join(lines[i + 1 :]) or None
        yield pytest.param(lines[0], shape, bases, view, id=lines[0][:40])


@pytest.mark.parametrize("text, shape, expected, view", list(_doc_examples()))
def test_doc_examples_are_current(text, shape, expected, view):
    layout = E.parse_encoding(text)
    assert str(layout) == text
    assert bases(layout, shape) == expected
    if view is not None:
        assert E.format_tensor_view(layout, shape).rstrip("\n") == view


# ---------------------------------------------------------------- conversions


def test_to_linear_layout_is_the_algebra_value():
    layout = E.BlockedLayout((1, 1), (1, 32), (2, 2), (1, 0))
    ll = E.to_linear_layout(layout, (64, 64))
    assert isinstance(ll, LinearLayout)
    assert ll is layout.to_linear_layout([64, 64])  # cached per (layout, shape)
    expected = LinearLayout.from_bases(
        [
            ("register", [(2, 0), (4, 0), (8, 0), (16, 0), (32, 0)]),
            ("lane", [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16)]),
            ("warp", [(0, 32), (1, 0)]),
            ("block", []),
        ],
        ("dim0", "dim1"),
        (64, 64),
    )
    assert ll == expected


def test_slice_of_slice():
    # Slicing dims 2 then 0 evaluates the parent on [1, 16, 1] and keeps dim1:
    #   register: size_per_thread[1] = 2                   -> (1)
    #   lane (order 2, 1, 0): 4 along dim2 (dropped -> 0), 4 along dim1 scaled
    #         by 2 -> (2) (4), 2 along dim0 (dropped -> 0)
    #   warp: 2 along dim2 (-> 0), 2 along dim1 scaled by 8 -> (8)
    parent = E.BlockedLayout((1, 2, 1), (2, 4, 4), (1, 2, 2), (2, 1, 0))
    outer = E.SliceLayout(0, E.SliceLayout(2, parent))
    assert outer.rank == 1
    assert bases(outer, (16,)) == {
        "register": [(1,)],
        "lane": [(0,), (0,), (2,), (4,), (0,)],
        "warp": [(0,), (8,)],
        "block": [],
    }


def test_dot_operand_fma_broadcasts_along_k():
    parent = E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0))
    a = E.DotOperandLayout(0, parent, 0)
    b = bases(a, (32, 16))
    assert all(v[1] == 0 for v in b["lane"] + b["warp"])  # no lane or warp moves along K
    assert [v for v in b["register"] if v[1]] == [(0, 1), (0, 2), (0, 4), (0, 8)]  # each thread holds all of K


def test_padded_shared_offsets():
    layout = E.PaddedSharedLayout(((2, 1), (4, 2)), ((0, 1), (1, 0), (2, 0)), (), (4, 2))
    # After every 2 elements insert 1, after every 4 another 2.
    assert [layout.padded_offset(i) for i in range(8)] == [0, 1, 3, 4, 8, 9, 11, 12]
    assert bases(layout, (4, 2))["offset"] == [(0, 1), (1, 0), (2, 0)]


def test_module_sizes():
    layout = E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0))
    E.verify_module_sizes(layout, num_warps=4)
    with pytest.raises(ValueError, match="module has 64"):
        E.verify_module_sizes(layout, num_warps=4, threads_per_warp=64)


# ---------------------------------------------------------------- verifier rules


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda: E.BlockedLayout((1, 1), (32,), (4, 1), (1, 0)), "same rank"),
        (lambda: E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 1)), "permutation"),
        (lambda: E.BlockedLayout((3, 1), (4, 8), (4, 1), (1, 0)), "powers of two"),
        (lambda: E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0), ((1,),)), "cga_layout"),
        (lambda: E.SliceLayout(2, E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0))), "slice dim"),
        (lambda: E.NVMMADistributedLayout((1, 0), (4, 1), (16, 8)), "version"),
        (lambda: E.NVMMADistributedLayout((3, 0), (4, 1), (16, 64)), r"\[m, n, k\]"),
        (lambda: E.DotOperandLayout(2, E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0)), 0), "operand_index"),
        (lambda: E.DotOperandLayout(0, E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0)), 2), "k_width must be 0"),
        (lambda: E.DotOperandLayout(1, E.NVMMADistributedLayout((3, 0), (4, 1), (16, 64, 16)), 2), "Hopper"),
        (lambda: E.DotOperandLayout(0, E.NVMMADistributedLayout((2, 0), (4, 1), (16, 8)), 0), "k_width"),
        (lambda: E.SwizzledSharedLayout(0, 1, 1, (1, 0)), "vec"),
        (lambda: E.AMDRotatingSharedLayout(1, 0, 1, (1, 0)), "per_phase"),
        (lambda: E.AMDRotatingSharedLayout(1, 1, 1, (1, 1)), "permutation"),
        (lambda: E.NVMMASharedLayout(16, 16), "swizzle_byte_width"),
        (lambda: E.NVMMASharedLayout(128, 16, fp4_padded=True), "fp4_padded"),
        (lambda: E.SharedLinearLayout(()), "offset_bases"),
        (lambda: E.SharedLinearLayout(((0, 1),), alignment=12), "alignment"),
        (lambda: E.DistributedLinearLayout(((0, 4),), (), (), (), (4, 4)), "out of range"),
        (lambda: E.AMDMFMALayout(3, (64, 64, 8), False, (2, 2)), "instr_shape"),
        (lambda: E.AMDMFMALayout(3, (64, 4, 4), False, (2, 2)).to_linear_layout((64, 64)), "64x4 MFMA .* transposed"),
        (lambda: E.AMDWMMALayout(1, False, ((0, 1),), (), (16, 16, 32)), "invalid WMMA v1 instruction shape"),
        (lambda: E.AMDWMMALayout(2, False, ((0, 2),)), "surjective"),
        (lambda: E.AMDWMMALayout(2, False, ((0, 1, 0),)), "rank"),
        (lambda: E.AMDWMMALayout(1, False, ((0, 0, 0, 1),), rank=4).to_linear_layout((1, 1, 16, 32)), "rank 2 or 3"),
        (lambda: E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0), ((1, 1),)), "permutation matrix"),
        (lambda: E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0), ((2, 0),)), "skips a bit"),
        (lambda: E.DotOperandLayout(0, E.AMDWMMALayout(1, False, ((0, 1),)), 4), "8/16 for WMMA v1"),
        (lambda: E.DotOperandLayout(1, E.AMDWMMALayout(2, False, ((0, 1),)), 2), "4/8/16 for WMMA v2"),
        (lambda: E.DotOperandLayout(0, E.AMDMFMALayout(3, (32, 32, 8), False, (2, 2)), 0), "power of two"),
        (lambda: E.PaddedSharedLayout(((3, 1),), (), (), (4,)), "powers of two"),
    ],
)
def test_invalid_parameters_raise(make, rule):
    with pytest.raises(ValueError, match=rule):
        make()


def test_invalid_shapes_raise():
    layout = E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0))
    with pytest.raises(ValueError, match="rank"):
        layout.to_linear_layout((16,))
    with pytest.raises(ValueError, match="powers of two"):
        layout.to_linear_layout((16, 12))
    with pytest.raises(ValueError, match="swizzle"):
        E.NVMMASharedLayout(128, 16).to_linear_layout((64, 32))  # 32 columns < one 64-element swizzle


def test_lists_become_tuples_and_layouts_hash():
    a = E.BlockedLayout([1, 1], [4, 8], [4, 1], [1, 0], [[1, 0]])
    b = E.BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0), ((1, 0),))
    assert a == b and hash(a) == hash(b) and a.cga_layout == ((1, 0),)


# ---------------------------------------------------------------- text syntax

TRITON_TEXTS = [
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>",
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0], "
    "CGALayout = [[1, 0]]}>",
    "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    "warpsPerCTA = [4, 1], order = [1, 0]}>}>",
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CGALayout = [[1, 0]], "
    "instrShape = [16, 8]}>",
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
    "instrShape = [16, 8]}>, kWidth = 2}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]], "
    "block = []}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], CGALayout = [[0, 1]]}>",
    "#ttg.amd_rotating_shared<{vec = 4, perPhase = 2, maxPhase = 8, order = [0, 1], CGALayout = [[0, 1]]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 8, fp4Padded = true}>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 16>",
    "#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [64, 64]}>",
    "#ttg.padded_shared<[32:+4] {offset = [[0, 1], [0, 2], [2, 0], [1, 0]], block = [[4, 0]]}>",
    "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true, "
    "tilesPerWarp = [2, 2], elementBitWidth = 64}>",
    "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [4, 64, 4], isTransposed = false, "
    "elementBitWidth = 64}>",
    "#ttg.amd_wmma<{version = 1, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}}>",
    "#ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}, "
    "CGALayout = [[1, 0], [0, 1]], instrShape = [16, 16, 32]}>",
    "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {register = [[0, 1]], warp = [[1, 0]]}, "
    "instrShape = [16, 16, 32]}>",
    "#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 2, isTranspose = true, "
    "ctaLayout = {warp = [[0, 1], [1, 0]]}}>, kWidth = 8}>",
]


@pytest.mark.parametrize("text", TRITON_TEXTS)
def test_print_parse_round_trip(text):
    assert str(E.parse_encoding(text)) == text


def test_parse_accepts_sorted_keys():
    # MLIR's DictionaryAttr sorts keys; Triton's parser (and ours) take any order.
    text = "#ttg.blocked<{order = [1, 0], sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2]}>"
    assert E.parse_encoding(text) == E.BlockedLayout((1, 1), (1, 32), (2, 2), (1, 0))


def test_parse_wmma_rank_and_defaults():
    # Triton prints no `rank` (its own parser then rejects rank-3 text); ours takes the
    # rank from the bases.  Missing isTranspose / instrShape take Triton's defaults.
    text = "#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = [[0, 1, 0], [0, 0, 1]]}}>"
    assert E.parse_encoding(text).rank == 3
    assert E.parse_encoding("#ttg.amd_wmma<{version = 1, ctaLayout = {warp = [[1, 0]]}}>") == E.AMDWMMALayout(
        1, False, ((1, 0),), (), (16, 16, 16)
    )


@pytest.mark.parametrize(
    "text, rule",
    [
        ("#ttg.blocked<{sizePerThread = [1, 1]}>", "missing the field"),
        ("#ttg.unknown<{a = 1}>", "unknown encoding"),
        ("#ttg.blocked<{sizePerThread = [1, 1}>", "cannot parse"),
        (
            "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [0, 0]}>",
            "permutation",
        ),
    ],
)
def test_parse_errors(text, rule):
    with pytest.raises(ValueError, match=rule):
        E.parse_encoding(text)


def test_to_gluon_without_a_gluon_counterpart_is_a_value_error():
    pytest.importorskip("triton", reason="to_gluon needs Triton 3.9 (the oracle), which is not installed")
    with pytest.raises(ValueError, match="no Gluon counterpart"):
        E.to_gluon(object())
