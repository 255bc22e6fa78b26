"""Where async copies and stores through views put their bytes (issue 20 item 10): after each
`cp.async` and its wait, and after a `ttg.local_store` into a `ttg.memdesc_subslice` view, every
element of the workgroup buffer is the one the shared encoding's offset -> element map says,
the map taken from Triton 3.9 itself (`GluonOpBuilder.to_linear_layout`), not from this project.
A lowering that placed the tile row-major, or forgot the swizzle, the buffer index or a view's
origin, would still copy and load back every element, with the same bank cost; these bytes tell."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from linear_layout import encodings as E
from linear_layout.encodings import to_gluon
from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel

pytest.importorskip("triton")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
from triton._C.libtriton import gluon_ir
from triton._C.libtriton import ir as triton_ir

_CONTEXT = triton_ir.context()
triton_ir.load_dialects(_CONTEXT)
_BUILDER = gluon_ir.GluonOpBuilder(_CONTEXT)

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
SWIZZLES = [(8, 2, 4), (4, 1, 8), (8, 1, 8), (1, 1, 1)]  # (vec, perPhase, maxPhase)


def tritons_elements(shared: E.SwizzledSharedLayout, shape: list[int]) -> np.ndarray:
    """(offset, dim) -> the element Triton's layout puts at each offset of one buffer."""
    bases = _BUILDER.to_linear_layout(to_gluon(shared)._to_ir(_BUILDER), shape).offset_bases
    elements = np.zeros((2 ** len(bases), len(shape)), np.int64)
    for bit, basis in enumerate(bases):
        with_bit = np.arange(elements.shape[0]) >> bit & 1 == 1
        elements[with_bit] ^= np.array(basis, np.int64)
    return elements


def _module(shared: str, body: str) -> str:
    return f"""#blocked = {BLOCKED}
#shared = {shared}
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x: !tt.ptr<f16> {{tt.divisibility = 16 : i32}}, %n: i32, %y: !tt.ptr<f16> {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %c32 = arith.constant dense<32> : tensor<32x1xi32, #blocked>
    %rows = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32, #ttg.slice<{{dim = 1, parent = #blocked}}>>
    %cols = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>>
    %r = tt.expand_dims %rows {{axis = 1 : i32}} : tensor<32xi32, #ttg.slice<{{dim = 1, parent = #blocked}}>> -> tensor<32x1xi32, #blocked>
    %c = tt.expand_dims %cols {{axis = 0 : i32}} : tensor<32xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>> -> tensor<1x32xi32, #blocked>
    %r32 = arith.muli %r, %c32 : tensor<32x1xi32, #blocked>
    %rb = tt.broadcast %r32 : tensor<32x1xi32, #blocked> -> tensor<32x32xi32, #blocked>
    %cb = tt.broadcast %c : tensor<1x32xi32, #blocked> -> tensor<32x32xi32, #blocked>
    %off = arith.addi %rb, %cb : tensor<32x32xi32, #blocked>
    %ns = tt.splat %n : i32 -> tensor<32x1xi32, #blocked>
    %m1 = arith.cmpi slt, %r, %ns : tensor<32x1xi32, #blocked>
    %m = tt.broadcast %m1 : tensor<32x1xi1, #blocked> -> tensor<32x32xi1, #blocked>
    %p0 = tt.splat %x : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>, #blocked>
    %p = tt.addptr %p0, %off : tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xi32, #blocked>
{body}
    tt.return
  }}
}}
"""


def _copy(index: int) -> str:
    """cp.async of the 32 x 32 tile at %x into buffer `index` of a two-buffer allocation, rows
    `>= n` masked off (zeros land there), then its wait."""
    return f"""    %cst = arith.constant dense<0.000000e+00> : tensor<32x32xf16, #blocked>
    %i = arith.constant {index} : i32
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x32x32xf16, #shared, #smem, mutable>
    %b = ttg.memdesc_index %buf[%i] : !ttg.memdesc<2x32x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    %t = ttg.async_copy_global_to_local %p, %b mask %m other %cst {{contiguity = 8 : i32}} : tensor<32x32x!tt.ptr<f16>, #blocked> -> <32x32xf16, #shared, #smem, mutable>
    %g = ttg.async_commit_group tokens %t
    %w = ttg.async_wait %g {{num = 0 : i32}}"""


