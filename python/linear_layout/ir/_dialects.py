"""Finding and loading the IRDL dialects (`ttg`, `ll`) into an MLIR context."""

from __future__ import annotations

import functools
import importlib.resources
import sys
import types
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import mlir.ir as ir
from mlir._mlir_libs import _mlir as _cext
from mlir.dialects import irdl

DIALECTS = ("ttg", "ll")


# The package whose `ll` and `ttg` modules hold the op classes (found by name: the bindings
# import it themselves, so this layer does not import the layer above it).
DIALECT_PACKAGE = "linear_layout.dialects"


# Triton's dialects whose ops stay unregistered (no Python class): `tt`, `ttng`, `amdg`, `nvg`.
UNREGISTERED_NAMESPACES = ("tt", "ttng", "amdg", "nvg")


def _register_dialect_modules() -> None:
    """Make `linear_layout.dialects.ttg` / `.ll` the Python modules of our dialects, and an empty
    module `linear_layout.dialects.<ns>` that of each of `UNREGISTERED_NAMESPACES`.

    Whenever the bindings wrap an op they import the module of its dialect (which registers the
    op classes), and they retry a failed import every time: without this, every ttg/ll op visited
    costs a failed import of `mlir.dialects.ttg` (90% of the verifier's time on large modules),
    and every `tt` op wrapped (`op.opview`) two failed imports (`mlir.dialects.tt`, then
    `linear_layout.dialects.tt`; 16% of `ttgir_to_ptx`'s time on the kernel corpus). An empty
    module is found once; the op stays a generic `OpView`, as before.
    """
    if DIALECT_PACKAGE not in _cext.globals.dialect_search_modules:
        _cext.globals.append_dialect_search_prefix(DIALECT_PACKAGE)
    package = Path(__file__).resolve().parents[1] / DIALECT_PACKAGE.rsplit(".", 1)[1]
    for namespace in UNREGISTERED_NAMESPACES:
        name = f"{DIALECT_PACKAGE}.{namespace}"
        if name not in sys.modules and not (package / f"{namespace}.py").exists():  # a real module wins
            sys.modules[name] = types.ModuleType(name, f"Triton's `{namespace}` ops: unregistered, no op classes.")


_register_dialect_modules()


def dialect_file(name: str) -> Path:
    """The IRDL source of dialect `name` ("ttg" or "ll").

    Installed, the files ship as the `linear_layout.dialect` package data; in a source checkout
    they sit in the repository's top-level `dialect/` folder.
    """
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
    filename = f"{name}.irdl.mlir"
    try:
        packaged = importlib.resources.files("linear_layout.dialect") / filename
        if packaged.is_file():
            return Path(str(packaged))
    except ModuleNotFoundError:
        pass
    source_tree = Path(__file__).resolve().parents[3] / "dialect" / filename
    if source_tree.is_file():
        return source_tree
    raise FileNotFoundError(f"cannot find the IRDL file {filename} (looked in the package and {source_tree.parent})")


@dataclass
class ContextState:
    """What this package remembers about one context.

    Keyed weakly by the context, and holding no MLIR objects itself, so that it never keeps a
    context alive. Attribute caches are keyed by the attribute's storage pointer, which is unique
    and stable for the context's lifetime (attributes are uniqued and never freed).
    """

    attributes: dict[int, object] = field(default_factory=dict)
    types: dict[int, object] = field(default_factory=dict)
    # (type pointer, launch facts) -> verifier message or None
    verified_types: dict[tuple, object] = field(default_factory=dict)
    # (derive function, type pointer) -> its immutable value (`bridge.per_type`)
    derived: dict[tuple, object] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0


_STATES: weakref.WeakKeyDictionary[ir.Context, ContextState] = weakref.WeakKeyDictionary()


def context_state(context: ir.Context) -> ContextState:
    state = _STATES.get(context)
    if state is None:
        state = _STATES[context] = ContextState()
    return state


def _is_loaded(context: ir.Context, name: str) -> bool:
    try:
        context.dialects[name]
        return True
    except IndexError:
        return False


@functools.cache
def _dialect_source(name: str) -> str:
    """The IRDL text of dialect `name`, read once per process (each new context parses it)."""
    return dialect_file(name).read_text()


def load_dialects(context: ir.Context | None = None) -> ir.Context:
    """Load `ttg` and `ll` into `context` (default: the current one). Idempotent.

    Loading an IRDL dialect twice into one context aborts the process, so we ask the context
    which dialects it already has rather than trusting our own bookkeeping: this also stays safe
    when someone else loaded the same files.
    """
    context = context or ir.Context.current
    for name in DIALECTS:
        if _is_loaded(context, name):
            continue
        irdl.load_dialects(ir.Module.parse(_dialect_source(name), context))
    context_state(context)
    return context
