"""The fuzzer: its classification, its crash/hang isolation, a bounded run over the console scripts
(linear-layout-opt, -draw, -report) and the API (fixed seed), and the replay of every reproducer in
tests/fuzz_corpus/ (each was a crash, hang, traceback, internal error or wrong exit once; now each must be
a one-line user error or success)."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

from linear_layout.encodings import parse_encoding
from linear_layout.tools import fuzz, fuzz_ttgir, opt

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fuzz_corpus"
SEEDS = fuzz.load_seeds([ROOT / "tests" / "lit", ROOT / "examples"])
TTGIR_SEEDS = fuzz.load_seeds([ROOT / "tests" / "ttgir_corpus"], "*.ttgir")


def test_classification():
    driver = fuzz.Case("driver", ("-p", "ll-verify"), "x")
    api = fuzz.Case("api", expression="1")
    assert fuzz.classify(driver, fuzz.Outcome(0, "")) == ("ok", "")
    assert fuzz.classify(driver, fuzz.Outcome(1, "<stdin>:1:2: error: bad\n"))[0] == "user-error"
    assert fuzz.classify(driver, fuzz.Outcome(1, "a: error: one\nb:3:4: error: two\n"))[0] == "user-error"
    assert fuzz.classify(driver, fuzz.Outcome(0, "f:1:1: warning: w\n"))[0] == "ok"
    assert fuzz.classify(driver, fuzz.Outcome(1, ""))[0] == "wrong-exit"
    assert fuzz.classify(driver, fuzz.Outcome(2, "usage\n"))[0] == "wrong-exit"
    assert fuzz.classify(driver, fuzz.Outcome(0, "'sm_99' is not a recognized processor\n"))[0] == "wrong-exit"
    assert fuzz.classify(driver, fuzz.Outcome(1, "x: error: y\nLLVM ERROR: z\n"))[0] == "wrong-exit"
    assert fuzz.classify(driver, fuzz.Outcome(1, "linear-layout-opt: internal error: KeyError"))[0] == "internal-error"
    assert fuzz.classify(driver, fuzz.Outcome(1, "Traceback (most recent call last):\n"))[0] == "traceback"
    assert fuzz.classify(api, fuzz.Outcome(None, "", None)) == ("ok", "")
    assert fuzz.classify(api, fuzz.Outcome(None, "", "ValueError", "m"))[0] == "user-error"
    assert fuzz.classify(api, fuzz.Outcome(None, "", "AttributeError", "m"))[0] == "internal-error"
    assert fuzz.classify(api, fuzz.Outcome(None, "", "RecursionError", "m"))[0] == "internal-error"
    # A TypeError/ValueError Python raised from inside the API (not the API's own check) is a bug.
    for raw in ("unhashable type: 'list'", "'<=' not supported between instances of 'int' and 'list'",
                "sequence item 1: expected str instance, NoneType found", "iteration over a 0-d array",
                "Exceeds the limit (4300 digits) for integer string conversion"):
        assert fuzz.classify(api, fuzz.Outcome(None, "", "TypeError", raw, True))[0] == "internal-error", raw
    named = "LinearLayout.get_basis: argument 'pos' must be an integer, got list [1]"
    assert fuzz.classify(api, fuzz.Outcome(None, "", "TypeError", named, True)) == ("user-error", named)


def test_generation_is_reproducible_and_covers_the_targets():
    first = list(fuzz.generate_cases(7, 300, SEEDS, ttgir_seeds=TTGIR_SEEDS))
    assert first == list(fuzz.generate_cases(7, 300, SEEDS, ttgir_seeds=TTGIR_SEEDS))
    kinds = {case.kind for case in first}
    assert kinds == {"driver", "api", "draw", "report"}
    draw = " ".join(" ".join(case.argv) for case in first if case.kind == "draw")
    for needed in ("--src", "--shape=", "--ttgir {input}", "--access", "#ttg."):
        assert needed in draw, needed
    assert any("--json" in case.argv for case in first if case.kind == "report")
    argv = " ".join(" ".join(case.argv) for case in first)
    for needed in ("ll-lower", "ll-verify", "ll-to-simt", "ll-lower-apply", "ll-linearize-encodings",
                   "ll-explain-conversions", "func.func(", "--split-input-file", "--emit-ptx"):
        assert needed in argv, needed
    expressions = " ".join(case.expression for case in first)
    for needed in ("LinearLayout.", "parse_encoding(", "to_linear_layout(", "plan_conversion("):
        assert needed in expressions, needed


def test_api_cases_cover_the_public_api():
    """The API mutators reach every public method of LinearLayout, apply's inputs outside their
    dimension, the module functions and every encoding's constructor and methods."""
    api = [case.expression for case in fuzz.generate_cases(11, 4000, SEEDS, ttgir_seeds=TTGIR_SEEDS, api_share=1.0)]
    text = " ".join(api)
    for method in fuzz._LAYOUT_METHODS:
        assert f".{method}(" in text, method
    for function in fuzz._API_FUNCTIONS:
        assert f"{function}(" in text, function
    for needed in (".apply({", "2**40", "np.array([-1, 2])", "None: ", ".format_hardware_view(", ".bases("):
        assert needed in text, needed
    namespace = fuzz._api_namespace()
    assert {"LinearLayout", "plan_conversion", "bank_conflicts", "BlockedLayout", "parse_encoding"} <= set(namespace)


