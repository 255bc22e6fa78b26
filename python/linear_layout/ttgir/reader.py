"""TTGIR text -> an MLIR module (`parse_ttgir`).

Each Triton op written in custom syntax is read with its `formats` entry and written in generic
form; upstream ops (arith, scf, math, cf, the module) and ops Triton itself prints in generic
form (`tt.reduce`, `tt.scan`) are kept as written, their regions converted recursively. Types go
through `types.to_mlir_types`. Every op stays on its source line, so MLIR's own diagnostics
point at the TTGIR line.

`tt`, `ttng` and `amdg` ops are unregistered operations of the MLIR context (IRDL cannot declare
terminators such as `tt.return`, dotted names such as `tt.reduce.return`, or properties), so the
context allows unregistered dialects; `ttg` is the IRDL dialect of `linear_layout.ir`, whose
layout attributes the project's passes read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir

from ..core.arguments import require_str
from ..core.limits import LimitError, check_text_limits
from ..core.targets import TargetError
from ..dialects.verifier import FACT_ATTRIBUTES, LaunchFacts, encoding_text_problem, module_chip
from ..ir import load_dialects
from ..ir.walk import walk
from . import warp_specialize
from .foreign import FOREIGN_PREFIX, is_foreign, opaque_syntax, syntax_attribute
from .formats import FORMATS, TRITON_DIALECTS, OpFormat, mlir_name, parse_custom, result_segments
from .syntax import (
    AliasDef,
    Op,
    ParsedFile,
    Region,
    Token,
    TtgirSyntaxError,
    attribute_entries,
    parse_file,
    split_top_level,
    tokenize,
)
from .types import (
    TypeTextError,
    element_type,
    expand_aliases,
    expand_opaque_aliases,
    i1_like,
    pointee_type,
    to_mlir_types,
)

__all__ = [
    "TtgirError",
    "attribute_position",
    "check_target",
    "name_loop_arguments",
    "ttgir_to_mlir",
    "parse_ttgir",
    "ttgir_context",
]


class TtgirError(ValueError):
    """Bad TTGIR: `str()` is one line, `LINE:COL: message` (the message's whitespace, newlines of
    quoted source text included, collapsed to single spaces); `notes` are (line, column, text)
    pointing at related places (the first use of a bad alias)."""

    def __init__(
        self, message: str, line: int = 0, column: int = 0, notes: tuple[tuple[int, int, str], ...] = ()
    ) -> None:
        message = " ".join(message.split())
        super().__init__(f"{line}:{column}: {message}" if line else message)
        self.line = line
        self.column = column
        self.notes = notes


@dataclass
class _Output:
    """Text placed on the source lines it came from."""

    lines: list[list[str]] = field(default_factory=list)

    def put(self, line: int, text: str) -> None:
        while len(self.lines) < line:
            self.lines.append([])
        self.lines[line - 1].append(text)

    def text(self) -> str:
        return "\n".join(" ".join(parts) for parts in self.lines) + "\n"


def _dialect(name: str) -> str:
    return name.split(".", 1)[0]


class _Converter:
    def __init__(self, source: str, aliases: dict[str, str]) -> None:
        self.source = source
        self.aliases = aliases
        self.out = _Output()
        self.types: dict[str, str] = {}

    def mlir_text(self, text: str) -> str:
        return expand_opaque_aliases(to_mlir_types(text), self.aliases)

    # -- values ---------------------------------------------------------------------------------
    def define(self, op: Op, result_types: list[str]) -> None:
        if len(result_types) != op.result_count:
            raise TtgirError(
                f"'{op.name}' has {op.result_count} results but {len(result_types)} result types", op.line, op.column
            )
        index = 0
        for name, count in op.results:
            for k in range(count):
                self.types[name if count == 1 else f"{name}#{k}"] = result_types[index]
                index += 1
            if count > 1:
                self.types[name] = result_types[index - count]

    def type_of(self, value: str, op: Op) -> str:
        if value not in self.types:
            raise TtgirError(f"use of undefined value {value} in '{op.name}'", op.line, op.column)
        return self.types[value]

    @staticmethod
    def results_text(op: Op) -> str:
        if not op.results:
            return ""
        return ", ".join(name if count == 1 else f"{name}:{count}" for name, count in op.results) + " = "

    # -- ops ------------------------------------------------------------------------------------
    def convert(self, op: Op) -> None:
        try:
            self.convert_op(op)
        except TypeTextError as error:
            raise TtgirError(f"'{op.name}': {error}", op.line, op.column) from None

    def convert_op(self, op: Op) -> None:
        triton = _dialect(op.name) in TRITON_DIALECTS
        if triton and op.name not in FORMATS:
            raise TtgirError(f"unknown operation '{op.name}' (not in linear_layout.ttgir.formats)", op.line, op.column)
        if not triton and is_foreign(op, TRITON_DIALECTS):
            self.convert_foreign(op)
            return
        if op.generic or not triton:
            self.pass_through(op)
            return
        if op.name == warp_specialize.NAME:  # several regions with keywords between them
            try:
                warp_specialize.read(self, op)
            except TtgirSyntaxError as error:
                raise TtgirError(error.bare, error.line, error.column) from None
            return
        entry = FORMATS[op.name]
        if entry.format == "custom:func":
            self.convert_func(op)
        elif entry.format is None:
            raise TtgirError(
                f"'{op.name}' is printed in generic form by Triton; write it as \"{op.name}\"(...)", op.line, op.column
            )
        else:
            self.convert_custom(op, entry)

    def convert_foreign(self, op: Op) -> None:
        """An op of another dialect as `"foreign.<name>"` with its text (`foreign`)."""
        pieces, values = opaque_syntax(op)
        operands = [v.text for v in values]
        operand_types = [self.type_of(v, op) for v in operands]
        result_types = self.passed_result_types(op)
        self.define(op, result_types)
        pieces = [expand_aliases(p, self.aliases) for p in pieces]
        results = ", ".join(result_types)
        shown = results if len(result_types) == 1 else f"({results})"
        text = (
            f'{self.results_text(op)}"{FOREIGN_PREFIX}{op.name}"({", ".join(operands)}) '
            f"{{{syntax_attribute(pieces)}}} : ({', '.join(operand_types)}) -> {shown}"
        )
        self.out.put(op.line, text + (f" {op.loc}" if op.loc else ""))

    def pass_through(self, op: Op) -> None:
        self.define(op, self.passed_result_types(op))
        self.bind_region_arguments(op)
        prefix = self.results_text(op)
        line = op.line
        for piece in op.pieces:
            if isinstance(piece, Region):
                self.out.put(line, "{")
                self.convert_region(piece)
                line = piece.end_line
                self.out.put(line, "}")
            else:
                if op.generic and piece.startswith(f'"{op.name}"'):  # `"ttg.mask"` as `"ttg_unregistered.mask"`
                    piece = f'"{mlir_name(op.name)}"' + piece[len(op.name) + 2 :]
                self.out.put(line, prefix + self.mlir_text(piece))
                prefix = ""
        if op.loc:
            self.out.put(line, op.loc)

    def convert_region(self, region: Region, entry_header: str = "") -> None:
        for index, block in enumerate(region.blocks):
            header = block.header or (entry_header if index == 0 else "")
            for name, type_text, _whole in block.arguments:
                self.types[name] = self.mlir_text(type_text)
            if header:
                first_line = block.line or (block.ops[0].line if block.ops else region.end_line)
                self.out.put(first_line, self.mlir_text(header))
            for op in block.ops:
                self.convert(op)

    def passed_result_types(self, op: Op) -> list[str]:
        if op.result_count == 0:
            return []
        tokens = list(op.tokens)
        if op.generic:
            return self.functional_results(op, tokens)
        return [self.mlir_text(t) for t in _upstream_result_types(self.source, op, tokens)]

    def functional_results(self, op: Op, tokens: list[Token]) -> list[str]:
        colon = _last_top_level(tokens, ":")
        arrow = _last_top_level(tokens, "->")
        if colon is None or arrow is None or arrow < colon:
            raise TtgirError(f"generic '{op.name}' needs a functional type", op.line, op.column)
        return [self.mlir_text(t) for t in _type_list(self.source, tokens[arrow + 1 :])]

    def bind_region_arguments(self, op: Op) -> None:
        if op.name != "scf.for":
            return
        tokens = list(op.tokens)
        colon = _last_top_level(tokens, ":")
        iv_type = "index"
        if colon is not None and (_last_top_level(tokens, "->") or -1) < colon:
            # up to the body's `{` (attributes after the body, `{tt.warp_specialize}`, are not it)
            type_end = max(i for i, t in enumerate(tokens) if t.line == tokens[colon].line)
            iv_type = self.source[tokens[colon + 1].start : tokens[type_end].end]
        induction, *iter_args = _loop_argument_names(op)
        self.types[induction] = iv_type
        result_types = [
            self.types.get(f"{op.results[0][0]}#{k}") or self.types.get(op.results[0][0])
            for k in range(op.result_count if op.results else 0)
        ]
        for name, result_type in zip(iter_args, result_types):
            if result_type is not None:
                self.types[name] = result_type

    def convert_custom(self, op: Op, entry: OpFormat) -> None:
        try:
            parsed = parse_custom(entry, self.source, op.tokens)
        except TtgirSyntaxError as error:
            # An op with nothing after its name has no token to point at: the op's own position.
            raise TtgirError(error.bare, error.line or op.line, error.column or op.column) from None
        operands: list[str] = []
        sizes: list[int] = []
        for name in entry.operand_names():
            values = parsed.operands.get(name, [])
            operands.extend(values)
            sizes.append(len(values))
        operand_types = [self.type_of(v, op) for v in operands]
        result_types = self.custom_result_types(op, entry, parsed, operand_types, operands)
        self.define(op, result_types)
        attributes = [(k, None if v is None else self.mlir_text(v)) for k, v in parsed.attributes]
        if entry.needs_segments():
            attributes.append(("operandSegmentSizes", f"array<i32: {', '.join(map(str, sizes))}>"))
        result_sizes = result_segments(entry, parsed, len(result_types))
        if result_sizes:
            attributes.append(("resultSegmentSizes", result_sizes))
        attribute_text = ", ".join(k if v in (None, "unit") else f"{k} = {v}" for k, v in attributes)
        results = ", ".join(result_types)
        shown = results if len(result_types) == 1 else f"({results})"
        text = (
            f'{self.results_text(op)}"{mlir_name(op.name)}"({", ".join(operands)})'
            + (f" {{{attribute_text}}}" if attribute_text else "")
            + f" : ({', '.join(operand_types)}) -> {shown}"
        )
        self.out.put(op.line, text + (f" {op.loc}" if op.loc else ""))

    def custom_result_types(self, op: Op, entry: OpFormat, parsed, operand_types, operands) -> list[str]:
        if op.result_count == 0:
            return []
        if parsed.functional is not None:
            return [self.mlir_text(t) for t in parsed.functional[1]]
        named = [t for r in entry.result_names() for t in parsed.types.get(r, [])]
        if named and entry.result_rule != "same-as-first-result":
            return [self.mlir_text(t) for t in named]
        rule = entry.result_rule
        try:
            if rule.startswith("pointee:"):
                ptr = operands[entry.operand_names().index(rule[8:])]
                return [pointee_type(self.type_of(ptr, op))]
        except TypeTextError as error:
            raise TtgirError(f"'{op.name}': {error}", op.line, op.column) from None
        if rule.startswith("type-of:"):
            return [self.mlir_text(t) for t in parsed.types.get(rule[8:], [])]
        if rule == "token":
            return ["!ttg.async_token"]
        if rule.startswith("fixed:"):
            return [rule[6:]] * op.result_count
        if rule.startswith("element-of:"):
            source = operands[entry.operand_names().index(rule[11:])]
            return [element_type(self.type_of(source, op))]
        if rule == "same-as-operands":
            return list(operand_types)
        if rule == "same-as-first-result" and named:
            return [self.mlir_text(named[0])] * op.result_count
        raise TtgirError(f"cannot tell the result types of '{op.name}'", op.line, op.column)

    def convert_func(self, op: Op) -> None:
        signature = _func_signature(self.source, op)
        region = op.regions[0] if op.regions else None
        if region is None:
            raise TtgirError("'tt.func' without a body", op.line, op.column)
        arguments = ", ".join(signature.arguments)  # convert_region converts the entry header once
        properties = [
            f"function_type = ({', '.join(self.mlir_text(t) for t in signature.argument_types)}) -> "
            f"({', '.join(self.mlir_text(t) for t in signature.result_types)})",
            f'sym_name = "{signature.name}"',
        ]
        if signature.argument_attributes:
            properties.insert(0, f"arg_attrs = [{', '.join(signature.argument_attributes)}]")
        if signature.visibility:
            properties.append(f'sym_visibility = "{signature.visibility}"')
        self.out.put(op.line, f'"tt.func"() <{{{", ".join(properties)}}}> ({{')
        for name, type_text in zip(signature.argument_names, signature.argument_types):
            self.types[name] = self.mlir_text(type_text)
        self.convert_region(region, entry_header=f"^bb0({arguments}):")
        tail = f"}}) {{{signature.attributes}}}" if signature.attributes else "})"
        self.out.put(region.end_line, f"{tail} : () -> ()" + (f" {op.loc}" if op.loc else ""))


def _loop_argument_names(op: Op) -> tuple[str, ...]:
    """The names of an scf.for's body arguments as written: `%k`, then its iter_args."""
    tokens = list(op.tokens)
    names = [tokens[0].text] if tokens else []
    for index, token in enumerate(tokens):
        if token.text == "iter_args":
            close = _matching_index(tokens, index + 1)
            names += [group[0].text for group in split_top_level(tokens[index + 2 : close], ",") if group]
            break
    return tuple(names)


