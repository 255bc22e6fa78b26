"""`ll-lower`: the named lowering pipeline `ll-linearize-encodings, ll-to-simt, canonicalize, cse`.

It is used like a pass (`-p 'builtin.module(ll-lower)'`, `build_pass_manager("ll-lower")`) and
appends the passes it stands for, nested under the same anchor.
"""

from __future__ import annotations

import dataclasses

from . import Pipeline


@dataclasses.dataclass(frozen=True)
class LLLower(Pipeline):
    argument = "ll-lower"
    PIPELINE = "ll-linearize-encodings, ll-to-simt, canonicalize, cse"
    summary = f"Lower to SIMT form: {PIPELINE}"


PASS = LLLower
