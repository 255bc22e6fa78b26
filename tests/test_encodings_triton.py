"""Differential tests: our encodings against Triton 3.9's own conversion and printer.

Triton's C++ aborts the process on invalid input, so every strategy here draws
only configurations Triton accepts (valid by construction, never filtered after
the fact).
"""

import dataclasses
import os
import re
import tempfile
import warnings
from pathlib import Path

import pytest

pytest.importorskip("triton")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from linear_layout import encodings as E  # noqa: E402
from linear_layout.encodings import to_gluon  # noqa: E402
from linear_layout.encodings.amd import WMMA_INSTR_SHAPES, WMMA_K_WIDTHS  # noqa: E402
from linear_layout.encodings.base import cga_sizes  # noqa: E402
from strategies import cga_layouts, pow2, split_bits  # noqa: E402

pytestmark = pytest.mark.triton

warnings.filterwarnings("ignore")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # silences a 3.9 deprecation warning
from triton._C.libtriton import gluon_ir, ir  # noqa: E402

_CTX = ir.context()
ir.load_dialects(_CTX)
_BUILDER = gluon_ir.GluonOpBuilder(_CTX)
_TMP = Path(tempfile.mkdtemp(prefix="ll-enc-"))

EXAMPLES = settings(max_examples=300, deadline=None)


# ---------------------------------------------------------------- the oracle


def triton_bases(layout, shape):
    """Triton's GluonOpBuilder.to_linear_layout, as {in_dim: [[...], ...]}."""
    ll = _BUILDER.to_linear_layout(to_gluon(layout)._to_ir(_BUILDER), list(shape))
    if hasattr(ll, "reg_bases"):
        return {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases, "block": ll.block_bases}
    return {"offset": ll.offset_bases, "block": ll.block_bases}


def our_bases(layout, shape):
    return {k: [list(b) for b in v] for k, v in layout.bases(shape).items()}


def _triton_module(layout, shape):
    """Triton's parser on a one-argument module whose argument's type carries our printed encoding."""
    shape_txt = "x".join(map(str, shape))
    if isinstance(layout, E.SharedLayout):
        ty = f"!ttg.memdesc<{shape_txt}xf16, {layout}, #ttg.shared_memory, mutable>"
    else:
        ty = f"tensor<{shape_txt}xf16, {layout}>"
    src = (
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
        f'"ttg.threads-per-warp" = 32 : i32}} {{\n  tt.func public @f(%x: {ty}) {{ tt.return }}\n}}\n'
    )
    path = _TMP / "m.mlir"
    path.write_text(src)
    return ir.parse_mlir_module(str(path), _CTX)


def triton_parsed_bases(layout, shape):
    """The layout Triton builds from *our printed text*: Triton parses ``str(layout)``, reads the
    attribute back as its own Gluon layout, and converts that, so a field our printer and our
    ``to_linear_layout`` both mislabel the same way cannot pass."""
    argument = _triton_module(layout, shape).get_function("f").args(0)
    if isinstance(layout, E.SharedLayout):
        gluon = _BUILDER.get_gluon_layout_from_memdesc(argument)
    else:
        gluon = _BUILDER.get_gluon_layout_from_tensor(argument)
    ll = _BUILDER.to_linear_layout(gluon._to_ir(_BUILDER), list(shape))
    if hasattr(ll, "reg_bases"):
        return {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases, "block": ll.block_bases}
    return {"offset": ll.offset_bases, "block": ll.block_bases}


def triton_print(layout, shape):
    """Triton's printer: parse a one-argument module using the encoding, print it, and
    expand the attribute aliases Triton introduces (#blocked, #mma, ...)."""
    text = _triton_module(layout, shape).str_nodebug()
    aliases = dict(re.findall(r"^(#[\w.]+) = (.*)$", text, re.M))
    arg = re.search(r"%arg0: (?:tensor|!ttg\.memdesc)<[^,]*, (.*?)(?:, #smem, mutable|, #smem)?>\)", text).group(1)

    def expand(s):
        return re.sub(
            r"#[\w]+(?![\w.<])", lambda m: expand(aliases[m.group(0)]) if m.group(0) in aliases else m.group(0), s
        )

    return expand(arg)


