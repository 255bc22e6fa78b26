"""`ll-lower`: the named lowering pipeline `ll-linearize-encodings, ll-to-simt, canonicalize, cse`.

It is used like a pass (`-p 'builtin.module(ll-lower)'`, `build_pass_manager("ll-lower")`) and
appends the passes it stands for, nested under the same anchor.
"""

from __future__ import annotations

import dataclasses

from mlir.passmanager import PassManager

from . import Pipeline, add_pipeline, parse_pipeline
from .ll_to_simt import ChipOption


@dataclasses.dataclass(frozen=True)
class LLLower(ChipOption, Pipeline):
    argument = "ll-lower"
    PIPELINE = "ll-linearize-encodings, ll-to-simt, canonicalize, cse"
    summary = f"Lower to SIMT form: {PIPELINE}"

    def add_to(self, pm: PassManager, anchor=()) -> None:
        pipeline = (
            self.PIPELINE.replace("ll-to-simt", f"ll-to-simt{{chip={self.chip}}}") if self.chip else self.PIPELINE
        )
        add_pipeline(pm, parse_pipeline(pipeline), anchor)


PASS = LLLower