def _loops(items) -> list[Op]:
    """The scf.for ops among `items` (ops and alias definitions) and their regions, in text order."""
    found: list[Op] = []
    for item in items:
        if isinstance(item, Op):
            if item.name == "scf.for":
                found.append(item)
            for region in item.regions:
                for block in region.blocks:
                    found += _loops(block.ops)
    return found


@dataclass(frozen=True)
class _Signature:
    visibility: str
    name: str
    arguments: tuple[str, ...]  # `%a: T loc(...)`, as a block header writes them
    argument_names: tuple[str, ...]
    argument_types: tuple[str, ...]
    argument_attributes: tuple[str, ...]  # `{...}` per argument, or () when none has any
    result_types: tuple[str, ...]
    attributes: str  # the `attributes {...}` dictionary body


def _func_signature(source: str, op: Op) -> _Signature:
    tokens = list(op.tokens)
    index = 0
    visibility = ""
    if tokens and tokens[0].text in ("public", "private", "nested"):
        visibility = tokens[0].text
        index = 1
    if index >= len(tokens) or tokens[index].kind != "symbol":
        raise TtgirError("'tt.func' needs a @name", op.line, op.column)
    name = tokens[index].text[1:].strip('"')
    close = _matching_index(tokens, index + 1)
    arguments, names, types, attributes = [], [], [], []
    for group in split_top_level(tokens[index + 2 : close], ","):
        if len(group) < 3 or group[0].kind != "value" or group[1].text != ":":
            raise TtgirError(
                "'tt.func': expected '%name: type' arguments",
                group[0].line if group else op.line,
                group[0].column if group else op.column,
            )
        type_end = 2
        while (
            type_end < len(group)
            and group[type_end].text not in ("{",)
            and not (group[type_end].text == "loc" and type_end + 1 < len(group) and group[type_end + 1].text == "(")
        ):
            type_end += 1 if group[type_end].text != "<" else (_matching_index(group, type_end) - type_end + 1)
        type_text = source[group[2].start : group[type_end - 1].end]
        attribute = "{}"
        loc = ""
        rest = group[type_end:]
        if rest and rest[0].text == "{":
            end = _matching_index(rest, 0)
            attribute = source[rest[0].start : rest[end].end]
            rest = rest[end + 1 :]
        if rest:
            loc = " " + source[rest[0].start : rest[-1].end]
        names.append(group[0].text)
        types.append(type_text)
        attributes.append(attribute)
        arguments.append(f"{group[0].text}: {type_text}{loc}")
    index = close + 1
    result_types: list[str] = []
    if index < len(tokens) and tokens[index].text == "->":
        end = index + 1
        while end < len(tokens) and tokens[end].text != "attributes":
            end += 1
        inner = tokens[index + 1 : end]
        if inner and inner[0].text == "(":
            inner = inner[1:-1]
        result_types = _type_list(source, inner)
        index = end
    attribute_body = ""
    if index < len(tokens) and tokens[index].text == "attributes":
        end = _matching_index(tokens, index + 1)
        attribute_body = source[tokens[index + 1].end : tokens[end].start].strip()
    if all(a == "{}" for a in attributes):
        attributes = []
    return _Signature(
        visibility,
        name,
        tuple(arguments),
        tuple(names),
        tuple(types),
        tuple(attributes),
        tuple(result_types),
        attribute_body,
    )