def triton_attr_print(layout, shape):
    """Triton's printer on the attribute Gluon builds, without going through Triton's
    parser (which cannot read back some of what it prints, e.g. rank-3 amd_wmma)."""
    ty = _BUILDER.get_distributed_ty(_BUILDER.get_half_ty(), list(shape), to_gluon(layout)._to_ir(_BUILDER))
    return re.fullmatch(r"tensor<[0-9x]+xf16, (.*)>", str(ty)).group(1)


# ---------------------------------------------------------------- strategies


def shapes(rank, lo=0, hi=7):
    return st.tuples(*[pow2(lo, hi) for _ in range(rank)])


@st.composite
def blocked_layouts(draw, rank=None, max_blocks_log2=2):
    rank = rank or draw(st.integers(1, 4))
    return E.BlockedLayout(
        draw(st.tuples(*[pow2(0, 2) for _ in range(rank)])),
        draw(split_bits(5, rank)),
        draw(split_bits(draw(st.integers(0, 3)), rank)),
        tuple(draw(st.permutations(range(rank)))),
        draw(cga_layouts(rank, max_blocks_log2)),
    )


@st.composite
def mma_layouts(draw, version=None, rank=None):
    version = version or draw(st.sampled_from([2, 3]))
    if version == 3:
        warps = (4 * draw(pow2(0, 1)), draw(pow2(0, 1)))
        instr = (16, draw(pow2(3, 8)), draw(st.sampled_from([8, 16, 32])))
        return E.NVMMADistributedLayout((3, 0), warps, instr, draw(cga_layouts(2)))
    rank = rank or draw(st.integers(2, 3))
    warps = draw(split_bits(draw(st.integers(0, 3)), rank))
    instr = (16, 8) if rank == 2 else (1, 16, 8)
    return E.NVMMADistributedLayout((2, 0), warps, instr, draw(cga_layouts(rank)))


@st.composite
def dot_layouts(draw):
    kind = draw(st.sampled_from(["mma2", "mma3", "blocked"]))
    if kind == "blocked":
        return E.DotOperandLayout(draw(st.integers(0, 1)), draw(blocked_layouts(rank=draw(st.integers(2, 3)))), 0)
    parent = draw(mma_layouts(version=2 if kind == "mma2" else 3))
    op = 0 if parent.is_hopper else draw(st.integers(0, 1))
    return E.DotOperandLayout(op, parent, draw(pow2(0, 4)))


@st.composite
def linear_layouts(draw):
    """A random permutation of unit bits over the hardware dims, plus broadcast (zero) bases."""
    rank = draw(st.integers(1, 3))
    shape = draw(shapes(rank, 0, 5).filter(lambda s: max(s) > 1))  # #ttg.linear needs a basis
    bits = [
        tuple((1 << k) if d == dim else 0 for d in range(rank))
        for dim in range(rank)
        for k in range(shape[dim].bit_length() - 1)
    ]
    bits = draw(st.permutations(bits))
    groups = {"register": [], "lane": [], "warp": [], "block": []}
    for b in bits:
        groups[draw(st.sampled_from(list(groups)))].append(b)
    for name in ("lane", "warp", "block"):
        for _ in range(draw(st.integers(0, 1))):
            groups[name].insert(draw(st.integers(0, len(groups[name]))), (0,) * rank)
    return E.DistributedLinearLayout(groups["register"], groups["lane"], groups["warp"], groups["block"], shape)


MFMA_INSTR_SHAPES = (
    [(32, 32, k) for k in (8, 16, 32)]
    + [(16, 16, k) for k in (16, 32, 64)]
    + [(64, 4, 4), (64, 4, 16), (4, 64, 4), (4, 64, 16)]
)


