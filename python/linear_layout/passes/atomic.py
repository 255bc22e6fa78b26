"""Pipeline atomicity: a pass manager whose `run` leaves the module as it was when any pass fails."""

from __future__ import annotations

from mlir import ir
from mlir.passmanager import PassManager

__all__ = ["PipelinePassManager"]


class PipelinePassManager(PassManager):
    """An upstream `PassManager` on `builtin.module` whose `run` is atomic per pipeline: when any
    pass fails, the module is put back as it was before the first pass, so that no caller ever sees
    half-rewritten IR (`ll-linearize-encodings` done, `ll-to-simt` failed). Each of our passes
    already leaves the module unchanged when it fails; upstream pipelines do not promise it.

    Postcondition of `run(module)`: it returns with the pipeline's result, or raises `MLIRError`
    (the diagnostics of the failure) with the module's body and attributes as before the call.
    Operations of the old body held by the caller are invalid after a failure (they are replaced
    by equal copies).

    `read_only`: the pipeline's passes only read the IR (`ll-verify`), so there is nothing to put
    back and no snapshot is taken (a copy of a 100,000-op module costs about 2.5 µs per op).
    `build_pass_manager` sets it once its passes are added; adding any pass later clears it."""

    def __init__(self, anchor_op: str, context: ir.Context | None = None) -> None:
        super().__init__(anchor_op, context)
        self.read_only = False

    def add(self, *args, **kwargs):
        self.read_only = False  # a pass added afterwards may change the IR
        return super().add(*args, **kwargs)

    def run(self, operation) -> None:
        operation = operation.operation
        if self.read_only or operation.name != "builtin.module":  # upstream refuses a non-module
            super().run(operation)
            return
        snapshot = operation.clone(ip=False)  # detached, even under an active InsertionPoint
        try:
            super().run(operation)
        except BaseException:  # MLIRError, and a Ctrl-C between two passes too
            _restore(operation, snapshot)
            raise
        finally:
            snapshot.erase()


def _restore(operation: ir.Operation, snapshot: ir.Operation) -> None:
    """Put `snapshot`'s single-block body and its attributes into `operation` (a `builtin.module`)."""
    body = operation.regions[0].blocks[0]
    for op in list(body.operations):
        op.erase()
    for op in list(snapshot.regions[0].blocks[0].operations):
        op.detach_from_parent()
        body.append(op)
    for name in list(operation.attributes):
        del operation.attributes[name]
    for name in list(snapshot.attributes):
        operation.attributes[name] = snapshot.attributes[name]
