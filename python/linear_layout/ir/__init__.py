"""Layouts in MLIR IR: loading the `ttg` and `ll` IRDL dialects, the attribute bridge and the
text bridge (the only code that reads printed IR). The op classes, builders and the verifier
are in `linear_layout.dialects`.

    from mlir import ir
    from linear_layout.ir import load_dialects, to_attribute, layout_of

    with ir.Context() as ctx, ir.Location.unknown():
        load_dialects(ctx)
        attr = to_attribute(layout)          # LinearLayout -> #ll.layout, encoding -> #ttg.*
"""

from ._dialects import DIALECTS, dialect_file, load_dialects
from .bridge import MemDesc, cache_info, format_ll_layout, from_attribute, layout_of, memdesc_of, to_attribute
from .text import add_aliases, print_module

__all__ = [
    "DIALECTS",
    "MemDesc",
    "add_aliases",
    "cache_info",
    "dialect_file",
    "format_ll_layout",
    "from_attribute",
    "layout_of",
    "load_dialects",
    "memdesc_of",
    "print_module",
    "to_attribute",
]
