"""Pictures (linear_layout.draw): every cell's tooltip is checked against the layout itself.

The SVG of random layouts of every encoding family (ranks 1-3, broadcasts, several blocks) and of
random LinearLayouts is parsed; each cell's ``<title>`` must name exactly the owners that
``LinearLayout.apply`` gives, point by point (and ``invert()`` for invertible layouts). Shared
pictures are checked against ``apply`` of the shared layout, access phases against
``bank_conflicts`` and conversion phases against ``plan_conversion``. The encoding strategies
below follow tests/test_encodings_triton.py (which needs Triton; these do not).
"""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layout import LinearLayout, bank_conflicts, plan_conversion
from linear_layout import encodings as E
from linear_layout.draw import Picture, draw_conversion, draw_layout, draw_shared
from linear_layout.draw.conversion import conversion_rounds
from linear_layout.draw.grids import MAX_CELLS
from linear_layout.draw.palette import index_colour, rgb
from linear_layout.encodings.amd import WMMA_INSTR_SHAPES, WMMA_K_WIDTHS
from strategies import DISTRIBUTED_INS, cga_layouts, layouts, pow2, split_bits

SVG = "{http://www.w3.org/2000/svg}"
HW = ("register", "lane", "warp", "block")
DRAW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANSI = re.compile(r"\x1b\[[0-9;]*m")


# ---------------------------------------------------------------- encodings of every family

@st.composite
def blocked(draw, rank=None):
    rank = rank or draw(st.integers(1, 3))
    return E.BlockedLayout(draw(st.tuples(*[pow2(0, 2) for _ in range(rank)])), draw(split_bits(5, rank)),
                           draw(split_bits(draw(st.integers(0, 2)), rank)), tuple(draw(st.permutations(range(rank)))),
                           draw(cga_layouts(rank, 1)))


@st.composite
def mma(draw, version=None):
    version = version or draw(st.sampled_from([2, 3]))
    if version == 3:
        return E.NVMMADistributedLayout((3, 0), (4, draw(pow2(0, 1))), (16, draw(pow2(3, 6)), 16), ())
    rank = draw(st.integers(2, 3))
    return E.NVMMADistributedLayout((2, 0), draw(split_bits(draw(st.integers(0, 2)), rank)),
                                    (16, 8) if rank == 2 else (1, 16, 8), ())


@st.composite
def dot(draw):
    """Dot operands of MMA v2, blocked (FMA), MFMA and WMMA parents."""
    kind = draw(st.sampled_from(["mma", "blocked", "mfma", "wmma"]))
    if kind == "blocked":
        return E.DotOperandLayout(draw(st.integers(0, 1)), draw(blocked(rank=2)), 0)
    parent = draw({"mma": mma(version=2), "mfma": mfma(), "wmma": wmma()}[kind])
    widths = WMMA_K_WIDTHS.get(parent.version) if kind == "wmma" else None
    k_width = draw(st.sampled_from(widths) if widths else pow2(0, 3))
    return E.DotOperandLayout(draw(st.integers(0, 1)), parent, k_width)


@st.composite
def linear_encoding(draw):
    rank = draw(st.integers(1, 3))
    shape = draw(st.tuples(*[pow2(0, 4) for _ in range(rank)]).filter(lambda s: max(s) > 1))
    bits = [tuple((1 << k) if d == dim else 0 for d in range(rank))
            for dim in range(rank) for k in range(shape[dim].bit_length() - 1)]
    groups = {"register": [], "lane": [], "warp": [], "block": []}
    for b in draw(st.permutations(bits)):
        groups[draw(st.sampled_from(list(groups)))].append(b)
    for name in ("lane", "warp"):
        for _ in range(draw(st.integers(0, 1))):
            groups[name].insert(draw(st.integers(0, len(groups[name]))), (0,) * rank)
    return E.DistributedLinearLayout(groups["register"], groups["lane"], groups["warp"], groups["block"], shape)