@st.composite
def mfma_layouts(draw):
    rank = draw(st.integers(2, 3))
    instr = draw(st.sampled_from(MFMA_INSTR_SHAPES))
    warps = draw(split_bits(draw(st.integers(0, 3)), rank))
    tiles = (1,) * rank if rank == 3 else draw(st.tuples(pow2(0, 1), pow2(0, 1)))
    transposed = instr[:2] == (64, 4) or draw(st.booleans())  # Triton only converts 64x4 transposed
    return E.AMDMFMALayout(
        draw(st.integers(1, 4)),
        instr,
        transposed,
        warps,
        draw(st.sampled_from([32, 64])),
        tiles,
        draw(cga_layouts(rank)),
    )


@st.composite
def wmma_cta_bases(draw, rank, max_log2=3):
    """ctaLayout bases in tile units: the unit steps of a box, shuffled and split between
    registers and warps, plus zero (broadcast) bases.  Triton only needs them surjective,
    but its Python binding can only return layouts that are permutations up to zeros."""
    bits = [0] * rank
    for _ in range(draw(st.integers(0, max_log2))):
        bits[draw(st.integers(0, rank - 1))] += 1
    units = [tuple((1 << k) if d == dim else 0 for d in range(rank)) for dim in range(rank) for k in range(bits[dim])]
    groups = {"register": [], "warp": []}
    for u in draw(st.permutations(units)):
        groups[draw(st.sampled_from(list(groups)))].append(u)
    for bases in groups.values():
        for _ in range(draw(st.integers(0, 1))):
            bases.insert(draw(st.integers(0, len(bases))), (0,) * rank)
    return tuple(groups["register"]), tuple(groups["warp"])


@st.composite
def wmma_layouts(draw, rank=None):
    rank = rank or draw(st.integers(2, 3))
    version = draw(st.integers(1, 3))
    reg, warp = draw(wmma_cta_bases(rank))
    instr = draw(st.sampled_from(WMMA_INSTR_SHAPES[version]))
    return E.AMDWMMALayout(version, draw(st.booleans()), warp, reg, instr, draw(cga_layouts(rank)), rank)


@st.composite
def amd_dot_layouts(draw):
    """Both operands of MFMA and WMMA parents with every k_width Triton accepts
    (WMMA v1: 8, 16; v2: 4, 8, 16; v3 and MFMA: any power of two)."""
    parent = draw(st.one_of(mfma_layouts(), wmma_layouts()))
    widths = WMMA_K_WIDTHS.get(parent.version) if isinstance(parent, E.AMDWMMALayout) else None
    k_width = draw(st.sampled_from(widths) if widths else pow2(0, 5))
    return E.DotOperandLayout(draw(st.integers(0, 1)), parent, k_width)


def check_against_triton(layout, shape):
    assert our_bases(layout, shape) == triton_bases(layout, shape), (str(layout), shape)


def check_print(layout, shape, convert=True):
    """Triton reads our text back to the same text, we read it back to the same value, and (with
    ``convert``; Triton aborts on the padded and rotating shared families) Triton's layout of the
    attribute it parsed from our text is ours."""
    assert triton_print(layout, shape) == str(layout)
    assert E.parse_encoding(str(layout)) == layout
    if convert:
        assert triton_parsed_bases(layout, shape) == our_bases(layout, shape), (str(layout), shape)


# ---------------------------------------------------------------- distributed families


@EXAMPLES
@given(st.data())
def test_blocked(data):
    layout = data.draw(blocked_layouts())
    shape = data.draw(shapes(layout.rank, 0, 6))
    check_against_triton(layout, shape)
    check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_slice(data):
    family = data.draw(st.sampled_from(["blocked", "mma", "dot", "linear", "mfma", "wmma", "amd_dot", "slice"]))
    if family == "blocked":
        parent = data.draw(blocked_layouts(rank=data.draw(st.integers(2, 4))))
    elif family == "mma":
        parent = data.draw(mma_layouts())
    elif family == "dot":
        parent = data.draw(dot_layouts())
    elif family == "mfma":
        parent = data.draw(mfma_layouts())
    elif family == "wmma":
        parent = data.draw(wmma_layouts())
    elif family == "amd_dot":
        parent = data.draw(amd_dot_layouts())
    elif family == "linear":
        parent = data.draw(linear_layouts().filter(lambda lay: lay.rank >= 2))
    else:  # a slice of a slice
        grand = data.draw(blocked_layouts(rank=3))
        parent = E.SliceLayout(data.draw(st.integers(0, 2)), grand)
    layout = E.SliceLayout(data.draw(st.integers(0, parent.rank - 1)), parent)
    shape = data.draw(shapes(layout.rank, 0, 7))
    check_against_triton(layout, shape)
    if family not in ("wmma", "amd_dot"):  # Triton's parser cannot read every amd_wmma back (rank, warp)
        assert triton_parsed_bases(layout, shape) == our_bases(layout, shape), (str(layout), shape)


