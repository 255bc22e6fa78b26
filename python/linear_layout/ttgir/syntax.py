"""The token-level structure of MLIR/TTGIR text: tokens, ops, regions and blocks.

Triton prints TTGIR the way MLIR prints any module: alias definitions, then one operation per
line, regions opened by a `{` that ends its line and closed by a `}` that starts one. This
module reads that structure without knowing any operation: an `Op` is its result names, its
name, its tokens and its regions. `formats` gives the tokens of a Triton op their meaning;
upstream ops (arith, scf, math, cf) are kept as written.

    >>> ops = parse_file('%0 = arith.constant 1 : i32 loc(#loc1)').items
    >>> ops[0].name, ops[0].results, ops[0].loc
    ('arith.constant', (('%0', 1),), 'loc(#loc1)')
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "Token",
    "Block",
    "Region",
    "Op",
    "AliasDef",
    "ParsedFile",
    "TtgirSyntaxError",
    "tokenize",
    "parse_file",
    "split_top_level",
    "attribute_entries",
]


class TtgirSyntaxError(ValueError):
    """Malformed TTGIR: the message names the line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        message = " ".join(message.split())  # one line, even when it quotes source text
        super().__init__(f"{line}:{column}: {message}")
        self.line = line
        self.column = column
        self.bare = message


