"""`tt.dot` on the FMA path (dot operands of a blocked parent), beyond the corpus runs of
`test_kernel_lowering.py` (matmul_ieee at sm_80/sm_90 x 1/4/8 warps runs bit for bit like Triton's
interpreter): the chains' registers, the barriers of shared buffers allocated inside the K loop,
and the one-line errors of what is not lowered."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from linear_layout.core.layout import LinearLayout
from linear_layout.planning.dot import plan_fma_dot
from linear_layout.planning.layouts import PlannerError
from linear_layout.tools.kernels import lower_ttgir
from linear_layout.tools.opt import main

TTGIR = Path(__file__).parent / "kernel_corpus" / "ttgir"


def _layout(register: list, lane: list, out: tuple[int, int]) -> LinearLayout:
    """A one-warp layout over (dim0, dim1) of sizes `out` with the given register and lane bases."""
    return LinearLayout.from_bases(
        [("register", register), ("lane", lane), ("warp", []), ("block", [])],
        ["dim0", "dim1"],
        list(out),
    )


def test_fma_plan_reads_row_m_of_a_and_column_n_of_b():
    # C is 2 x 2 over 2 lanes (lane bit -> row) and 2 registers (register bit -> column); K = 4.
    # A (2 x 4): lane -> row, registers -> k; B (4 x 2): registers 0..3 -> k, register bit 2 -> column.
    a = _layout([[0, 1], [0, 2]], [[1, 0]], (2, 4))
    b = _layout([[1, 0], [2, 0], [0, 1]], [[0, 0]], (4, 2))
    c = _layout([[0, 1]], [[1, 0]], (2, 2))
    plan = plan_fma_dot(a, b, c)
    assert plan.k == 4
    # C register 0 is (m, 0), register 1 is (m, 1): A registers k = 0..3 for both; B registers k, then 4 + k.
    assert plan.a_registers == ((0, 1, 2, 3), (0, 1, 2, 3))
    assert plan.b_registers == ((0, 1, 2, 3), (4, 5, 6, 7))


def test_fma_plan_refuses_operands_spread_over_lanes_along_k():
    a = _layout([[0, 1]], [[0, 2]], (1, 4))  # the lane holds half of K
    b = _layout([[1, 0], [2, 0]], [[0, 0]], (4, 1))
    c = _layout([], [[0, 0]], (1, 1))
    for _ in range(2):  # the refusal is remembered (every mma.sync dot asks first) and raised again
        with pytest.raises(PlannerError, match="elements of A that the thread does not hold"):
            plan_fma_dot(a, b, c)


def test_buffers_allocated_in_the_k_loop_get_the_back_edge_barrier():
    """The next iteration's store into A's buffer follows this iteration's loads of it in other
    warps: a barrier at the loop head (write after read over the back edge), and one between the
    stores and the loads (read after write)."""
    text = str(lower_ttgir((TTGIR / "matmul_ieee.sm80.w4.ttgir").read_text()))
    body = text.split("scf.for", 1)[1]
    loop = body[: body.index("scf.yield %", body.rindex("math.fma"))]
    assert loop.count("gpu.barrier") == 2
    first_barrier, first_store = loop.index("gpu.barrier"), loop.index("memref.store")
    assert first_barrier < first_store, "the WAR barrier precedes the loop's first shared store"


def test_fma_dot_count_is_one_fma_per_product():
    text = str(lower_ttgir((TTGIR / "matmul_ieee.sm80.w4.ttgir").read_text()))
    # 32 x 32 results over 128 threads = 8 per thread, each a chain of K = 16 steps.
    assert text.count("math.fma") == 8 * 16


@pytest.mark.parametrize(("edit", "message"), [
    ("inputPrecision = tf32 :", "only inputPrecision = ieee is lowered"),
])
def test_what_the_fma_path_does_not_lower_is_one_line(tmp_path, capsys, edit, message):
    text = (TTGIR / "matmul_ieee.sm80.w4.ttgir").read_text()
    text = re.sub(r"(tt\.dot %[\w]+, %[\w]+, %[\w]+) :", rf"\1, {edit}", text, count=1)
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    out = tmp_path / "out.mlir"
    status = main([str(path), "-p", "builtin.module(ll-lower)", "-o", str(out)])
    errors = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and not out.exists() and len(errors) == 1
    assert "error: 'tt.dot' on the FMA path" in errors[0] and message in errors[0]


@pytest.mark.parametrize(("stem", "per_warp"), [("matmul_f16.sm80.w1", 16), ("matmul_f16.sm80.w4", 4)])
def test_mma_dot_is_one_mma_sync_per_warp_tile_and_k_step(stem, per_warp):
    # 32 x 32 x 32 in m16n8k16 steps: 2 x 4 tiles x 2 K steps = 16 instructions, over 1 or 2 x 2 warps.
    text = str(lower_ttgir((TTGIR / f"{stem}.ttgir").read_text()))
    assert text.count("nvvm.mma.sync") == per_warp
    assert "#nvvm.shape<m = 16, n = 8, k = 16>" in text and "math.fma" not in text


def test_mma_dot_ptx_has_tritons_mma_instruction():
    from linear_layout.tools.kernels import ttgir_to_ptx

    ptx = ttgir_to_ptx((TTGIR / "matmul_f16.sm80.w4.ttgir").read_text(), chip="sm_80")
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 4


def test_a_larger_tile_with_several_mma_tiles_per_warp_runs_like_tritons_interpreter():
    """64 x 64 x 32 with 4 warps: each warp holds 2 x 4 tiles of 16 x 8 over 2 K steps (16 mma.sync),
    compiled by Triton now (the corpus keeps 32 x 32 tiles), one block, bit for bit."""
    import dataclasses
    import sys

    import numpy as np

    pytest.importorskip("triton")
    sys.path.insert(0, str(TTGIR.parent))
    from corpus import case
    from generate import compile_kernel
    from oracle import run_triton_interpreter
    from triton.backends.compiler import GPUTarget

    from linear_layout.tools.kernels import run_triton_kernel

    kernel = dataclasses.replace(case("matmul_f16"), constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "PRECISION": None})
    text, _ = compile_kernel(kernel, GPUTarget("cuda", 80, 32), 4)
    module = lower_ttgir(text)
    assert str(module).count("nvvm.mma.sync") == 16
    launch = kernel.make_inputs(np.random.default_rng(5))
    expected = run_triton_interpreter("matmul_f16", launch.args, (1, 1), kernel.constexprs)
    args = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in launch.args]
    report = run_triton_kernel(module, args, (1, 1))
    np.testing.assert_array_equal(args[2], expected[2])
    assert not report.races


LDMATRIX_FILES = sorted(p for p in TTGIR.glob("matmul_*.ttgir") if p.stem.split(".")[0] in ("matmul_f16", "matmul_f16acc"))


@pytest.mark.parametrize("path", LDMATRIX_FILES, ids=[p.stem for p in LDMATRIX_FILES])
def test_dot_operands_load_with_ldmatrix_for_a_chip_and_run_like_tritons_interpreter(path):
    """With the chip known (sm_80/sm_90), the f16 dot operands' ttg.local_load is ldmatrix, as in
    Triton's PTX (x4 for A, x4.trans or x2.trans for B); the kernel still runs bit for bit."""
    chip = "sm_" + path.stem.split(".")[1][2:]
    module = lower_ttgir(path.read_text(), chip=chip)
    text = str(module)
    assert text.count("nvvm.ldmatrix") >= 2 and "#nvvm.mma_layout<col>" in text  # B is transposed
    _assert_runs_like_tritons_interpreter(path.stem.split(".")[0], module, seed=3)


