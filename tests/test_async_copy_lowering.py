"""The software-pipelined matmuls Triton emits with `num_stages` >= 2 (issue 19 item 3): multi-
buffered `ttg.local_alloc`s, `ttg.memdesc_index`/`ttg.memdesc_subslice` views and cp.async
copies. Their TTGIR is compiled here by Triton 3.9 (about a second; no GPU) from the corpus's
matmul kernel with a K (48) and N (48) whose rows Triton can copy 16 bytes at a time."""

from __future__ import annotations

import dataclasses
import re
import sys
from functools import cache
from pathlib import Path

import pytest

from linear_layout.core.layout import LinearLayout
from linear_layout.passes.ll_linearize_encodings import PASS as LINEARIZE
from linear_layout.planning.async_copy import plan_async_copy
from linear_layout.planning.layouts import PlannerError
from linear_layout.tools.kernels import lower_ttgir
from linear_layout.tools.opt import main
from linear_layout.ttgir.reader import parse_ttgir

CORPUS = Path(__file__).parent / "kernel_corpus"


@cache
def pipelined_matmul(num_stages: int) -> str:
    """Triton's TTGIR of the corpus's f16 matmul (sm_80, 4 warps) pipelined over `num_stages`."""
    pytest.importorskip("triton")
    import numpy as np

    sys.path.insert(0, str(CORPUS))
    import generate
    from corpus import _matmul, case

    kernel = dataclasses.replace(
        case("matmul_f16"), make_inputs=_matmul(np.float16, n=48, k=48), options={"num_stages": num_stages}
    )
    text, _ = generate.compile_kernel(kernel, generate.CHIPS["sm80"], 4)
    assert "ttg.async_copy_global_to_local" in text and "ttg.memdesc_index" in text
    return text


def _encodings(text: str, op: str) -> set[str]:
    return set(re.findall(rf'"{op}"\(.*?#ttg\.shared_linear<(.*?)>, #ttg\.shared_memory', text))


@pytest.mark.parametrize("num_stages", [2, 3])
def test_multi_buffered_buffers_and_their_views_linearize_to_one_encoding(num_stages):
    """The allocation (`N x 32 x 32`, a rank-2 encoding on its trailing dims), each buffer it
    indexes and each subslice view (laid out on its allocation shape) get the same
    #ttg.shared_linear, as ttg.memdesc_index and ttg.memdesc_subslice require."""
    module = parse_ttgir(pipelined_matmul(num_stages))
    LINEARIZE().apply(module.operation)
    assert module.operation.verify()
    text = module.operation.get_asm(print_generic_op_form=True)
    allocs = _encodings(text, "ttg.local_alloc")
    assert len(allocs) == 1 and "swizzled_shared" not in text
    assert _encodings(text, "ttg.memdesc_index") == allocs == _encodings(text, "ttg.memdesc_subslice")


PIPELINED = CORPUS / "ttgir" / "matmul_f16_s3.sm80.w4.ttgir"


def test_the_pipelined_matmul_copies_16_bytes_per_cp_async_like_triton():
    """Two buffers of A and B (num_stages = 3): each 32 x 32 f16 tile is 1024 elements over 128
    threads, one 16-byte `cp.async.cg` each (Triton's `contiguity = 8`), a mask as its source
    size; one commit per `ttg.async_commit_group`, a wait and its barrier per `ttg.async_wait`."""
    text = PIPELINED.read_text()
    lowered = str(lower_ttgir(text, chip="sm_80"))
    copies = re.findall(r"nvvm\.cp\.async\.shared\.global .*", lowered)
    assert len(copies) == text.count("ttg.async_copy_global_to_local")
    assert all(re.search(r", 16, cache = +cg, %", copy) for copy in copies), copies[:1]
    assert lowered.count("nvvm.cp.async.commit.group") == text.count("ttg.async_commit_group")
    assert lowered.count("nvvm.cp.async.wait.group") == len(re.findall(r"ttg\.async_wait ", text))
    assert "ttg." not in lowered.split("gpu.module", 1)[1]


