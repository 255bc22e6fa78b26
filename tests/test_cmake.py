"""The CMake project configures lit, runs the suite through `check-linear-layout`, and installs
the package with its dialect files."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
cmake = shutil.which("cmake")
pytestmark = [
    pytest.mark.skipif(cmake is None, reason="cmake is not installed"),
    # check-linear-layout runs lit.main with this interpreter.
    pytest.mark.skipif(importlib.util.find_spec("lit") is None, reason="lit (the LLVM test runner) is not installed"),
]


def test_configure_check_and_install(tmp_path):
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    configure = subprocess.run(
        [cmake, "-S", ROOT, "-B", build, f"-DPython3_EXECUTABLE={sys.executable}",
         "-DLINEAR_LAYOUT_INSTALL_PYTHONDIR=site-packages"], capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    site_config = (build / "tests" / "lit" / "lit.site.cfg.py").read_text()
    assert str(ROOT) in site_config and "@" not in site_config

    # The whole suite runs in test_lit.py; one test here proves the target's wiring.
    check = subprocess.run([cmake, "--build", build, "--target", "check-linear-layout"],
                           capture_output=True, text=True,
                           env={**os.environ, "LIT_OPTS": "--filter=dialect/ll-layout"})
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Passed: 1" in check.stdout or "Passed" in check.stdout

    install = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    package = prefix / "site-packages" / "linear_layout"
    assert (package / "ir" / "__init__.py").exists()
    assert (package / "dialect" / "ttg.irdl.mlir").exists()
    assert (prefix / "share" / "linear-layout" / "dialect" / "ll.irdl.mlir").exists()
    assert not list(package.rglob("__pycache__"))
