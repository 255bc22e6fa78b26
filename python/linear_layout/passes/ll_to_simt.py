"""`ll-to-simt`: lower tensor-level kernels to per-thread SIMT code in upstream dialects.

See `linear_layout.transforms.to_simt` for the lowering and `docs/passes.md` for the closed list
of ops it emits. A failure (an unsupported op, mismatched layouts, a conversion that needs
shared memory, too many warps for the launch) is reported at the op and leaves the module
unchanged.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..patterns.to_simt import lower_module
from . import Pass


@dataclasses.dataclass
class LLToSimt(Pass):
    argument = "ll-to-simt"
    summary = "Lower tensor kernels (ll.load/store, elementwise, convert_layout) to gpu.func SIMT code"

    def run(self, op: ir.Operation) -> bool:
        with op.context, op.location:
            errors = lower_module(op)
        for location, message in errors:
            location.emit_error(message)
        return not errors


PASS = LLToSimt
