"""linear-layout-report on the TTGIR corpus.

The prediction of every convert_layout row is checked by execution: the row's two layouts are
extracted into a standalone load -> convert_layout -> store kernel, lowered with `ll-lower` and
run for every thread by the SIMT interpreter, which must copy the tensor exactly and measure the
row's shuffles, barriers and store/load wavefronts.
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linear_layout.core.hardware import MAX_REGISTERS_PER_THREAD
from linear_layout.encodings import collect_aliases, parse_encoding
from linear_layout.ir.bridge import format_ll_layout
from linear_layout.simt import interpreter as simt_interpreter
from linear_layout.simt import run_kernel
from linear_layout.tools.report import KernelReport, format_json, format_text, main, report_ttgir
from lowering_cases import DTYPE_OF_BITS, ELEMENT_DTYPES, assert_placed_as_the_encoding_says, kernel_text, random_input
from test_lowering import lower

CORPUS = Path(__file__).parent / "ttgir_corpus"
FILES = sorted(CORPUS.glob("*.ttgir"))
#: The report of every corpus file, built once at collection (frozen values).
REPORTS = {path: report_ttgir(path.read_text(), kernel=path.name) for path in FILES}


def _rows(conversions: bool):
    """Every convert_layout row (or every other row) of every corpus file, none filtered out."""
    return [
        pytest.param(report, row, id=f"{path.stem}:{row.mlir_line}")
        for path, report in REPORTS.items()
        for row in report.rows
        if (row.op == "ttg.convert_layout") == conversions
    ]


CONVERSIONS = _rows(conversions=True)


def _extracted_dtype(row) -> str:
    """The element type of the extracted kernel: the row's own, pointers as i64 (Triton's
    `!tt.ptr<...>` is a 64-bit address), any other type by its width."""
    if row.element.startswith("!tt.ptr<"):
        return "i64"
    return row.element if row.element in ELEMENT_DTYPES else DTYPE_OF_BITS[row.element_bits]


def test_every_conversion_of_the_corpus_has_a_row():
    for path, report in REPORTS.items():
        text = path.read_text()
        rows = [r for r in report.rows if r.op == "ttg.convert_layout"]
        assert len(rows) == text.count("ttg.convert_layout"), path.name
        assert all(r.python.startswith("generate.py:") for r in rows), path.name


def test_every_conversion_of_the_corpus_is_executed():
    """The executed set is every convert_layout of the 60 files: all warp sizes (wave64 gfx942
    included) and element types (pointer tensors included)."""
    total = sum(path.read_text().count("ttg.convert_layout") for path in FILES)
    assert len(CONVERSIONS) == total and total >= 40
    reports_and_rows = [case.values for case in CONVERSIONS]
    assert {report.threads_per_warp for report, _ in reports_and_rows} == {32, 64}
    assert any(row.element.startswith("!tt.ptr<") for _, row in reports_and_rows)


@pytest.mark.parametrize("report, row", CONVERSIONS)
def test_predicted_cost_matches_the_interpreter(report: KernelReport, row):
    assert row.cost is not None, row.note
    src, dst = row.layouts
    dtype = _extracted_dtype(row)
    lanes = report.threads_per_warp
    # lowered for the chip the report costs it for (the module's ttg.target: ldmatrix/stmatrix on sm_80/sm_90)
    pipeline = f"ll-lower{{chip={report.chip}}}" if report.chip else "ll-lower"
    context, module, error = lower(kernel_text(src, dst, dtype, report.num_warps, threads_per_warp=lanes), pipeline)
    assert error is None, error
    x = random_input(list(row.shape), dtype, seed=row.mlir_line)
    y = np.zeros_like(x)
    with context:
        measured = run_kernel(module, [x, y], threads_per_warp=lanes)
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "the extracted conversion lost data"
    assert not measured.races
    cost = row.cost
    assert measured.shuffles == cost.shuffles * report.num_warps
    if cost.strategy in ("shared", "packed", "matrix"):
        waves = collections.Counter()
        for access in measured.shared_accesses:
            waves[access.kind] += access.wavefronts
        assert (waves["store"], waves["load"]) == (cost.store_wavefronts, cost.load_wavefronts)
        assert measured.ideal_wavefronts == cost.ideal
        assert measured.floor_wavefronts == cost.floor
        assert measured.barriers == cost.barriers
    else:
        assert measured.wavefronts == 0 and cost.wavefronts == 0


ACCESSES = _rows(conversions=False)  # every local_load/local_store/local_alloc row


def _local_kernel(distributed, shared, row, report) -> str:
    """ll.load -> ttg.local_alloc -> ttg.local_load -> ll.store of the row's layouts, on elements
    of the row's width (`_extracted_dtype`: the data only moves)."""
    dims = "x".join(map(str, row.shape))
    element = _extracted_dtype(row)
    memref = f"memref<{dims}x{element}>"
    tensor = f"tensor<{dims}x{element}, {format_ll_layout(distributed)}>"
    memdesc = (f'!ttg.memdesc<[{", ".join(map(str, row.shape))}], {element}, {format_ll_layout(shared)}, '
               '#ttg.shared_memory, "mutable">')
    return f"""module attributes {{"ttg.num-warps" = {report.num_warps} : i32, \
"ttg.threads-per-warp" = {report.threads_per_warp} : i32}} {{
  func.func @k(%in: {memref}, %out: {memref}) {{
    %x = "ll.load"(%in) : ({memref}) -> {tensor}
    %m = "ttg.local_alloc"(%x) : ({tensor}) -> {memdesc}
    %y = "ttg.local_load"(%m) : ({memdesc}) -> {tensor}
    "ll.store"(%y, %out) : ({tensor}, {memref}) -> ()
    return
  }}
}}
"""