@st.composite
def mfma(draw):
    rank = draw(st.integers(2, 3))
    instr = draw(st.sampled_from([(32, 32, 8), (16, 16, 16), (64, 4, 4), (4, 64, 4)]))
    transposed = instr[:2] == (64, 4) or draw(st.booleans())
    tiles = (1,) * rank if rank == 3 else (1, 1)
    return E.AMDMFMALayout(draw(st.integers(1, 4)), instr, transposed, draw(split_bits(draw(st.integers(0, 2)), rank)),
                           64, tiles, ())


@st.composite
def wmma(draw):
    version = draw(st.integers(1, 3))
    instr = draw(st.sampled_from(WMMA_INSTR_SHAPES[version]))
    return E.AMDWMMALayout(version, draw(st.booleans()), ((0, 1),), (), instr, (), 2)


def _shape_for(layout, draw):
    if isinstance(layout, E.DistributedLinearLayout):
        return layout.shape
    return draw(st.tuples(*[pow2(0, 6 if layout.rank < 3 else 3) for _ in range(layout.rank)]))


FAMILIES = {
    "blocked": blocked(),
    "slice": blocked(rank=3).flatmap(lambda p: st.integers(0, 2).map(lambda d: E.SliceLayout(d, p))),
    "linear": linear_encoding(),
    "nvidia_mma": mma(),
    "dot_op": dot(),
    "amd_mfma": mfma(),
    "amd_wmma": wmma(),
}


# ---------------------------------------------------------------- independent expectations

def cells(svg: str) -> dict[str, str]:
    """``{coordinate text: rest of the title}`` of every cell; each coordinate once."""
    root = ET.fromstring(svg)
    found: dict[str, str] = {}
    for rect in root.iter(f"{SVG}rect"):
        if rect.get("class") != "cell":
            continue
        title = rect.find(f"{SVG}title").text
        coord, rest = title.split(") ", 1)
        assert coord + ")" not in found, f"element {coord}) drawn twice"
        found[coord + ")"] = rest
    return found


def all_titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [r.find(f"{SVG}title").text for r in root.iter(f"{SVG}rect") if r.get("class") == "cell"]


def expected_titles(layout: LinearLayout) -> dict[str, str]:
    """Owners by ``apply`` at every hardware point, in hardware order (register fastest)."""
    sizes = {d: layout.get_in_dim_size(d) if d in layout.get_in_dim_names() else 1 for d in HW}
    points = np.arange(int(np.prod(list(sizes.values()))), dtype=np.int64)
    register = points % sizes["register"]
    lane = points // sizes["register"] % sizes["lane"]
    warp = points // (sizes["register"] * sizes["lane"]) % sizes["warp"]
    block = points // (sizes["register"] * sizes["lane"] * sizes["warp"])
    values = {"register": register, "lane": lane, "warp": warp, "block": block}
    out = layout.apply({d: values[d] for d in layout.get_in_dim_names()})
    shape = [s for _, s in layout.out_dims]
    owners: dict[tuple, list[str]] = {}
    for k in range(points.size):
        coord = tuple(int(out[name][k]) if np.ndim(out[name]) else int(out[name]) for name, _ in layout.out_dims)
        text = f"T{lane[k] + warp[k] * sizes['lane']} r{register[k]} lane {lane[k]} warp {warp[k]}"
        if sizes["block"] > 1:
            text += f" block {block[k]}"
        owners.setdefault(coord, []).append(text)
    result = {}
    for flat in range(int(np.prod(shape))):
        coord = tuple(int(c) for c in np.unravel_index(flat, shape))
        result["(" + ", ".join(map(str, coord)) + ")"] = "; ".join(owners[coord]) if coord in owners else "none"
    return result


def check_layout_picture(value, shape, layout: LinearLayout) -> None:
    picture = draw_layout(value, shape)
    assert cells(picture.svg()) == expected_titles(layout)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@DRAW