def _assert_runs_like_tritons_interpreter(name: str, module, seed: int) -> None:
    """The lowered corpus matmul `name` over its whole grid: C bit for bit as Triton's
    interpreter leaves it on the same inputs, and no race."""
    import sys

    import numpy as np

    pytest.importorskip("triton")
    sys.path.insert(0, str(TTGIR.parent))
    from corpus import case
    from oracle import run_triton_interpreter

    from linear_layout.simt.interpreter import simt_arrays
    from linear_layout.tools.kernels import run_triton_kernel

    kernel = case(name)
    launch = kernel.make_inputs(np.random.default_rng(seed))
    expected = run_triton_interpreter(name, launch.args, launch.grid, kernel.constexprs)
    args = simt_arrays(launch.args)  # bf16 operands as the float32 of their values
    report = run_triton_kernel(module, args, launch.grid)
    np.testing.assert_array_equal(args[2], expected[2])
    assert not report.races


def _to_offset(registers: list[int], lanes: list[int], size: int = 256) -> LinearLayout:
    """(register, lane, warp, block) -> offset with these register and lane offsets, one warp."""
    return LinearLayout.from_bases(
        [("register", [[o] for o in registers]), ("lane", [[o] for o in lanes]), ("warp", []), ("block", [])],
        ["offset"],
        [size],
        require_surjective=False,
    )


