"""`linear-layout-opt`: an mlir-opt-style driver for IR using the `ttg` and `ll` dialects.

    linear-layout-opt input.mlir --pass-pipeline='builtin.module(ll-verify, canonicalize)' -o out.mlir

Pipelines mix this project's Python passes and upstream passes. The input is checked by
`ll-verify` right after parsing, as mlir-opt runs the verifier. Every user error is reported as
one line, `file:line:col: error: message`, with exit code 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import re
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from mlir import ir

from ..core.limits import LimitError, check_text_limits
from ..core.targets import NvptxTarget, TargetError, amdgpu_target, nvptx_target, ptx_features
from ..ir import DIALECTS, dialect_file, load_dialects, print_module
from ..ir.upstream import file_location
from ..passes import (
    PipelineError,
    build_pass_manager,
    emit_amdgcn,
    emit_ptx,
    emit_rocdl_llvm,
    get_pass,
    parse_pipeline,
    pass_names,
)
from ..ttgir import TtgirError, check_target, name_loop_arguments, print_ttgir, ttgir_to_mlir
from ..ttgir.formats import UNREGISTERED
from ..ttgir.reader import without_trailing_loc
from .cli import guarded_main

__all__ = ["main"]

_SPLIT_MARKER = re.compile(r"^[ \t]*// -----[ \t]*$", re.MULTILINE)
# mlir-opt's syntax: `// expected-error@+1 {{message}}` (also @-N, @N, @above, @below).
_EXPECTATION = re.compile(r"expected-(error|warning|note|remark)(@[+-]?\d+|@above|@below)?\s*\{\{(.*)\}\}")


class UserError(Exception):
    """Bad input or arguments: reported as one line, `where: error: message`, exit code 1."""

    def __init__(self, message: str, where: str = "linear-layout-opt") -> None:
        super().__init__(message)
        self.where = where


@dataclass
class Diagnostic:
    severity: str  # "error", "warning", "note", "remark"
    line: int | None
    column: int | None
    message: str
    file: str | None = None  # the location's own file, when it is not the input (TTGIR: the Python source)

    def render(self, filename: str) -> str:
        filename = self.file or filename
        where = filename if self.line is None else f"{filename}:{self.line}:{self.column}"
        return f"{where}: {self.severity}: {' '.join(self.message.split())}"


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    seen: bool = False


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit code 1, like every other user error
        raise UserError(message)


def _argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="linear-layout-opt",
        description="Parse, verify, transform and print MLIR that uses the ttg and ll dialects.",
    )
    parser.add_argument("input", nargs="?", default="-", help="input file ('-' or nothing: stdin)")
    parser.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    parser.add_argument(
        "--pass-pipeline",
        "-p",
        default="",
        metavar="PIPELINE",
        help="passes to run, e.g. 'builtin.module(ll-verify, canonicalize, func.func(cse))'",
    )
    parser.add_argument(
        "--split-input-file", action="store_true", help="process each '// -----'-separated chunk as its own module"
    )
    parser.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check diagnostics against '// expected-error@+N {{...}}' comments",
    )
    parser.add_argument(
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print the IR after every pass of the pipeline (to stderr)",
    )
    parser.add_argument("--mlir-print-op-generic", action="store_true", help="print operations in generic form")
    parser.add_argument(
        "--ttgir",
        action="store_true",
        help="read and write Triton's TTGIR syntax (the default for a .ttgir input file)",
    )
    parser.add_argument(
        "--emit-ptx",
        action="store_true",
        help="after the pipeline, compile the gpu.module kernels with the stock "
        "gpu-lower-to-nvvm-pipeline and print their PTX instead of the IR",
    )
    parser.add_argument(
        "--ptx-chip",
        default="sm_90",
        metavar="CHIP",
        help="target of --emit-ptx (default: sm_90): one of LLVM's NVPTX chips, sm_20 ... sm_121f",
    )
    parser.add_argument(
        "--ptx-features",
        default=None,
        metavar="+ptxNN",
        help="PTX ISA version for --emit-ptx (default: the oldest the chip and the kernel's "
        "instructions accept, e.g. +ptx86 for sm_100)",
    )
    parser.add_argument(
        "--emit-amdgcn",
        action="store_true",
        help="after the pipeline, compile the gpu.module kernels with the stock ROCDL path "
        "(rocdl-attach-target, convert-gpu-to-rocdl, gpu-module-to-binary) and print their AMDGCN; "
        "an error where the MLIR build has no AMDGPU target",
    )
    parser.add_argument(
        "--emit-rocdl-llvm",
        action="store_true",
        help="after the pipeline, convert the gpu.module kernels with the stock ROCDL path and print "
        "their LLVM IR for amdgcn-amd-amdhsa (needs no AMDGPU back end)",
    )
    parser.add_argument(
        "--amdgcn-chip",
        default="gfx942",
        metavar="CHIP",
        help="AMD target of --emit-amdgcn and --emit-rocdl-llvm (default: gfx942), e.g. gfx90a, gfx950",
    )
    parser.add_argument("--list-passes", action="store_true", help="list this project's passes and exit")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def _version() -> str:
    try:
        mlir_version = version("xtc-mlir-python-bindings")
    except PackageNotFoundError:
        mlir_version = "unknown"
    return f"linear-layout-opt {version('linear-layout')} (MLIR Python bindings {mlir_version})"


def _list_passes() -> str:
    lines = ["Passes from linear-layout:"]
    for name in pass_names():
        try:
            cls = get_pass(name)
        except ImportError as error:  # one broken pass must not hide the others
            lines.append(f"  {name:<24} (cannot be loaded: {error})")
            continue
        lines.append(f"  {name:<24} {cls.summary}")
        for option, default, help_text in cls.options():
            lines.append(
                f"    {option}={str(default).lower() if isinstance(default, bool) else default}"
                f"{'  ' + help_text if help_text else ''}"
            )
    lines.append("Every upstream MLIR pass (canonicalize, cse, ...) is available too; see mlir-opt --list-passes.")
    return "\n".join(lines)


def _read_input(path: str) -> tuple[str, str]:
    """(display name, text) of the input."""
    if path == "-":
        name, data = "<stdin>", sys.stdin.buffer.read()
    else:
        name = path
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as error:
            raise UserError(f"cannot open input file '{path}': {error.strerror}") from None
    if b"\0" in data:
        raise UserError("input is binary data, not MLIR text", name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"input is not UTF-8 text (bad byte at offset {error.start})", name) from None
    if not text.strip():
        raise UserError("empty input", name)
    return name, text


def _chunks(text: str, split: bool) -> list[tuple[int, str]]:
    """(first line number - 1, text) of each chunk to process."""
    if not split:
        return [(0, text)]
    chunks, start = [], 0
    for marker in _SPLIT_MARKER.finditer(text):
        chunks.append((text.count("\n", 0, start), text[start : marker.start()]))
        start = marker.end() + 1
    chunks.append((text.count("\n", 0, start), text[start:]))
    return chunks


def _file_position(location) -> tuple[int | None, int | None]:
    """The line and column of the first file location inside `location` (`ir.upstream.file_location`)."""
    found = file_location(location)
    return (None, None) if found is None else (found.start_line, found.start_col)


def _file_name(location) -> str | None:
    """The file of the first file location inside `location` (None: none)."""
    found = file_location(location)
    return None if found is None else found.filename


_OP_MESSAGE = re.compile(r"'([\w.$-]+)' op ")


def _at_op_name(diagnostic: Diagnostic, text: str) -> Diagnostic:
    """`diagnostic` (`'tt.splat' op ...` at a line of the generic text) at the column where that
    line of the TTGIR `text` names the op, as Triton's parser places it; unchanged when the line
    does not name it."""
    match = _OP_MESSAGE.match(diagnostic.message)
    lines = text.split("\n")
    if match is None or diagnostic.line is None or not 0 < diagnostic.line <= len(lines):
        return diagnostic
    line = lines[diagnostic.line - 1]
    name = match.group(1).replace(UNREGISTERED, "ttg.")
    found = re.search(rf'"{re.escape(name)}"|(?<![\w.]){re.escape(name)}(?![\w.])', line)
    return diagnostic if found is None else dataclasses.replace(diagnostic, column=found.start() + 1)


def _to_diagnostic(info) -> Diagnostic:
    line, column = _file_position(info.location)
    return Diagnostic(str(info.severity).rsplit(".", 1)[-1].lower(), line, column, info.message)


def _expectations(chunk: str, line_offset: int) -> list[Expectation]:
    expectations = []
    for index, text in enumerate(chunk.split("\n")):
        line = line_offset + index + 1
        for match in _EXPECTATION.finditer(text):
            severity, where, message = match.groups()
            target = line
            if where == "@above":
                target = line - 1
            elif where == "@below":
                target = line + 1
            elif where and where[1] in "+-":
                target = line + int(where[1:])
            elif where:
                target = int(where[1:])
            expectations.append(Expectation(severity, target, message.strip()))
    return expectations


def _check_expectations(diagnostics: list[Diagnostic], expectations: list[Expectation], filename: str) -> list[str]:
    problems = []
    for diagnostic in diagnostics:
        match = next(
            (
                e
                for e in expectations
                if not e.seen
                and e.severity == diagnostic.severity
                and e.line == diagnostic.line
                and e.text in diagnostic.message
            ),
            None,
        )
        if match is not None:
            match.seen = True
        elif diagnostic.severity != "note":  # notes are only checked when expected
            problems.append(
                Diagnostic(
                    diagnostic.severity,
                    diagnostic.line,
                    diagnostic.column,
                    f"unexpected {diagnostic.severity}: {diagnostic.message}",
                ).render(filename)
            )
    for expectation in expectations:
        if not expectation.seen:
            problems.append(
                f"{filename}:{expectation.line}: error: expected {expectation.severity} "
                f'"{expectation.text}" was not produced'
            )
    return problems


class _TtgirInputError(Exception):
    """Malformed TTGIR, reported as a diagnostic at its line."""

    def __init__(self, error) -> None:
        super().__init__(str(error))
        self.line = error.line
        self.column = error.column
        self.bare = str(error).split(": ", 1)[1] if error.line else str(error)
        self.notes = error.notes


class _Driver:
    def __init__(self, args, filename: str) -> None:
        self.args = args
        self.filename = filename
        self.context = ir.Context()
        # MLIR verifies sibling isolated ops (nested modules, functions) on worker threads, and their
        # diagnostics reach the Python handler without the GIL: nanobind aborts the process.
        self.context.enable_multithreading(False)
        load_dialects(self.context)
        self.ttgir = args.ttgir or filename.endswith(".ttgir")
        if self.ttgir:  # Triton's tt/ttng/amdg ops stay unregistered (see linear_layout.ttgir)
            self.context.allow_unregistered_dialects = True
        self.verify_pm = build_pass_manager("ll-verify", self.context)
        self.user_pm = None
        self.ptx_target = _ptx_target(args) if args.emit_ptx else None
        self.backend = _backend(self, args)
        if parse_pipeline(args.pass_pipeline):
            self.user_pm = build_pass_manager(args.pass_pipeline, self.context)
            if args.mlir_print_ir_after_all:
                self.user_pm.enable_ir_printing(print_generic_op_form=args.mlir_print_op_generic)

    def process(self, chunk: str, line_offset: int) -> tuple[str | None, list[Diagnostic]]:
        """(printed result or None on failure, diagnostics) for one chunk."""

        limit_error = _check_limits(chunk, line_offset)
        if limit_error is not None:
            return None, [limit_error]
        diagnostics: list[Diagnostic] = []

        def collect(info) -> bool:  # warnings and remarks; errors arrive with the MLIRError
            diagnostics.append(_to_diagnostic(info))
            return True

        handler = self.context.attach_diagnostic_handler(collect)
        try:
            try:
                # Leading newlines keep the line numbers of the original file.
                module = ir.Module.parse("\n" * line_offset + self._as_mlir(chunk), self.context)
                self._check_target(module, chunk)
                if self.ttgir:
                    name_loop_arguments(module, chunk)
                for pm in (self.verify_pm, self.user_pm, self.verify_pm if self.user_pm else None):
                    if pm is not None:
                        pm.run(module.operation)
                if self.backend is not None:
                    return self.backend(module), diagnostics
            except _TtgirInputError as error:
                notes = [Diagnostic("note", line + line_offset, column, text) for line, column, text in error.notes]
                return None, [
                    Diagnostic("error", error.line + line_offset or None, error.column or None, error.bare),
                    *notes,
                ]
            except ir.MLIRError as error:
                text = "\n" * line_offset + chunk
                errors = [_explain_unknown_name(_to_diagnostic(info), text) for info in error.error_diagnostics]
                located = self._source_files(errors, error, text)
                diagnostics.extend(self._locate_unlocated(located, chunk, line_offset))
                if not error.error_diagnostics:
                    diagnostics.append(Diagnostic("error", None, None, str(error)))
                return None, diagnostics
        finally:
            handler.detach()
        if self.ttgir and not self.args.mlir_print_op_generic:
            return print_ttgir(module), diagnostics
        return print_module(module, generic=self.args.mlir_print_op_generic), diagnostics

    def _source_files(self, diagnostics: list[Diagnostic], error=None, text: str = "") -> list[Diagnostic]:
        """TTGIR op locations are Python source positions: name their file, not the input's. An
        op without one sits at its line of the generic text MLIR parsed (`-`), the TTGIR's line
        but not its column: its error goes to the op's name on that line of `text`."""
        if not self.ttgir or error is None:
            return diagnostics
        files = [_file_name(info.location) for info in error.error_diagnostics]
        located = [
            _at_op_name(d, text) if f == "-" else dataclasses.replace(d, file=f) if f else d
            for d, f in zip(diagnostics, files)
        ]
        return located + diagnostics[len(files) :]

    def _locate_unlocated(self, errors: list[Diagnostic], chunk: str, line_offset: int) -> list[Diagnostic]:
        """TTGIR ops at `loc(unknown)` (Triton's constants) or at a bare name have no position:
        place their errors at the op's line of the input instead. The chunk is processed again
        without its trailing `loc(...)`s (so each op sits at its own line:col) and each unplaced
        error takes the position of the first error of the same message there."""
        if not self.ttgir or all(error.line is not None for error in errors):
            return errors
        stripped = "\n".join(without_trailing_loc(line) for line in chunk.split("\n"))
        placed = [d for d in self.process(stripped, line_offset)[1] if d.severity == "error" and d.line is not None]
        located = []
        for error in errors:
            twin = next((d for d in placed if d.message == error.message), None) if error.line is None else None
            if twin is not None:
                placed.remove(twin)
                error = dataclasses.replace(error, line=twin.line, column=twin.column, file=None)
            located.append(error)
        return located

    def _as_mlir(self, chunk: str) -> str:
        """The chunk as MLIR text: TTGIR is rewritten to generic form, line for line."""
        if not self.ttgir:
            return chunk

        try:
            return ttgir_to_mlir(chunk)
        except TtgirError as error:
            raise _TtgirInputError(error) from None

    @staticmethod
    def _check_target(module: ir.Module, chunk: str) -> None:
        """An unknown `ttg.target` is an error at the attribute, before any pass reads it."""
        try:
            check_target(module, chunk)
        except TtgirError as error:
            raise _TtgirInputError(error) from None

    def _ptx(self, module) -> str:
        """Compile with the stock NVVM pipeline; the PTX of every kernel object, one after another."""
        assert self.ptx_target is not None  # _ptx runs only with --emit-ptx
        try:
            return emit_ptx(module, self.ptx_target.chip, self.args.ptx_features)
        except ValueError as error:  # PtxError, TargetError
            raise UserError(f"--emit-ptx: {error}") from None

    def _amdgcn(self, module) -> str:
        """Compile with the stock ROCDL path; the AMDGCN of every kernel object."""
        try:
            return emit_amdgcn(module, self.args.amdgcn_chip)
        except ValueError as error:  # AmdgcnError, PtxError
            raise UserError(f"--emit-amdgcn: {error}") from None

    def _rocdl_llvm(self, module) -> str:
        """Convert with the stock ROCDL path; the LLVM IR of every gpu.module."""
        try:
            return emit_rocdl_llvm(module, self.args.amdgcn_chip)
        except ValueError as error:  # AmdgcnError, PtxError
            raise UserError(f"--emit-rocdl-llvm: {error}") from None


