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


# ---------------------------------------------------------------------------- one registration per op

def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(n, ast.Call)]


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def test_each_op_has_one_simt_pattern_and_patterns_register_only_through_it():
    """`SIMT_PATTERNS` is the one registry (legality, allocation, barriers and the populate function
    read it): no op has two patterns, every `SimtPattern` of `patterns/` is in it, and no module but
    `simt_pattern.py` adds callbacks to a `RewritePatternSet` itself."""
    from linear_layout.patterns import to_simt
    from linear_layout.patterns.simt_pattern import SimtPattern

    names = [name for pattern in to_simt.SIMT_PATTERNS for name in pattern.names()]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    defined = []
    for path in sorted((PACKAGE / "patterns").glob("*.py")):
        for call in _calls(path):
            if _callee(call) == "SimtPattern":
                defined.append(path.name)
            if _callee(call) == "add" and path.name != "simt_pattern.py":
                receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
                assert not (isinstance(receiver, ast.Name) and receiver.id == "patterns"), (
                    f"patterns/{path.name}:{call.lineno} registers a pattern outside SimtPattern.add_to")
    assert len(defined) == len(to_simt.SIMT_PATTERNS), (defined, len(to_simt.SIMT_PATTERNS))
    assert len({id(p) for p in to_simt.SIMT_PATTERNS}) == len(to_simt.SIMT_PATTERNS)
    assert to_simt.registered_patterns(to_simt.SIMT_PATTERNS)  # and it refuses a second registration:
    with pytest.raises(ValueError, match="two SIMT patterns lower"):
        to_simt.registered_patterns((*to_simt.SIMT_PATTERNS, to_simt.SIMT_PATTERNS[0]))
    assert all(isinstance(p, SimtPattern) for p in to_simt.SIMT_PATTERNS)


_REGISTERING = {"handles", "register", "terminator"}


def _registered_ops(path: Path) -> list[str]:
    """The op names a module registers with `@handles(...)`, `register(...)`, `terminator(...)`
    (string literals, or the keys of a literal dict iterated in a loop)."""
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) in _REGISTERING):
        names += [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    for loop in (n for n in tree.body if isinstance(n, ast.For)):  # module-level registration loops
        registers = any(isinstance(c, ast.Call) and _callee(c) in _REGISTERING for c in ast.walk(loop))
        iterated = loop.iter.func.value if isinstance(loop.iter, ast.Call) and isinstance(
            loop.iter.func, ast.Attribute) else loop.iter
        if registers and isinstance(iterated, ast.Name):
            names += _dict_keys(tree, iterated.id)
        elif registers and isinstance(iterated, ast.Tuple):
            names += [e.elts[0].value for e in iterated.elts if isinstance(e, ast.Tuple)]
    return names


def _dict_keys(tree: ast.Module, name: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    raise AssertionError(f"no literal dict {name}")


SIMT = PACKAGE / "simt"
#: The interpreter's core: the machine and what it is made of; the op handlers are in dialects/.
SIMT_CORE = {"__init__", "interpreter", "machine", "memory", "banks", "report", "elements", "errors"}


def test_the_interpreter_is_a_core_and_one_module_per_dialect():
    """simt/ holds the core modules only; simt/dialects/<d>.py registers the handlers of the ops of
    dialect <d>, each op once, and imports the core, never another dialect module; the core
    registers no op. Together they are exactly `SUPPORTED_OPS`."""
    from linear_layout.simt import SUPPORTED_OPS

    assert {p.stem for p in SIMT.glob("*.py")} == SIMT_CORE
    assert {p.name for p in SIMT.iterdir() if p.is_dir() and p.name != "__pycache__"} == {"dialects"}
    for path in SIMT.glob("*.py"):
        assert not _registered_ops(path), f"simt/{path.name} registers ops: handlers live in simt/dialects/"
    registered: list[str] = []
    for path in sorted((SIMT / "dialects").glob("*.py")):
        if path.stem == "__init__":
            continue
        ops = _registered_ops(path)
        assert ops, f"simt/dialects/{path.name} registers nothing"
        wrong = [op for op in ops if op.split(".")[0] != path.stem]
        assert not wrong, f"simt/dialects/{path.name} registers ops of other dialects: {wrong}"
        registered += ops
        module = f"linear_layout.simt.dialects.{path.stem}"
        siblings = [i.target for i in IMPORTS if i.module == module and i.target.startswith("linear_layout.simt.dialects")]
        assert not siblings, f"{module} imports {siblings}"
    assert len(registered) == len(set(registered)), [op for op in registered if registered.count(op) > 1]
    assert set(registered) == set(SUPPORTED_OPS)


# ---------------------------------------------------------------------------- printed IR is read in ir/ only

def _reads_printed_ir(node: ast.AST) -> bool:
    """`str(x.attributes[...])`, `re.f(..., str(x))`, `str(x) == "#..."` / `"!..."`, or
    `str(x).split/rstrip/startswith(...)`: reading an MLIR object through its printed text."""
    def is_str_call(n: ast.AST) -> bool:
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "str" and len(n.args) == 1

    if is_str_call(node) and any(isinstance(n, ast.Attribute) and n.attr == "attributes"
                                 for n in ast.walk(node.args[0])):  # type: ignore[attr-defined]
        return True
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re" and any(is_str_call(a) for a in node.args)):
        return True
    if isinstance(node, ast.Compare) and is_str_call(node.left):
        return any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value[:1] in "#!"
                   for c in node.comparators)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_str_call(node.func.value)
            and node.func.attr in ("split", "rstrip", "lstrip", "strip", "startswith", "endswith", "partition")):
        return False
    inner = node.func.value.args[0]  # type: ignore[attr-defined]
    ir_text = any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value[:1] in ("#", "!", ">")
                  for a in node.args)
    return ir_text or isinstance(inner, ast.Attribute | ast.Subscript)  # str(op.location), not str(error)


