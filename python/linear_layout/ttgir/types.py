"""Type text between Triton's syntax and the IRDL dialect's.

IRDL type parameters are attributes, so Triton's `!ttg.memdesc<128x32xf16, #shared, #smem,
mutable>` is read as `!ttg.memdesc<[128, 32], f16, #shared, #smem, "mutable">`, a memdesc with
an allocation shape (`..., mutable, 32x128>`) as `!ttg.memdesc_view<..., [32, 128]>`, and
`!ttg.async.token` as `!ttg.async_token` (IRDL names cannot hold a dot). A memdesc in tensor
memory (`#ttng.tensor_memory`, sm_100) is not a shared-memory buffer: it is read as the opaque
type `!ttng.tensor_memdesc<...>` with Triton's text inside, which no pass mistakes for the
IRDL memdesc. Types of Triton's
other dialects (`!tt.ptr<f16>`, `!tt.tensordesc<...>`) stay as written: MLIR keeps them as
opaque types, whose text is not parsed, so alias references inside them are expanded here.

    >>> to_mlir_types("!ttg.memdesc<128x32xf16, #shared, #smem, mutable>")
    '!ttg.memdesc<[128, 32], f16, #shared, #smem, "mutable">'
    >>> to_mlir_types("!ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>")
    '!ttng.tensor_memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>'
    >>> to_triton_types('!ttg.memdesc_view<[8, 128], f32, #s, #ttg.shared_memory, "mutable", [32, 128]>')
    '!ttg.memdesc<8x128xf32, #s, #ttg.shared_memory, mutable, 32x128>'
"""

from __future__ import annotations

import re

__all__ = [
    "to_mlir_types",
    "to_triton_types",
    "expand_aliases",
    "expand_opaque_aliases",
    "element_type",
    "pointee_type",
    "i1_like",
    "TypeTextError",
]


class TypeTextError(ValueError):
    """A Triton type that cannot be read (the message quotes it)."""


_STRING_OR_ANGLE = re.compile(r'"(?:[^"\\]|\\.)*"|[<>]')
_ALIAS_REF = re.compile(r'"(?:[^"\\]|\\.)*"|#[A-Za-z_][\w$.\-]*')
_OPAQUE_TYPE = re.compile(r"!(?:tt|ttng|amdg|nvws|gluon)\.[A-Za-z_]\w*<")
TENSOR_MEMDESC = "!ttng.tensor_memdesc"
_TENSOR_MEMORY = "#ttng.tensor_memory"
_SHARED_LINEAR = "#ttg.shared_linear<"


def _closing(text: str, open_index: int) -> int:
    """Index of the `>` matching the `<` at `open_index` (strings and `->` skipped)."""
    depth = 0
    for match in _STRING_OR_ANGLE.finditer(text, open_index):
        token = match.group()
        if token == "<":
            depth += 1
        elif token == ">":
            if match.start() > 0 and text[match.start() - 1] == "-":
                continue
            depth -= 1
            if depth == 0:
                return match.start()
    raise TypeTextError(f"unbalanced '<' in {text[open_index - 12 : open_index + 40]!r}")


def split_parameters(body: str) -> list[str]:
    """Split `a, b<c, d>, [e, f]` at its top-level commas."""
    parts, depth, start = [], 0, 0
    index = 0
    while index < len(body):
        char = body[index]
        if char == '"':
            end = body.index('"', index + 1)
            while body[end - 1] == "\\":
                end = body.index('"', end + 1)
            index = end + 1
            continue
        if char in "<([{":
            depth += 1
        elif char in ">)]}" and not (char == ">" and index > 0 and body[index - 1] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index].strip())
            start = index + 1
        index += 1
    parts.append(body[start:].strip())
    return [p for p in parts if p]


def _replace_types(text: str, prefixes: tuple[str, ...], convert) -> str:
    out, pos = [], 0
    pattern = re.compile("|".join(re.escape(p) for p in prefixes))
    while True:
        match = pattern.search(text, pos)
        if match is None:
            out.append(text[pos:])
            return "".join(out)
        open_index = match.end() - 1
        close = _closing(text, open_index)
        out.append(text[pos : match.start()])
        out.append(convert(match.group()[:-1], text[open_index + 1 : close]))
        pos = close + 1


def _dims(text: str) -> list[int]:
    return [int(d) for d in text.split("x")]


def _memdesc_to_mlir(_prefix: str, body: str) -> str:
    parts = split_parameters(body)
    if len(parts) < 3:
        raise TypeTextError(f"!ttg.memdesc<{body}> needs a shape, an encoding and a memory space")
    shape_match = re.fullmatch(r"((?:\d+x)*)(.+)", parts[0])
    if shape_match is None:
        raise TypeTextError(f"!ttg.memdesc<{body}> has no element type")
    dims = _dims(shape_match.group(1)[:-1]) if shape_match.group(1) else []
    element = shape_match.group(2)
    encoding, space = parts[1], parts[2]
    if space == _TENSOR_MEMORY:
        return f"{TENSOR_MEMDESC}<{body}>"
    rest = parts[3:]
    mutability = "immutable"
    if rest and rest[0] == "mutable":
        mutability = "mutable"
        rest = rest[1:]
    if len(rest) > 1 or (rest and not re.fullmatch(r"\d+(?:x\d+)*", rest[0])):
        raise TypeTextError(f"cannot read !ttg.memdesc<{body}>")
    shape = f"[{', '.join(map(str, dims))}]"
    if rest:
        alloc = f"[{', '.join(map(str, _dims(rest[0])))}]"
        return f'!ttg.memdesc_view<{shape}, {element}, {encoding}, {space}, "{mutability}", {alloc}>'
    return f'!ttg.memdesc<{shape}, {element}, {encoding}, {space}, "{mutability}">'