def test_crash_and_hang_are_isolated_and_the_batch_goes_on():
    cases = [fuzz.Case("api", expression="__import__('os').abort()"),
             fuzz.Case("api", expression="LinearLayout.identity_1d(4, 'i', 'o')"),
             fuzz.Case("api", expression="__import__('time').sleep(30)"),
             fuzz.Case("api", expression="LinearLayout.identity_1d(3, 'i', 'o')"),
             fuzz.Case("api", expression="{}['x']")]
    report = fuzz.run_cases(cases, timeout=3, batch_size=5)
    assert report.inputs == 5
    assert [finding.kind for finding in report.findings] == ["crash", "hang", "internal-error"]
    assert report.outcomes == {"crash": 1, "ok": 1, "hang": 1, "user-error": 1, "internal-error": 1}


def test_reproducers_round_trip(tmp_path):
    driver = fuzz.Case("driver", ("-p", "builtin.module(ll-lower)", "--split-input-file"), "module {\n}\n")
    api = fuzz.Case("api", expression="LinearLayout.empty().compose(None)")
    draw = fuzz.Case("draw", ("--ttgir", "{input}", "--line", "3"), "module {\n}\n")
    report = fuzz.Case("report", ("-", "--json"), "#a = 1\nmodule {\n}\n")
    for number, case in enumerate((driver, api, draw, report)):
        path = fuzz.write_reproducer(tmp_path, number, fuzz.Finding("crash", case, "detail\nmore"))
        assert fuzz.read_reproducer(path) == case


def test_console_script_cases_run_like_the_shell():
    """{input} is a file holding the case's stdin, {tmp} a fresh folder; an exception escaping a script's
    main is a traceback finding, SystemExit its exit code."""
    kernel = (ROOT / "tests" / "ttgir_corpus" / "layernorm.sm80.ttgir").read_text()
    line = next(n for n, text in enumerate(kernel.splitlines(), 1) if "ttg.convert_layout" in text)
    cases = [fuzz.Case("draw", ("--ttgir", "{input}", "--line", str(line), "-o", "{tmp}/p.txt"), kernel),
             fuzz.Case("report", ("-", "--html", "{tmp}/r.html"), kernel),
             fuzz.Case("report", ("-",), "garbage"),
             fuzz.Case("draw", ("--shape", "x")),
             fuzz.Case("report", ("--no-such-flag",))]
    report = fuzz.run_cases(cases, timeout=60, batch_size=5)
    assert report.outcomes == {"ok": 2, "user-error": 3}, report


def test_bounded_run_finds_nothing():
    """A few hundred inputs with a fixed seed: no crash, hang, traceback, internal error or wrong exit."""
    cases = list(fuzz.generate_cases(2026, 300, SEEDS, ttgir_seeds=TTGIR_SEEDS))
    report = fuzz.run_cases(cases, timeout=20, batch_size=50)
    assert report.inputs == 300
    details = [f"{finding.kind}: {finding.case.to_json()[:300]} -> {finding.detail[:200]}"
               for finding in report.findings]
    assert not details, "\n".join(details)
    assert report.outcomes.get("ok", 0) > 10  # the mutations still leave valid inputs that run


CORPUS_FILES = sorted(
    p for p in CORPUS.glob("*") if p.suffix in (*fuzz.REPRODUCER_SUFFIXES.values(), ".api")
) if CORPUS.exists() else []


