"""The fuzzer: its classification, its crash/hang isolation, a bounded run over the console scripts
(linear-layout-opt, -draw, -report) and the API (fixed seed), and the replay of every reproducer in
tests/fuzz_corpus/ (each was a crash, hang, traceback, internal error or wrong exit once; now each must be
a one-line user error or success)."""

from __future__ import annotations

from pathlib import Path

from linear_layout.tools import fuzz

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