def _backend(driver, args):
    """The code emitter the flags ask for (None: print the IR), its target checked before any IR
    is read: at most one of --emit-ptx, --emit-amdgcn and --emit-rocdl-llvm."""
    chosen = [flag for flag in ("emit_ptx", "emit_amdgcn", "emit_rocdl_llvm") if getattr(args, flag)]
    if len(chosen) > 1:
        names = " and ".join("--" + flag.replace("_", "-") for flag in chosen)
        raise UserError(f"{names} cannot be combined")
    if not chosen:
        return None
    if chosen[0] == "emit_ptx":
        return driver._ptx
    try:
        amdgpu_target(args.amdgcn_chip)
    except TargetError as error:
        raise UserError(f"--amdgcn-chip: {error}") from None
    return driver._amdgcn if chosen[0] == "emit_amdgcn" else driver._rocdl_llvm


def _ptx_target(args) -> NvptxTarget:
    """The validated --ptx-chip (and the format of --ptx-features), before any IR is read."""
    try:
        target = nvptx_target(args.ptx_chip)
    except TargetError as error:
        raise UserError(f"--ptx-chip: {error}") from None
    if args.ptx_features is not None:
        try:
            ptx_features(target, (), args.ptx_features)
        except TargetError as error:
            raise UserError(f"--ptx-features: {error}") from None
    return target


