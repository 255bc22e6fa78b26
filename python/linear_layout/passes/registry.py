"""The registry of this project's passes and named pipelines, by command-line name.

Each lives in its own module of this package, named after its command-line name (`ll-verify`
in `ll_verify.py`), whose `PASS` is the class; a module is imported only when its pass is used.
A new pass is a module here and one line in `REGISTRY`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Pass, Pipeline

__all__ = ["REGISTRY", "get_pass", "is_registered", "pass_names"]

#: command-line name -> module in this package
REGISTRY = {
    "ll-verify": "ll_verify",
    "ll-lower-apply": "ll_lower_apply",
    "ll-linearize-encodings": "ll_linearize_encodings",
    "ll-to-simt": "ll_to_simt",
    "ll-lower": "ll_lower",
    "ll-explain-conversions": "ll_explain_conversions",
}


def pass_names() -> list[str]:
    return sorted(REGISTRY)


def is_registered(name: str) -> bool:
    return name in REGISTRY


def get_pass(name: str) -> type[Pass] | type[Pipeline]:
    """The pass (or named pipeline) class registered as `name`; KeyError if there is none."""
    module = importlib.import_module(f"{__package__}.{REGISTRY[name]}")
    return module.PASS