#: Layers that read text by design: ir/ (the one text bridge) and ttgir/ (Triton's TTGIR syntax).
TEXT_READERS = {"ir", "ttgir"}


def test_printed_attributes_are_read_in_ir_only():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(_module_name(path))
        if layer in TEXT_READERS:
            continue
        tree = ast.parse(path.read_text(), str(path))
        bad += [f"{path.relative_to(PACKAGE)}:{n.lineno}" for n in ast.walk(tree) if _reads_printed_ir(n)]
    assert not bad, "printed IR read outside ir/ (add a reader to linear_layout.ir): " + ", ".join(bad)


@pytest.mark.parametrize("code, reads", [
    ("str(op.attributes['mode']).split()", True),
    ("re.fullmatch(r'x', str(t))", True),
    ("str(a) == '#gpu<dim x>'", True),
    ("str(op.location).startswith('loc(')", True),
    ("f'{t}: bad'", False),
    ("str(t).startswith('!tt.ptr<')", True),
    ("' '.join(str(error).split())", False),
    ("str(error)", False),
])
def test_the_printed_ir_check_sees_a_violation(code, reads):
    assert any(_reads_printed_ir(n) for n in ast.walk(ast.parse(code))) == reads


# ---------------------------------------------------------------------------- one walk

def _raw_walks(path: Path) -> list[int]:
    """Lines of `path` that call MLIR's `Operation.walk(callback, ...)` directly (a `.walk` with
    arguments on anything but `os`/`ast`)."""
    return [call.lineno for call in _calls(path)
            if _callee(call) == "walk" and call.args and isinstance(call.func, ast.Attribute)
            and not (isinstance(call.func.value, ast.Name) and call.func.value.id in ("os", "ast"))]


def test_every_walk_goes_through_ir_walk():
    """An exception raised in a raw `Operation.walk` callback comes back as a RuntimeError holding a
    whole traceback (a fuzzed `tt.reshape` of a scalar did); `ir.walk.walk` re-raises it at its op."""
    bad = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
           if path != PACKAGE / "ir" / "walk.py" for line in _raw_walks(path)]
    assert not bad, f"call linear_layout.ir.walk.walk (or ops_where) instead of Operation.walk: {bad}"
    assert _raw_walks(PACKAGE / "ir" / "walk.py")  # the checker sees the one raw walk there
