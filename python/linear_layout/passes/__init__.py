"""This project's passes, registered by command-line name, and pipelines mixing them with
upstream MLIR passes.

    pm = build_pass_manager("builtin.module(ll-verify, canonicalize, func.func(cse))", context)
    pm.run(module.operation)

Each pass lives in its own module, named after its command-line name (`ll-verify` in
`ll_verify.py`), and is imported only when used. A pass is a dataclass whose fields are its
options (`max_errors` is written `max-errors=...` on the command line). A named pipeline
(`ll-lower`) is a `Pipeline`: it stands for the passes it lists.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from mlir import ir
from mlir.passmanager import PassManager

from .pipeline import PipelineElement, PipelineError, parse_pipeline

__all__ = [
    "Pass",
    "Pipeline",
    "PipelineError",
    "PipelinePassManager",
    "build_pass_manager",
    "get_pass",
    "pass_names",
    "parse_pipeline",
]

# command-line name -> module in this package
_REGISTRY = {
    "ll-verify": "ll_verify",
    "ll-lower-apply": "ll_lower_apply",
    "ll-linearize-encodings": "ll_linearize_encodings",
    "ll-to-simt": "ll_to_simt",
    "ll-lower": "ll_lower",
    "ll-explain-conversions": "ll_explain_conversions",
}


def pass_names() -> list[str]:
    return sorted(_REGISTRY)


def get_pass(name: str) -> type[Pass] | type[Pipeline]:
    """The pass (or named pipeline) class registered as `name`; KeyError if there is none."""
    module = importlib.import_module(f"{__name__}.{_REGISTRY[name]}")
    return module.PASS


def _parse_option_value(pass_name: str, field: dataclasses.Field, text: str):
    kind = field.type if isinstance(field.type, type) else {"bool": bool, "int": int, "str": str}.get(field.type, str)
    if kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1", ""):
            return True
        if lowered in ("false", "0"):
            return False
    elif kind is int:
        try:
            return int(text, 0)
        except ValueError:
            pass
    else:
        return text.strip("\"'")
    raise PipelineError(
        f"bad value '{text}' for option '{_option_name(field)}' of pass '{pass_name}' (expected {kind.__name__})"
    )


def _option_name(field: dataclasses.Field) -> str:
    return field.name.replace("_", "-")


class _Configurable:
    """Options from the command line: the dataclass fields of a pass or pipeline."""

    argument: ClassVar[str]
    summary: ClassVar[str]

    @classmethod
    def options(cls) -> list[tuple[str, object, str]]:
        """(command-line name, default, help) of each option."""
        return [(_option_name(f), f.default, f.metadata.get("help", "")) for f in dataclasses.fields(cast(Any, cls))]

    @classmethod
    def from_options(cls, text: str):
        """The pass configured by `text`, the inside of `{...}` (`a=1 b=true`)."""
        fields = {_option_name(f): f for f in dataclasses.fields(cast(Any, cls))}
        values = {}
        for item in text.split():
            name, _, value = item.partition("=")
            field = fields.get(name)
            if field is None:
                known = ", ".join(fields) or "none"
                raise PipelineError(f"unknown option '{name}' for pass '{cls.argument}' (options: {known})")
            values[field.name] = _parse_option_value(cls.argument, field, value)
        return cls(**values)


class Pass(_Configurable, abc.ABC):
    """Base of this project's passes: frozen dataclasses whose fields are their options, with
    `argument` (the command-line name) and `summary`.

    A pass finds every problem first (`problems`) and changes the IR only when there is none
    (`apply`), so that a failing pass leaves the module unchanged.

    `op_name` is the op the pass runs on (MLIR's `OperationPass<OpT>`), or None for a pass that
    runs on any op. A pass that writes outside the op it is given (`ll-to-simt` adds a `gpu.module`
    to the module) must not be nested under a smaller op: as upstream nested pass managers promise,
    a pass changes nothing outside its anchor."""

    op_name: ClassVar[str | None] = None

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        """What stops the pass on `op`, as (location, message) pairs; nothing is changed."""
        return []

    @abc.abstractmethod
    def apply(self, op: ir.Operation) -> None:
        """Rewrite `op`; called only when `problems` found none on every op the pass runs on."""

    def run(self, op: ir.Operation) -> bool:
        """`problems`, reported with `location.emit_error`, then `apply` when there are none."""
        if self.op_name is not None and op.operation.name != self.op_name:
            op.location.emit_error(f"pass '{self.argument}' runs on '{self.op_name}', not on '{op.operation.name}'")
            return False
        return _run_on(self, [op])

    def check_anchor(self, anchor: Sequence[str]) -> None:
        """PipelineError if the pass cannot run on the ops `anchor` leads to (the root module when empty)."""
        anchored = anchor[-1] if anchor else "builtin.module"
        if self.op_name is not None and anchored != self.op_name:
            raise PipelineError(
                f"pass '{self.argument}' runs on '{self.op_name}' (it changes the IR outside a smaller op), "
                f"so it cannot be nested in '{anchored}(...)'; write it at the level of a {self.op_name}, "
                f"e.g. 'builtin.module({self.argument})'"
            )

    def add_to(self, pm: PassManager, anchor: Sequence[str] = ()) -> None:
        """Append this pass to `pm`, run on each op reached through the nested op names `anchor`
        (e.g. `("func.func",)`), or on the pass manager's root op when `anchor` is empty;
        PipelineError if the pass cannot run there (`op_name`).

        The upstream bindings abort when a Python pass is nested under an op-specific pass
        manager, so the pass is generic and finds its anchors itself (direct children at each
        level, as nested MLIR pass managers do)."""

        self.check_anchor(anchor)

        def run(op: ir.Operation, pass_) -> None:
            if not _run_on(self, _anchored(op.operation, tuple(anchor))):
                pass_.signal_pass_failure()

        pm.add(run, name=type(self).__name__, argument=self.argument, description=self.summary)


def _run_on(pass_: Pass, targets: list[ir.Operation]) -> bool:
    try:
        problems = [problem for target in targets for problem in pass_.problems(target)]
        for location, message in problems:
            location.emit_error(message)
        if problems:
            return False
        for target in targets:
            pass_.apply(target)
    except Exception as error:  # a bug in a pass must not kill the driver
        location = targets[0].location if targets else ir.Location.unknown()
        location.emit_error(f"pass '{pass_.argument}' failed: {type(error).__name__}: {error}")
        return False
    return True


class Pipeline(_Configurable):
    """A named pipeline: used like a pass on the command line and in `build_pass_manager`, it
    appends the passes of `PIPELINE` (nested under the same anchor)."""

    PIPELINE: ClassVar[str]

    def add_to(self, pm: PassManager, anchor: Sequence[str] = ()) -> None:
        add_pipeline(pm, parse_pipeline(self.PIPELINE), anchor)


def _anchored(op: ir.Operation, anchor: tuple[str, ...]) -> list[ir.Operation]:
    """The ops reached from `op` through the op names `anchor` (direct children at each level).
    Names are compared on the operation: a `func.FuncOp` view's `.name` is its symbol."""
    if not anchor:
        return [op]
    found = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if child.operation.name == anchor[0]:
                    found += _anchored(child.operation, anchor[1:])
    return found


def _contains_python_pass(element: PipelineElement) -> bool:
    return any(item.children is None and item.name in _REGISTRY for item in element.walk())


def _one_line(message: str) -> str:
    """MLIR's multi-line pipeline errors as one line."""
    lines = [line.strip() for line in message.splitlines() if line.strip() and line.strip() != "^"]
    for line in lines:
        if "does not refer to a registered pass" in line:
            name = line.split("'")[1] if "'" in line else line
            return f"unknown pass '{name}' (see linear-layout-opt --list-passes)"
    lines = [line.split("error: ", 1)[-1].removeprefix(": ").removeprefix("<Pass-Options-Parser>: ") for line in lines]
    return "; ".join(dict.fromkeys(lines))


@contextlib.contextmanager
def _native_stderr(captured: list[str]):
    """Collect what C++ writes to file descriptor 2 (LLVM's option parser reports bad option
    values there, not in the exception), so that it becomes part of our one-line error."""
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode(errors="replace"))