_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+|//[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<value>%[A-Za-z0-9_$.\-]+(?:\#\d+)?)
  | (?P<block>\^[A-Za-z0-9_$.\-]+)
  | (?P<symbol>@(?:"(?:[^"\\]|\\.)*"|[A-Za-z0-9_$.\-]+))
  | (?P<hash>\#[A-Za-z_][A-Za-z0-9_$.\-]*)
  | (?P<bang>![A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<number>0x[0-9a-fA-F]+|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<punct>->|::|[()\[\]{}<>,=:*?+|\-])
""",
    re.VERBOSE,
)

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = {v: k for k, v in _OPEN.items()}


class Token(NamedTuple):
    """One token (immutable; a named tuple, which a file of thousands of tokens builds about
    twice as fast as a frozen dataclass)."""

    kind: str
    text: str
    start: int
    end: int
    line: int
    column: int


def tokenize(text: str) -> tuple[Token, ...]:
    """The tokens of `text` (comments and white space dropped), each with its line and column.
    One `finditer` over the text; a match that does not start where the previous one ended
    leaves a character no token matches."""
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    tokens = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() != pos:
            break
        kind = match.lastgroup
        end = match.end()
        if kind != "space":
            line = bisect.bisect_right(line_starts, pos)
            tokens.append(Token(kind or "", match.group(), pos, end, line, pos - line_starts[line - 1] + 1))
        pos = end
    if pos < len(text):
        line = bisect.bisect_right(line_starts, pos)
        raise TtgirSyntaxError(f"unexpected character {text[pos]!r}", line, pos - line_starts[line - 1] + 1)
    return tuple(tokens)


@dataclass(frozen=True)
class Block:
    """A block: its header (`^bb0(%a: T loc(...))`, or empty for an implicit entry block), its
    arguments as (name, type text, whole argument text) and its ops."""

    header: str
    arguments: tuple[tuple[str, str, str], ...]
    ops: tuple[Op, ...]
    line: int = 0


@dataclass(frozen=True)
class Region:
    blocks: tuple[Block, ...]
    end_line: int = 0


@dataclass(frozen=True)
class Op:
    """One operation as written.

    `results` are (name, count) groups (`%acc:3` is ("%acc", 3)); `tokens` run from the op name
    to the end of the op, minus its trailing location; `pieces` is the same span as source text
    with each region replaced by its `Region` (regions are never part of `tokens`' text pieces);
    `loc` is the trailing `loc(...)` text or "".
    """

    line: int
    column: int
    results: tuple[tuple[str, int], ...]
    name: str
    generic: bool
    tokens: tuple[Token, ...]
    pieces: tuple[str | Region, ...]
    loc: str

    @property
    def regions(self) -> tuple[Region, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Region))

    @property
    def result_count(self) -> int:
        return sum(count for _, count in self.results)


@dataclass(frozen=True)
class AliasDef:
    name: str
    text: str  # the aliased attribute or location, as written
    line: int = 0


@dataclass(frozen=True)
class ParsedFile:
    items: tuple[Op | AliasDef, ...]

    @property
    def aliases(self) -> dict[str, str]:
        return {item.name: item.text for item in self.items if isinstance(item, AliasDef)}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    # -- helpers -------------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def current(self) -> Token:
        """The next token; a syntax error at the end of the input."""
        token = self.peek()
        if token is None:
            raise self.error("unexpected end of input")
        return token

    def at(self, text: str) -> bool:
        """Whether the next token is `text`."""
        token = self.peek()
        return token is not None and token.text == text

    def error(self, message: str, token: Token | None = None) -> TtgirSyntaxError:
        token = token or self.peek() or (self.tokens[-1] if self.tokens else None)
        if token is None:
            return TtgirSyntaxError(message, 1, 1)
        return TtgirSyntaxError(message, token.line, token.column)

    def expect(self, text: str) -> Token:
        token = self.peek()
        if token is None or token.text != text:
            found = "end of input" if token is None else repr(token.text)
            raise self.error(f"expected '{text}', found {found}")
        self.pos += 1
        return token

    def starts_region(self, index: int) -> bool:
        """A `{` that ends its line opens a region."""
        token = self.tokens[index]
        following = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        return token.text == "{" and (following is None or following.line > token.line)

    # -- structure -----------------------------------------------------------------------------
    def parse_file(self) -> ParsedFile:
        items: list[Op | AliasDef] = []
        while self.peek() is not None:
            token = self.current()
            after = self.peek(1)
            if token.kind == "hash" and after is not None and after.text == "=":
                items.append(self.parse_alias())
            else:
                items.append(self.parse_op())
        return ParsedFile(tuple(items))

    def parse_alias(self) -> AliasDef:
        name = self.current().text
        self.pos += 2
        start = self.peek()
        if start is None:
            raise self.error(f"alias {name} has no value")
        end = self.skip_value(stop=())
        if end == self.pos:
            raise self.error(f"alias {name} has no value", start)
        last = self.tokens[end - 1]
        self.pos = end
        return AliasDef(name, self.text[start.start : last.end], start.line)

    def skip_value(self, stop: tuple[str, ...]) -> int:
        """Index just past a balanced value starting here, ending at the line's end or a stop token."""
        index = self.pos
        depth = 0
        line = self.tokens[index].line if index < len(self.tokens) else 0
        while index < len(self.tokens):
            token = self.tokens[index]
            if depth == 0 and (token.text in stop or (token.line > line and index > self.pos)):
                break
            depth += _depth_change(token)
            if depth < 0:
                raise TtgirSyntaxError(f"unbalanced '{token.text}'", token.line, token.column)
            line = token.line
            index += 1
        if depth > 0:
            raise self.error("unexpected end of input: unbalanced brackets")
        return index

    def parse_results(self) -> tuple[tuple[str, int], ...]:
        results = []
        while True:
            token = self.peek()
            if token is None or token.kind != "value":
                raise self.error("expected a result name")
            self.pos += 1
            count = 1
            if self.at(":"):
                self.pos += 1
                number = self.peek()
                if number is None or number.kind != "number":
                    raise self.error("expected a result count")
                count = int(number.text)
                self.pos += 1
            results.append((token.text, count))
            if self.at(","):
                self.pos += 1
                continue
            self.expect("=")
            return tuple(results)

    def has_results(self) -> bool:
        index = self.pos
        while (index < len(self.tokens) and self.tokens[index].kind in ("value", "number")) or (
            index < len(self.tokens) and self.tokens[index].text in (",", ":")
        ):
            index += 1
        return index < len(self.tokens) and self.tokens[index].text == "=" and self.tokens[self.pos].kind == "value"

    def parse_op(self) -> Op:
        first = self.current()
        results = self.parse_results() if self.has_results() else ()
        name_token = self.peek()
        if name_token is None:
            raise self.error("expected an operation name after '='", first)
        if name_token.kind == "string":
            name, generic = name_token.text[1:-1], True
        elif name_token.kind == "ident":
            name, generic = name_token.text, False
        else:
            raise self.error(f"expected an operation, found {name_token.text!r}")
        self.pos += 1
        pieces, tokens = self.parse_op_body(name_token)
        pieces, tokens, loc = _split_location(self.text, pieces, tokens)
        return Op(first.line, first.column, results, name, generic, tuple(tokens), tuple(pieces), loc)

    def parse_op_body(self, name_token: Token) -> tuple[list[str | Region], list[Token]]:
        pieces: list[str | Region] = []
        tokens: list[Token] = []
        depth = 0
        piece_start = name_token.start
        last = name_token
        while True:
            token = self.peek()
            if token is None:
                if depth > 0:
                    raise self.error(f"unexpected end of input inside '{name_token.text}'", last)
                break
            if depth == 0 and token.line > last.line and not _continues(name_token, token):
                break
            if self.starts_region(self.pos):
                pieces.append(self.text[piece_start : token.start])
                self.pos += 1
                pieces.append(self.parse_region())
                closing = self.expect("}")
                piece_start = closing.end
                last = closing
                continue
            depth += _depth_change(token)
            if depth < 0:
                raise self.error(f"unbalanced '{token.text}'")
            tokens.append(token)
            last = token
            self.pos += 1
        pieces.append(self.text[piece_start : last.end] if last.end > piece_start else "")
        return pieces, tokens

    def parse_region(self) -> Region:
        blocks: list[Block] = []
        header = ""
        arguments: tuple[tuple[str, str, str], ...] = ()
        ops: list[Op] = []
        line = 0
        while True:
            token = self.peek()
            if token is None:
                raise self.error("unexpected end of input: a region is not closed")
            if token.text == "}":
                break
            if token.kind == "block":
                if ops or header:
                    blocks.append(Block(header, arguments, tuple(ops), line))
                line = token.line
                header, arguments = self.parse_block_header()
                ops = []
                continue
            ops.append(self.parse_op())
        if ops or header or not blocks:
            blocks.append(Block(header, arguments, tuple(ops), line))
        return Region(tuple(blocks), token.line)

    def parse_block_header(self) -> tuple[str, tuple[tuple[str, str, str], ...]]:
        label = self.current()
        self.pos += 1
        arguments: list[tuple[str, str, str]] = []
        if self.at("("):
            open_index = self.pos
            end = _matching(self.tokens, open_index)
            inner = self.tokens[open_index + 1 : end]
            for group in split_top_level(inner, ","):
                arguments.append(_block_argument(self.text, group))
            self.pos = end + 1
        colon = self.expect(":")
        return self.text[label.start : colon.end], tuple(arguments)


# Ops whose custom syntax goes on over lines: a line of `ttg.warp_specialize` starting with
# `default` or `partitionN` continues the op (its next region).
_CONTINUATION = re.compile(r"default|partition\d+")


def _continues(name_token: Token, token: Token) -> bool:
    return name_token.text == "ttg.warp_specialize" and _CONTINUATION.fullmatch(token.text) is not None


def _depth_change(token: Token) -> int:
    if token.text in ("(", "[", "{", "<"):
        return 1
    if token.text in (")", "]", "}", ">"):
        return -1
    return 0


def _matching(tokens: tuple[Token, ...] | list[Token], open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        depth += _depth_change(tokens[index])
        if depth == 0:
            return index
    token = tokens[open_index]
    raise TtgirSyntaxError(f"'{token.text}' is never closed", token.line, token.column)


def split_top_level(tokens, separator: str) -> list[list[Token]]:
    """Split a token list at `separator` tokens outside brackets (empty list: no groups)."""
    groups: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    for token in tokens:
        if depth == 0 and token.text == separator:
            groups.append(current)
            current = []
            continue
        depth += _depth_change(token)
        current.append(token)
    if current or groups:
        groups.append(current)
    return groups


def _block_argument(text: str, group: list[Token]) -> tuple[str, str, str]:
    if len(group) < 3 or group[0].kind != "value" or group[1].text != ":":
        token = group[0] if group else None
        raise TtgirSyntaxError(
            "expected '%name: type' in a block header", token.line if token else 1, token.column if token else 1
        )
    type_tokens = group[2:]
    for index, token in enumerate(type_tokens):
        if token.text == "loc" and index + 1 < len(type_tokens) and type_tokens[index + 1].text == "(":
            type_tokens = type_tokens[:index]
            break
    whole = text[group[0].start : group[-1].end]
    return group[0].text, text[type_tokens[0].start : type_tokens[-1].end], whole


def _split_location(text: str, pieces: list, tokens: list[Token]) -> tuple[list, list[Token], str]:
    """Take the trailing `loc(...)` off an op (it is always last when present)."""
    if not tokens or tokens[-1].text != ")" or not isinstance(pieces[-1], str):
        return pieces, tokens, ""
    depth = 0
    for index in range(len(tokens) - 1, -1, -1):
        depth -= _depth_change(tokens[index])
        if depth == 0:
            break
    if index < 1 or tokens[index - 1].text != "loc" or tokens[index].text != "(":
        return pieces, tokens, ""
    loc_start = tokens[index - 1]
    loc = text[loc_start.start : tokens[-1].end]
    last_piece = pieces[-1]
    cut = last_piece.rfind(loc)
    pieces = pieces[:-1] + [last_piece[:cut].rstrip()]
    return pieces, tokens[: index - 1], loc


def attribute_entries(text: str, tokens: list[Token]) -> list[tuple[str, str | None]]:
    """The entries of an attribute dictionary's tokens (without the braces): (key, value text),
    value None for a unit attribute."""
    entries: list[tuple[str, str | None]] = []
    for group in split_top_level(tokens, ","):
        if not group:
            continue
        key = group[0].text
        if len(group) == 1:
            entries.append((key, None))
            continue
        if group[1].text != "=" or len(group) < 3:
            raise TtgirSyntaxError(f"malformed attribute entry {key!r}", group[0].line, group[0].column)
        entries.append((key, text[group[2].start : group[-1].end]))
    return entries


def parse_file(text: str) -> ParsedFile:
    """The alias definitions and top-level ops of `text`."""
    return _Parser(text).parse_file()