def _shared(vec: int, per_phase: int, max_phase: int) -> E.SwizzledSharedLayout:
    return E.SwizzledSharedLayout(vec=vec, per_phase=per_phase, max_phase=max_phase, order=[1, 0])


def _run(text: str, n: int, chip: str | None = "sm_80"):
    """(the global tile, the output tile, the run's report)."""
    module = lower_ttgir(text, chip=chip)
    tile = (np.arange(1024) % 2039 - 1000).astype(np.float16).reshape(32, 32)
    out = np.zeros_like(tile)
    report = run_triton_kernel(module, [tile.copy(), n, out], (1,))
    assert not report.races
    return tile, out, report


def _workgroup(text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the global tile, the kernel's one workgroup buffer after the run, as f16)."""
    tile, _, report = _run(text, n)
    assert len(report.workgroup_buffers) == 1
    return tile, report.workgroup_buffers[0].data.view(np.float16)


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("swizzle", SWIZZLES, ids=lambda s: "vec{}-per{}-max{}".format(*s))
def test_async_copies_land_where_the_shared_encoding_says(swizzle, index):
    shared = _shared(*swizzle)
    tile, smem = _workgroup(_module(str(shared), _copy(index)), n=20)
    elements = tritons_elements(shared, [32, 32])
    expected = np.where(elements[:, 0] < 20, tile[elements[:, 0], elements[:, 1]], 0)
    np.testing.assert_array_equal(smem[1024 * index : 1024 * (index + 1)], expected)


@pytest.mark.parametrize(("origin", "view"), [((0, 16), (32, 16)), ((16, 0), (16, 32)), ((16, 16), (16, 16))])
def test_a_store_through_a_subslice_lands_at_its_origin_in_the_swizzled_allocation(origin, view):
    """`ttg.local_store` of a `view`-shaped tile into `ttg.memdesc_subslice` at `origin` of a
    32 x 32 buffer: the swizzle reaches the origin's bits, so the view's addresses are its
    elements' offsets XORed with the origin's (an added base would put bytes elsewhere); the
    rest of the buffer is the tile's own copy."""
    shared = _shared(8, 2, 4)
    rows, cols = view
    sub = f"!ttg.memdesc<{rows}x{cols}xf16, #shared, #smem, mutable, 32x32>"
    layout = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    body = f"""    %tile = tt.load %p : tensor<32x32x!tt.ptr<f16>, #blocked>
    %buf = ttg.local_alloc %tile : (tensor<32x32xf16, #blocked>) -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    %pv = tt.splat %x : !tt.ptr<f16> -> tensor<{rows}x{cols}x!tt.ptr<f16>, {layout}>
    %small = tt.load %pv : tensor<{rows}x{cols}x!tt.ptr<f16>, {layout}>
    %neg = arith.negf %small : tensor<{rows}x{cols}xf16, {layout}>
    %v = ttg.memdesc_subslice %buf[{origin[0]}, {origin[1]}] : !ttg.memdesc<32x32xf16, #shared, #smem, mutable> -> {sub}
    ttg.local_store %neg, %v : tensor<{rows}x{cols}xf16, {layout}> -> {sub}"""
    tile, smem = _workgroup(_module(str(shared), body), n=32)
    elements = tritons_elements(shared, [32, 32])
    expected = tile[elements[:, 0], elements[:, 1]].copy()
    inside = (
        (elements[:, 0] >= origin[0]) & (elements[:, 0] < origin[0] + rows)
        & (elements[:, 1] >= origin[1]) & (elements[:, 1] < origin[1] + cols)
    )
    expected[inside] = -tile[0, 0]  # every pointer of the view is %x: the negated first element
    np.testing.assert_array_equal(smem, expected)


@pytest.mark.parametrize("chip", ["sm_80", None])
def test_a_transposed_view_reads_the_buffer_transposed(chip):
    """`ttg.memdesc_trans` of a swizzled buffer is the same bytes under the transposed encoding
    (order [0, 1]): loading the view gives the tile transposed (with the chip, as ldmatrix
    where it fits; without, plain shared loads)."""
    shared = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    transposed = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]}>"
    body = f"""    %tile = tt.load %p : tensor<32x32x!tt.ptr<f16>, #blocked>
    %buf = ttg.local_alloc %tile : (tensor<32x32xf16, #blocked>) -> !ttg.memdesc<32x32xf16, #shared, #smem>
    %t = ttg.memdesc_trans %buf {{order = array<i32: 1, 0>}} : !ttg.memdesc<32x32xf16, #shared, #smem> -> !ttg.memdesc<32x32xf16, {transposed}, #smem>
    %v = ttg.local_load %t : !ttg.memdesc<32x32xf16, {transposed}, #smem> -> tensor<32x32xf16, #blocked>
    %q0 = tt.splat %y : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>, #blocked>
    %q = tt.addptr %q0, %off : tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xi32, #blocked>
    tt.store %q, %v : tensor<32x32x!tt.ptr<f16>, #blocked>"""
    tile, out, _ = _run(_module(shared, body), n=32, chip=chip)
    np.testing.assert_array_equal(out, tile.T)