@EXAMPLES
@given(st.data())
def test_distributed_linear(data):
    layout = data.draw(linear_layouts())
    shape = data.draw(st.one_of(st.just(layout.shape), shapes(layout.rank, 0, 6)))
    check_against_triton(layout, shape)
    check_print(layout, layout.shape)


@EXAMPLES
@given(st.data())
def test_nvidia_mma(data):
    layout = data.draw(mma_layouts())
    shape = data.draw(shapes(layout.rank, 0, 8))
    check_against_triton(layout, shape)
    check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_dot_operand(data):
    layout = data.draw(dot_layouts())
    shape = data.draw(shapes(layout.rank, 0, 7))
    check_against_triton(layout, shape)
    assert triton_parsed_bases(layout, shape) == our_bases(layout, shape), (str(layout), shape)


@EXAMPLES
@given(st.data())
def test_amd_mfma(data):
    layout = data.draw(mfma_layouts())
    shape = data.draw(shapes(layout.rank, 2, 8))
    check_against_triton(layout, shape)
    check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_amd_wmma(data):
    layout = data.draw(wmma_layouts())
    shape = data.draw(shapes(layout.rank, 0, 8))
    check_against_triton(layout, shape)
    assert triton_attr_print(layout, shape) == str(layout)
    # Without any basis the text does not carry the rank; it then reads back as rank 2.
    has_rank = layout.reg_bases or layout.warp_bases or layout.cga_layout
    assert E.parse_encoding(str(layout)) == (layout if has_rank else dataclasses.replace(layout, rank=2))
    if layout.rank == 2 and layout.warp_bases:
        # Triton's parser needs `warp` and assumes rank 2 (it prints no rank).
        check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_amd_dot_operand(data):
    layout = data.draw(amd_dot_layouts())
    shape = data.draw(shapes(layout.rank, 0, 8))
    check_against_triton(layout, shape)
    assert triton_attr_print(layout, shape) == str(layout)
    parent = layout.parent
    if isinstance(parent, E.AMDMFMALayout):
        assert triton_parsed_bases(layout, shape) == our_bases(layout, shape), (str(layout), shape)
    if isinstance(parent, E.AMDWMMALayout) and not (parent.reg_bases or parent.warp_bases or parent.cga_layout):
        layout = E.DotOperandLayout(layout.operand_index, dataclasses.replace(parent, rank=2), layout.k_width)
    assert E.parse_encoding(str(layout)) == layout


# ---------------------------------------------------------------- shared families


def triton_accepts_as_equal(layout, shape, offsets, blocks):
    """Triton's own verdict that ``layout`` on ``shape`` is the shared_linear layout with these
    bases: ``ttg.memdesc_reshape`` to the same shape verifies that the declared result encoding is
    equivalent (by Triton's ``toLinearLayout``) to the one it infers from the source.  For the
    families Gluon cannot build (amd_rotating_shared)."""
    shape_txt = "x".join(map(str, shape))
    target = E.SharedLinearLayout(tuple(map(tuple, offsets)), tuple(map(tuple, blocks)))
    src_ty = f"!ttg.memdesc<{shape_txt}xf16, {layout}, #ttg.shared_memory, mutable>"
    dst_ty = f"!ttg.memdesc<{shape_txt}xf16, {target}, #ttg.shared_memory, mutable>"
    src = (
        f'module attributes {{"ttg.num-ctas" = {1 << len(blocks)} : i32, "ttg.num-warps" = 4 : i32, '
        f'"ttg.threads-per-warp" = 64 : i32}} {{\n  tt.func public @f(%x: {src_ty}) {{\n'
        f"    %y = ttg.memdesc_reshape %x : {src_ty} -> {dst_ty}\n    tt.return\n  }}\n}}\n"
    )
    path = _TMP / "reshape.mlir"
    path.write_text(src)
    try:
        ir.parse_mlir_module(str(path), _CTX)
    except RuntimeError:
        return False
    return True