def test_operand_ldmatrix_plan_reads_the_ptx_fragment_off_the_offsets():
    from linear_layout.planning.dot import plan_operand_ldmatrix

    # Register 0 and lanes 0, 1 step through a 16-byte row (offsets 1, 2, 4); lanes 2..4 pick rows
    # (8, 16, 32); registers 1, 2 pick the four matrices (64, 128): one ldmatrix.x4, not transposed.
    side = plan_operand_ldmatrix(_to_offset([1, 64, 128], [2, 4, 8, 16, 32]), 1)
    assert side is not None and (side.trans, side.num, len(side.instructions)) == (False, 4, 1)
    assert side.instructions[0].words == ((0, 1), (2, 3), (4, 5), (6, 7))
    # Lane 8 i + r supplies row r of matrix i: rows from lanes 2..4, matrices from registers 1, 2.
    assert [basis[0] for basis in dict(side.address.bases)["lane"]] == [8, 16, 32, 64, 128]
    # Rows along the other dimension: lanes 2..4 step through the row, register 0 and lanes 0, 1 pick rows.
    trans = plan_operand_ldmatrix(_to_offset([8, 64, 128], [16, 32, 1, 2, 4]), 1)
    assert trans is not None and trans.trans and trans.num == 4
    # A lane that moves by 3 elements fits neither form.
    assert plan_operand_ldmatrix(_to_offset([1, 64, 128], [3, 4, 8, 16, 32]), 1) is None


def test_operand_ldmatrix_of_32_and_8_bit_elements_reads_words_of_one_and_four_registers():
    """tf32 and i8 A operands (Triton loads them with ``ldmatrix .b16``, never ``.trans``): a lane
    gets word q = lane % 4 of row lane / 4, a word being one f32 element or four i8 ones."""
    from linear_layout.planning.dot import plan_operand_ldmatrix

    # f32: lanes 0, 1 step the four words of a 16-byte row (1, 2), lanes 2..4 the rows (4, 8, 16),
    # registers 0, 1 the matrices (32, 64): one x4 whose words are single registers.
    side = plan_operand_ldmatrix(_to_offset([32, 64], [1, 2, 4, 8, 16], 128), 1, 32)
    assert side is not None and (side.trans, side.num, len(side.instructions)) == (False, 4, 1)
    assert side.instructions[0].words == ((0,), (1,), (2,), (3,))
    assert [basis[0] for basis in dict(side.address.bases)["lane"]] == [4, 8, 16, 32, 64]
    # i8: registers 0, 1 step a word's four bytes (1, 2), lanes 0, 1 the words (4, 8), lanes 2..4
    # the 16-byte rows (16, 32, 64), registers 2, 3 the matrices (128, 256).
    side = plan_operand_ldmatrix(_to_offset([1, 2, 128, 256], [4, 8, 16, 32, 64], 512), 1, 8)
    assert side is not None and (side.trans, side.num) == (False, 4)
    assert side.instructions[0].words == ((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15))
    # The transposed form (lanes 2..4 along the row) is 16-bit only, as in Triton: a 32-bit B-like
    # operand is left to plain shared loads.
    assert plan_operand_ldmatrix(_to_offset([8, 64, 128], [16, 32, 1, 2, 4]), 1, 16) is not None
    assert plan_operand_ldmatrix(_to_offset([8, 64, 128], [16, 32, 1, 2, 4]), 1, 32) is None


NARROW_FILES = sorted(p for p in TTGIR.glob("matmul_*.ttgir") if p.stem.split(".")[0] in ("matmul_tf32", "matmul_i8"))


@pytest.mark.parametrize("path", NARROW_FILES[::2], ids=[p.stem for p in NARROW_FILES[::2]])
def test_tf32_and_i8_a_operands_load_with_ldmatrix_and_run_like_tritons_interpreter(path):
    """Triton's PTX loads the A operand of tf32 and i8 dots with ``ldmatrix.x4`` (.b16, not
    transposed) and B with plain ``ld.shared``: so does the lowering, bit for bit."""
    chip = "sm_" + path.stem.split(".")[1][2:]
    module = lower_ttgir(path.read_text(), chip=chip)
    loads = re.findall(r"nvvm\.ldmatrix[^\n]*", str(module))
    assert loads and all("#nvvm.mma_layout<row>" in line for line in loads)  # never .trans
    _assert_runs_like_tritons_interpreter(path.stem.split(".")[0], module, seed=4)