def _nest(anchor: Sequence[str], text: str) -> str:
    for name in reversed(anchor):
        text = f"{name}({text})"
    return text


def add_pipeline(pm: PassManager, elements: Sequence[PipelineElement], anchor: Sequence[str] = ()) -> None:
    """Append `elements`, nested under the op names `anchor`, to `pm`."""
    upstream: list[str] = []

    def flush() -> None:
        if upstream:
            text = _nest(anchor, ", ".join(upstream))
            native: list[str] = []
            try:
                with _native_stderr(native):
                    pm.add(text)
            except ValueError as error:
                raise PipelineError(_one_line("".join(native) + str(error))) from None
            upstream.clear()

    for element in elements:
        if element.children is not None and _contains_python_pass(element):
            flush()
            if element.options:
                raise PipelineError(f"operation anchor '{element.name}' takes no options")
            add_pipeline(pm, element.children, (*anchor, element.name))
        elif element.children is None and element.name in _REGISTRY:
            flush()
            _add_registered(pm, element, anchor)
        else:
            upstream.append(str(element))
    flush()


class PipelinePassManager(PassManager):
    """An upstream `PassManager` on `builtin.module` whose `run` is atomic per pipeline: when any
    pass fails, the module is put back as it was before the first pass, so that no caller ever sees
    half-rewritten IR (`ll-linearize-encodings` done, `ll-to-simt` failed). Each of our passes
    already leaves the module unchanged when it fails; upstream pipelines do not promise it.

    Postcondition of `run(module)`: it returns with the pipeline's result, or raises `MLIRError`
    (the diagnostics of the failure) with the module's body and attributes as before the call.
    Operations of the old body held by the caller are invalid after a failure (they are replaced
    by equal copies)."""

    def run(self, operation) -> None:
        operation = operation.operation
        if operation.name != "builtin.module":  # upstream refuses it before any pass runs
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


def _add_registered(pm: PassManager, element: PipelineElement, anchor: Sequence[str]) -> None:
    """Append one of our passes or named pipelines; an error inside a named pipeline names it."""
    configured = get_pass(element.name).from_options(element.options)
    try:
        configured.add_to(pm, anchor)
    except PipelineError as error:
        if isinstance(configured, Pass):
            raise
        raise PipelineError(f"in pipeline '{element.name}': {error}") from None


def build_pass_manager(pipeline: str, context: ir.Context | None = None) -> PipelinePassManager:
    """A `PipelinePassManager` (an upstream `PassManager` on `builtin.module`, atomic per run)
    running `pipeline`, which may mix this project's passes and upstream ones. Raises
    PipelineError (a ValueError) with a one-line message for bad syntax, unknown passes, bad
    options and passes nested where they cannot run."""
    context = context or ir.Context.current
    pm = PipelinePassManager("builtin.module", context)
    add_pipeline(pm, parse_pipeline(pipeline))
    return pm