def test_corpus_exists():
    assert len(CORPUS_FILES) >= 10


def test_corpus_reproducers_are_now_handled():
    """Every reproducer runs in one batch (a crash still only ends its own case); none is a finding."""
    cases = [fuzz.read_reproducer(path) for path in CORPUS_FILES]
    report = fuzz.run_cases(cases, timeout=60, batch_size=len(cases))
    assert report.inputs == len(cases)
    names = {case: path.name for case, path in zip(cases, CORPUS_FILES)}
    details = [f"{names[finding.case]}: {finding.kind}: {finding.detail[:300]}" for finding in report.findings]
    assert not details, "\n".join(details)


# ============================================================================ mutated Triton kernels (fuzz_ttgir)

KERNELS = fuzz_ttgir.load_kernels()
KERNEL_TTGIR = ROOT / "tests" / "kernel_corpus" / "ttgir"


def _blocked_fields(alias_line: str) -> dict[str, list[int]]:
    return {key: [int(v) for v in values.split(", ")] for key, values in re.findall(r"(\w+) = \[([\d, ]+)\]", alias_line)}


def test_kernel_cases_cover_every_kind_mutator_and_corpus():
    cases = list(fuzz.generate_cases(5, 400, SEEDS, api_share=0, tools_share=0, kernels=KERNELS, kernel_share=1.0))
    assert cases == list(fuzz.generate_cases(5, 400, SEEDS, api_share=0, tools_share=0, kernels=KERNELS,
                                             kernel_share=1.0))
    assert {case.kind for case in cases} == set(fuzz_ttgir.KERNEL_KINDS)
    argv = [" ".join(case.argv) for case in cases]
    for needed in ("builtin.module(ll-lower)", "--emit-ptx --ptx-chip=sm_80", "--ptx-chip=sm_90",
                   "-o {tmp}/out.ttgir", "--json"):
        assert any(needed in text for text in argv), needed
    originals = {kernel.text for kernel in KERNELS}
    assert sum(case.stdin not in originals for case in cases) > 300  # most inputs are mutated
    assert {kernel.stem.split(".")[0] for kernel in KERNELS} >= {"softmax", "matmul_f16", "attention_fwd"}


def test_each_kernel_mutator_edits_what_it_says():
    text = (KERNEL_TTGIR / "row_sum.sm80.w4.ttgir").read_text()
    rng = random.Random(3)
    for mutator in set(fuzz_ttgir.TTGIR_MUTATORS):
        assert any(mutator(rng, text) != text for _ in range(20)), mutator.__name__
    attributes = [fuzz_ttgir._mutate_attribute(rng, text) for _ in range(50)]
    starts = text.count("start = 0 : i32")
    assert any(out.count("start = 0 : i32") < starts for out in attributes)  # a value replaced or dropped
    assert any("nope = 1 : i32" in out for out in attributes)  # an unknown attribute added
    loc_edits = [fuzz_ttgir._mutate_loc(rng, text) for _ in range(50)]
    assert any("#loc999999" in out for out in loc_edits) and any(out.count("\n") < text.count("\n") for out in loc_edits)


def test_redrawn_layouts_are_valid_layouts_of_the_kernel():
    """A redrawn alias keeps its rank and uses exactly the kernel's lanes and warps."""
    for stem in ("row_sum.sm80.w4", "transpose.gfx942.w8", "vadd.sm90.w1"):
        text = (KERNEL_TTGIR / f"{stem}.ttgir").read_text()
        lanes, warps = fuzz_ttgir._threads_and_warps(text)
        rng = random.Random(stem)
        for _ in range(20):
            redrawn = fuzz_ttgir.redraw_layouts(rng, text)
            for old, new in zip(text.splitlines(), redrawn.splitlines(), strict=True):
                if old != new:
                    before, after = _blocked_fields(old), _blocked_fields(new)
                    assert {k: len(v) for k, v in before.items()} == {k: len(v) for k, v in after.items()}
                    assert math.prod(after["threadsPerWarp"]) == lanes and math.prod(after["warpsPerCTA"]) == warps
                    assert sorted(after["order"]) == list(range(len(after["order"])))
                    parse_encoding(new.split(" = ", 1)[1])  # a valid encoding