def test_membar_orders_copies_as_tritons_does():
    """A copy waits (a barrier) for the reads other warps made of its buffer, not for copies in
    flight (the two prologue copies into buffers 0 and 1 of one allocation go back to back: a
    barrier between them would order nothing, each lands at its wait); each wait ends with a
    barrier, one after consecutive waits. The run has no race and loads what was copied."""
    body = """    %cst = arith.constant dense<0.000000e+00> : tensor<32x32xf16, #blocked>
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x32x32xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %buf[%i0] : !ttg.memdesc<2x32x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    %b1 = ttg.memdesc_index %buf[%i1] : !ttg.memdesc<2x32x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    %t0 = ttg.async_copy_global_to_local %p, %b0 mask %m other %cst {contiguity = 8 : i32} : tensor<32x32x!tt.ptr<f16>, #blocked> -> <32x32xf16, #shared, #smem, mutable>
    %g0 = ttg.async_commit_group tokens %t0
    %t1 = ttg.async_copy_global_to_local %p, %b1 mask %m other %cst {contiguity = 8 : i32} : tensor<32x32x!tt.ptr<f16>, #blocked> -> <32x32xf16, #shared, #smem, mutable>
    %g1 = ttg.async_commit_group tokens %t1
    %w0 = ttg.async_wait %g0, %g1 {num = 0 : i32}
    %w1 = ttg.async_wait %g0, %g1 {num = 0 : i32}
    %v = ttg.local_load %b0 token %w1 : !ttg.memdesc<32x32xf16, #shared, #smem, mutable> -> tensor<32x32xf16, #blocked>
    %t2 = ttg.async_copy_global_to_local %p, %b0 mask %m other %cst {contiguity = 8 : i32} : tensor<32x32x!tt.ptr<f16>, #blocked> -> <32x32xf16, #shared, #smem, mutable>
    %g2 = ttg.async_commit_group tokens %t2
    %w2 = ttg.async_wait %g2 {num = 0 : i32}
    %q0 = tt.splat %y : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>, #blocked>
    %q = tt.addptr %q0, %off : tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xi32, #blocked>
    tt.store %q, %v : tensor<32x32x!tt.ptr<f16>, #blocked>"""
    text = _module("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>", body)
    lowered = str(lower_ttgir(text, chip="sm_80"))
    events = re.findall(r"nvvm\.cp\.async\.shared\.global|nvvm\.cp\.async\.wait\.group|gpu\.barrier|vector\.load", lowered)
    squeezed = [e for k, e in enumerate(events) if k == 0 or e != events[k - 1]]
    assert squeezed == [
        "nvvm.cp.async.shared.global",  # both prologue copies, no barrier between
        "nvvm.cp.async.wait.group",  # the two waits, one barrier after them
        "gpu.barrier",
        "vector.load",
        "gpu.barrier",  # the next copy into buffer 0 after other warps' reads of it
        "nvvm.cp.async.shared.global",
        "nvvm.cp.async.wait.group",
        "gpu.barrier",
    ], squeezed
    assert events.count("nvvm.cp.async.wait.group") == 3 and events.count("gpu.barrier") == 3
    tile, out, _ = _run(text, n=20)
    np.testing.assert_array_equal(out, np.where(np.arange(32)[:, None] < 20, tile, 0))


_MEMDESC = "!ttg.memdesc<32x32xf16, #shared, #smem, mutable>"
_BUFFERS = "!ttg.memdesc<2x32x32xf16, #shared, #smem, mutable>"