def _array_dims(text: str) -> str:
    values = [v.split(":")[0].strip() for v in text.strip()[1:-1].split(",") if v.strip()]
    return "x".join(values)


def _memdesc_to_triton(prefix: str, body: str) -> str:
    parts = split_parameters(body)
    shape, element, encoding, space, mutability = parts[:5]
    dims = _array_dims(shape)
    head = f"{dims}x{element}" if dims else element
    fields = [head, encoding, space]
    if mutability.strip('"') == "mutable":
        fields.append("mutable")
    if prefix == "!ttg.memdesc_view":
        fields.append(_array_dims(parts[5]))
    return f"!ttg.memdesc<{', '.join(fields)}>"


def _shared_linear_to_mlir(prefix: str, body: str) -> str:
    """Triton's `{offset = ...}, alignment = 16` -> `{offset = ..., alignment = 16}` (an IRDL
    attribute has one dictionary parameter). Triton's parser requires the alignment, after the
    dictionary: anything else is a TypeTextError in Triton's words."""
    parts = split_parameters(body)
    if not parts or not parts[0].startswith("{") or not parts[0].endswith("}"):
        return f"{prefix}<{body}>"  # not a dictionary: the encoding check says what is wrong
    fields = split_parameters(parts[0][1:-1])
    if any(field.split("=", 1)[0].strip() == "alignment" for field in fields):
        raise TypeTextError(f"{prefix}<{body}>: alignment must be specified outside of the linear layout braces")
    if len(parts) < 2:
        raise TypeTextError(f"{prefix}<{body}>: expected ', alignment = N' after the dictionary, as Triton writes it")
    return f"{prefix}<{{{', '.join(fields + parts[1:])}}}>"


def to_mlir_types(text: str) -> str:
    """Triton's type syntax in `text` rewritten to the IRDL dialect's, with Triton's
    `#ttg.shared_linear<{...}, alignment = 16>` as the dialect's `#ttg.shared_linear<{..., alignment = 16}>`.

    >>> to_mlir_types("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>")
    '#ttg.shared_linear<{offset = [[0, 1], [1, 0]], alignment = 16}>'
    """
    text = text.replace("!ttg.async.token", "!ttg.async_token")
    if _SHARED_LINEAR in text:
        text = _replace_types(text, (_SHARED_LINEAR,), _shared_linear_to_mlir)
    return _replace_types(text, ("!ttg.memdesc<",), _memdesc_to_mlir)


def to_triton_types(text: str) -> str:
    """The IRDL dialect's type syntax in `text` rewritten to Triton's."""
    text = _replace_types(text, ("!ttg.memdesc<", "!ttg.memdesc_view<"), _memdesc_to_triton)
    return text.replace("!ttg.async_token", "!ttg.async.token").replace(TENSOR_MEMDESC + "<", "!ttg.memdesc<")


def expand_aliases(text: str, aliases: dict[str, str], depth: int = 0) -> str:
    """`text` with every reference to one of `aliases` (`#blocked`) replaced by its definition,
    recursively; text inside strings is kept.

    >>> expand_aliases("tensor<4xf32, #b>", {"#b": "#ttg.blocked<{order = [0]}>"})
    'tensor<4xf32, #ttg.blocked<{order = [0]}>>'
    """
    if depth > 16:
        raise TypeTextError("alias definitions refer to each other in a cycle")

    def one(match: re.Match) -> str:
        token = match.group()
        if token in aliases:
            return expand_aliases(aliases[token], aliases, depth + 1)
        return token

    return _ALIAS_REF.sub(one, text)


def expand_opaque_aliases(text: str, aliases: dict[str, str]) -> str:
    """Expand alias references inside `!tt.*<...>` types, whose text MLIR keeps unparsed."""

    def expand(body: str) -> str:
        return expand_aliases(body, aliases)

    out, pos = [], 0
    while True:
        match = _OPAQUE_TYPE.search(text, pos)
        if match is None:
            out.append(text[pos:])
            return "".join(out)
        close = _closing(text, match.end() - 1)
        out.append(text[pos : match.end()])
        out.append(expand(text[match.end() : close]))
        out.append(">")
        pos = close + 1


def element_type(tensor_type: str) -> str:
    """`tensor<1xf32, #b>` -> `f32` (the element type of a ranked tensor; a scalar is its own)."""
    if not tensor_type.startswith("tensor<"):
        return tensor_type
    inner = split_parameters(tensor_type[len("tensor<") : _closing(tensor_type, len("tensor<") - 1)])[0]
    return re.sub(r"^(?:\d+x)*", "", inner)


def pointee_type(pointer_type: str) -> str:
    """`!tt.ptr<f16>` -> `f16`; `tensor<4x!tt.ptr<f16>, #b>` -> `tensor<4xf16, #b>`."""
    match = re.search(r"!tt\.ptr<", pointer_type)
    if match is None:
        raise TypeTextError(f"{pointer_type} is not a pointer or a tensor of pointers")
    close = _closing(pointer_type, match.end() - 1)
    inner = split_parameters(pointer_type[match.end() : close])[0]
    return pointer_type[: match.start()] + inner + pointer_type[close + 1 :]


def i1_like(value_type: str) -> str:
    """The i1 type of the same shape: `i32` -> `i1`, `tensor<4xf32, #b>` -> `tensor<4xi1, #b>`."""
    match = re.fullmatch(r"(tensor|vector)<((?:\d+x)*)([^,>]+)(.*)>", value_type, re.DOTALL)
    if match is None:
        return "i1"
    return f"{match.group(1)}<{match.group(2)}i1{match.group(4)}>"