# MLIR's whole message for an IRDL dialect's attribute or type name it does not know.
_UNKNOWN_DYNAMIC = re.compile(r"expected dynamic (attribute|type)")
_NAME_AT = re.compile(r"[A-Za-z_][\w$]*")


@functools.cache
def _dialect_names(dialect: str, kind: str) -> tuple[str, ...]:
    """The attribute (or type) names the IRDL file of ``dialect`` defines, in file order."""
    return tuple(re.findall(rf"irdl\.{kind} @(\w+)", dialect_file(dialect).read_text()))


def _explain_unknown_name(diagnostic: Diagnostic, text: str) -> Diagnostic:
    """MLIR says only "expected dynamic attribute" for `#ttg.bloked<...>` (at the name): name it,
    suggest the nearest known one and list the dialect's attributes (or types)."""
    match = _UNKNOWN_DYNAMIC.fullmatch(diagnostic.message.strip())
    if match is None or diagnostic.line is None or diagnostic.column is None:
        return diagnostic
    lines = text.split("\n")
    line = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
    start = diagnostic.column - 1
    name = _NAME_AT.match(line, start)
    dialect = re.search(r"([A-Za-z_]\w*)\.$", line[:start])
    if name is None or dialect is None or dialect.group(1) not in DIALECTS:
        return diagnostic
    kind = match.group(1)
    sigil = "#" if kind == "attribute" else "!"
    known = [f"{sigil}{dialect.group(1)}.{n}" for n in _dialect_names(dialect.group(1), kind)]
    written = f"{sigil}{dialect.group(1)}.{name.group(0)}"
    close = difflib.get_close_matches(written, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    message = f"unknown {kind} {written}{hint}; the known {dialect.group(1)} {kind}s are {', '.join(known)}"
    return dataclasses.replace(diagnostic, message=message)


def _check_limits(chunk: str, line_offset: int) -> Diagnostic | None:
    """The nesting/size guard of core.limits, as a diagnostic at the file position, or None."""
    try:
        check_text_limits(chunk)
    except LimitError as error:
        assert error.position is not None  # check_text_limits always says where
        return Diagnostic("error", error.position.line + line_offset, error.position.column, error.what)
    return None


def _run(argv: list[str] | None) -> int:
    args = _argument_parser().parse_args(argv)
    if args.version:
        print(_version())
        return 0
    if args.list_passes:
        print(_list_passes())
        return 0

    try:
        filename, text = _read_input(args.input)
        driver = _Driver(args, filename)
    except PipelineError as error:
        raise UserError(str(error)) from None
    outputs, failed = [], False
    for line_offset, chunk in _chunks(text, args.split_input_file):
        output, diagnostics = driver.process(chunk, line_offset)
        if args.verify_diagnostics:
            problems = _check_expectations(diagnostics, _expectations(chunk, line_offset), filename)
            for problem in problems:
                print(problem, file=sys.stderr)
            failed |= bool(problems)
        else:
            for diagnostic in diagnostics:
                if diagnostic.severity != "note":
                    print(diagnostic.render(filename), file=sys.stderr)
            failed |= output is None
        if output is not None:
            outputs.append(output)
    if failed and not args.verify_diagnostics:
        return 1
    result = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
        sys.stdout.flush()
    else:
        try:
            with open(args.output, "w") as f:
                f.write(result)
        except OSError as error:
            raise UserError(f"cannot write output file '{args.output}': {error.strerror}") from None
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    return guarded_main(
        "linear-layout-opt",
        lambda: _run(argv),
        (UserError,),
        lambda error: f"{getattr(error, 'where', '')}: error: {error}",
    )


if __name__ == "__main__":
    sys.exit(main())