def _if_choosing(then_buffer: str, else_buffer: str) -> str:
    """A kernel that stores the tile (rows `>= n` zero) into buffer 0 of a two-buffer allocation
    and its negation into buffer 1 (or into a second allocation, `%other`), then loads the view an
    `scf.if` on `n > 16` yields (`then_buffer` or `else_buffer`: `%buf[%i0]`, `%buf[%i1]`,
    `%other[%i0]`) and stores it at %y."""
    return f"""    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i16 = arith.constant 16 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf16, #blocked>
    %buf = ttg.local_alloc : () -> {_BUFFERS}
    %other = ttg.local_alloc : () -> {_BUFFERS}
    %tile = tt.load %p, %m, %zero : tensor<32x32x!tt.ptr<f16>, #blocked>
    %neg = arith.negf %tile : tensor<32x32xf16, #blocked>
    %s0 = ttg.memdesc_index %buf[%i0] : {_BUFFERS} -> {_MEMDESC}
    %s1 = ttg.memdesc_index %buf[%i1] : {_BUFFERS} -> {_MEMDESC}
    %o1 = ttg.memdesc_index %other[%i1] : {_BUFFERS} -> {_MEMDESC}
    ttg.local_store %tile, %s0 : tensor<32x32xf16, #blocked> -> {_MEMDESC}
    ttg.local_store %neg, %s1 : tensor<32x32xf16, #blocked> -> {_MEMDESC}
    ttg.local_store %neg, %o1 : tensor<32x32xf16, #blocked> -> {_MEMDESC}
    %cond = arith.cmpi sgt, %n, %i16 : i32
    %b = scf.if %cond -> ({_MEMDESC}) {{
      %b0 = ttg.memdesc_index {then_buffer} : {_BUFFERS} -> {_MEMDESC}
      scf.yield %b0 : {_MEMDESC}
    }} else {{
      %b1 = ttg.memdesc_index {else_buffer} : {_BUFFERS} -> {_MEMDESC}
      scf.yield %b1 : {_MEMDESC}
    }}
    %v = ttg.local_load %b : {_MEMDESC} -> tensor<32x32xf16, #blocked>
    %q0 = tt.splat %y : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>, #blocked>
    %q = tt.addptr %q0, %off : tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xi32, #blocked>
    tt.store %q, %v : tensor<32x32x!tt.ptr<f16>, #blocked>"""


@pytest.mark.parametrize("n", [20, 10])
def test_a_view_yielded_by_scf_if_reads_the_buffer_its_branch_chose(n):
    """`scf.if` yielding buffer 0 or buffer 1 of one allocation: the lowered `if` yields the
    view's i32 start (the buffer and XOR agree), and the load reads the branch's buffer: the
    tile (n = 20 > 16) or its negation (n = 10), rows `>= n` zero, with no race."""
    text = _module(str(_shared(8, 2, 4)), _if_choosing("%buf[%i0]", "%buf[%i1]"))
    tile, out, _ = _run(text, n=n)
    masked = np.where(np.arange(32)[:, None] < n, tile, 0).astype(np.float16)
    np.testing.assert_array_equal(out, masked if n > 16 else -masked)


def test_an_scf_if_yielding_views_of_two_allocations_is_one_line_at_the_op(tmp_path, capsys):
    """Two allocations are two static buffers, which one i32 start cannot choose between: an
    error at the `scf.if`, and nothing is written (as an `scf.while` carrying a view)."""
    from linear_layout.tools.opt import main

    path = tmp_path / "k.ttgir"
    path.write_text(_module(str(_shared(8, 2, 4)), _if_choosing("%buf[%i0]", "%other[%i1]")))
    out = tmp_path / "out.mlir"
    status = main([str(path), "-p", "builtin.module(ll-lower)", "-o", str(out)])
    errors = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and not out.exists() and len(errors) == 1, errors
    line = next(k for k, text in enumerate(path.read_text().splitlines(), 1) if "scf.if" in text)
    expected = rf".*:{line}:\d+: error: an scf\.if yields views of different shared buffers or subslices$"
    assert re.match(expected, errors[0]), errors


