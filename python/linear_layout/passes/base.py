"""Passes and named pipelines, and the pass manager that mixes them with upstream passes.

    pm = build_pass_manager("builtin.module(ll-verify, canonicalize, func.func(cse))", context)
    pm.run(module.operation)

A pass is a frozen dataclass whose fields are its options (`options.py`); a named pipeline
(`ll-lower`) is a `Pipeline` that stands for the passes it lists. The registry is
`registry.py`, the error reporting `diagnostics.py`, the atomic pass manager `atomic.py`.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Sequence
from typing import ClassVar

from mlir import ir
from mlir.passmanager import PassManager

from .atomic import PipelinePassManager
from .diagnostics import native_stderr, report_exception
from .options import Configurable
from .pipeline import PipelineElement, PipelineError, parse_pipeline
from .registry import get_pass, is_registered

__all__ = ["Pass", "Pipeline", "add_pipeline", "build_pass_manager"]


class Pass(Configurable, abc.ABC):
    """Base of this project's passes: frozen dataclasses whose fields are their options, with
    `argument` (the command-line name) and `summary`.

    A pass finds every problem first (`problems`) and changes the IR only when there is none
    (`apply`), so that a failing pass leaves the module unchanged.

    `op_name` is the op the pass runs on (MLIR's `OperationPass<OpT>`), or None for a pass that
    runs on any op. A pass that writes outside the op it is given (`ll-to-simt` adds a `gpu.module`
    to the module) must not be nested under a smaller op: as upstream nested pass managers promise,
    a pass changes nothing outside its anchor."""

    op_name: ClassVar[str | None] = None
    #: False for a pass that only reads the IR (`ll-verify`): a pipeline of such passes needs
    #: no snapshot to be atomic (`PipelinePassManager.read_only`).
    changes_ir: ClassVar[bool] = True

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
    """Run `pass_` on `targets` (problems of all first); report and return False on failure."""
    try:
        problems = [problem for target in targets for problem in pass_.problems(target)]
        for location, message in problems:
            location.emit_error(message)
        if problems:
            return False
        for target in targets:
            pass_.apply(target)
    except Exception as error:  # a bug in a pass must not kill the driver
        report_exception(pass_.argument, error, targets[0].location if targets else ir.Location.unknown())
        return False
    return True


class Pipeline(Configurable):
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
    return any(item.children is None and is_registered(item.name) for item in element.walk())


def _one_line(message: str) -> str:
    """MLIR's multi-line pipeline errors as one line."""
    lines = [line.strip() for line in message.splitlines() if line.strip() and line.strip() != "^"]
    for line in lines:
        if "does not refer to a registered pass" in line:
            name = line.split("'")[1] if "'" in line else line
            return f"unknown pass '{name}' (see linear-layout-opt --list-passes)"
    lines = [line.split("error: ", 1)[-1].removeprefix(": ").removeprefix("<Pass-Options-Parser>: ") for line in lines]
    return "; ".join(dict.fromkeys(lines))


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
                # Only option values reach C++'s stderr: without options, stderr stays as it is.
                with native_stderr(native) if "{" in text else contextlib.nullcontext():
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
        elif element.children is None and is_registered(element.name):
            flush()
            _add_registered(pm, element, anchor)
        else:
            upstream.append(str(element))
    flush()


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
    elements = parse_pipeline(pipeline)
    pm = PipelinePassManager("builtin.module", context)
    add_pipeline(pm, elements)
    pm.read_only = _reads_only(elements)
    return pm


def _reads_only(elements: Sequence[PipelineElement]) -> bool:
    """Whether every pass of `elements` is one of ours that changes nothing (`Pass.changes_ir`);
    an upstream pass or a named pipeline counts as changing the IR."""
    for item in (item for element in elements for item in element.walk()):
        if item.children is not None:
            continue
        if not is_registered(item.name):
            return False
        pass_class = get_pass(item.name)
        if not (isinstance(pass_class, type) and issubclass(pass_class, Pass)) or pass_class.changes_ir:
            return False
    return True
