"""The dependency rule of docs/architecture.md, checked on the import graph of python/linear_layout.

Every module belongs to a layer (its first package under ``linear_layout``). A module may import
modules of its own layer and of lower layers only; the pure layers never import ``mlir``; and
imports of the package's own modules sit at module level, never inside function bodies (where
they would hide a cycle).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "linear_layout"

#: Layer ranks: a module may import only from layers of rank <= its own.
LAYERS = {
    "core": 0,
    "encodings": 1,
    "planning": 2,
    "draw": 3,
    "ir": 4,
    "dialects": 4,
    "patterns": 5,
    "ttgir": 5,
    "simt": 5,
    "passes": 6,
    "tools": 7,
}
PURE = {"core", "encodings", "planning", "draw"}
#: linear_layout/__init__.py is the public facade of the pure layers: it re-exports from them and
#: imports nothing else (checked below), so importing it is importing a pure layer.
TOP = max(LAYERS[layer] for layer in PURE)


@dataclass(frozen=True)
class Import:
    module: str  # importing module, dotted
    target: str  # imported module, dotted (absolute)
    line: int
    in_function: bool


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    if node.module is None:  # `from . import x`: each name is a module
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def _imports() -> list[Import]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        inner = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _absolute(module, path.name == "__init__.py", node)
            else:
                continue
            found += [Import(module, t, node.lineno, id(node) in inner) for t in targets]
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def _rank(module: str) -> int:
    layer = _layer(module)
    return LAYERS[layer] if layer else TOP


IMPORTS = _imports()


def test_every_package_has_a_layer():
    packages = {p.parent.relative_to(PACKAGE).parts[0] for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE}
    assert packages <= set(LAYERS), f"packages without a layer: {packages - set(LAYERS)}"
    loose = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert not loose, f"modules outside every layer: {loose}"


def test_pure_layers_never_import_mlir():
    bad = [i for i in IMPORTS if _layer(i.module) in PURE and i.target.split(".")[0] == "mlir"]
    assert not bad, bad


def test_nothing_imports_upward():
    own = [i for i in IMPORTS if i.target.split(".")[0] == "linear_layout"]
    assert own, "the import graph is empty: the check itself is broken"
    bad = [f"{i.module}:{i.line} imports {i.target}" for i in own if _rank(i.target) > _rank(i.module)]
    assert not bad, "\n".join(bad)


def test_the_top_level_package_re_exports_pure_layers_only():
    top = [i for i in IMPORTS if i.module == "linear_layout"]
    assert top, "linear_layout/__init__.py imports nothing: the check is broken"
    bad = [i.target for i in top if i.target.split(".")[0] != "__future__" and _layer(i.target) not in PURE]
    assert not bad, bad


def test_no_imports_of_our_own_modules_inside_functions():
    bad = [f"{i.module}:{i.line} imports {i.target}" for i in IMPORTS
           if i.in_function and i.target.split(".")[0] == "linear_layout"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("statement", [
    "import linear_layout",
    "import linear_layout.encodings",
    "from linear_layout import plan_conversion, bank_conflicts",
    "from linear_layout.encodings import parse_encoding, to_linear_layout",
])
def test_the_pure_api_loads_no_mlir(statement):
    code = f"{statement}\nimport sys\nprint(sorted(m for m in sys.modules if m == 'mlir' or m.startswith('mlir.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_checker_sees_a_violation():
    """The rank function orders the layers as the docs say: a planning module importing the
    MLIR layer is upward, the reverse is not."""
    assert _rank("linear_layout.ir.bridge") > _rank("linear_layout.planning.plan")
    assert _rank("linear_layout.core.layout") < _rank("linear_layout.encodings")
    assert _rank("linear_layout") == TOP < _rank("linear_layout.ir")