def test_the_kernel_oracle_is_strict():
    """Every error of a TTGIR case carries file:line:col; a failed run writes no -o file; a TTGIR
    round trip must reach a fixed point; a layout-redrawn kernel computes what the original does."""
    case = fuzz.Case("ttgir-lower", ("{input.ttgir}",), "x")
    assert fuzz.classify(case, fuzz.Outcome(1, "k.ttgir:3:4: error: bad\n"))[0] == "user-error"
    assert fuzz.classify(case, fuzz.Outcome(1, "corpus.py:27:1: error: bad\nk.ttgir:2:1: note: n\n"))[0] == "user-error"
    assert fuzz.classify(case, fuzz.Outcome(1, "k.ttgir: error: bad\n"))[0] == "wrong-exit"
    assert fuzz.classify(case, fuzz.Outcome(1, "k.ttgir:1:1: error: x\n", output_problem="written"))[0] == "bad-output"
    run = fuzz.Case("ttgir-run", ("vadd.sm80.w1", "0"), "x")
    assert fuzz.classify(run, fuzz.Outcome(None, "", "wrong-result", "differ"))[0] == "wrong-result"
    assert fuzz.classify(run, fuzz.Outcome(None, "", "KeyError", "k"))[0] == "internal-error"
    assert fuzz.classify(run, fuzz.Outcome(None, "", None))[0] == "ok"


def test_kernel_cases_run_and_are_checked():
    """An unmutated kernel lowers, compiles, round-trips and runs like itself; a half-written -o
    file, an unstable round trip and a wrong result are findings."""
    vadd = (KERNEL_TTGIR / "vadd.sm80.w4.ttgir").read_text()
    broken = vadd.replace("tt.load", "tt.nope", 1)
    cases = [fuzz.Case("ttgir-lower", ("{input.ttgir}", "-p", "builtin.module(ll-lower)", "-o", "{tmp}/o.mlir"), vadd),
             fuzz.Case("ttgir-ptx", ("{input.ttgir}", "-p", "builtin.module(ll-lower)", "--emit-ptx",
                                     "--ptx-chip=sm_80", "-o", "{tmp}/o.ptx"), broken),
             fuzz.Case("ttgir-roundtrip", ("{input.ttgir}", "-o", "{tmp}/out.ttgir"), vadd),
             fuzz.Case("ttgir-report", ("{input.ttgir}", "--json"), vadd),
             fuzz.Case("ttgir-run", ("vadd.sm80.w4", "1"), vadd),
             fuzz.Case("ttgir-run", ("vadd.sm80.w4", "1"), broken)]
    report = fuzz.run_cases(cases, timeout=60, batch_size=len(cases))
    assert report.outcomes == {"ok": 4, "user-error": 2}, report
    assert report.by_kind == {"ttgir-lower": 1, "ttgir-ptx": 1, "ttgir-roundtrip": 1, "ttgir-report": 1, "ttgir-run": 2}
    # The result check can fail: a kernel that stores one more than the original.
    plus_one = vadd.replace("%2 = arith.addf %x_6, %y_8", "%2 = arith.addf %x_6, %x_6")
    assert fuzz_ttgir.run_kernel_case("vadd.sm80.w4", 1, plus_one)[0] == "wrong-result"


def test_a_bf16_kernel_runs_on_its_corpus_inputs():
    """A `ttgir-run` case of a bf16 kernel gets its bf16 inputs as the float32 arrays the
    interpreter takes (`simt_arrays`): the unmutated matmul_bf16 runs like itself (the 20,000-input
    fuzz run found 32 internal errors here: the corpus's `ml_dtypes.bfloat16` arrays were passed
    as they are)."""
    text = (KERNEL_TTGIR / "matmul_bf16.sm80.w4.ttgir").read_text()
    assert fuzz_ttgir.run_kernel_case("matmul_bf16.sm80.w4", 2, text) == ("ok", "")


def test_bounded_kernel_run_finds_nothing():
    """Mutated kernels of both corpora through ll-lower, --emit-ptx, the TTGIR round trip, the
    report and the interpreter (fixed seed): no finding of any kind."""
    cases = list(fuzz.generate_cases(2027, 40, SEEDS, api_share=0, tools_share=0, kernels=KERNELS, kernel_share=1.0))
    report = fuzz.run_cases(cases, timeout=60, batch_size=40)
    details = [f"{finding.kind}: {finding.case.kind} {finding.case.argv} -> {finding.detail[:200]}"
               for finding in report.findings]
    assert not details, "\n".join(details)
    assert report.outcomes.get("ok", 0) >= 5


