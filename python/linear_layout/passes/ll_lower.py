"""`ll-lower`: the lowering pipeline `ll-linearize-encodings, ll-to-simt, canonicalize, cse`.

A named pipeline is a pass whose `add_to` appends the passes it stands for, so that it can be
used like any other pass on the command line and in `build_pass_manager`.
"""

from __future__ import annotations

import dataclasses

from mlir.passmanager import PassManager

from . import Pass

PIPELINE = "ll-linearize-encodings, ll-to-simt, canonicalize, cse"


@dataclasses.dataclass
class LLLower(Pass):
    argument = "ll-lower"
    summary = f"Lower to SIMT form: {PIPELINE}"

    def run(self, op):
        """Never called: `add_to` appends the pipeline's passes instead of this pass."""
        raise TypeError("ll-lower is a named pipeline; add it to a pass manager with add_to")

    def add_to(self, pm: PassManager, anchor=()) -> None:
        from . import add_pipeline, parse_pipeline

        add_pipeline(pm, parse_pipeline(PIPELINE), anchor)


PASS = LLLower