def rotating_layouts(rank):
    return st.builds(
        E.AMDRotatingSharedLayout,
        pow2(0, 4),
        pow2(0, 3),
        pow2(0, 4),
        st.permutations(range(rank)).map(tuple),
        cga_layouts(rank),
    )


@EXAMPLES
@given(st.data())
def test_amd_rotating_shared(data):
    rank = data.draw(st.integers(1, 4))
    layout = data.draw(rotating_layouts(rank))
    cga = cga_sizes(layout.cga_layout, rank)
    shape = tuple(c * s for c, s in zip(cga, data.draw(shapes(rank, 0, 6).filter(lambda s: max(s) > 1))))
    ours = our_bases(layout, shape)
    check_print(layout, shape, convert=False)  # Triton's conversion of a rotating layout is checked below
    # The oracle needs a #ttg.shared_linear equal to the layout, and shared_linear must be bijective once
    # its zero bases are dropped; Triton's rotating tile is built on the whole shape and cut to one CTA,
    # which can fold two offsets onto one element (a CGA split on a swizzled dim): those draws are skipped.
    nonzero = [b for b in ours["offset"] + ours["block"] if any(b)]
    hypothesis.assume(len(set(map(tuple, nonzero))) == len(nonzero) == sum(s.bit_length() - 1 for s in shape))
    assert triton_accepts_as_equal(layout, shape, ours["offset"], ours["block"]), (str(layout), shape)


def swizzle_fields(data, rank: int, min_max_phase_log2: int = 0) -> tuple[int, int, int, tuple[int, ...]]:
    """(vec, per_phase, max_phase, order) of a swizzled shared layout of `rank` dims."""
    return (
        data.draw(pow2(0, 4)),
        data.draw(pow2(0, 3)),
        data.draw(pow2(min_max_phase_log2, 4)),
        tuple(data.draw(st.permutations(range(rank)))),
    )


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_amd_rotating_oracle_rejects_other_layouts(data):
    """The reshape oracle discriminates: the same layout with one offset basis changed
    (swapped with another, or a rotating row phase replaced by the plain swizzled one) is refused."""
    rank = data.draw(st.integers(2, 3))
    layout = E.AMDRotatingSharedLayout(*swizzle_fields(data, rank, min_max_phase_log2=1))
    shape = data.draw(shapes(rank, 1, 6))
    offsets = our_bases(layout, shape)["offset"]
    swizzled = E.SwizzledSharedLayout(layout.vec, layout.per_phase, layout.max_phase, layout.order)
    other = our_bases(swizzled, shape)["offset"]
    if other == offsets:  # too few rows for the rotation to show: perturb a basis instead
        i, j = data.draw(st.permutations(range(len(offsets))))[:2]
        hypothesis.assume(offsets[i] != offsets[j])
        other = list(offsets)
        other[i], other[j] = offsets[j], offsets[i]
    assert not triton_accepts_as_equal(layout, shape, other, [])


def test_amd_rotating_differs_from_swizzled_where_triton_says_so():
    """One hand-checked case: vec 2, per_phase 1, max_phase 4 on 16x16: rows 4 and 8 start a new
    block of 4 rows, so their phase is the block number (1, 2), where the swizzled layout has 0."""
    layout = E.AMDRotatingSharedLayout(2, 1, 4, (1, 0))
    offsets = our_bases(layout, (16, 16))["offset"]
    assert offsets[4:] == [[1, 2], [2, 4], [4, 2], [8, 4]]
    assert triton_accepts_as_equal(layout, (16, 16), offsets, [])
    swizzled = our_bases(E.SwizzledSharedLayout(2, 1, 4, (1, 0)), (16, 16))["offset"]
    assert swizzled[4:] == [[1, 2], [2, 4], [4, 0], [8, 0]]
    assert not triton_accepts_as_equal(layout, (16, 16), swizzled, [])