def test_errors_of_ops_without_a_position_are_placed_at_their_line(tmp_path, capsys):
    """Triton gives constants `loc(unknown)`: an error at such an op (or at a bare `loc("name")`)
    is reported at the op's line of the .ttgir file, not without a position (found by the fuzzer)."""
    text = (KERNEL_TTGIR / "vadd.sm80.w1.ttgir").read_text()
    anchor = "%c256_i32 = arith.constant 256 : i32 loc(#loc1)"
    for loc in ("loc(#loc1)", 'loc("name")'):
        edited = text.replace(anchor, f"{anchor}\n    %big = arith.constant dense<0> : tensor<2147483648xi32, #blocked> {loc}")
        line = edited.splitlines().index(next(x for x in edited.splitlines() if "%big" in x)) + 1
        path = tmp_path / "k.ttgir"
        path.write_text(edited)
        assert opt.main([str(path), "-p", "builtin.module(ll-lower)"]) == 1
        stderr = capsys.readouterr().err
        assert re.fullmatch(rf"\S+k\.ttgir:{line}:\d+: error: [^\n]*registers per thread[^\n]*\n", stderr), stderr


# The ops of REQUIRED_ATTRIBUTES in corpus kernels, and an attribute of each to break.
_ATTRIBUTE_EDITS = [
    ("vadd.sm80.w4", "tt.make_range {end = 256 : i32, start = 0 : i32}", "tt.make_range {end = 256 : i32}", "'start'"),
    ("vadd.sm80.w4", "tt.make_range {end = 256 : i32, start = 0 : i32}",
     "tt.make_range {end = 256 : i32, start = 3 : i32}", "power of two"),
    ("vadd.sm80.w4", "tt.make_range {end = 256 : i32, start = 0 : i32}",
     "tt.make_range {end = 128 : i32, start = 0 : i32}", "end - start = 128"),
    ("vadd.sm80.w4", "tt.make_range {end = 256 : i32, start = 0 : i32}",
     'tt.make_range {end = 256 : i32, start = "x"}', "'start' must be an i32"),
    ("row_sum.sm80.w4", "{axis = 1 : i32}", "{axis = 5 : i32}", "axis = 5"),
    ("row_sum.sm80.w4", "<{axis = 1 : i32}>", "<{axis = [1]}>", "'axis' must be an i32"),
    ("cumsum_reverse.sm80.w4", "reverse = true", "reverse = 1 : i32", "'reverse' must be a bool"),
    ("transpose.sm80.w4", "order = array<i32: 1, 0>", "order = array<i32: 1, 1>", "not a permutation"),
]


@pytest.mark.parametrize("stem, old, new, needle", _ATTRIBUTE_EDITS)
def test_triton_ops_with_a_missing_or_bad_attribute_are_one_error(tmp_path, capsys, stem, old, new, needle):
    """An attribute Triton requires, dropped or of the wrong kind or range, is one located error
    from ll-verify, not an internal error in the lowering (found by the fuzzer: `tt.make_range`
    without `start` failed `ll-to-simt` with a KeyError)."""
    text = (KERNEL_TTGIR / f"{stem}.ttgir").read_text()
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, new, 1))
    assert opt.main([str(path), "-p", "builtin.module(ll-lower)"]) == 1
    stderr = capsys.readouterr().err
    assert len(stderr.splitlines()) == 1 and fuzz_ttgir.LOCATED_ERROR.match(stderr) and needle in stderr, stderr


def test_atomic_enums_are_checked():
    from mlir import ir

    from linear_layout.dialects.triton_attributes import attribute_problem

    with ir.Context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        ok, no_sem, bad_op = (
            ir.Operation.create("tt.atomic_rmw", attributes={k: ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v)
                                                             for k, v in values.items()})
            for values in ({"atomic_rmw_op": 4, "sem": 4, "scope": 1}, {"atomic_rmw_op": 4, "scope": 1},
                           {"atomic_rmw_op": 11, "sem": 4, "scope": 1})
        )
        assert attribute_problem(ok) is None
        assert "'sem'" in attribute_problem(no_sem)
        assert "'atomic_rmw_op' must be an i32 of 1" in attribute_problem(bad_op)