def _matching_index(tokens, open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        text = tokens[index].text
        depth += 1 if text in ("(", "[", "{", "<") else -1 if text in (")", "]", "}", ">") else 0
        if depth == 0:
            return index
    token = tokens[open_index]
    raise TtgirError(f"'{token.text}' is never closed", token.line, token.column)


def _last_top_level(tokens: list[Token], text: str) -> int | None:
    depth = 0
    found = None
    for index, token in enumerate(tokens):
        if depth == 0 and token.text == text:
            found = index
        depth += 1 if token.text in ("(", "[", "{", "<") else -1 if token.text in (")", "]", "}", ">") else 0
    return found


def _type_list(source: str, tokens: list[Token]) -> list[str]:
    if tokens and tokens[0].text == "(" and _matching_index(tokens, 0) == len(tokens) - 1:
        tokens = tokens[1:-1]
    return [source[g[0].start : g[-1].end] for g in split_top_level(tokens, ",") if g]


_COMPARISONS = ("arith.cmpi", "arith.cmpf")


def _upstream_result_types(source: str, op: Op, tokens: list[Token]) -> list[str]:
    """Result types of an upstream op in custom syntax, from its trailing types."""
    if op.name in ("scf.for", "scf.if", "scf.while", "scf.execute_region", "scf.index_switch"):
        arrow = _last_top_level(tokens, "->")
        if arrow is None:
            raise TtgirError(f"'{op.name}' has results but no '->' result types", op.line, op.column)
        end = len(tokens)
        if tokens[arrow + 1].text == "(":
            end = _matching_index(tokens, arrow + 1) + 1
        else:
            colon = _last_top_level(tokens[arrow:], ":")
            end = arrow + colon if colon is not None else end
        return _type_list(source, tokens[arrow + 1 : end])
    colon = _last_top_level(tokens, ":")
    if colon is None:
        if op.name == "arith.constant" and tokens and tokens[0].text in ("true", "false"):
            return ["i1"]
        raise TtgirError(f"cannot tell the result types of '{op.name}'", op.line, op.column)
    trailing = tokens[colon + 1 :]
    for index, token in enumerate(trailing):
        if token.text == "to":
            return _type_list(source, trailing[index + 1 :])
    types = _type_list(source, trailing)
    if op.name in _COMPARISONS:
        return [i1_like(types[-1])]
    if op.result_count == 1:
        return [types[-1]]
    return types[-op.result_count :]


def ttgir_to_mlir(text: str) -> str:
    """The TTGIR module `text` in the form MLIR parses (Triton ops generic, types IRDL); text past
    the nesting or shape limits of `core.limits` is a `TtgirError` before anything recurses.
    After `ir.Module.parse`, `name_loop_arguments(module, text)` restores what the generic text
    cannot carry (`parse_ttgir` does both)."""
    require_str(text, "ttgir_to_mlir", "text", "TTGIR text")
    return _generic_text(text, _parsed_file(text))


def _parsed_file(text: str) -> ParsedFile:
    """`parse_file(text)` after the limits of `core.limits`, errors as `TtgirError`."""
    try:
        check_text_limits(text)
        return parse_file(text)
    except LimitError as error:
        position = error.position
        raise TtgirError(error.what, position.line if position else 0, position.column if position else 0) from None
    except TtgirSyntaxError as error:
        raise TtgirError(error.bare, error.line, error.column) from None


def _generic_text(text: str, parsed: ParsedFile) -> str:
    """`ttgir_to_mlir(text)`, from the file `text` parsed (`_parsed_file`)."""
    _check_aliases(parsed, text)
    converter = _Converter(text, parsed.aliases)
    for item in parsed.items:
        if isinstance(item, AliasDef):
            try:
                converter.out.put(item.line, f"{item.name} = {converter.mlir_text(item.text)}")
            except TypeTextError as error:
                raise TtgirError(f"alias {item.name}: {error}", item.line, 1) from None
        else:
            converter.convert(item)
    return converter.out.text()


def _module_facts(parsed, source: str) -> LaunchFacts:
    """The launch sizes in the attributes of the file's top-level module."""
    sizes: dict[str, int] = {}
    for item in parsed.items:
        if isinstance(item, Op) and item.name == "module":
            tokens = list(item.tokens)
            for index, token in enumerate(tokens[:-1]):
                if token.text == "attributes" and tokens[index + 1].text == "{":
                    close = _matching_index(tokens, index + 1)
                    for key, value in attribute_entries(source, tokens[index + 2 : close]):
                        field = FACT_ATTRIBUTES.get(key.strip('"'))
                        if field and value and value.split(":")[0].strip().isdigit():
                            sizes[field] = int(value.split(":")[0])
                    break
    return LaunchFacts(**sizes)


def _check_aliases(parsed, source: str) -> None:
    """An alias whose encoding is unsound is one error at its definition, with its first use as
    a note (not one error per op that uses it)."""
    facts: LaunchFacts | None = None
    for item in parsed.items:
        if not isinstance(item, AliasDef) or not item.text.startswith("#ttg."):
            continue
        facts = facts or _module_facts(parsed, source)
        try:
            problem = encoding_text_problem(expand_aliases(item.text, parsed.aliases), facts)
        except TypeTextError:
            continue  # reported where the alias is expanded
        if problem:
            use = _first_use(source, item)
            notes = ((use.line, use.column, f"{item.name} first used here"),) if use else ()
            where = f" (first used at {use.line}:{use.column})" if use else ""
            raise TtgirError(f"alias {item.name}: {problem}{where}", item.line, 1, notes)


def _first_use(source: str, alias: AliasDef) -> Token | None:
    for token in tokenize(source):
        if token.kind == "hash" and token.text == alias.name and token.line != alias.line:
            return token
    return None


def ttgir_context(context: ir.Context | None = None) -> ir.Context:
    """`context` (default: a new one) ready for TTGIR: our dialects loaded, Triton's other
    dialects allowed as unregistered ones."""
    context = context or ir.Context()
    context.allow_unregistered_dialects = True
    load_dialects(context)
    return context


def without_trailing_loc(line: str) -> str:
    """`line` without the ` loc(...)` that ends it (TTGIR's location of the op on that line)."""
    start = line.rfind(" loc(")
    if start < 0 or line.startswith("#") or not line.rstrip().endswith(")"):
        return line
    depth = 0
    for index in range(start + 1, len(line.rstrip())):
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0 and line[index] == ")":
            return line[:start] if index == len(line.rstrip()) - 1 else line
    return line


_MLIR_ERROR = re.compile(r'error: "[^"]*":(\d+):(\d+): ([^\n]*)')


def parse_ttgir(text: str, context: ir.Context | None = None) -> ir.Module:
    """Read TTGIR (Triton's `kernel.asm["ttgir"]`) into an MLIR module.

    Raises `TtgirError` (one line, with the TTGIR line and column) on malformed input.
    """
    require_str(text, "parse_ttgir", "text", "TTGIR text")
    parsed = _parsed_file(text)  # tokenized and parsed once, for the conversion and the loop names
    generic = _generic_text(text, parsed)
    context = ttgir_context(context)
    try:
        module = ir.Module.parse(generic, context)
    except ir.MLIRError as error:
        match = _MLIR_ERROR.search(str(error)) or _MLIR_ERROR.search(_error_without_locations(generic, context))
        if match:
            raise TtgirError(match.group(3).strip(), int(match.group(1)), int(match.group(2))) from None
        raise TtgirError(" ".join(str(error).split())) from None
    _name_loop_arguments(module, parsed)
    check_target(module, text)
    return module


def attribute_position(text: str, name: str) -> tuple[int, int]:
    """(line, column) where `"name" =` is written in `text` ((0, 0): nowhere); quoted or not, as
    MLIR prints it.

    >>> attribute_position('module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80"}', "ttg.target")
    (1, 48)
    """
    written = re.search(rf'(?<![\w."])"?{re.escape(name)}"?\s*=', text)
    if written is None:
        return 0, 0
    return text.count("\n", 0, written.start()) + 1, written.start() - text.rfind("\n", 0, written.start())


def check_target(module: ir.Module, text: str) -> None:
    """A TtgirError at the `ttg.target` attribute's line:col of `text` when the module's target
    names no known chip (`dialects.verifier.module_chip`: `"cuda:N"` of an NVPTX chip,
    `"hip:NAME"` of a known AMD chip); nothing otherwise."""
    try:
        module_chip(module.operation)
    except TargetError as error:
        raise TtgirError(str(error), *attribute_position(text, "ttg.target")) from None


def _error_without_locations(generic: str, context: ir.Context) -> str:
    """The parse error of `generic` with each op's trailing `loc(...)` removed: an op whose
    verifier fails at parse time is then placed at its own line:col of the text ("" if it parses)."""
    try:
        ir.Module.parse("\n".join(without_trailing_loc(line) for line in generic.split("\n")), context)
    except ir.MLIRError as error:
        return str(error)
    return ""


_UNNAMED = re.compile(r"%arg\d+")
_UNIQUING_SUFFIX = re.compile(r"_\d+$")


def name_loop_arguments(module: ir.Module, text: str) -> None:
    """Give the arguments of each scf.for body of `module` (read from TTGIR `text`) the name
    location Triton's printer named them from (`%acc_41` was the value `acc`, made unique), which
    the custom syntax of scf.for cannot write: `print_ttgir` then names them the same."""
    _name_loop_arguments(module, parse_file(text))


def _name_loop_arguments(module: ir.Module, parsed: ParsedFile) -> None:
    """`name_loop_arguments`, from the file parsed; no walk for a file without scf.for."""
    names = [_loop_argument_names(op) for op in _loops(parsed.items)]
    if not names:
        return
    loops = iter(names)

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.for":
            arguments = op.regions[0].blocks[0].arguments
            for argument, name in zip(arguments, next(loops, ())):
                if not _UNNAMED.fullmatch(name):
                    argument.set_location(
                        ir.Location.name(_UNIQUING_SUFFIX.sub("", name[1:]), op.location, context=op.context)
                    )
        return ir.WalkResult.ADVANCE

    walk(module, visit, ir.WalkOrder.PRE_ORDER)