_LOOPS = {
    # the back edge yields a view of another allocation than the one the loop entered with
    "scf.for": f"""    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %buf = ttg.local_alloc : () -> {_BUFFERS}
    %other = ttg.local_alloc : () -> {_BUFFERS}
    %s0 = ttg.memdesc_index %buf[%i0] : {_BUFFERS} -> {_MEMDESC}
    %b = scf.for %k = %i0 to %n step %i1 iter_args(%view = %s0) -> ({_MEMDESC}) : i32 {{
      %o0 = ttg.memdesc_index %other[%i0] : {_BUFFERS} -> {_MEMDESC}
      scf.yield %o0 : {_MEMDESC}
    }}
    %v = ttg.local_load %b : {_MEMDESC} -> tensor<32x32xf16, #blocked>""",
    "scf.while": f"""    %i0 = arith.constant 0 : i32
    %buf = ttg.local_alloc : () -> {_BUFFERS}
    %s0 = ttg.memdesc_index %buf[%i0] : {_BUFFERS} -> {_MEMDESC}
    %b:2 = scf.while (%view = %s0, %j = %i0) : ({_MEMDESC}, i32) -> ({_MEMDESC}, i32) {{
      %go = arith.cmpi slt, %j, %n : i32
      scf.condition(%go) %view, %j : {_MEMDESC}, i32
    }} do {{
    ^bb0(%again: {_MEMDESC}, %j1: i32):
      scf.yield %again, %j1 : {_MEMDESC}, i32
    }}
    %v = ttg.local_load %b#0 : {_MEMDESC} -> tensor<32x32xf16, #blocked>""",
}


@pytest.mark.parametrize(("loop", "message"), [
    ("scf.for", "a loop-carried shared-memory view changes its buffer or subslice on the back edge"),
    ("scf.while", "a shared-memory view carried by 'scf.while' is not lowered"),
])
def test_a_view_a_loop_cannot_carry_is_one_line_at_the_loop(tmp_path, capsys, loop, message):
    """An `scf.for` whose back edge yields a view of another allocation (told apart before the
    allocation numbers the buffers), and any view an `scf.while` carries: an error at the loop,
    and nothing is written."""
    from linear_layout.tools.opt import main

    path = tmp_path / "k.ttgir"
    path.write_text(_module(str(_shared(8, 2, 4)), _LOOPS[loop]))
    out = tmp_path / "out.mlir"
    status = main([str(path), "-p", "builtin.module(ll-lower)", "-o", str(out)])
    errors = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and not out.exists() and len(errors) == 1, errors
    line = next(k for k, text in enumerate(path.read_text().splitlines(), 1) if f" = {loop}" in text)
    assert re.match(rf".*:{line}:\d+: error: {re.escape(message)}$", errors[0]), errors


def test_a_reshaped_view_reads_the_same_bytes_row_major():
    """`ttg.memdesc_reshape` of a swizzled 32 x 32 buffer to 1024 elements is the same bytes under
    the row-major renumbering of its layout (offset basis `(r, c)` -> `32 r + c`, the
    `#ttg.shared_linear` Triton's inference asks for): loading it gives the tile flattened."""
    shared = _shared(8, 2, 4)
    bases = _BUILDER.to_linear_layout(to_gluon(shared)._to_ir(_BUILDER), [32, 32]).offset_bases
    flat = f"#ttg.shared_linear<{{offset = {[[32 * row + col] for row, col in bases]}}}, alignment = 16>"  # as Triton prints it
    line = "#ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
    body = f"""    %tile = tt.load %p : tensor<32x32x!tt.ptr<f16>, #blocked>
    %buf = ttg.local_alloc %tile : (tensor<32x32xf16, #blocked>) -> !ttg.memdesc<32x32xf16, #shared, #smem>
    %r1 = ttg.memdesc_reshape %buf : !ttg.memdesc<32x32xf16, #shared, #smem> -> !ttg.memdesc<1024xf16, #flat, #smem>
    %v = ttg.local_load %r1 : !ttg.memdesc<1024xf16, #flat, #smem> -> tensor<1024xf16, {line}>
    %i = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : tensor<1024xi32, {line}>
    %q0 = tt.splat %y : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>, {line}>
    %q = tt.addptr %q0, %i : tensor<1024x!tt.ptr<f16>, {line}>, tensor<1024xi32, {line}>
    tt.store %q, %v : tensor<1024x!tt.ptr<f16>, {line}>"""
    tile, out, _ = _run(f"#flat = {flat}\n" + _module(str(shared), body), n=32)
    np.testing.assert_array_equal(out.reshape(-1), tile.reshape(-1))