def test_required_attributes_are_tritons():
    """Each attribute of REQUIRED_ATTRIBUTES is a required (not optional, not defaulted) attribute
    of its op in Triton 3.9's TritonOps.td."""
    triton = pytest.importorskip("triton")
    from linear_layout.dialects.triton_attributes import REQUIRED_ATTRIBUTES

    td = (Path(triton.__file__).parent / "include/triton/Dialect/Triton/IR/TritonOps.td").read_text()
    for op, attributes in REQUIRED_ATTRIBUTES.items():
        definition = re.search(rf'TT_Op<"{op.split(".", 1)[1]}"(.*?)\n}}', td, re.S)
        assert definition, op
        arguments = re.search(r"let arguments = \(\s*ins(.*?)\);", definition.group(1), re.S)
        assert arguments, op
        for name in attributes:
            declared = re.search(rf"([\w<>\", :]+):\${name}\b", arguments.group(1))
            assert declared, (op, name)
            assert not re.match(r"\s*(OptionalAttr|DefaultValuedAttr|UnitAttr)", declared.group(1)), (op, name)


def test_cost_model_refuses_more_registers_than_it_enumerates():
    """A tensor of 2**31 elements in a 256-element layout (8M registers per thread) made the
    report's histogram cost run for hours (a fuzzer hang): the cost functions refuse it at once."""
    from linear_layout import LinearLayout
    from linear_layout.planning.layout_ops import histogram_cost, reduce_cost, scan_cost

    huge = LinearLayout.from_bases([("register", [[1 << (5 + k)] for k in range(23)]),
                                    ("lane", [[1 << k] for k in range(5)]), ("warp", [])], ["dim0"])
    bins = LinearLayout.from_bases([("register", [[1]]), ("lane", [[2], [4], [8], [16], [32]]), ("warp", [])],
                                   ["dim0"])
    for call in (lambda: histogram_cost(huge, bins), lambda: scan_cost(huge, 0, [32]),
                 lambda: reduce_cost(huge, 0, [32], None)):
        with pytest.raises(ValueError, match="registers per thread"):
            call()
    assert histogram_cost(bins, bins).barriers == 2  # within the limit: costed (zero, barrier, atomics, barrier)


@pytest.mark.parametrize("old, new, needle", [
    ('"ttg.num-warps" = 4 : i32', '"ttg.num-warps" = "nope"', "'ttg.num-warps' must be a power-of-two integer"),
    ('"ttg.threads-per-warp" = 32 : i32', '"ttg.threads-per-warp" = 1.5 : f32', "'ttg.threads-per-warp' must be"),
    ("tt.return loc(#loc)", "tt.trans loc(#loc)", "'tt.trans': "),
])
def test_report_errors_are_located(tmp_path, capsys, old, new, needle):
    """linear-layout-report on a kernel with a launch attribute that is not a power-of-two integer,
    or with a custom-syntax op that has nothing after its name: one located error, exit 1 (found
    by the fuzzer: an internal error, and an error without a position)."""
    from linear_layout.tools import report

    text = (KERNEL_TTGIR / "vadd.sm80.w4.ttgir").read_text()
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, new, 1))
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if new in t)
    assert report.main([str(path)]) == 1
    stderr = capsys.readouterr().err
    assert re.fullmatch(rf"\S+k\.ttgir:{line}:\d+: error: [^\n]*\n", stderr) and needle in stderr, stderr


