"""The public API keeps its paths (issue 17): each is imported from where the docs say it is."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect

import pytest

#: (module, names) the README and docs promise.
PATHS = [
    ("linear_layout", ["LinearLayout", "plan_conversion", "bank_conflicts"]),
    ("linear_layout.patterns", ["populate_lower_apply_patterns", "populate_to_simt_patterns", "emit_apply_layout",
                                "outline_kernel", "allocate_shared_memory", "insert_barriers"]),
    ("linear_layout.dialects", ["ll", "ttg", "ops_of"]),
    ("linear_layout.passes", ["build_pass_manager", "get_pass", "pass_names", "Pass", "Pipeline", "PipelineError",
                              "PipelinePassManager", "emit_ptx"]),
    ("linear_layout.simt", ["run_kernel", "Report", "SUPPORTED_OPS", "SimtError", "UnsupportedOp"]),
    ("linear_layout.simt.interpreter", ["run_kernel", "Report", "SUPPORTED_OPS", "RaceError"]),
]


@pytest.mark.parametrize("module, names", PATHS, ids=[module for module, _ in PATHS])
def test_public_names_import_from_their_documented_paths(module, names):
    imported = importlib.import_module(module)
    missing = [name for name in names if not hasattr(imported, name)]
    assert not missing, f"{module} lacks {missing}"


def test_populate_functions_take_the_pattern_set_and_keywords():
    from linear_layout.patterns import populate_lower_apply_patterns, populate_to_simt_patterns

    simt = inspect.signature(populate_to_simt_patterns)
    assert list(simt.parameters) == ["patterns", "target", "benefit"]
    assert simt.parameters["target"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(populate_lower_apply_patterns).parameters) == ["patterns", "benefit"]


def test_every_registered_pass_loads():
    from linear_layout.passes import get_pass, pass_names

    names = pass_names()
    assert {"ll-verify", "ll-lower", "ll-to-simt", "ll-lower-apply", "ll-linearize-encodings",
            "ll-explain-conversions"} <= set(names)
    assert all(get_pass(name).argument == name for name in names)
    with pytest.raises(KeyError):
        get_pass("no-such-pass")


CONSOLE_SCRIPTS = ["linear-layout-opt", "linear-layout-fuzz", "linear-layout-draw", "linear-layout-report"]


@pytest.mark.parametrize("script", CONSOLE_SCRIPTS)
def test_console_scripts_resolve_to_a_main(script):
    found = {e.name: e for e in importlib.metadata.entry_points(group="console_scripts")}
    assert script in found, f"{script} is not installed"
    main = found[script].load()
    assert callable(main) and list(inspect.signature(main).parameters) == ["argv"]
