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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir

__all__ = [
    "MemDescText",
    "add_aliases",
    "attribute_kind",
    "format_ll_layout",
    "is_layout_attribute",
    "is_memdesc",
    "ll_layout_parameters",
    "memdesc_parameters",
    "memdesc_text",
    "pointee_type",
    "mlir_string",
    "print_module",
    "retyped_dense",
    "triton_encoding_text",
    "triton_to_mlir_text",
    "type_kind",
]

# ---------------------------------------------------------------------------- kinds


def _kind(text: str) -> str:
    """'#ttg.blocked<...>' -> 'ttg.blocked'; '!ttg.memdesc<...>' -> 'ttg.memdesc'."""
    end = text.find("<")
    return text[1 : end if end >= 0 else len(text)]


def attribute_kind(attr: ir.Attribute) -> str:
    """`ttg.blocked` for `#ttg.blocked<{...}>`, `ll.layout` for `#ll.layout<...>`."""
    return _kind(str(attr))


def type_kind(t: ir.Type) -> str:
    """`ttg.memdesc` for `!ttg.memdesc<...>`; builtin types have no dialect prefix (`f32`)."""
    text = str(t)
    return _kind(text) if text.startswith("!") else text


def pointee_type(t: ir.Type) -> ir.Type | None:
    """T of Triton's `!tt.ptr<T>` or `!tt.ptr<T, space>` (None for any other type).

    >>> # pointee_type(ir.Type.parse("!tt.ptr<f16>")) is the type f16
    """
    if type_kind(t) != "tt.ptr":
        return None
    return ir.Type.parse(_split_top_level(_parameters(str(t)))[0].strip(), t.context)


def is_layout_attribute(attr: ir.Attribute) -> bool:
    """An `#ll.layout` or a `#ttg` layout encoding (not `#ttg.shared_memory`)."""
    kind = attribute_kind(attr)
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


def triton_encoding_text(attr: ir.Attribute) -> str:
    """A `#ttg` encoding attribute as Triton's syntax (for `encodings.parse_encoding`)."""
    return _TYPED_INTEGER.sub(r"\1", str(attr))


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
_ATTRIBUTE_OR_STRING = re.compile(r'"[^"]*"|#(?:ttg|ll)\.[A-Za-z_]\w*')
_ANGLE_OR_STRING = re.compile(r'"[^"]*"|[<>]')
_EXISTING_ALIAS = re.compile(r"^#([\w.$-]+) = ", re.MULTILINE)


class _Aliaser:
    def __init__(self, taken: set[str]) -> None:
        self.alias_of: dict[str, str] = {}
        self.definitions: list[str] = []
        self.taken = taken
        self.counts: dict[str, int] = {}

    def _new_name(self, base: str) -> str:
        while True:
            n = self.counts.get(base, 0)
            self.counts[base] = n + 1
            alias = base if n == 0 else f"{base}{n}"
            if alias not in self.taken:
                self.taken.add(alias)
                return alias

    def _alias(self, base: str, text: str) -> str:
        alias = self.alias_of.get(text)
        if alias is None:
            alias = self.alias_of[text] = self._new_name(base)
            self.definitions.append(f"#{alias} = {text}")
        return "#" + alias

    def rewrite(self, text: str, start: int, end: int) -> str:
        """`text[start:end]` with every layout attribute replaced by its alias (innermost first)."""
        out = []
        pos = start
        while (match := _ATTRIBUTE_OR_STRING.search(text, pos, end)) is not None:
            if match.group().startswith('"'):
                out.append(text[pos : match.end()])
                pos = match.end()
                continue
            head = match.group()
            attr_end = match.end()
            body = ""
            if attr_end < end and text[attr_end] == "<":
                close = _matching_angle(text, attr_end, end)
                body = "<" + self.rewrite(text, attr_end + 1, close) + ">"
                attr_end = close + 1
            out.append(text[pos : match.start()])
            base = _ALIAS_NAMES.get(head[1:])
            out.append(self._alias(base, head + body) if base else head + body)
            pos = attr_end
        out.append(text[pos:end])
        return "".join(out)


def _matching_angle(text: str, open_at: int, end: int) -> int:
    depth = 0
    for match in _ANGLE_OR_STRING.finditer(text, open_at, end):
        token = match.group()
        if token == "<":
            depth += 1
        elif token == ">":
            depth -= 1
            if depth == 0:
                return match.start()
    raise ValueError(f"unbalanced '<' in {text[open_at - 20 : open_at + 40]!r}")


def add_aliases(asm: str) -> str:
    """Hoist the layout attributes of printed IR into alias definitions."""
    aliaser = _Aliaser(set(_EXISTING_ALIAS.findall(asm)))
    body = aliaser.rewrite(asm, 0, len(asm))
    if not aliaser.definitions:
        return body
    return "\n".join(aliaser.definitions) + "\n" + body


def print_module(op: ir.Operation | ir.Module, *, generic: bool = False) -> str:
    """The text of `op` with layout aliases, optionally in generic op form."""
    if isinstance(op, ir.Module):
        op = op.operation
    return add_aliases(op.get_asm(print_generic_op_form=generic, assume_verified=True))