@pytest.mark.parametrize(("edit", "replacement", "message"), [
    (r"other %cst(_\d+)? ", "other %cst_nonzero ", "an async copy's 'other' must be zero"),
    (r"contiguity = 8", "contiguity = 1", "cp.async moves 4, 8 or 16 bytes"),
    (r"ttg\.memdesc_subslice (%\w+)\[0, 16\]", r"ttg.memdesc_subslice \1[0, 8]", "not a multiple of its shape"),
])
def test_what_is_not_lowered_is_one_line_at_the_op(tmp_path, capsys, edit, replacement, message):
    text = (CORPUS / "ttgir" / "matmul_f16_s2.sm80.w4.ttgir").read_text()
    text, count = re.subn(edit, replacement, text, count=1)
    assert count == 1
    text = text.replace(
        "%c0_i32 = arith.constant 0 : i32",
        "%c0_i32 = arith.constant 0 : i32\n    %cst_nonzero = arith.constant dense<1.000000e+00> : "
        "tensor<32x32xf16, #blocked>",
        1,
    )
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    out = tmp_path / "out.mlir"
    status = main([str(path), "-p", "builtin.module(ll-lower)", "-o", str(out)])
    errors = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and not out.exists() and len(errors) == 1, errors
    assert re.match(r"corpus\.py:\d+:\d+: error: ", errors[0]) and message in errors[0], errors


def _runs_like_tritons_interpreter(module, name: str) -> None:
    """Corpus kernel `name`'s lowered `module` over its whole grid: C bit for bit as Triton's
    interpreter computes it on the same inputs, and no race."""
    import numpy as np

    sys.path.insert(0, str(CORPUS))
    from corpus import case
    from oracle import run_triton_interpreter

    from linear_layout.tools.kernels import run_triton_kernel

    kernel = case(name)
    launch = kernel.make_inputs(np.random.default_rng(5))
    expected = run_triton_interpreter(name, launch.args, launch.grid, kernel.constexprs)
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    report = run_triton_kernel(module, args, launch.grid)
    np.testing.assert_array_equal(args[2], expected[2])
    assert not report.races


def test_local_dealloc_lowers_to_nothing_and_the_kernel_still_runs_like_tritons_interpreter():
    """The num_stages = 1 f16 matmul (its buffers allocated in the K loop) with a
    `ttg.local_dealloc` of each buffer after its ldmatrix load, as Triton's pipeliner writes them:
    the deallocs lower to nothing, and the kernel runs bit for bit, without races."""
    pytest.importorskip("triton")
    text = (CORPUS / "ttgir" / "matmul_f16.sm80.w4.ttgir").read_text()
    text, count = re.subn(
        r"( *)(%\w+) = ttg\.local_load (%\w+) : (!ttg\.memdesc<[^>]*>) -> .*\n",
        lambda m: f"{m.group(0)}{m.group(1)}ttg.local_dealloc {m.group(3)} : {m.group(4)}\n",
        text,
    )
    assert count == 2
    module = lower_ttgir(text, chip="sm_80")
    assert "local_dealloc" not in str(module)
    _runs_like_tritons_interpreter(module, "matmul_f16")


def test_a_buffer_view_yielded_by_scf_if_runs_like_tritons_interpreter():
    """The 3-stage f16 matmul (two buffers of A) with the loop's `ttg.memdesc_index` of A's next
    buffer yielded by an `scf.if` on the loop's own `k < K - BLOCK_K` (both branches index the
    same buffer, so the kernel computes what Triton's does): the lowered `scf.if` yields the
    view's i32 start, and the kernel runs bit for bit like Triton's interpreter, with no race."""
    pytest.importorskip("triton")
    text = (CORPUS / "ttgir" / "matmul_f16_s3.sm80.w4.ttgir").read_text()
    loop = text.index("scf.for")
    condition = re.compile(r"(%\w+) = arith\.cmpi slt, .* : i32").search(text, loop).group(1)
    view = re.compile(r"( *)(%\w+) = (ttg\.memdesc_index %\w+\[%\w+\]) : (\S.*) -> (!ttg\.memdesc<[^>]*>) (loc\(#\w+\))")
    found = view.search(text, loop)
    indent, name, index, source, result, location = found.groups()
    wrapped = (
        f"{indent}{name} = scf.if {condition} -> ({result}) {{\n"
        f"{indent}  {name}_then = {index} : {source} -> {result} {location}\n"
        f"{indent}  scf.yield {name}_then : {result} {location}\n"
        f"{indent}}} else {{\n"
        f"{indent}  {name}_else = {index} : {source} -> {result} {location}\n"
        f"{indent}  scf.yield {name}_else : {result} {location}\n"
        f"{indent}}} {location}"
    )
    text = text[: found.start()] + wrapped + text[found.end() :]
    module = lower_ttgir(text, chip="sm_80")
    lowered = str(module)
    assert re.search(r"scf\.if %\w+ -> \(i32\) \{", lowered)  # the view's start
    assert re.search(r"\} \{ll\.carried_memdescs = array<i64: \d+, 0>\}", lowered)  # its buffer, no XOR
    _runs_like_tritons_interpreter(module, "matmul_f16_s3")