def test_tf32_dot_truncates_its_operands_as_the_hardware_and_stays_within_the_bound_of_tritons_interpreter(
    monkeypatch,
):
    """Triton 3.9 passes the f32 bits of a tf32 dot straight to ``mma.sync .tf32`` (its PTX has no
    ``cvt.rna.tf32.f32``), and the instruction reads only tf32's 10 mantissa bits: so does the
    lowering, and on data that tf32 does not represent the result is the product of the
    truncated operands (summed exactly, rounded to f32 once per instruction). Triton's interpreter
    multiplies in full f32; the two stay within the documented bound
    ``|ours - Triton's| <= (2^-9 + K 2^-23) sum_k |a_ik| |b_kj|``."""
    import sys

    import numpy as np

    triton = pytest.importorskip("triton")
    sys.path.insert(0, str(TTGIR.parent))
    from corpus import case
    from oracle import run_triton_interpreter
    from triton.backends.compiler import GPUTarget

    from linear_layout.tools.kernels import run_triton_kernel, ttgir_to_ptx

    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated
    path = TTGIR / "matmul_tf32.sm80.w4.ttgir"
    theirs = triton.compile(str(path), target=GPUTarget("cuda", 80, 32)).asm["ptx"]
    ours = ttgir_to_ptx(path.read_text(), chip="sm_80")
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in theirs and "cvt.rna" not in theirs
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ours and "cvt.rna" not in ours
    kernel = case("matmul_tf32")
    m, n, k = 37, 45, 40
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    args = [a, b, np.zeros((m, n), np.float32), m, n, k]
    grid = (2, 2)
    expected = run_triton_interpreter("matmul_tf32", tuple(args), grid, kernel.constexprs)[2]
    report = run_triton_kernel(lower_ttgir(path.read_text(), chip="sm_80"), args, grid)
    assert not report.races
    truncated = [(x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64) for x in (a, b)]
    magnitude = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.all(np.abs(args[2] - truncated[0] @ truncated[1]) <= k * 2.0**-24 * magnitude)
    assert np.all(np.abs(args[2] - expected) <= (2.0**-9 + k * 2.0**-23) * magnitude)
    assert np.any(args[2] != expected)  # tf32, not f32: the truncation shows on this data


@pytest.mark.parametrize("stem", ["attention.sm80.w4", "attention.sm90.w4"])
def test_attention_compiles_with_the_stock_pipeline_to_tritons_matrix_instructions(stem, monkeypatch):
    """Flash attention through `ll-lower{chip}` and the stock NVVM pipeline: as many mma.sync and
    ldmatrix (of each form) as Triton's own PTX of the same TTGIR (P V is an mma.sync whose A
    operand, P, comes from registers: no ldmatrix for it, in either). (With 8 warps at sm_90,
    Triton's epilogue conversion of the accumulator also takes stmatrix and one ldmatrix.x2,
    where ours stores and loads with st/ld.shared: the conversion planner's choice, not the dot's.)"""
    ours, theirs = _ours_and_tritons_ptx(stem, monkeypatch)
    assert _matrix_ops(ours) == _matrix_ops(theirs) and sum(_matrix_ops(ours).values()) > 0


def _ours_and_tritons_ptx(stem: str, monkeypatch) -> tuple[str, str]:
    """The PTX of corpus file `stem` through `ll-lower{chip}` and the stock NVVM pipeline, and
    Triton's own PTX of the same TTGIR."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    from linear_layout.tools.kernels import ttgir_to_ptx

    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated
    path = TTGIR / f"{stem}.ttgir"
    capability = int(stem.split(".")[1][2:])
    theirs = triton.compile(str(path), target=GPUTarget("cuda", capability, 32)).asm["ptx"]
    return ttgir_to_ptx(path.read_text(), chip=f"sm_{capability}"), theirs


def _matrix_ops(ptx: str, copies: bool = False) -> Counter:
    """How often each mma.sync and ldmatrix form occurs in `ptx` (and each cp.async form)."""
    forms = r"mma\.sync\.aligned\.\S+|ldmatrix\.\S+" + (r"|cp\.async\.c[ag]\.shared\.global" if copies else "")
    return Counter(re.findall(rf"\b({forms})\s", ptx))


BF16_FILES = sorted(TTGIR.glob("matmul_bf16*.ttgir"))


@pytest.mark.parametrize("path", BF16_FILES[::2], ids=[p.stem for p in BF16_FILES[::2]])  # 4 warps: each kind
def test_bf16_dots_take_the_bf16_mma_and_ldmatrix_for_a_chip_and_run_like_tritons_interpreter(path):
    """bf16 operands into f32 (plain, and pipelined over 2 and 3 stages): with the chip known every
    mma.sync is m16n8k16 with bf16 multiplicands, the operands load with ldmatrix (A x4, B x4
    .trans: 16-bit elements, as f16), and the kernel runs over its whole grid bit for bit like
    Triton's interpreter (whose bf16 dot the oracle corrects: `oracle.exact_bf16_dot`), no race."""
    chip = "sm_" + path.stem.split(".")[1][2:]
    module = lower_ttgir(path.read_text(), chip=chip)
    text = str(module)
    mmas = re.findall(r"nvvm\.mma\.sync [^\n]*", text)
    assert mmas and all(
        "multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>" in line
        and "shape = #nvvm.shape<m = 16, n = 8, k = 16>" in line
        for line in mmas
    )
    loads = re.findall(r"nvvm\.ldmatrix [^\n]*", text)
    assert {"row", "col"} == {re.search(r"mma_layout<(\w+)>", line).group(1) for line in loads}
    _assert_runs_like_tritons_interpreter(path.stem.split(".")[0], module, seed=6)


