"""Ops of other dialects, carried through MLIR as text: reading never depends on MLIR 22 agreeing
with the LLVM that Triton 3.9 was built with.

Triton writes ops of upstream dialects into TTGIR (`rocdl.sched.barrier none` and
`rocdl.s.setprio 1` in gfx942's ping-pong matmuls, `math.exp`, `ub.poison`, ...) in its own
LLVM's syntax, and MLIR 22's parsers for those ops may disagree (MLIR 22 rejects
`rocdl.sched.barrier none`). Only the dialects that make up a kernel's structure,
`PARSED_DIALECTS`, are parsed by MLIR; every other op without regions is *foreign*: it is read as
an op of the unregistered `foreign` dialect that keeps the op's text,

    rocdl.s.setprio 1 loc(#loc5)
    ->  "foreign.rocdl.s.setprio"() {syntax = ["rocdl.s.setprio 1"]} : () -> () loc(#loc5)

    %y = math.exp %x : tensor<128xf32, #blocked>
    ->  %y = "foreign.math.exp"(%x) {syntax = ["math.exp ", " : tensor<128xf32, #ttg.blocked<{...}>>"]}
            : (tensor<128xf32, #ttg.blocked<{...}>>) -> tensor<128xf32, #ttg.blocked<{...}>>

`syntax` is the op's text (its name as written included), cut at each use of a value: the values are the op's
operands (in order of use), so MLIR renames them freely and passes see real def-use edges and
types; the result types come from the text (the type after the last top-level `:`, or after
`to`). The writer puts the current operand names back between the pieces, which restores the
text byte for byte. Alias references in the text are expanded (the writer's aliasing names them
again, as everywhere else).

Lowering needs the real ops. `materialize(root)` parses each foreign op's text with MLIR 22 (in a
one-op function of the operand and result types, at the op's own location) and puts the op MLIR
builds in its place: the same op, now an op of its upstream dialect (`math.exp`, ...). An op whose
text MLIR 22 does not understand stays foreign and is reported (`MaterializeError`), so a kernel
that uses it is an error at that op, never a silent change of meaning.
"""

from __future__ import annotations

import re

from mlir import ir

from ..ir.text import decode_mlir_string, mlir_string
from ..ir.walk import ops_where
from .syntax import Op, Token

__all__ = [
    "FOREIGN_PREFIX",
    "PARSED_DIALECTS",
    "MaterializeError",
    "foreign_problems",
    "materialize",
    "SYNTAX_ATTRIBUTE",
    "is_foreign",
    "opaque_syntax",
    "restore_text",
    "syntax_attribute",
]

FOREIGN_PREFIX = "foreign."
SYNTAX_ATTRIBUTE = "syntax"
# Upstream dialects that MLIR parses: the kernel's structure and integer/float arithmetic, whose
# syntax has been stable across LLVM versions (the round trip of the corpus proves it).
PARSED_DIALECTS = ("builtin", "arith", "scf", "cf")


def is_foreign(op: Op, triton_dialects: tuple[str, ...]) -> bool:
    """Whether `op` is carried as text: a dotted name outside Triton's and `PARSED_DIALECTS`,
    and no regions (an op with regions is left to MLIR)."""
    dialect, dot, _ = op.name.partition(".")
    return bool(dot) and dialect not in triton_dialects + PARSED_DIALECTS and not op.regions


def opaque_syntax(op: Op) -> tuple[list[str], list[Token]]:
    """The text of `op` from its name (as written: `rocdl.s.setprio`, `"llvm.foo"`) to its end,
    without its location, cut at each value it uses, and those value tokens:
    `pieces[0] values[0] pieces[1] ... values[-1] pieces[-1]`."""
    text = op.pieces[0] if op.pieces and isinstance(op.pieces[0], str) else ""
    tokens = list(op.tokens)
    if not tokens:
        return [text], []
    base = tokens[-1].end - len(text)  # `text` starts at the op's name and ends with its last token
    pieces, values, pos = [], [], 0
    for token in tokens:
        if token.kind == "value":
            pieces.append(text[pos : token.start - base])
            values.append(token)
            pos = token.end - base
    pieces.append(text[pos:])
    return pieces, values


def syntax_attribute(pieces: list[str]) -> str:
    """The `syntax` attribute entry of `pieces`, in MLIR's text."""
    return f"{SYNTAX_ATTRIBUTE} = [{', '.join(mlir_string(p) for p in pieces)}]"