@given(data=st.data())
def test_every_cell_names_its_owners(family, data):
    encoding = data.draw(FAMILIES[family])
    shape = _shape_for(encoding, data.draw)
    check_layout_picture(encoding, shape, encoding.to_linear_layout(shape))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts(in_pool=DISTRIBUTED_INS, min_out_dims=1, max_out_dims=3, max_in_bits=10, max_out_bits=10,
                      max_dim_bits=6))
def test_random_linear_layouts(layout):
    """Arbitrary bases: broadcasts (zero bases), repeated bases, unowned elements."""
    check_layout_picture(layout, None, layout)


def test_invertible_layout_titles_are_the_inverse():
    encoding = E.BlockedLayout((2, 2), (4, 8), (2, 2), (1, 0))
    layout = encoding.to_linear_layout((16, 64))
    inverse = layout.invert()
    found = cells(draw_layout(encoding, (16, 64)).svg())
    for i in range(16):
        for j in range(64):
            hw = inverse.apply({"dim0": i, "dim1": j})
            assert found[f"({i}, {j})"] == (f"T{hw['lane'] + 32 * hw['warp']} r{hw['register']} "
                                            f"lane {hw['lane']} warp {hw['warp']}")


def test_broadcast_and_rank_1_and_rank_3_formats():
    sliced = E.SliceLayout(0, E.BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0)))
    titles = cells(draw_layout(sliced, (8,)).svg())
    # dim1 has 8 lanes (lane bits 0-2); lane bits 3-4 (dim0) and both warp bits (dim1 beyond 8, dim0)
    # broadcast: element 0 is held by lanes 0, 8, 16, 24 of every warp.
    assert titles["(0)"] == "; ".join(f"T{lane + 32 * warp} r0 lane {lane} warp {warp}"
                                      for warp in range(4) for lane in (0, 8, 16, 24))
    assert titles["(5)"].startswith("T5 r0 lane 5 warp 0; T13 r0 lane 13 warp 0;")
    picture = draw_layout(E.BlockedLayout((1, 1, 1), (2, 4, 4), (1, 1, 1), (2, 1, 0)), (2, 4, 4))
    assert [p.title for p in picture.panels] == ["dim0 = 0", "dim0 = 1"]
    assert cells(picture.svg())["(1, 3, 2)"] == "T30 r0 lane 30 warp 0"


def _span(text: str) -> set[int]:
    low, _, high = text.partition("-")
    return set(range(int(low), int(high or low) + 1))