@pytest.mark.parametrize("stem", ["matmul_bf16.sm80.w4", "matmul_bf16_s3.sm90.w8"])
def test_bf16_matmul_ptx_has_tritons_matrix_instructions_and_copies(stem, monkeypatch):
    """Through the stock NVVM pipeline, a bf16 matmul has as many `mma.sync ... .bf16.bf16` and
    ldmatrix (of each form) and as many `cp.async` as Triton's own PTX of the same TTGIR."""
    ours, theirs = _ours_and_tritons_ptx(stem, monkeypatch)
    assert _matrix_ops(ours, copies=True) == _matrix_ops(theirs, copies=True)
    assert _matrix_ops(ours)["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"] > 0


#: The issue 19 item 5 cases added last to the corpus (4 stages of bf16 and attention; the pipelined
#: f32 matmuls with a masked K tail): their 4-warp files, sm_80 and sm_90.
ITEM_5_ADDED = sorted(
    path for path in TTGIR.glob("*.w4.ttgir")
    if path.stem.split(".")[0] in ("matmul_bf16_s4", "attention_s4") or "_k32_" in path.stem
)


@pytest.mark.parametrize("path", ITEM_5_ADDED, ids=[p.stem for p in ITEM_5_ADDED])
def test_item_5_additions_compile_to_tritons_copies_matrix_ops_and_barriers_and_run_with_ldmatrix(path, monkeypatch):
    """Through `ll-lower{chip}` and the stock NVVM pipeline: as many cp.async, mma.sync and ldmatrix
    of each form, bar.sync and (the FMA path's) fma.rn.f32 as Triton's own PTX of the same TTGIR,
    at most its instructions and shared bytes; lowered with the chip (ldmatrix operands), the
    kernel runs over its whole grid bit for bit like Triton's interpreter, with no race."""
    import sys

    import numpy as np

    sys.path.insert(0, str(TTGIR.parent))
    from corpus import case
    from oracle import run_triton_interpreter
    from ptx_stats import ptx_stats

    from linear_layout.simt.interpreter import simt_arrays
    from linear_layout.tools.kernels import run_triton_kernel

    ours, theirs = _ours_and_tritons_ptx(path.stem, monkeypatch)
    assert _matrix_ops(ours, copies=True) == _matrix_ops(theirs, copies=True)
    assert any(form.startswith("cp.async") for form in _matrix_ops(ours, copies=True))
    fma = r"\bfma\.rn\.f32\b" if "ieee" in path.stem else r"\bmma\.sync\b"  # attention's one fused fma aside
    assert len(re.findall(fma, ours)) == len(re.findall(fma, theirs)) > 0
    mine, tritons = ptx_stats(ours), ptx_stats(theirs)
    assert mine.barriers == tritons.barriers and mine.instructions <= tritons.instructions
    name = path.stem.split(".")[0]
    kernel = case(name)
    launch = kernel.make_inputs(np.random.default_rng(5))
    expected = run_triton_interpreter(name, launch.args, launch.grid, kernel.constexprs)
    args = simt_arrays(launch.args)
    report = run_triton_kernel(lower_ttgir(path.read_text(), chip="sm_" + path.stem.split(".")[1][2:]), args, launch.grid)
    for index, array in zip(expected, simt_arrays(tuple(expected.values()))):
        np.testing.assert_array_equal(args[index], array)
    assert not report.races
