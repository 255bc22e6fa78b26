"""The documentation is executable: the tutorial's code and the docstring examples must run.

* Every fenced ``python`` block of docs/tutorial.md runs, in order, in one namespace, as the
  tutorial promises its readers; an exception or a failed ``assert`` fails the test and names
  the block and its line in the Markdown file.
* The doctests embedded in the algebra modules run through :mod:`doctest`, so they are part of
  the one test command the README gives.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
DOCTEST_MODULES = (
    "linear_layout.core.layout",
    "linear_layout.core.builders",
    "linear_layout.core._packing",
    "linear_layout.core.gf2",
    "linear_layout.planning.layout_ops",
)

# A fence opening at the start of a line: ```python, then the body, then a closing ```.
_PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(first line of the code, code)`` for each ```python block, in order (lines from 1)."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _PYTHON_BLOCK.finditer(text)]


def test_block_extraction():
    text = "intro\n```python\na = 1\n```\n\n```sh\nnot python\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (10, "b = a + 1\n")]


def test_tutorial_runs_in_order():
    blocks = python_blocks(TUTORIAL.read_text())
    assert blocks, "docs/tutorial.md has no ```python blocks"
    namespace: dict = {"__name__": "__tutorial__"}
    for number, (line, code) in enumerate(blocks, 1):
        # Pad with blank lines so tracebacks point at the Markdown file's own line numbers.
        source = "\n" * (line - 1) + code
        compiled = compile(source, str(TUTORIAL), "exec")
        try:
            exec(compiled, namespace)
        except Exception as error:
            raise AssertionError(
                f"docs/tutorial.md: python block {number} (starting at line {line}) failed: "
                f"{type(error).__name__}: {error}"
            ) from error


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_module_doctests(module_name):
    module = importlib.import_module(module_name)
    output = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, module_name):
        runner.run(test, out=output.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module_name}:\n{output.getvalue()}"


def test_algebra_has_doctests():
    module = importlib.import_module("linear_layout.core.layout")
    examples = sum(len(t.examples) for t in doctest.DocTestFinder().find(module))
    assert examples >= 20, f"linear_layout.core.layout has only {examples} doctest examples"