def restore_text(name: str, syntax_value: str, operands: list[str]) -> str:
    """The op as Triton wrote it, from its generic form's name (`foreign.<name>`), the printed
    `syntax` array and its current operand names."""
    pieces = [decode_mlir_string(p) for p in _string_literals(syntax_value)]
    if len(pieces) != len(operands) + 1:
        raise ValueError(f"'{name}': {len(pieces)} syntax pieces for {len(operands)} operands")
    out = [pieces[0]]
    for operand, piece in zip(operands, pieces[1:]):
        out += [operand, piece]
    return "".join(out)


def _string_literals(array_text: str) -> list[str]:
    """The string literals of a printed `[ "a", "b" ]` array."""
    literals, index = [], 0
    while (start := array_text.find('"', index)) >= 0:
        end = start + 1
        while array_text[end] != '"':
            end += 2 if array_text[end] == "\\" else 1
        literals.append(array_text[start : end + 1])
        index = end + 1
    return literals


# MLIR's `error: "<buffer>":L:C: ` before the parser's message (the position is in our own wrapper).
_PARSER_PREFIX = re.compile(r'^(error: )?"[^"]*":\d+:\d+: ')


class MaterializeError(ValueError):
    """A foreign op whose text MLIR 22 cannot parse; `location` is the op's."""

    def __init__(self, location: ir.Location, message: str) -> None:
        super().__init__(message)
        self.location = location


def materialize(root: ir.Operation) -> list[MaterializeError]:
    """Replace every foreign op under `root` by the upstream op its text denotes; return the ops
    MLIR 22 cannot parse (those stay foreign).

    Postcondition: no `foreign.*` op is left under `root` unless it is among the errors."""
    errors = []
    for op in _foreign_ops(root):
        try:
            module = _parsed(op)
        except MaterializeError as error:
            errors.append(error)
            continue
        func = module.body.operations[0]
        _replace(op, func.regions[0].blocks[0].operations[0].operation)  # while `module` lives
    return errors


def foreign_problems(root: ir.Operation) -> list[tuple[ir.Location, str]]:
    """The foreign ops under `root` that `materialize` would leave foreign, with why (nothing is
    changed)."""
    problems = []
    for op in _foreign_ops(root):
        try:
            _parsed(op)
        except MaterializeError as error:
            problems.append((error.location, str(error)))
    return problems


def _foreign_ops(root: ir.Operation) -> list[ir.Operation]:
    return ops_where(root, lambda op: op.name.startswith(FOREIGN_PREFIX))


def _upstream_text(op: ir.Operation) -> str:
    """A module holding one function whose body is `op` as Triton wrote it, on arguments of its
    operand types, returning its results."""
    name = op.name[len(FOREIGN_PREFIX) :]
    arguments = [f"%a{i}" for i in range(len(op.operands))]
    text = restore_text(name, str(op.attributes[SYNTAX_ATTRIBUTE]), arguments)
    signature = ", ".join(f"{a}: {v.type}" for a, v in zip(arguments, op.operands))
    result_types = ", ".join(str(r.type) for r in op.results)
    count = len(op.results)
    defined = "" if count == 0 else ("%r = " if count == 1 else f"%r:{count} = ")
    returned = ", ".join("%r" if count == 1 else f"%r#{i}" for i in range(count))
    tail = f"func.return {returned} : {result_types}" if count else "func.return"
    return (
        f"func.func private @foreign({signature}) -> ({result_types}) {{\n  {defined}{text} {op.location}\n  {tail}\n}}"
    )


def _parsed(op: ir.Operation) -> ir.Module:
    """The module of `_upstream_text(op)`, parsed by MLIR 22."""
    try:
        return ir.Module.parse(_upstream_text(op), op.context)
    except ir.MLIRError as error:
        reason = _PARSER_PREFIX.sub("", str(error).splitlines()[-1].strip()) if str(error) else "parse error"
        raise MaterializeError(
            op.location, f"'{op.name[len(FOREIGN_PREFIX) :]}' as Triton wrote it is not understood by MLIR 22: {reason}"
        ) from None


def _replace(op: ir.Operation, parsed: ir.Operation) -> None:
    """`parsed` (an op of another module) cloned in place of `op`, on `op`'s operands."""
    clone = parsed.clone(ip=ir.InsertionPoint(op))
    for index, operand in enumerate(op.operands):
        clone.operands[index] = operand
    for old, new in zip(op.results, clone.results):
        old.replace_all_uses_with(new)
    op.erase()