@EXAMPLES
@given(st.data())
def test_swizzled_shared(data):
    rank = data.draw(st.integers(1, 4))
    layout = E.SwizzledSharedLayout(*swizzle_fields(data, rank), data.draw(cga_layouts(rank)))
    cga = cga_sizes(layout.cga_layout, rank)
    # Triton's Python wrapper rejects an empty offset list, so keep at least 2 elements per CTA.
    shape = tuple(c * s for c, s in zip(cga, data.draw(shapes(rank, 0, 6).filter(lambda s: max(s) > 1))))
    check_against_triton(layout, shape)
    check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_nvmma_shared(data):
    swizzle = data.draw(st.sampled_from([0, 32, 64, 128]))
    bitwidth = data.draw(st.sampled_from([8, 16, 32]))
    fp4 = swizzle == 128 and bitwidth == 8 and data.draw(st.booleans())
    # Swizzled layouts need rank >= 2 (Triton asserts); unswizzled ones take any rank,
    # including the odd layout Triton 3.9 builds for transposed rank > 2.
    rank = data.draw(st.integers(1, 4) if swizzle == 0 else st.integers(2, 3))
    transposed = data.draw(st.booleans())
    cga_layout = data.draw(cga_layouts(rank))
    layout = E.NVMMASharedLayout(swizzle, bitwidth, rank, transposed, fp4, cga_layout)
    # Valid by construction: every dim holds at least one 8-row core matrix and the
    # contiguous dim at least one swizzle width (Triton aborts otherwise).
    width = max(8, 8 * swizzle // bitwidth // (2 if fp4 else 1))
    contig = 0 if transposed else rank - 1
    per_cta = [data.draw(pow2(3, 9 if rank < 4 else 6)) for _ in range(rank)]
    per_cta[contig] = max(per_cta[contig], width)
    shape = tuple(c * s for c, s in zip(cga_sizes(cga_layout, rank), per_cta))
    check_against_triton(layout, shape)
    check_print(layout, shape)


@EXAMPLES
@given(st.data())
def test_shared_linear(data):
    rank = data.draw(st.integers(1, 3))
    shape = data.draw(shapes(rank, 0, 5).filter(lambda s: max(s) > 1))
    bits = [
        tuple((1 << k) if d == dim else 0 for d in range(rank))
        for dim in range(rank)
        for k in range(shape[dim].bit_length() - 1)
    ]
    bits = data.draw(st.permutations(bits))
    n_block = data.draw(st.integers(0, min(2, len(bits) - 1)))
    layout = E.SharedLinearLayout(bits[n_block:], bits[:n_block], data.draw(pow2(4, 10)))
    check_against_triton(layout, layout.shape)
    check_print(layout, layout.shape)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_padded_shared_print(data):
    # Triton has no linear layout for padded_shared (it aborts), so only the text is compared.
    rank = data.draw(st.integers(1, 2))
    shape = data.draw(shapes(rank, 1, 6))
    bits = [
        tuple((1 << k) if d == dim else 0 for d in range(rank))
        for dim in range(rank)
        for k in range(shape[dim].bit_length() - 1)
    ]
    if data.draw(st.booleans()):
        bits = data.draw(st.permutations(bits))
    intervals = data.draw(st.lists(pow2(1, 7), min_size=1, max_size=2, unique=True))
    pairs = tuple((i, data.draw(pow2(0, 3))) for i in intervals)
    layout = E.PaddedSharedLayout(pairs, bits, (), shape)
    check_print(layout, shape, convert=False)


# ---------------------------------------------------------------- views


@settings(max_examples=70, deadline=None)
@given(st.data())
def test_views_match_triton(data):
    family = data.draw(st.sampled_from(["blocked", "mma", "dot", "slice", "wmma", "swizzled", "nvmma"]))
    if family == "wmma":
        layout = data.draw(wmma_layouts(rank=2).filter(lambda lay: not lay.cga_layout))
    elif family == "blocked":
        layout = data.draw(blocked_layouts(rank=data.draw(st.integers(1, 2)), max_blocks_log2=1))
    elif family == "mma":
        layout = data.draw(mma_layouts(version=2, rank=2))
    elif family == "dot":
        layout = E.DotOperandLayout(
            data.draw(st.integers(0, 1)), data.draw(mma_layouts(version=2, rank=2)), data.draw(pow2(0, 3))
        )
    elif family == "slice":
        layout = E.SliceLayout(data.draw(st.integers(0, 1)), data.draw(blocked_layouts(rank=2)))
    elif family == "swizzled":
        layout = E.SwizzledSharedLayout(
            data.draw(pow2(0, 3)),
            data.draw(pow2(0, 2)),
            data.draw(pow2(0, 3)),
            tuple(data.draw(st.permutations(range(2)))),
        )
    else:
        layout = E.NVMMASharedLayout(data.draw(st.sampled_from([0, 32, 64])), 16)
    if family == "nvmma":  # at least 8 rows and one 64-byte swizzle of fp16
        shape = (data.draw(pow2(3, 5)), 32)
    else:
        shape = data.draw(shapes(layout.rank, 0, 5).filter(lambda s: max(s) > 1))
    gluon = to_gluon(layout)
    assert E.format_tensor_view(layout, shape) == gluon_ir.get_layout_view(gluon, list(shape), False)
    assert E.format_hardware_view(layout, shape) == gluon_ir.get_layout_view(gluon, list(shape), True)


# ---------------------------------------------------------------- real TTGIR


def _ttgir_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, o, N: tl.constexpr):
        i = tl.arange(0, N)
        tl.store(o + i, tl.load(x + i) + tl.load(y + i))

    @triton.jit
    def transpose_kernel(x, o, M: tl.constexpr, N: tl.constexpr):
        r = tl.arange(0, M)[:, None]
        c = tl.arange(0, N)[None, :]
        tl.store(o + c * M + r, tl.load(x + r * N + c))

    @triton.jit
    def sum_kernel(x, o, M: tl.constexpr, N: tl.constexpr):
        r = tl.arange(0, M)[:, None]
        c = tl.arange(0, N)[None, :]
        tl.store(o + tl.arange(0, M), tl.sum(tl.load(x + r * N + c), axis=1))

    @triton.jit
    def dot_kernel(a, b, o, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm = tl.arange(0, M)[:, None]
        rn = tl.arange(0, N)[None, :]
        rk = tl.arange(0, K)
        x = tl.load(a + rm * K + rk[None, :])
        y = tl.load(b + rk[:, None] * N + rn)
        tl.store(o + rm * N + rn, tl.dot(x, y))

    def ptrs(names, dtype):
        return {n: f"*{dtype}" for n in names}

    mnk = {"M": "constexpr", "N": "constexpr", "K": "constexpr"}
    return [
        (add_kernel, {**ptrs("xyo", "fp32"), "N": "constexpr"}, {"N": 1024}),
        (transpose_kernel, {**ptrs("xo", "fp16"), "M": "constexpr", "N": "constexpr"}, {"M": 64, "N": 64}),
        (sum_kernel, {**ptrs("xo", "fp32"), "M": "constexpr", "N": "constexpr"}, {"M": 32, "N": 128}),
        (dot_kernel, {**ptrs("ab", "fp16"), "o": "*fp32", **mnk}, {"M": 64, "N": 64, "K": 64}),
        (dot_kernel, {**ptrs("ab", "fp32"), "o": "*fp32", **mnk}, {"M": 32, "N": 32, "K": 32}),
    ]


# Families this module covers.
_COVERED = (
    "blocked",
    "slice",
    "linear",
    "nvidia_mma",
    "dot_op",
    "amd_mfma",
    "amd_wmma",
    "swizzled_shared",
    "amd_rotating_shared",
    "nvmma_shared",
    "shared_linear",
)


def _expand(text: str, aliases: dict) -> str:
    """``text`` with every alias reference replaced by its (expanded) value."""
    return re.sub(
        r"#\w+(?![\w.<])",
        lambda m: _expand(aliases[m.group(0)], aliases) if m.group(0) in aliases else m.group(0),
        text,
    )


def _encodings_in(ttgir: str) -> list[str]:
    """Every #ttg.<name><...> attribute in the text, with aliases expanded."""
    aliases = dict(re.findall(r"^(#\w+) = (#ttg\..*)$", ttgir, re.M))
    found = set()
    text = _expand(ttgir, aliases)
    for m in re.finditer(r"#ttg\.(\w+)<", text):
        depth, i = 0, m.end() - 1
        while True:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        if m.group(1) in _COVERED:
            found.add(text[m.start() : i + 1])
    return sorted(found)


@pytest.fixture(scope="session")
def compiled_ttgir():
    """The TTGIR Triton prints for each kernel on each target, aliases and all."""
    import triton
    from triton.backends.compiler import GPUTarget

    modules = []
    targets = (
        ("cuda", 90, 32),
        ("cuda", 80, 32),
        ("hip", "gfx942", 64),  # gfx11xx/12xx/1250: WMMA v1/v2/v3
        ("hip", "gfx1100", 32),
        ("hip", "gfx1200", 32),
        ("hip", "gfx1250", 32),
    )
    for target in targets:
        for fn, signature, constexprs in _ttgir_kernels():
            src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
            modules.append(triton.compile(src, target=GPUTarget(*target)).asm["ttgir"])
    return modules


@pytest.fixture(scope="session")
def compiled_encodings(compiled_ttgir):
    return sorted({text for module in compiled_ttgir for text in _encodings_in(module)})


def test_ttgir_aliases_resolve(compiled_ttgir):
    """Every encoding alias Triton prints, and every inline encoding that refers to one
    (``#ttg.slice<{dim = 1, parent = #blocked}>``), reads with the module's alias table to the
    same layout as its alias-free text."""
    resolved = inline = 0
    for module in compiled_ttgir:
        aliases = E.collect_aliases(module)
        covered = {name for name, value in aliases.items() if re.match(rf"#ttg\.({'|'.join(_COVERED)})<", value)}
        triton_aliases = dict(re.findall(r"^(#\w+) = (#ttg\..*)$", module, re.M))
        for name in covered:
            assert E.parse_encoding(name, aliases) == E.parse_encoding(_expand(aliases[name], triton_aliases))
            resolved += 1
        body = module.split("\nmodule", 1)[-1]
        for text in set(re.findall(r"#ttg\.(?:slice|dot_op)<\{[^<>]*#\w+[^<>]*\}>", body)):
            assert E.parse_encoding(text, aliases) == E.parse_encoding(_expand(text, triton_aliases)), text
            inline += 1
    assert resolved > 0 and inline > 0


def test_ensure_not_larger_is_a_threshold_as_in_triton():
    # Two register bases both reach past the shape: Triton 3.9 drops both (a threshold, not a
    # count of bits to remove), and zeroes the lane basis.
    layout = E.DistributedLinearLayout(((1,), (2,), (4,), (4,)), ((8,),), (), (), (16,))
    check_against_triton(layout, (4,))
    assert our_bases(layout, (4,))["register"] == [[1], [2]]


def test_ttgir_encodings_round_trip(compiled_encodings):
    names = {re.match(r"#ttg\.(\w+)<", t).group(1) for t in compiled_encodings}
    assert {
        "blocked",
        "slice",
        "nvidia_mma",
        "dot_op",
        "swizzled_shared",
        "nvmma_shared",
        "amd_mfma",
        "amd_wmma",
        "amd_rotating_shared",
    } <= names
    for text in compiled_encodings:
        assert str(E.parse_encoding(text)) == text