@pytest.mark.parametrize("encoding, shape, tile", [
    (E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (512, 512), (4, 16)),  # 4 rows of 4 threads' vectors
    (E.NVMMADistributedLayout((2, 0), (4, 1), (16, 8)), (256, 256), (2, 8)),  # two MMA quads
    (E.NVMMADistributedLayout((2, 0), (8, 2), (16, 8)), (512, 256), (4, 8)),  # four quads, 16 warps
])
def test_tiles_follow_the_layouts_structure(encoding, shape, tile):
    picture = draw_layout(encoding, shape)
    panel = picture.panels[0]
    assert f"({tile[0]}x{tile[1]} tiles: one thread range x one register range each)" in panel.title
    assert panel.rows <= MAX_CELLS and panel.cols <= MAX_CELLS
    assert (panel.rows * tile[0], panel.cols * tile[1]) == shape
    layout = encoding.to_linear_layout(shape)
    inverse = layout.invert()
    lanes = layout.get_in_dim_size("lane")
    for row, col in [(0, 0), (1, 2), (panel.rows - 1, panel.cols - 1), (panel.rows // 3, panel.cols // 2)]:
        i = np.arange(row * tile[0], (row + 1) * tile[0]).repeat(tile[1])
        j = np.tile(np.arange(col * tile[1], (col + 1) * tile[1]), tile[0])
        hw = inverse.apply({"dim0": i, "dim1": j})
        owners = set(zip((hw["lane"] + lanes * hw["warp"]).tolist(), hw["register"].tolist()))
        threads, registers = panel.labels[panel.cell(row, col)][1:].split(":")
        # the label names every owner of the tile: its threads times its registers, no more
        assert owners == {(t, r) for t in _span(threads) for r in _span(registers)}
    first = inverse.apply({"dim0": tile[0], "dim1": 2 * tile[1]})
    owner = f"T{first['lane'] + lanes * first['warp']} r{first['register']}"
    assert panel.titles[panel.cell(1, 2)].startswith(
        f"tile ({tile[0]}, {2 * tile[1]})..({2 * tile[0] - 1}, {3 * tile[1] - 1}): ({tile[0]}, {2 * tile[1]}) {owner} "
    )


def test_tiles_without_structure_are_square_and_say_so():
    # every other column is held by no thread: no tile is one range of threads x registers
    layout = LinearLayout.from_bases(
        [("register", [[0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64], [0, 128], [0, 256]]),
         ("lane", [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]), ("warp", [[32, 0], [64, 0], [128, 0], [256, 0]])],
        ["dim0", "dim1"], [512, 512], require_surjective=False)
    panel = draw_layout(layout).panels[0]
    assert (panel.rows, panel.cols) == (MAX_CELLS, MAX_CELLS)
    assert "(4x4 tiles, labelled by their first element)" in panel.title
    # tile (2, 5) starts at element (8, 20): lane 8 (dim0 = 8), registers 2 + 8 (dim1 = 4 + 16)
    assert panel.labels[panel.cell(2, 5)] == "T8:10"



def decode_png(data: bytes) -> np.ndarray:
    """A minimal decoder of 8-bit RGB or RGBA PNGs, not interlaced, filters 0-4 (RGBA out)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert (depth, interlace) == (8, 0) and colour_type in (2, 6)
    channels = 4 if colour_type == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int64)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int64)
        prev = out[y - 1] if y else np.zeros(stride, dtype=np.int64)
        row = np.zeros(stride, dtype=np.int64)
        for x in range(stride):
            left = row[x - channels] if x >= channels else 0
            up = prev[x]
            corner = prev[x - channels] if x >= channels else 0
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = left
            elif kind == 2:
                pred = up
            elif kind == 3:
                pred = (left + up) // 2
            else:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
            row[x] = (line[x] + pred) & 0xFF
        out[y] = row
    pixels = out.reshape(height, width, channels)
    return pixels if channels == 4 else np.concatenate([pixels, np.full((height, width, 1), 255)], axis=2)


def test_png_pixels_are_the_owners_colours():
    encoding = E.BlockedLayout((1, 2), (4, 8), (2, 1), (1, 0))
    layout = encoding.to_linear_layout((8, 16))
    picture = draw_layout(encoding, (8, 16), color_by="lane")
    image = decode_png(picture.png())
    root = ET.fromstring(picture.svg())
    assert image.shape[:2] == (int(root.get("height")), int(root.get("width")))
    inverse = layout.invert()
    checked = 0
    for rect in root.iter(f"{SVG}rect"):
        if rect.get("class") != "cell":
            continue
        i, j = map(int, rect.find(f"{SVG}title").text.split(")")[0][1:].split(", "))
        x, y = float(rect.get("x")), float(rect.get("y"))
        pixel = tuple(int(v) for v in image[int(y) + 3, int(x) + 3, :3])
        lane = inverse.apply({"dim0": i, "dim1": j})["lane"]
        assert all(abs(a - b) <= 2 for a, b in zip(pixel, rgb(index_colour(lane)))), (i, j, pixel)
        checked += 1
    assert checked == 128


def test_terminal_respects_width_and_no_color(monkeypatch):
    picture = draw_layout(E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (64, 64))
    for width in (30, 80, 200):
        text = picture.terminal(width=width, color=True)
        assert "\x1b[48;2;" in text
        assert max(len(ANSI.sub("", line)) for line in text.splitlines()) <= width
    monkeypatch.setenv("NO_COLOR", "1")
    plain = picture.terminal(width=80)
    assert "\x1b" not in plain
    assert "(columns 0-37 of 64 shown: the terminal is 80 wide)" in plain
    rows = {line.split()[0]: line.split()[1:] for line in plain.splitlines() if re.match(r"^\s*\d+ [ \d]", line)}
    # Plain text is the colour key: 8 rows per warp, 4 warps, then the pattern repeats.
    assert set(rows["40"]) == {"1"}
    assert "0=warp 0" in plain and "3=warp 3" in plain


def test_terminal_width_from_environment(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    text = draw_layout(E.BlockedLayout((1, 1), (4, 8), (1, 1), (1, 0)), (4, 64)).terminal(color=False)
    assert max(len(line) for line in text.splitlines()) <= 50


# ---------------------------------------------------------------- shared memory

SHARED = {
    "swizzled": st.builds(E.SwizzledSharedLayout, pow2(0, 3), pow2(0, 2), pow2(0, 3), st.sampled_from([(1, 0), (0, 1)])),
    "nvmma": st.builds(E.NVMMASharedLayout, st.sampled_from([0, 32, 64, 128]), st.just(16), st.just(2), st.booleans()),
}


@pytest.mark.parametrize("family", sorted(SHARED))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_shared_titles_name_the_stored_element(family, data):
    encoding = data.draw(SHARED[family])
    low = 6 if family == "nvmma" else 3  # one swizzle width along the contiguous dim
    shape = data.draw(st.tuples(pow2(low, 6), pow2(low, 6)))
    bitwidth = data.draw(st.sampled_from([8, 16, 32, 64]))
    smem = encoding.to_linear_layout(shape)
    found = {}
    for rect in ET.fromstring(draw_shared(encoding, shape, bitwidth=bitwidth).svg()).iter(f"{SVG}rect"):
        if rect.get("class") == "cell":
            coord, offset, bank = re.fullmatch(r"(\(.*\)) offset (\d+) bank (\d+)",
                                               rect.find(f"{SVG}title").text).groups()
            found[int(offset)] = (coord, int(bank))
    offsets = np.arange(smem.get_in_dim_size("offset"))
    assert sorted(found) == offsets.tolist()
    points = smem.apply({"offset": offsets, "block": np.zeros_like(offsets)})
    for offset, i, j in zip(offsets.tolist(), points["dim0"].tolist(), points["dim1"].tolist()):
        assert found[offset] == (f"({i}, {j})", (offset * bitwidth // 8) // 4 % 32)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_shared_access_phases_agree_with_bank_conflicts(data):
    shared = data.draw(SHARED["swizzled"])
    access = data.draw(blocked(rank=2))
    shape = data.draw(st.tuples(pow2(4, 6), pow2(4, 6)))
    bitwidth = data.draw(st.sampled_from([8, 16, 32]))
    kind = data.draw(st.sampled_from(["load", "store"]))
    picture = draw_shared(shared, shape, bitwidth=bitwidth, access=access, kind=kind)
    counted = bank_conflicts(access, shared, bitwidth, shape, kind=kind)
    assert f"  {kind} total over all warps and instructions: {counted.wavefronts} wavefront(s)" in picture.notes
    phases = [int(m.group(1)) for note in picture.notes for m in [re.search(r"phase \d+ .*: (\d+) wavefront", note)] if m]
    assert phases and all(p in (0, counted.phase_cost) for p in phases)
    assert any(picture.panels[0].marks)


def test_shared_swizzle_rows():
    """A 128-byte swizzle of 16-bit elements: row r holds tensor row r with chunk c at c ^ (r % 8)."""
    encoding = E.SwizzledSharedLayout(8, 1, 8, (1, 0))
    panel = draw_shared(encoding, (16, 64), bitwidth=16).panels[0]
    assert (panel.rows, panel.cols) == (16, 64)
    for r in range(16):
        for c in range(64):
            assert panel.labels[panel.cell(r, c)] == f"{r},{((c // 8) ^ (r % 8)) * 8 + c % 8}"
    assert panel.col_names[:4] == ("0", "", "1", "")


# ---------------------------------------------------------------- conversions

@st.composite
def conversion_pairs(draw):
    rank = draw(st.integers(1, 2))
    warps = draw(split_bits(draw(st.integers(0, 2)), rank))
    make = [E.BlockedLayout(draw(st.tuples(*[pow2(0, 2) for _ in range(rank)])), draw(split_bits(5, rank)),
                            tuple(draw(st.permutations(warps))),
                            tuple(draw(st.permutations(range(rank))))) for _ in range(2)]
    shape = draw(st.tuples(*[pow2(2, 6) for _ in range(rank)]))
    return make[0], make[1], shape, draw(st.sampled_from([8, 16, 32]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conversion_pairs())
def test_conversion_phases_are_the_plans(case):
    src, dst, shape, bitwidth = case
    plan = plan_conversion(src, dst, shape, bitwidth)
    picture = draw_conversion(src, dst, shape, bitwidth)
    notes = "\n".join(picture.notes)
    if plan.strategy.uses_shared_memory:
        store, load = plan.shared.store, plan.shared.load
        assert f"store total over all warps and instructions: {store.wavefronts} wavefront(s)" in notes
        assert f"load total over all warps and instructions: {load.wavefronts} wavefront(s)" in notes
        for side, access in (("store", store), ("load", load)):
            block = notes.split(f"\n{side}: warp 0")[1].split("total")[0]
            costs = [int(c) for c in re.findall(r": (\d+) wavefront", block)]
            assert costs and all(c in (0, access.phase_cost) for c in costs)
        assert len(picture.panels) == 4 * (1 if len(shape) < 3 else shape[0])
    else:
        rounds = conversion_rounds(src.to_linear_layout(shape), dst.to_linear_layout(shape))
        moving = [r for r in rounds if r.mode != "own lane"]
        assert bool(moving) == (plan.strategy == "shuffle")
        if plan.strategy == "noop":
            # one panel (rank <= 2 here) and a line that says why; every round keeps its register
            assert len(picture.panels) == 1 and "no-op: both layouts put every element" in notes
            assert all(r.source_registers == (r.register,) * len(r.source_registers) for r in rounds)
        else:
            assert f"{len(rounds)} round(s), {len(moving)} move data between lanes" in notes


def test_transpose_conversion_marks_one_warp():
    src = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    dst = E.BlockedLayout((4, 1), (4, 8), (1, 4), (0, 1))
    picture = draw_conversion(src, dst, (32, 32), 16)
    source, stored, loaded, destination = picture.panels
    assert source.title.startswith("source") and destination.title.startswith("destination")
    # The f16 transpose is packed (planning/packed.py): warp 0's first store instruction moves one
    # 32-bit word (two elements) per lane, all 32 lanes, and so does its first load.
    assert "packed: 2 shuffle(s) per thread" in picture.notes[2]
    assert sum(1 for m in source.marks if m) == 32 * 2
    assert sum(1 for m in stored.marks if m) == 32 * 2
    assert sum(1 for m in loaded.marks if m) == 32 * 2
    assert sum(1 for m in destination.marks if m) == 32 * 2


def test_save_by_extension(tmp_path):
    picture = draw_layout(E.BlockedLayout((1,), (32,), (1,), (0,)), (32,))
    for name in ("p.svg", "p.png", "p.txt"):
        picture.save(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 100
    with pytest.raises(ValueError, match="extension must be"):
        picture.save(tmp_path / "p.jpg")


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="rank 1 to 3"):
        draw_layout(E.BlockedLayout((1,) * 4, (2, 2, 2, 4), (1,) * 4, (3, 2, 1, 0)), (2, 2, 2, 4))
    with pytest.raises(ValueError, match="unknown color_by"):
        draw_layout(E.BlockedLayout((1,), (32,), (1,), (0,)), (32,), color_by="bank")
    with pytest.raises(ValueError, match="draw it with draw_shared"):
        draw_layout(E.SwizzledSharedLayout(1, 1, 1, (1, 0)), (8, 8))
    with pytest.raises(ValueError, match="input dimension"):
        draw_layout(LinearLayout.identity_1d(8, "i", "dim0"))
    with pytest.raises(ValueError, match="bitwidth"):
        draw_shared(E.SwizzledSharedLayout(1, 1, 1, (1, 0)), (8, 8), bitwidth=12)


def test_picture_is_immutable():
    picture = draw_layout(E.BlockedLayout((1,), (32,), (1,), (0,)), (32,))
    assert isinstance(picture, Picture)
    with pytest.raises(AttributeError):
        picture.title = "x"


# ---------------------------------------------------------------- rich display (Jupyter)

def test_linear_layout_repr_is_short_and_str_is_whole():
    layout = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)).to_linear_layout((32, 32))
    assert repr(layout) == "LinearLayout(register=8, lane=32, warp=4, block=1 -> dim0=32, dim1=32)"
    assert str(layout).startswith("\n - register=1 -> (0, 1)") and "where out dims are: [dim0 (size 32)" in str(layout)


def test_rich_display_of_layouts_and_encodings():
    distributed = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    layout = distributed.to_linear_layout((32, 32))
    assert cells(layout._repr_svg_()) == expected_titles(layout)
    assert layout._repr_html_() is None  # one representation per picture in a notebook: SVG
    # An encoding draws on its CTA tile: 32 rows of 8 lanes x 4 warps, 16 columns of 4 registers x 4 lanes.
    assert cells(distributed._repr_svg_()) == expected_titles(distributed.to_linear_layout((32, 16)))
    shared = E.NVMMASharedLayout(128, 16)
    assert "offset 0 bank 0" in shared._repr_svg_()
    smem = shared.to_linear_layout((64, 64))
    assert "(0, 8) offset 8 bank 8" in smem._repr_svg_()  # a LinearLayout draws 32-bit elements
    generic = LinearLayout.identity_1d(8, "i", "dim0")
    assert generic._repr_svg_() is None and generic._repr_html_() is None


def test_display_registry_without_renderer():
    from linear_layout.core import display

    class Value:
        _repr_svg_ = display.repr_svg
        _repr_html_ = display.repr_html

    assert Value()._repr_svg_() is None
    display.register_renderer(Value, "html", lambda v: "<b>v</b>")
    try:
        assert Value()._repr_html_() == "<b>v</b>" and Value()._repr_svg_() is None
    finally:
        display.unregister_renderer(Value, "html")
    with pytest.raises(ValueError, match="unknown display format"):
        display.register_renderer(Value, "png", str)


def test_pure_layers_do_not_import_draw():
    """Dependency inversion: core, encodings and planning only know core.display."""
    from pathlib import Path

    import linear_layout

    root = Path(linear_layout.__file__).parent
    for layer in ("core", "encodings", "planning"):
        for path in (root / layer).rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"(from|import)\s+(\.\.draw|linear_layout\.draw)", text), path


def test_rich_display_of_a_conversion_plan():
    src = E.BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    dst = E.BlockedLayout((4, 1), (4, 8), (1, 4), (0, 1))
    plan = plan_conversion(src, dst, (32, 32), 16)
    svg = plan._repr_svg_()
    assert plan.strategy == "packed" and "convert_layout 32x32 x 16-bit: packed" in svg
    assert f"plan: store {plan.shared.store.wavefronts} wavefront(s), load {plan.shared.load.wavefronts}" in svg
    assert all_titles(svg) == all_titles(draw_conversion(src, dst, (32, 32), 16).svg())
    assert len(all_titles(svg)) == 4 * 1024
    matrix = plan_conversion(src, dst, (32, 32), 16, chip="sm_90")  # 16-bit on sm_90: stmatrix/ldmatrix
    assert matrix.matrix is not None
    assert "the plan uses matrix instructions" in matrix._repr_svg_()
    assert "the plan uses matrix instructions" not in svg