def test_kernel_pipeline_api_checks_its_arguments():
    """The kernel pipeline's entry points name the argument they refuse (found by the fuzzer's
    kernel API cases: AttributeError, `object of type 'int' has no len()`, `invalid literal for
    int()` and a SimtError for an unknown kernel name)."""
    from linear_layout.tools.kernels import lower_ttgir, run_triton_kernel, ttgir_to_ptx
    from linear_layout.ttgir import mlir_to_ttgir, parse_ttgir, print_ttgir, ttgir_to_mlir

    vadd = (KERNEL_TTGIR / "vadd.sm80.w1.ttgir").read_text()
    module = lower_ttgir(vadd)
    arrays = [np.zeros(1024, np.float32) for _ in range(3)]
    refused = [
        (TypeError, "lower_ttgir: argument 'text'", lambda: lower_ttgir(None)),
        (TypeError, "lower_ttgir: argument 'chip'", lambda: lower_ttgir(vadd, chip=80)),
        (TypeError, "ttgir_to_ptx: argument 'chip'", lambda: ttgir_to_ptx(vadd, chip=None)),
        (TypeError, "parse_ttgir: argument 'text'", lambda: parse_ttgir(["x"])),
        (TypeError, "ttgir_to_mlir: argument 'text'", lambda: ttgir_to_mlir(1)),
        (TypeError, "mlir_to_ttgir: argument 'asm'", lambda: mlir_to_ttgir(None)),
        (TypeError, "print_ttgir: argument 'module'", lambda: print_ttgir("module {}")),
        (TypeError, "run_triton_kernel: argument 'module'", lambda: run_triton_kernel(vadd, [*arrays, 8], (1,))),
        (TypeError, "argument 'args' item 3", lambda: run_triton_kernel(module, [*arrays, "x"], (1,))),
        (TypeError, "argument 'grid'", lambda: run_triton_kernel(module, [*arrays, 8], None)),
        (TypeError, "argument 'grid'", lambda: run_triton_kernel(module, [*arrays, 8], "x")),
        (ValueError, "argument 'grid' must be at least 1", lambda: run_triton_kernel(module, [*arrays, 8], (0,))),
        (ValueError, "1 to 3 sizes", lambda: run_triton_kernel(module, [*arrays, 8], (1, 1, 1, 1))),
        (ValueError, "no kernel named 'nope'", lambda: run_triton_kernel(module, [*arrays, 8], (1,), kernel="nope")),
    ]
    for error, needle, call in refused:
        with pytest.raises(error, match=re.escape(needle)):
            call()
    arrays[0][:] = 1
    run_triton_kernel(module, [*arrays, 8], [1])  # a list grid, numpy arrays and an int: accepted
    assert arrays[2][:8].tolist() == [1.0] * 8 and not arrays[2][8:].any()
    api = " ".join(case.expression for case in fuzz.generate_cases(3, 1500, SEEDS, api_share=1.0, kernels=KERNELS))
    for entry in fuzz_ttgir.kernel_api_namespace():
        assert entry in api, entry


def test_an_op_with_more_results_than_its_lowering_is_an_error(tmp_path, capsys):
    """`tt.get_program_id` edited to two results (an op name swapped onto a two-result reduce)
    aborted the process in `replace_op` (found by the fuzzer): now one located error, exit 1."""
    text = (KERNEL_TTGIR / "vadd.sm80.w4.ttgir").read_text()
    old = "%offs = tt.get_program_id x : i32"
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, '%offs, %extra = "tt.get_program_id"() <{axis = 0 : i32}> : () -> (i32, i32)'))
    assert opt.main([str(path), "-p", "builtin.module(ll-lower)"]) == 1
    stderr = capsys.readouterr().err
    assert fuzz_ttgir.LOCATED_ERROR.match(stderr) and "with 2 results has no lowering" in stderr, stderr


def test_a_verifier_error_while_parsing_is_located(tmp_path, capsys):
    """An op MLIR's own verifier refuses while parsing (`arith.addi` given a region) was reported
    by linear-layout-report without a position (found by the fuzzer): now at its line."""
    from linear_layout.tools import report

    text = (KERNEL_TTGIR / "row_sum.sm80.w4.ttgir").read_text()
    old = '%4 = "tt.reduce"(%x_22)'
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, '%4 = "arith.addi"(%x_22)'))
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if '"arith.addi"' in t)
    assert report.main([str(path)]) == 1
    stderr = capsys.readouterr().err
    assert re.fullmatch(rf"\S+k\.ttgir:{line}:\d+: error: 'arith.addi' op requires zero regions\n", stderr), stderr


def test_local_access_planning_refuses_more_registers_than_it_plans():
    """A `ttg.local_load` of a 2**31-row tensor made the report run for hours (a fuzzer hang)."""
    from linear_layout.encodings import BlockedLayout, SwizzledSharedLayout
    from linear_layout.planning import PlannerError, plan_local_access

    blocked = BlockedLayout((1, 1), (1, 32), (4, 1), (1, 0))
    shared = SwizzledSharedLayout(1, 1, 1, (1, 0))
    with pytest.raises(PlannerError, match="registers per thread"):
        plan_local_access(blocked, shared, 16, [2**31, 32])
    assert plan_local_access(blocked, shared, 16, [32, 32]) is not None
