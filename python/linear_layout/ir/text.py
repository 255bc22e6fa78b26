r"""The text bridge: the only module that reads or rewrites printed IR text.

The bindings cannot see inside IRDL (dynamic) attributes and types: their parameters are only
readable from their printed form, and a dynamic attribute cannot declare an alias. Everything
that depends on the printed form lives here, against this grammar (what MLIR 22 prints):

    attribute      ::= '#' dialect '.' name ('<' parameters '>')?
    type           ::= '!' dialect '.' name ('<' parameters '>')?
    parameters     ::= parameter (',' parameter)*          -- split at top level only
    string         ::= '"' (printable ASCII except '"' and '\' | '\' hex hex)* '"'

    ll-layout      ::= '#ll.layout<' in-dims ', ' out-dims '>'          (both builtin arrays)
    in-dims        ::= '[' ('[' string ', [' basis* '] ]')* ']'          basis: '[' int* ']'
    out-dims       ::= '[' ('[' string ', ' int ']')* ']'
    ttg-encoding   ::= '#ttg.' name '<{' key '=' value (', ' key '=' value)* '}>'
                       (MLIR sorts the keys; integers may print as `n : i64`, which Triton's
                        syntax writes `n`; `#ttg.shared_linear` keeps `alignment` inside the
                        dictionary, where Triton prints it after it)
    memdesc        ::= '!ttg.memdesc<[' int (', ' int)* '], ' type ', ' attribute ', '
                       attribute ', "mutable"|"immutable">'

MLIR prints a `"` inside a string as `\22`, so a `"` always opens or closes a string and text
inside strings is never mistaken for structure. Aliases (`#blocked = #ttg.blocked<...>`) are
hoisted out of printed IR by `add_aliases`; the result parses back to the same module.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager

from .walk import walk

__all__ = [
    "MemDescText",
    "add_aliases",
    "attribute_kind",
    "decode_mlir_string",
    "format_ll_layout",
    "is_layout_attribute",
    "is_layout_kind",
    "is_memdesc",
    "ll_layout_parameters",
    "memdesc_parameters",
    "memdesc_text",
    "pointee_type",
    "mlir_string",
    "plain_blocked_fields",
    "print_module",
    "printed_kind",
    "retyped_dense",
    "triton_encoding_text",
    "triton_to_mlir_text",
    "type_kind",
]

# ---------------------------------------------------------------------------- kinds


def printed_kind(text: str) -> str:
    """'#ttg.blocked<...>' -> 'ttg.blocked'; '!ttg.memdesc<...>' -> 'ttg.memdesc'."""
    end = text.find("<")
    return text[1 : end if end >= 0 else len(text)]


def attribute_kind(attr: ir.Attribute) -> str:
    """`ttg.blocked` for `#ttg.blocked<{...}>`, `ll.layout` for `#ll.layout<...>`."""
    return printed_kind(str(attr))


def type_kind(t: ir.Type) -> str:
    """`ttg.memdesc` for `!ttg.memdesc<...>`; builtin types have no dialect prefix (`f32`)."""
    if isinstance(t, ir.OpaqueType):  # an unregistered dialect's (`!tt.ptr<f16>`): read, not printed
        return printed_kind(f"!{t.dialect_namespace}.{t.data}")
    text = str(t)
    return printed_kind(text) if text.startswith("!") else text


def pointee_type(t: ir.Type) -> ir.Type | None:
    """T of Triton's `!tt.ptr<T>` or `!tt.ptr<T, space>` (None for any other type).

    >>> # pointee_type(ir.Type.parse("!tt.ptr<f16>")) is the type f16
    """
    if type_kind(t) != "tt.ptr":
        return None
    return ir.Type.parse(_split_top_level(_parameters(str(t)))[0].strip(), t.context)


def is_layout_attribute(attr: ir.Attribute) -> bool:
    """An `#ll.layout` or a `#ttg` layout encoding (not `#ttg.shared_memory`)."""
    return is_layout_kind(attribute_kind(attr))


def is_layout_kind(kind: str) -> bool:
    """Whether `attribute_kind` `kind` is that of a layout (`is_layout_attribute`)."""
    return kind == "ll.layout" or (kind.startswith("ttg.") and kind != "ttg.shared_memory")


def is_memdesc(t: ir.Type) -> bool:
    """A `!ttg.memdesc`, or a `!ttg.memdesc_view` (a subslice: Triton's memdesc with an allocation shape)."""
    return type_kind(t) in ("ttg.memdesc", "ttg.memdesc_view")


def _parameters(text: str) -> str:
    return text[text.index("<") + 1 : -1]


def _split_top_level(text: str) -> list[str]:
    """Split printed parameters at top-level commas."""
    parts, depth, start, in_string = [], 0, 0, False
    for i, char in enumerate(text):
        if char == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif char in "<[{(":
            depth += 1
        elif char in ">]})":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


# ---------------------------------------------------------------------------- #ll.layout


def ll_layout_parameters(attr: ir.Attribute) -> tuple[ir.Attribute, ...]:
    """The builtin array parameters of an `#ll.layout` (MLIR re-reads them, so strings decode exactly)."""
    params = ir.ArrayAttr(ir.Attribute.parse("[" + _parameters(str(attr)) + "]", attr.context))
    return tuple(params)


def mlir_string(text: str) -> str:
    """An MLIR string literal (printable ASCII verbatim, everything else as \\XX bytes)."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        out.append(char if 32 <= byte < 127 and char not in '"\\' else f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


_STRING_ESCAPE = re.compile(r"\\\\|\\[0-9A-Fa-f]{2}|\\[nt\"]")
_ESCAPED = {"\\\\": b"\\", "\\n": b"\n", "\\t": b"\t", '\\"': b'"'}


def decode_mlir_string(literal: str) -> str:
    """The text of an MLIR string literal as MLIR prints it (`\\XX` hex bytes, `\\\\`), the inverse
    of `mlir_string`.

    >>> decode_mlir_string(mlir_string('a "b"\\n'))
    'a "b"\\n'
    """
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        raise ValueError(f"not a string literal: {literal[:40]!r}")
    out = bytearray()
    pos = 0
    body = literal[1:-1]
    for match in _STRING_ESCAPE.finditer(body):
        out += body[pos : match.start()].encode()
        escape = match.group()
        out += _ESCAPED.get(escape) or bytes([int(escape[1:], 16)])
        pos = match.end()
    out += body[pos:].encode()
    return out.decode("utf-8", errors="surrogateescape")


def format_ll_layout(bases: Sequence[tuple[str, Sequence[Sequence[int]]]], out_dims: Sequence[tuple[str, int]]) -> str:
    """The `#ll.layout` text of a layout's bases and output dimensions, dimension order preserved."""
    in_text = ", ".join(
        f"[{mlir_string(name)}, [{', '.join('[' + ', '.join(map(str, b)) + ']' for b in vectors)}]]"
        for name, vectors in bases
    )
    out_text = ", ".join(f"[{mlir_string(name)}, {size}]" for name, size in out_dims)
    return f"#ll.layout<[{in_text}], [{out_text}]>"


# ---------------------------------------------------------------------------- #ttg encodings

# MLIR prints a non-i64 integer with its type inside a dictionary (`dim = 0 : i64` when the
# user wrote `dim = 0 : i64`, or always for scalars); Triton's syntax has bare integers.
_TYPED_INTEGER = re.compile(r"(-?\d+) : i\d+")
_TRITON_ALIGNMENT = re.compile(r"\}, alignment = (\d+)>")


def triton_encoding_text(attr: ir.Attribute | str) -> str:
    """A `#ttg` encoding attribute (or its printed text) as Triton's syntax (for
    `encodings.parse_encoding`)."""
    return _TYPED_INTEGER.sub(r"\1", attr if isinstance(attr, str) else str(attr))


_INTEGERS = r"\[(\d+(?:, \d+)*)\]"
_PLAIN_BLOCKED = re.compile(
    rf"#ttg\.blocked<\{{order = {_INTEGERS}, sizePerThread = {_INTEGERS}, "
    rf"threadsPerWarp = {_INTEGERS}, warpsPerCTA = {_INTEGERS}\}}>"
)


def plain_blocked_fields(attr: ir.Attribute | str) -> tuple[_Ints, _Ints, _Ints, _Ints] | None:
    """(sizePerThread, threadsPerWarp, warpsPerCTA, order) of a `#ttg.blocked` with just those
    four fields, as MLIR prints it (keys sorted); None for any other attribute (the general
    reader, `encodings.parse_encoding`, reads those). The common case, read with one match.

    >>> with ir.Context() as ctx:
    ...     from linear_layout.ir import load_dialects
    ...     _ = load_dialects(ctx)
    ...     plain_blocked_fields(ir.Attribute.parse("#ttg.blocked<{sizePerThread = [1, 4], "
    ...         "threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>"))
    ((1, 4), (4, 8), (2, 2), (1, 0))
    """
    match = _PLAIN_BLOCKED.fullmatch(attr if isinstance(attr, str) else str(attr))
    if match is None:
        return None
    order, spt, tpw, wpc = map(_int_tuple, match.groups())
    return spt, tpw, wpc, order


@functools.lru_cache(maxsize=1024)
def _int_tuple(group: str) -> tuple[int, ...]:
    """The integers of a list's text, `"4, 8"` -> `(4, 8)` (cached: a module repeats a few such lists)."""
    return tuple(map(int, group.split(", ")))


_Ints = tuple[int, ...]

# An integer as MLIR prints it in a dictionary (a typed one carries its type), at most 9 digits
# (anything longer is left to the general reader, which names the limit it breaks).
_INTEGER = r"(\d{1,9})(?: : i\d+)?"
_PARENT = r"(#ttg\.\w+<.*)"  # the rest: the parent's text (decoded, or refused, as an encoding)
_NESTED = re.compile(
    rf"#ttg\.(slice)<\{{dim = {_INTEGER}, parent = {_PARENT}\}}>"
    rf"|#ttg\.(dot_op)<\{{(?:kWidth = {_INTEGER}, )?opIdx = {_INTEGER}, parent = {_PARENT}\}}>"
)


@dataclass(frozen=True)
class NestedFields:
    """The fields of a `#ttg.slice` or `#ttg.dot_op` as MLIR prints it, the parent left as text."""

    kind: str  # "slice" or "dot_op"
    index: int  # the slice's dim, the operand index
    k_width: int  # 0 for a slice and for a dot operand without kWidth
    parent: str


def nested_fields(printed: str) -> NestedFields | None:
    """The fields of a printed `#ttg.slice<{dim, parent}>` or `#ttg.dot_op<{[kWidth,] opIdx, parent}>`
    (keys sorted, as MLIR prints them), with the parent's text; None for any other text (the
    general reader, `encodings.parse_encoding`, reads those). The parent text is whatever follows
    `parent = `, so a bad one is found when it is decoded.

    >>> nested_fields("#ttg.dot_op<{kWidth = 2 : i64, opIdx = 0 : i64, parent = #ttg.nvidia_mma<{...}>}>")
    NestedFields(kind='dot_op', index=0, k_width=2, parent='#ttg.nvidia_mma<{...}>')
    """
    match = _NESTED.fullmatch(printed)
    if match is None:
        return None
    if match.group(1):
        return NestedFields("slice", int(match.group(2)), 0, match.group(3))
    return NestedFields("dot_op", int(match.group(6)), int(match.group(5) or 0), match.group(7))


_PLAIN_MMA = re.compile(
    rf"#ttg\.nvidia_mma<\{{instrShape = {_INTEGERS}, versionMajor = {_INTEGER}, "
    rf"versionMinor = {_INTEGER}, warpsPerCTA = {_INTEGERS}\}}>"
)


def plain_mma_fields(printed: str) -> tuple[tuple[int, int], _Ints, _Ints] | None:
    """(version, warpsPerCTA, instrShape) of a printed `#ttg.nvidia_mma` with just its four
    required fields (one CTA); None for any other text.

    >>> plain_mma_fields("#ttg.nvidia_mma<{instrShape = [16, 8], versionMajor = 2 : i64, "
    ...                  "versionMinor = 0 : i64, warpsPerCTA = [2, 2]}>")
    ((2, 0), (2, 2), (16, 8))
    """
    match = _PLAIN_MMA.fullmatch(printed)
    if match is None:
        return None
    instr, major, minor, warps = match.groups()
    return (int(major), int(minor)), _int_tuple(warps), _int_tuple(instr)


def triton_to_mlir_text(text: str) -> str:
    """Triton's text of an encoding as our dialect's: `#ttg.shared_linear<{...}, alignment = 16>`
    keeps `alignment` inside the dictionary (an IRDL parameter must be an attribute)."""
    return _TRITON_ALIGNMENT.sub(r", alignment = \1}>", text)


# ---------------------------------------------------------------------------- !ttg.memdesc


# `[16, 32]`, also with typed integers (`[16 : i64, 32 : i64]`)
_SHAPE = re.compile(r"\[(\s*\d+(\s*:\s*i\d+)?\s*(,\s*\d+(\s*:\s*i\d+)?\s*)*)?\]")


@dataclass(frozen=True)
class MemDescText:
    """The printed parameters of a `!ttg.memdesc`."""

    shape: tuple[int, ...]
    element_type: str
    encoding: str
    mutable: bool
    allocation: tuple[int, ...]  # the shape of the buffer it views (its own shape unless a subslice)


def _integers(shape: str, what: str) -> tuple[int, ...]:
    if not _SHAPE.fullmatch(shape):
        raise ValueError(f"the {what} of a !ttg.memdesc must be a list of integers, got {shape}")
    return tuple(int(d.split(":")[0].strip()) for d in shape[1:-1].split(",") if d.strip())


def memdesc_parameters(t: ir.Type) -> MemDescText:
    """The parameters of a `!ttg.memdesc` type; TypeError for another type, ValueError for a
    shape that is not a list of integers."""
    text = str(t)
    view = text.startswith("!ttg.memdesc_view<")  # 6th parameter: the allocation shape (a subslice)
    if not text.startswith("!ttg.memdesc<") and not view:
        raise TypeError(f"not a !ttg.memdesc type: {text}")
    parts = _split_top_level(_parameters(text))
    if len(parts) != 5 + view:
        raise ValueError(f"a !ttg.memdesc has {5 + view} parameters, got {len(parts)} in {text}")
    shape, element_type, encoding, _space, mutability = parts[:5]
    dims = _integers(shape, "shape")
    allocation = _integers(parts[5], "allocation shape") if view else dims
    return MemDescText(dims, element_type, encoding, mutability == '"mutable"', allocation)


def memdesc_text(shape: Sequence[int], element_type: ir.Type, encoding: ir.Attribute, mutable: bool) -> str:
    mutability = "mutable" if mutable else "immutable"
    return (
        f'!ttg.memdesc<[{", ".join(map(str, shape))}], {element_type}, {encoding}, #ttg.shared_memory, "{mutability}">'
    )


# ---------------------------------------------------------------------------- dense attributes


def retyped_dense(attr: ir.DenseElementsAttr, new_type: ir.Type) -> ir.Attribute:
    """The same dense data with another (same-shaped) tensor type."""
    text, suffix = str(attr), " : " + str(attr.type)
    head = text[: -len(suffix)] if text.endswith(suffix) else text.rpartition(" : ")[0]
    return ir.Attribute.parse(f"{head} : {new_type}", attr.context)


# ---------------------------------------------------------------------------- aliases

# Triton's alias names; slice and dot_op stay inline, as in Triton.
_ALIAS_NAMES = {
    "ttg.blocked": "blocked",
    "ttg.linear": "linear",
    "ttg.generic_linear": "generic_linear",
    "ttg.nvidia_mma": "mma",
    "ttg.amd_mfma": "mma",
    "ttg.amd_wmma": "mma",
    "ttg.swizzled_shared": "shared",
    "ttg.amd_rotating_shared": "shared",
    "ttg.nvmma_shared": "shared",
    "ttg.shared_linear": "shared",
    "ttg.shared_memory": "smem",
    "ll.layout": "layout",
}
# A string literal, or a `#ttg.`/`#ll.` attribute whose parameters hold no other `<...>` (strings
# inside them are skipped whole: MLIR prints a `"` inside a string as `\22`). An attribute name
# followed by `<` whose parameters do hold a nested `<...>` does not match (the possessive `\w*+`
# keeps the name whole): a later pass meets it, once its parameters are aliased. The parameters
# are an atomic group (`(?>...)`, nothing to backtrack into: about 20% faster on large modules,
# the same matches). One capturing group, the whole match, so that `split` puts the matches at
# the odd indices.
_ATTRIBUTE = r'#(?:ttg|ll)\.[A-Za-z_]\w*+(?><[^<>"]*+(?:"[^"]*+"[^<>"]*+)*+>|(?!<))'
_INNERMOST_OR_STRING = re.compile(rf'("[^"]*"|{_ATTRIBUTE})')
_INNERMOST = re.compile(f"({_ATTRIBUTE})")
_PLACEHOLDER = re.compile("(\x01\\d+\x02)")
_EXISTING_ALIAS = re.compile(r"#([\w.$-]+) = ")
_EXISTING_ALIAS_LINE = re.compile(r"\n#([\w.$-]+) = ")


def _existing_aliases(asm: str) -> set[str]:
    """The alias names defined at the start of a line of `asm` (a literal `\n#` search, which is
    much faster than a multi-line `^#` over megabytes of text)."""
    names = set(_EXISTING_ALIAS_LINE.findall(asm))
    first = _EXISTING_ALIAS.match(asm)
    if first is not None:
        names.add(first.group(1))
    return names


_STRING_BODY = re.compile(r'"([^"]*)"')


def _attribute_in_string(asm: str) -> bool:
    """Whether a string literal of `asm` holds `#ttg.` or `#ll.`. MLIR prints a `"` inside a
    string as `\\22`, so every `"` opens or closes one, and a left-to-right scan from string to
    string meets the bodies exactly (a C-level `findall` and `join`, no Python call per string)."""
    bodies = "\x00".join(_STRING_BODY.findall(asm))
    return "#ttg." in bodies or "#ll." in bodies


def _replaced(pattern: re.Pattern, text: str, replacement) -> tuple[str, list[str]]:
    """`text` with each match of `pattern` (one capturing group: the whole match) replaced by
    `replacement(match text)`, called once per distinct match, in the order of first occurrence;
    also the distinct matches. The matches are split out and joined back in C, so a text with
    100,000 occurrences of a few attributes costs a few Python calls, not 100,000."""
    parts = pattern.split(text)
    found = parts[1::2]
    distinct = list(dict.fromkeys(found))
    table = {match: replacement(match) for match in distinct}
    parts[1::2] = [table[match] for match in found]
    return "".join(parts), distinct


class _Aliaser:
    """Innermost attributes first, one pass per level of nesting: each pass replaces every
    attribute without nested `<...>` by its alias (`#blocked`), or, for a kind that stays inline
    (`#ttg.slice`, `#ttg.dot_op`), by a placeholder, so that the attributes around it have no
    nested `<...>` on the next pass. Equal texts get one alias (a pass looks up each distinct
    text once); aliases are numbered in the order the passes meet them."""

    def __init__(self, taken: set[str]) -> None:
        self.alias_of: dict[str, str] = {}
        self.definitions: list[str] = []
        self.taken = taken
        self.counts: dict[str, int] = {}
        self.inline: list[str] = []  # placeholder n -> the attribute's text (may hold placeholders)
        self.inline_index: dict[str, int] = {}

    def _new_name(self, base: str) -> str:
        while True:
            n = self.counts.get(base, 0)
            self.counts[base] = n + 1
            alias = base if n == 0 else f"{base}{n}"
            if alias not in self.taken:
                self.taken.add(alias)
                return alias

    def _restore(self, text: str) -> str:
        while "\x01" in text:
            text, _ = _replaced(_PLACEHOLDER, text, lambda mark: self.inline[int(mark[1:-1])])
        return text

    def _alias(self, text: str) -> str:
        """The alias (or placeholder) of the attribute `text`; a string literal stays as it is."""
        if text[0] == '"':
            return text
        alias = self.alias_of.get(text)
        if alias is not None:
            return alias
        has_parameters = text[-1] == ">"
        dialect_kind = text[1 : text.find("<")] if has_parameters else text[1:]
        base = _ALIAS_NAMES.get(dialect_kind)
        if base is None:  # stays inline
            index = self.inline_index.get(text)
            if index is None:
                index = self.inline_index[text] = len(self.inline)
                self.inline.append(text)
            alias = f"\x01{index}\x02"
        else:
            alias = "#" + self._new_name(base)
            self.definitions.append(f"{alias} = {self._restore(text)}")
        self.alias_of[text] = alias
        return alias

    def rewrite(self, text: str) -> str:
        """`text` with every layout attribute replaced by its alias."""
        # strings need skipping (one more match per op name) only where one holds an attribute
        pattern = _INNERMOST_OR_STRING if _attribute_in_string(text) else _INNERMOST
        while True:
            text, found = _replaced(pattern, text, self._alias)
            if not any(match[-1] == ">" and match[0] != '"' for match in found):
                return self._restore(text)
            if pattern is _INNERMOST and "#ttg." not in text and "#ll." not in text:
                return self._restore(text)  # nothing left for another pass to meet


def add_aliases(asm: str) -> str:
    """Hoist the layout attributes of printed IR into alias definitions."""
    aliaser = _Aliaser(_existing_aliases(asm))
    body = aliaser.rewrite(asm)
    if not aliaser.definitions:
        return body
    return "\n".join(aliaser.definitions) + "\n" + body


# Above this many ops, a module prints faster through a file (`_print_through_file`).
BUFFERED_PRINT_MIN_OPS = 64


def _more_ops_than(op: ir.Operation, limit: int) -> bool:
    """Whether `op` holds more than `limit` ops (a walk that stops after `limit + 1`)."""
    seen = 0

    def count(_: ir.Operation) -> ir.WalkResult:
        nonlocal seen
        seen += 1
        return ir.WalkResult.INTERRUPT if seen > limit else ir.WalkResult.ADVANCE

    walk(op, count)
    return seen > limit


def _print_through_file(op: ir.Operation, generic: bool) -> str | None:
    """The text `get_asm(print_generic_op_form=generic, assume_verified=True)` gives for the
    top-level `builtin.module` `op`, printed by MLIR into a file, or None where that cannot hold.

    `get_asm` hands every token the printer writes to a Python callback (the bindings' stream is
    unbuffered): about 56 calls per `ttg.convert_layout` op, 15 µs. MLIR's IR printing with a
    tree directory (`mlir-print-ir-tree-dir`) writes through a buffered C++ file stream instead:
    a pass that does nothing, printed after it runs. The printer verifies the op first and falls
    back to the generic form when it fails (`assume_verified` cannot be set there), so a module
    that does not verify is left to `get_asm` (None).

    Postcondition: the result is byte-identical to `get_asm`'s (tests/test_text_bridge.py)."""
    pm = PassManager("builtin.module", op.context)
    pm.add(lambda _op, _pass: None, name="LinearLayoutPrint", argument="ll-print")
    pm.enable_verifier(False)
    try:
        dump = _dump_after_a_pass(pm, op, generic)
    except OSError:  # no temporary directory to write in
        return None
    if dump is None:
        return None
    start = dump.find("\n") + 1  # after the header line; the text is copied once, at the end
    if not (start and dump.startswith("// -----// IR Dump After") and dump.endswith("\n\n\n", start)):
        return None
    if not generic and _first_op_line(dump, start).startswith('"builtin.module"'):
        return None  # did not verify: printed generic
    return dump[start:-2]


def _first_op_line(text: str, start: int = 0) -> str:
    """The first line of printed IR `text[start:]` that is no alias definition (`#map = ...`,
    `!t = ...`); only the lines up to it are copied."""
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end > start and text[start] not in "#!":
            return text[start:end]
        start = end + 1
    return ""


def _dump_after_a_pass(pm: PassManager, op: ir.Operation, generic: bool) -> str | None:
    """The one file MLIR's IR printing writes after `pm` runs on `op` (None if not one)."""
    with tempfile.TemporaryDirectory(prefix="linear-layout-print-") as directory:
        pm.enable_ir_printing(
            print_before_all=False,
            print_after_all=True,
            print_generic_op_form=generic,
            tree_printing_dir_path=directory,
        )
        pm.run(op)
        paths = [os.path.join(root, name) for root, _, names in os.walk(directory) for name in names]
        if len(paths) != 1:
            return None
        with open(paths[0], encoding="utf-8") as file:
            return file.read()


def _printed(op: ir.Operation, generic: bool) -> str:
    """`op.get_asm(print_generic_op_form=generic, assume_verified=True)`, through a file for a
    large top-level module."""
    if op.name == "builtin.module" and op.parent is None and _more_ops_than(op, BUFFERED_PRINT_MIN_OPS):
        text = _print_through_file(op, generic)
        if text is not None:
            return text
    return op.get_asm(print_generic_op_form=generic, assume_verified=True)


def print_module(op: ir.Operation | ir.Module, *, generic: bool = False) -> str:
    """The text of `op` with layout aliases, optionally in generic op form."""
    if isinstance(op, ir.Module):
        op = op.operation
    return add_aliases(_printed(op.operation, generic))
