"""Static gates over python/: ruff (lint, mccabe complexity <= 15, format) and mypy.

Both tools are pinned in the test extra and configured in pyproject.toml, so this test runs the
same checks as a developer's editor. They are part of the suite rather than a separate CI step so
that the README's single test command covers them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_including_complexity():
    result = _run(_tool("ruff"), "check", "--no-cache", "python", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _run(_tool("ruff"), "format", "--check", "--no-cache", "python")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy():
    result = _run(_tool("mypy"), "python/linear_layout")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr


def test_the_complexity_gate_is_configured():
    """A gate that is not configured passes vacuously: pin its threshold."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["ruff"]["lint"]["mccabe"]["max-complexity"] == 15
    assert "C90" in config["tool"]["ruff"]["lint"]["select"]