def _counted_wavefronts(distributed, shared, row, report, origin) -> int:
    """The interpreter's bank count (`simt._wavefronts`) of the row's access at `origin` of the
    allocation, each thread's addresses computed element by element: offset = S^-1(origin + x)
    for the element x of each register (by a table of S), vectors of the predicted width."""
    kind = "load" if row.op == "ttg.local_load" else "store"
    element_bytes = max(1, row.element_bits // 8)
    width = row.cost.load_bytes if kind == "load" else row.cost.store_bytes
    vector = width // element_bytes
    sizes = [s for _, s in shared.out_dims]
    offset_of = {tuple(coords): k for k, coords in enumerate(shared.tabulate().tolist())}
    lanes, warps = report.threads_per_warp, report.num_warps
    free = distributed.get_free_variable_masks()
    registers = [r for r in range(distributed.get_in_dim_size("register")) if not r & free["register"]]
    thread_lanes, thread_warps, addresses = [], [], []
    for warp in range(warps):
        for lane in range(lanes):
            if kind == "store" and (lane & free["lane"] or warp & free["warp"]):
                continue  # broadcast copies do not store
            offsets = []
            for r in registers:
                x = distributed.apply({"register": r, "lane": lane, "warp": warp, "block": 0})
                coords = tuple(o + v for o, v in zip(origin, x.values()))
                assert all(c < n for c, n in zip(coords, sizes))
                offsets.append(offset_of[coords])
            starts = offsets[::vector]
            for k, start in enumerate(starts):  # a vector is aligned and contiguous
                assert start % vector == 0 and offsets[k * vector : (k + 1) * vector] == list(range(start, start + vector))
            thread_lanes.append(lane)
            thread_warps.append(warp)
            addresses.append([start * element_bytes for start in starts])
    wave, _ = simt_interpreter._wavefronts(np.array(thread_warps), np.array(thread_lanes), np.array(addresses),
                                           width, warps, lanes, kind)
    return int(wave.sum())


def _registers_per_thread(distributed, row) -> int:
    return -(-distributed.get_in_dim_size("register") * row.element_bits // 32)


@pytest.mark.parametrize("report, row", ACCESSES)
def test_access_cost_matches_the_interpreter(report: KernelReport, row):
    """Each local access row, extracted into ll.load -> local_alloc -> local_load -> ll.store and
    run by the interpreter, measures the predicted wavefronts of its side. A subslice view (and a
    tensor past the lowering's register budget) cannot be extracted: the interpreter's bank count
    of its addresses, element by element, must give the prediction at every aligned origin."""
    assert row.cost is not None, row.note
    distributed, shared = row.layouts
    kind = "load" if row.op == "ttg.local_load" else "store"
    predicted = row.cost.load_wavefronts if kind == "load" else row.cost.store_wavefronts
    allocation = [s for _, s in shared.out_dims]
    if allocation != list(row.shape) or _registers_per_thread(distributed, row) > MAX_REGISTERS_PER_THREAD:
        steps = [range(0, a, v) for a, v in zip(allocation, row.shape)]
        origins = list(itertools.product(*steps))
        assert {_counted_wavefronts(distributed, shared, row, report, o) for o in origins} == {predicted}
        return
    context, module, error = lower(_local_kernel(distributed, shared, row, report))
    assert error is None, error
    dtype = _extracted_dtype(row)
    x = random_input(list(row.shape), dtype, seed=row.mlir_line)
    y = np.zeros_like(x)
    with context:
        measured = run_kernel(module, [x, y], threads_per_warp=report.threads_per_warp)
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
    assert_placed_as_the_encoding_says(measured, shared, row.shape, x)
    waves = collections.Counter()
    for access in measured.shared_accesses:
        waves[access.kind] += access.wavefronts
    assert waves[kind] == predicted


def test_every_access_of_the_corpus_is_checked():
    """No access row is left out: subslice views (matmul_f32.sm80) are among them."""
    rows = [case.values[1] for case in ACCESSES]
    total = sum(text.count(op) for text in (p.read_text() for p in FILES)
                for op in ("ttg.local_load ", "ttg.local_store ", "ttg.async_copy_global_to_local "))
    assert len([r for r in rows if r.op != "ttg.local_alloc"]) == total
    assert any(list(r.shape) != [s for _, s in r.layouts[1].out_dims] for r in rows)


def test_local_accesses_are_reported_with_bank_conflicts():
    report = report_ttgir((CORPUS / "attention_fwd.sm80.ttgir").read_text())
    accesses = [r for r in report.rows if r.op != "ttg.convert_layout"]
    assert {r.op for r in accesses} == {"ttg.local_alloc", "ttg.local_load"}
    assert all(r.cost is not None and r.cost.floor > 0 and r.cost.wavefronts >= r.cost.floor for r in accesses)
    assert all(r.src.startswith("#") and r.dst.startswith("#") for r in accesses)


def test_text_has_a_row_per_entry_and_totals():
    report = report_ttgir((CORPUS / "attention_fwd.sm90.ttgir").read_text())
    text = format_text(report)
    lines = text.splitlines()
    rejected = [r for r in report.rows if r.cost is not None and r.cost.rejected]
    assert rejected  # the conversion through shared memory rejected the warp shuffles
    # the header, one line per row, the rejections (a heading and one line per conversion), the
    # listed ops (a heading and one line each: the two reductions and the two wgmma dots), the totals
    assert [o.op for o in report.others].count("tt.reduce") == 2
    assert [o.op for o in report.others].count("ttng.warp_group_dot") == 2
    assert len(report.others) == 4
    assert len(lines) == len(report.rows) + 1 + (1 + len(rejected)) + (1 + len(report.others)) + 1
    assert lines[-1].startswith("total: ")
    assert lines[len(report.rows) + 1] == "rejected (line: strategy (why)):"
    assert all(f"  {r.mlir_line}: {'; '.join(r.cost.rejected)}" in lines for r in rejected)
    assert "#mma -> #blocked" in text


@pytest.mark.parametrize("stem", ["softmax.sm80", "matmul_f32.sm80", "matmul_f16.sm80", "attention_fwd.sm80",
                                  "atomics.sm80", "gather.sm80", "misc_ops.sm90", "reductions.gfx942"])
def test_totals_sum_every_costed_row_and_listed_op(stem):
    """The total line covers the listed ops too (a reduction's shuffles, barriers, scratch and
    wavefronts; a dot's ldmatrix wavefronts, in place of the plain loads of the local_load rows it
    replaces), in the text and the JSON alike."""
    report = report_ttgir((CORPUS / f"{stem}.ttgir").read_text())
    totals = report.totals()
    rows = [r.cost for r in report.rows if r.cost is not None]
    replaced = {line for o in report.others for line in o.loads}
    ops = [o.cost for o in report.others if o.cost is not None and not hasattr(o.cost, "mma")]
    dots = [o.cost for o in report.others if o.cost is not None and hasattr(o.cost, "mma")]
    assert totals["shuffles"] == sum(c.shuffles for c in rows + ops)
    assert totals["barriers"] == sum(c.barriers for c in rows + ops)
    assert totals["scratch_bytes"] == max([c.scratch_bytes for c in rows + ops] or [0])
    kept = [r.cost for r in report.rows if r.cost is not None and r.mlir_line not in replaced]
    assert totals["wavefronts"] == sum(c.wavefronts for c in kept + ops + dots)
    assert totals["floor"] == sum(c.floor for c in kept + ops + dots)
    assert totals["other_ops"] == len(report.others)
    # each replaced row is a local_load that a dot loads with ldmatrix
    for line in replaced:
        assert [r.op for r in report.rows if r.mlir_line == line] == ["ttg.local_load"]
    assert all(o.cost.ldmatrix > 0 for o in report.others if o.loads)
    text = format_text(report).splitlines()[-1]
    assert text.startswith("total: ") and f"{totals['wavefronts']} wavefronts (floor {totals['floor']}) per CTA" in text
    assert f"{totals['shuffles']} shuffles per warp" in text and f"{totals['other_ops']} other op(s)" in text
    assert json.loads(format_json(report))["totals"] == totals


def test_totals_of_a_kernel_whose_only_layout_work_is_listed():
    """softmax has no table row, only its two reductions: the totals are theirs, not zero."""
    report = report_ttgir((CORPUS / "softmax.sm80.ttgir").read_text())
    assert not report.rows and {o.op for o in report.others} == {"tt.reduce"}
    totals = report.totals()
    assert totals["shuffles"] == sum(o.cost.shuffles for o in report.others) > 0
    assert totals["wavefronts"] == sum(o.cost.wavefronts for o in report.others) > 0
    assert totals["barriers"] > 0 and totals["scratch_bytes"] > 0


def test_a_dots_ldmatrix_replaces_its_operand_loads_in_the_totals():
    """In the pipelined f32 matmul (sm_80: tf32 A operands through ldmatrix) the dots name the
    local_load rows whose plain loads their ldmatrix replace; those rows' wavefronts leave the sum."""
    report = report_ttgir((CORPUS / "matmul_f32.sm80.ttgir").read_text())
    replaced = [line for o in report.others for line in o.loads]
    assert replaced and len(replaced) == len(set(replaced)) == report.totals()["replaced_loads"]
    assert "the ldmatrix of dots in place of" in format_text(report).splitlines()[-1]


def test_json_round_trips_the_data():
    report = report_ttgir((CORPUS / "matmul_f16.sm80.ttgir").read_text(), kernel="k")
    data = json.loads(format_json(report))
    assert data["totals"] == report.totals()
    assert [r["mlir_line"] for r in data["rows"]] == [r.mlir_line for r in report.rows]


def test_wave64_accesses_are_modelled_with_the_lds_bank_model():
    """gfx942 (64-lane wavefronts): every local_load/local_store/local_alloc has a bank-model cost,
    and none of the kernel's rows says it is not modelled."""
    for name in ("matmul_f32.gfx942.ttgir", "matmul_f16.gfx942.ttgir", "attention_fwd.gfx942.ttgir"):
        report = report_ttgir((CORPUS / name).read_text())
        accesses = [r for r in report.rows if r.op != "ttg.convert_layout"]
        assert report.threads_per_warp == 64 and accesses, name
        assert all(r.cost is not None and not r.note for r in report.rows), name
        assert all(r.cost.floor > 0 and r.cost.wavefronts >= r.cost.floor for r in accesses), name
        # only the MFMA dots, which the lowering does not build, are not modelled, and say so
        dots = [o for o in report.others if o.op == "tt.dot"]
        assert dots and all(o.cost is None and "(MFMA/WMMA) is not lowered" in o.detail for o in dots), name
        assert format_text(report).count("not modelled") == len(dots) + 1  # and the totals count them
        assert format_text(report).splitlines()[-1].endswith(f"; {len(dots)} not modelled")


def test_console_script(capsys):
    assert main([str(CORPUS / "transpose.sm80.ttgir"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["conversions"] == 1


@pytest.mark.parametrize("text, expected", [
    ("module {\n  tt.func @k() {\n    tt.frob\n  }\n}\n", ":3:5: error: unknown operation 'tt.frob'"),
    ("module {\n  tt.func @k() {\n", "unexpected end of input"),
])
def test_malformed_input_is_one_line_exit_one(tmp_path, text, expected):
    path = tmp_path / "bad.ttgir"
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.report", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr, result.stderr


@pytest.mark.parametrize("doc", ["README.md", "docs/triton-kernels.md"])
def test_docs_show_the_current_report_of_the_bundled_kernel(doc):
    root = Path(__file__).resolve().parents[1]
    text = (root / doc).read_text()
    shown = text.split("linear-layout-report examples/matmul.ttgir\n```\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == format_text(report_ttgir((root / "examples" / "matmul.ttgir").read_text()))


def test_report_of_a_module_alone_uses_its_printed_ttgir():
    from linear_layout.tools.report import build_report
    from linear_layout.ttgir import parse_ttgir, print_ttgir

    text = (CORPUS / "attention_fwd.sm90.ttgir").read_text()
    module = parse_ttgir(text)
    with module.context:
        alone = build_report(module)
        written = print_ttgir(module).splitlines()
    assert [r.cost for r in alone.rows] == [r.cost for r in report_ttgir(text).rows]
    assert all(" = ttg." in written[r.mlir_line - 1] or "ttg." in written[r.mlir_line - 1] for r in alone.rows)
    assert all(r.op in written[r.mlir_line - 1] for r in alone.rows)


# ---------------------------------------------------------------- ops listed besides the table

CORPUS = Path(__file__).resolve().parent / "ttgir_corpus"


def _along(encoding_text: str, aliases: dict, shape: tuple[int, ...], axis: int) -> dict[str, int]:
    """Registers, lanes and warps along ``axis``, from the encoding's own LinearLayout."""
    layout = parse_encoding(aliases[encoding_text], aliases).to_linear_layout(shape)
    return {dim: 1 << sum(1 for b in dict(layout.bases).get(dim, ()) if b[axis]) for dim in ("register", "lane", "warp")}


@pytest.mark.parametrize("kernel", ["layernorm.sm80", "attention_fwd.sm80", "attention_fwd.gfx942", "atomics.sm90"])
def test_reductions_and_atomics_are_listed_with_their_predicted_cost(kernel):
    text = (CORPUS / f"{kernel}.ttgir").read_text()
    report = report_ttgir(text, kernel=kernel)
    lines = text.splitlines()
    aliases = collect_aliases(text)
    expected = [n for n, line in enumerate(lines, start=1)
                if re.search(r'"tt\.(reduce|scan|gather|histogram)"\(|tt\.(atomic_(rmw|cas)|histogram|dot) ', line)]
    assert [o.mlir_line for o in report.others] == expected and expected
    for other in report.others:
        assert other.op.split(".", 1)[1] in lines[other.mlir_line - 1]
        if other.op == "tt.reduce":
            axis = int(re.search(r"axis = (\d+)", lines[other.mlir_line - 1]).group(1))
            counts = _along(other.layout, aliases, other.shape, axis)
            rounds = counts["lane"].bit_length() - 1
            assert other.detail.startswith(
                f"axis {axis}: {counts['register']} register(s), {counts['lane']} lane(s), {counts['warp']} warp(s)"
                f" along it; {rounds} shuffle round(s)")
            assert ("shared memory across the warps" in other.detail) == (counts["warp"] > 1)
            assert other.cost is not None and (other.cost.barriers > 0) == (counts["warp"] > 1)
            assert other.detail.endswith(other.cost.summary())
    text_report = format_text(report)
    assert "other layout work (predicted per CTA; shuffles per warp):" in text_report
    assert "not costed" not in text_report
    assert all(o.line() in text_report for o in report.others)
    assert json.loads(format_json(report))["others"][0]["mlir_line"] == expected[0]


def test_a_kernel_with_no_layout_work_says_so(tmp_path, capsys):
    path = CORPUS / "elementwise.sm80.ttgir"
    report = report_ttgir(path.read_text())
    assert report.rows == () and report.others == ()
    assert main([str(path), "--html", str(tmp_path / "page.html")]) == 0
    out = capsys.readouterr().out
    assert "no layout work: this kernel has no convert_layout, shared-memory access, reduction" in out
    assert "no layout work:" in (tmp_path / "page.html").read_text()


KERNEL_CORPUS = Path(__file__).resolve().parent / "kernel_corpus" / "ttgir"


@pytest.mark.parametrize("stem", ["attention.sm80.w4", "attention.sm90.w8", "matmul_f16.sm80.w1", "matmul_tf32.sm80.w4",
                                  "matmul_i8.sm90.w4", "matmul_ieee.sm80.w4"])
def test_dots_are_listed_with_the_instructions_the_lowering_emits(stem):
    """Each tt.dot's row counts what the lowering for the module's chip emits: the mma.sync (and
    the ldmatrix of its operands) per warp, or the fma per thread; its ldmatrix wavefronts are at
    least their floor (bytes / 128)."""
    from linear_layout.tools.kernels import lower_ttgir

    text = (KERNEL_CORPUS / f"{stem}.ttgir").read_text()
    report = report_ttgir(text, kernel=stem)
    dots = [o for o in report.others if o.op == "tt.dot"]
    assert len(dots) == text.count("tt.dot ") and all(o.cost is not None for o in dots)
    lowered = str(lower_ttgir(text, chip="sm_" + stem.split(".")[1][2:]))
    assert sum(o.cost.mma for o in dots) == lowered.count("nvvm.mma.sync")
    assert sum(o.cost.ldmatrix for o in dots) == lowered.count("nvvm.ldmatrix")
    assert sum(o.cost.fma for o in dots) == lowered.count("math.fma")
    for dot in dots:
        assert dot.cost.instructions == dot.cost.mma + dot.cost.ldmatrix + dot.cost.fma > 0
        assert dot.cost.wavefronts >= dot.cost.floor and (dot.cost.floor > 0) == (dot.cost.ldmatrix > 0)
        assert dot.detail == dot.cost.summary() and dot.line() in format_text(report)
        k = {"ieee": None, "tf32": 8, "i8": 32}.get(stem.split(".")[0].split("_")[-1], 16)
        assert dot.cost.path == ("fma" if k is None else f"mma.sync m16n8k{k}") and dot.layout.startswith("#")
    assert json.loads(format_json(report))["others"][0]["cost"] is not None


def test_async_copies_are_rows_costed_as_the_stores_they_make():
    """ttg.async_copy_global_to_local (cp.async writes the buffer): one row each, costed as a
    local_store of the copied tensor's layout into the buffer; every element is written once, so
    the floor is the buffer view's bytes / 128 (execution-checked with the other access rows)."""
    text = (CORPUS / "matmul_f32.sm80.ttgir").read_text()
    report = report_ttgir(text)
    copies = [r for r in report.rows if r.op == "ttg.async_copy_global_to_local"]
    assert len(copies) == text.count("ttg.async_copy_global_to_local ") > 0
    for row in copies:
        assert row.cost is not None and row.cost.load_wavefronts == 0 and row.element == "f32"
        assert row.cost.floor == -(-int(np.prod(row.shape)) * 4 // 128) <= row.cost.store_wavefronts
        assert (row.src, row.dst) in (("#blocked1", "#shared"), ("#blocked", "#shared1"))
