"""The op handlers of the SIMT interpreter, one module per dialect (`arith.py` handles the
`arith.*` ops, ...). Each module registers its handlers with `@handles` (or `register`) from
`..machine` when it is imported; importing this package imports every module here, so a new op
is a handler in its dialect's module and nothing else (a new dialect is a new module here)."""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["DIALECTS"]

#: The dialects whose ops the interpreter runs: the modules of this package.
DIALECTS: tuple[str, ...] = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__)))

for _dialect in DIALECTS:
    importlib.import_module(f"{__name__}.{_dialect}")