# ---- the copy plan (pure), derived by hand

#: The pointers of a 32 x 32 tile in #blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4],
#: warpsPerCTA = [4, 1], order = [1, 0]}>: 8 consecutive columns per thread.
_POINTERS = LinearLayout.from_bases(
    [("register", [[0, 1], [0, 2], [0, 4]]), ("lane", [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]]),
     ("warp", [[8, 0], [16, 0]]), ("block", [])],
    ["dim0", "dim1"], [32, 32],
)
#: #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}> on 32 x 32 (Triton's bases).
_SWIZZLED = LinearLayout.from_bases(
    [("offset", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 8], [4, 16], [8, 0], [16, 0]]), ("block", [])],
    ["dim0", "dim1"], [32, 32],
)


@pytest.mark.parametrize(("bits", "global_width", "width", "copies"), [
    (16, 8, 8, 1),  # f16, contiguity 8: one 16-byte copy of the thread's 8 columns
    (16, 4, 4, 2),  # contiguity 4: two 8-byte copies
    (16, 2, 2, 4),  # two 4-byte copies each
    (32, 8, 4, 2),  # f32: 16 bytes hold 4 elements, so two copies of 4
    (8, 16, 8, 1),  # i8: the thread's run is 8 elements: one 8-byte copy
])
def test_copies_are_the_planned_vectors_cut_to_the_global_width(bits, global_width, width, copies):
    plan = plan_async_copy(_POINTERS, _SWIZZLED, bits, global_width, fast_dim=1)
    assert (plan.width, plan.copies_per_thread, plan.copy_bytes) == (width, copies, width * bits // 8)


def test_a_copy_under_4_bytes_or_across_the_fast_dim_is_refused():
    with pytest.raises(PlannerError, match=r"cp\.async moves 4, 8 or 16 bytes"):
        plan_async_copy(_POINTERS, _SWIZZLED, 16, 1, fast_dim=1)  # 2 bytes
    # Offsets 1, 2, 4 run along dim1, the pointers contiguous along dim0: single elements.
    with pytest.raises(PlannerError, match=r"cp\.async moves 4, 8 or 16 bytes"):
        plan_async_copy(_POINTERS, _SWIZZLED, 16, 8, fast_dim=0)


@pytest.mark.parametrize("stem", ["matmul_f16_s2.sm80.w4", "matmul_i8_s3.sm80.w8", "matmul_ieee_s4.sm80.w4"])
def test_ptx_of_the_pipeline_has_tritons_copies_and_barriers(stem):
    """Through the stock NVVM pipeline: one `cp.async` per `ttg.async_copy_global_to_local` and
    thread (`.cg` for 16 bytes; the i8 tile with 8 warps holds 4 bytes per thread: `.ca`), as
    Triton's PTX (which has no global loads), and `bar.sync` as often as in Triton's PTX
    (`triton_ptx.json`), on f16, i8 and f32 (FMA path) operands."""
    import json

    from linear_layout.tools.kernels import ttgir_to_ptx

    sys.path.insert(0, str(CORPUS))
    from ptx_stats import ptx_stats

    text = (CORPUS / "ttgir" / f"{stem}.ttgir").read_text()
    ptx = ttgir_to_ptx(text, chip="sm_80")
    figures = json.loads((CORPUS / "triton_ptx.json").read_text())[stem]
    assert len(re.findall(r"\bcp\.async\.c[ag]\.shared\.global\b", ptx)) == text.count("ttg.async_copy_global_to_local")
    stats = ptx_stats(ptx)
    assert stats.barriers == figures["barriers"] and stats.global_loads == tuple(figures["global_loads"]) == ()


@pytest.mark.parametrize(("stem", "views"), [
    ("attention_s2.sm80.w4", ("ttg.async_copy_global_to_local",)),
    ("attention_s3.sm80.w8", ("ttg.async_copy_global_to_local",)),
    ("matmul_bt_ieee.sm90.w4", ("ttg.memdesc_trans",)),
    ("matmul_bt_ieee_s3.sm80.w8", ("ttg.memdesc_trans", "ttg.async_copy_global_to_local")),
])
def test_pipelined_attention_and_transposed_views_have_tritons_copies_barriers_and_matrix_ops(stem, views,
                                                                                            monkeypatch):
    """Flash attention pipelined by Triton (cp.async copies of K and V into two or three buffers
    carried by the loop) and B^T on the FMA path (Triton transposes B's shared-memory view:
    `ttg.memdesc_trans`, one stage and pipelined): the TTGIR holds the views it is here for, and
    our PTX has as many cp.async, mma.sync, ldmatrix and bar.sync as Triton's PTX of the same
    TTGIR, and for the FMA dot as many fma (attention's `s * scale - m` is Triton's one fma
    more, not the dot's); they run like Triton's interpreter in tests/test_kernel_lowering.py."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    from linear_layout.tools.kernels import ttgir_to_ptx

    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated
    path = CORPUS / "ttgir" / f"{stem}.ttgir"
    text = path.read_text()
    assert all(view in text for view in views)
    capability = int(stem.split(".")[1][2:])
    theirs = triton.compile(str(path), target=GPUTarget("cuda", capability, 32)).asm["ptx"]
    ours = ttgir_to_ptx(text, chip=f"sm_{capability}")
    kinds = {"cp.async": r"\bcp\.async\.c[ag]\.", "mma": r"\bmma\.sync\.", "ldmatrix": r"\bldmatrix\.",
             "bar.sync": r"\bbar\.sync\b"}
    if stem.startswith("matmul"):
        kinds["fma"] = r"\bfma\.rn\.f32\b"

    def counts(ptx: str) -> dict[str, int]:
        return {kind: len(re.findall(pattern, ptx)) for kind, pattern in kinds.items()}

    assert counts(ours) == counts(theirs)
    assert (counts(ours)["cp.async"] > 0) == ("ttg.async_copy_global_to_local" in views)


@pytest.mark.parametrize("stem", ["matmul_f16_s3.sm90.w4", "matmul_tf32_s3.sm80.w8", "matmul_epilogue_s3.sm90.w8"])
def test_a_copys_global_address_is_tritons_and_the_pipeline_at_most_tritons_instructions(stem):
    """A `cp.async`'s global source is Triton's address (`triton_kernel.global_pointers`): one
    `mad.wide.s32` step per summand the copies share and the constant as the immediate, not a
    `mul.wide` and an `add.s64` of each copy's own 64-bit offset, so the pipelined kernel takes
    at most Triton's instructions (`triton_ptx.json`; 223, 225 and 218 against 215, 206 and 204
    before)."""
    import json

    from linear_layout.tools.kernels import ttgir_to_ptx

    sys.path.insert(0, str(CORPUS))
    from ptx_stats import ptx_stats

    chip = "sm_" + stem.split(".")[1][2:]
    ptx = ttgir_to_ptx((CORPUS / "ttgir" / f"{stem}.ttgir").read_text(), chip=chip)
    sources = re.findall(r"\bcp\.async\.c[ag]\.shared\.global(?:\.\w+)*\s+\[[^\]]+\],\s*\[(%rd\d+)(?:\+\d+)?\]", ptx)
    assert sources and len(set(sources)) < len(sources)  # the copies share address registers
    assert "mad.wide.s32" in ptx
    assert ptx_stats(ptx).instructions <= json.loads((CORPUS / "triton_ptx.json").read_text())[stem]["instructions"]
