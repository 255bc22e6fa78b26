"""An MLIR module -> TTGIR text in Triton's syntax (`print_ttgir`).

MLIR prints the module (with its locations); upstream ops come out in their custom syntax and
Triton's ops in generic form. Each Triton op with a `formats` entry is printed back in its
custom syntax; types go through `types.to_triton_types`; layout attributes are hoisted into
aliases (`#blocked`, `#mma`, `#shared`, `#smem`) as Triton writes them.
"""

from __future__ import annotations

import re

from mlir import ir

from ..core.arguments import require_str, type_name
from ..ir import add_aliases
from . import result_names, warp_specialize
from .foreign import FOREIGN_PREFIX, SYNTAX_ATTRIBUTE, restore_text
from .formats import FORMATS, GenericOp, OpFormat, print_custom, triton_names
from .reader import _last_top_level, _matching_index, _type_list
from .syntax import AliasDef, Op, Region, attribute_entries, parse_file
from .types import split_parameters, to_triton_types

__all__ = ["print_ttgir", "mlir_to_ttgir", "triton_key_order"]

# The order in which Triton prints (and some of its parsers require) each encoding's fields;
# MLIR's DictionaryAttr sorts them. Fields not listed keep their place after the listed ones.
_CTA = ["CTAsPerCGA", "CTASplitNum", "CTAOrder", "ctaLayout"]
_KEY_ORDER = {
    "blocked": ["sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", *_CTA],
    "slice": ["dim", "parent"],
    "dot_op": ["opIdx", "parent", "kWidth"],
    "linear": ["register", "lane", "warp", "block"],
    "nvidia_mma": ["versionMajor", "versionMinor", "warpsPerCTA", *_CTA, "instrShape"],
    "amd_mfma": ["version", "warpsPerCTA", "instrShape", "isTransposed", "tilesPerWarp", "elementBitWidth", *_CTA],
    "amd_wmma": ["version", "isTranspose", "warpsPerCTA", "ctaLayout", "instrShape"],
    "swizzled_shared": ["vec", "perPhase", "maxPhase", "order", *_CTA],
    "amd_rotating_shared": ["vec", "perPhase", "maxPhase", "order", *_CTA],
    "nvmma_shared": ["swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", *_CTA],
    "shared_linear": ["offset", "block", "alignment"],
}
# Fields Triton prints after the dictionary: `#ttg.shared_linear<{offset = [...]}, alignment = 16>`.
_AFTER_DICTIONARY = {"shared_linear": ("alignment",)}
# MLIR writes `opIdx = 0 : i64`; Triton writes `opIdx = 0` (the same i64 attribute), and some
# of its parsers accept only that.
_I64_SUFFIX = re.compile(r"^(\w+ = -?\d+) : i64$")
_ENCODING_START = re.compile(r"#ttg\.(\w+)<\{")


def _closing_brace(text: str, open_index: int) -> int:
    depth, index = 0, open_index
    while index < len(text):
        char = text[index]
        if char == '"':
            index = text.index('"', index + 1) + 1
            continue
        depth += char == "{"
        depth -= char == "}"
        if depth == 0:
            return index
        index += 1
    raise ValueError("unbalanced '{' in an encoding")


def triton_key_order(text: str) -> str:
    """Every `#ttg.<encoding><{...}>` in `text` with its fields in Triton's order (and
    `shared_linear`'s `alignment` after the dictionary, where Triton prints it).

    >>> triton_key_order("#ttg.dot_op<{kWidth = 2 : i64, opIdx = 0, parent = #mma}>")
    '#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>'
    >>> triton_key_order("#ttg.shared_linear<{alignment = 16 : i64, offset = [[0, 1]]}>")
    '#ttg.shared_linear<{offset = [[0, 1]]}, alignment = 16>'
    """
    for match in reversed(list(_ENCODING_START.finditer(text))):
        order = _KEY_ORDER.get(match.group(1))
        if order is None:
            continue
        open_index = match.end() - 1
        close = _closing_brace(text, open_index)
        entries = split_parameters(text[open_index + 1 : close])
        rank = {key: index for index, key in enumerate(order)}
        entries.sort(key=lambda e: rank.get(e.split("=", 1)[0].strip(), len(order)))
        entries = [_I64_SUFFIX.sub(r"\1", e) for e in entries]
        if match.group(1) == "shared_linear" and not any(_is_trailing("shared_linear", e) for e in entries):
            entries.append("alignment = 16")  # the dialect's default, which Triton's parser requires written
        trailing = [e for e in entries if _is_trailing(match.group(1), e)]
        inside = ", ".join(e for e in entries if e not in trailing)
        text = text[: open_index + 1] + inside + "}" + "".join(f", {e}" for e in trailing) + text[close + 1 :]
    return text


def _is_trailing(encoding: str, entry: str) -> bool:
    """Whether Triton prints `entry` after the encoding's dictionary (`shared_linear`'s `alignment`)."""
    return encoding in _AFTER_DICTIONARY and entry.split("=", 1)[0].strip() in _AFTER_DICTIONARY[encoding]


def _generic_parts(source: str, op: Op):
    """(operands, property entries, attribute entries, operand types, result types) of a generic op."""
    tokens = list(op.tokens)
    close = _matching_index(tokens, 0)
    operands = [t.text for t in tokens[1:close] if t.kind == "value"]
    index = close + 1
    properties: list = []
    attributes: list = []
    if index < len(tokens) and tokens[index].text == "<":
        end = _matching_index(tokens, index)
        properties = attribute_entries(source, tokens[index + 2 : end - 1])
        index = end + 1
    if index < len(tokens) and tokens[index].text == "(":  # regions: their text is not in `tokens`
        index = _matching_index(tokens, index) + 1
    if index < len(tokens) and tokens[index].text == "{":
        end = _matching_index(tokens, index)
        attributes = attribute_entries(source, tokens[index + 1 : end])
        index = end + 1
    colon = _last_top_level(tokens, ":")
    arrow = _last_top_level(tokens, "->")
    if colon is None or arrow is None:
        raise ValueError(f"generic '{op.name}' has no functional type")
    operand_types = _type_list(source, tokens[colon + 1 : arrow])
    result_types = _type_list(source, tokens[arrow + 1 :])
    return operands, properties, attributes, operand_types, result_types


def _distribute(entry: OpFormat, values: list, sizes: list[int] | None) -> dict[str, list]:
    names = entry.operand_names()
    if sizes is None:
        flexible = [n for n in entry.operands if n[-1] in "?*"]
        fixed = len(entry.operands) - len(flexible)
        sizes = [1 if n[-1] not in "?*" else len(values) - fixed for n in entry.operands]
    out, start = {}, 0
    for name, size in zip(names, sizes):
        out[name] = values[start : start + size]
        start += size
    return out


def _result_types_by_name(entry: OpFormat, types: list[str], sizes: list[int] | None = None) -> dict[str, list[str]]:
    names = entry.result_names()
    if sizes is not None:  # `resultSegmentSizes`
        starts = [sum(sizes[:index]) for index in range(len(sizes))]
        return {name: types[start : start + size] for name, start, size in zip(names, starts, sizes)}
    if len(entry.results) == 1 or any(r.endswith("*") for r in entry.results):
        return {names[0]: types} if entry.results else {}
    return {name: [t] for name, t in zip(names, types)}


def _segment_sizes(attributes: dict, key: str) -> list[int] | None:
    text = attributes.get(key)
    if text is None:
        return None
    return [int(v) for v in text[text.index(":") + 1 :].rstrip(">").split(",") if v.strip()]


def _custom_line(source: str, op: Op, entry: OpFormat) -> str:
    operands, properties, attributes, operand_types, result_types = _generic_parts(source, op)
    merged = dict(properties)
    merged.update(attributes)
    sizes = _segment_sizes(merged, "operandSegmentSizes")
    operand_types = [to_triton_types(t) for t in operand_types]
    result_types = [to_triton_types(t) for t in result_types]
    generic = GenericOp(
        operands=_distribute(entry, operands, sizes),
        operand_types=_distribute(entry, operand_types, sizes),
        result_types=_result_types_by_name(entry, result_types, _segment_sizes(merged, "resultSegmentSizes")),
        all_operand_types=operand_types,
        all_result_types=result_types,
        attributes={k: (None if v is None else to_triton_types(v)) for k, v in merged.items()},
    )
    body = print_custom(entry, generic)
    return f"{op.name} {body}" if body else op.name


def _results(op: Op) -> str:
    if not op.results:
        return ""
    return ", ".join(name if count == 1 else f"{name}:{count}" for name, count in op.results) + " = "


class _Writer:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: list[str] = []
        self.groups: list[result_names.Group] = []

    def write_op(self, op: Op, indent: int) -> None:
        pad = "  " * indent
        entry = FORMATS.get(op.name)
        if op.generic and entry is not None and entry.format == "custom:func":
            self.write_func(op, indent)
            return
        if op.generic and op.name == warp_specialize.NAME:
            warp_specialize.write(self, op, indent, lambda o: _generic_parts(self.source, o), _results(op))
            return
        if op.generic and op.name.startswith(FOREIGN_PREFIX):
            operands, _properties, attributes, _types, _result_types = _generic_parts(self.source, op)
            line = _results(op) + restore_text(op.name, dict(attributes)[SYNTAX_ATTRIBUTE] or "", operands)
            self.lines.append(pad + line + (f" {op.loc}" if op.loc else ""))
            return
        has_region = any(isinstance(piece, Region) for piece in op.pieces)
        if op.generic and entry is not None and entry.format is not None and not has_region:
            # (no custom format spells a region: an op written generically with one keeps its
            # generic text, so nothing is dropped; found by the fuzzer: a `tt.scan` renamed
            # `tt.broadcast` lost its combine region in the custom form)
            line = _results(op) + _custom_line(self.source, op, entry)
            self.note_result_group(op, entry, len(pad))
            self.lines.append(pad + line + (f" {op.loc}" if op.loc else ""))
            return
        current = pad + _results(op)
        for piece in op.pieces:
            if isinstance(piece, Region):
                self.lines.append(current + "{")
                self.write_region(piece, indent + 1)
                current = pad + "}"
            else:
                current += to_triton_types(piece)
        self.lines.append(current + (f" {op.loc}" if op.loc else ""))

    def note_result_group(self, op: Op, entry: OpFormat, indent: int) -> None:
        """Remember a numbered result group (`%3:2`) of an op with several declared results, which
        Triton names one by one (`result_names`)."""
        if len(entry.results) < 2 or len(op.results) != 1 or not op.results[0][0][1:].isdigit():
            return
        _operands, properties, attributes, _types, _result_types = _generic_parts(self.source, op)
        sizes = _segment_sizes({**dict(properties), **dict(attributes)}, "resultSegmentSizes")
        sizes = sizes or [
            1 if raw[-1] not in "?*" else op.result_count - len(entry.results) + 1 for raw in entry.results
        ]
        names = [name for name, size in zip(entry.result_names(), sizes) for _ in range(size)]
        if len(names) == op.result_count and all(size <= 1 for size in sizes):
            self.groups.append(result_names.Group(len(self.lines), indent, int(op.results[0][0][1:]), tuple(names)))

    def write_region(self, region: Region, indent: int, skip_entry_header: bool = False) -> None:
        for index, block in enumerate(region.blocks):
            if block.header and not (skip_entry_header and index == 0):
                self.lines.append("  " * (indent - 1) + to_triton_types(block.header))
            for op in block.ops:
                self.write_op(op, indent)

    def write_func(self, op: Op, indent: int) -> None:
        pad = "  " * indent
        _operands, properties, attributes, _types, _results_types = _generic_parts(self.source, op)
        props = dict(properties)
        region = op.regions[0]
        entry_block = region.blocks[0]
        argument_attributes = _array_entries(props.get("arg_attrs"))
        arguments = []
        for index, (_name, _type, whole) in enumerate(entry_block.arguments):
            attribute = argument_attributes[index] if index < len(argument_attributes) else "{}"
            if attribute != "{}":
                name, rest = whole.split(":", 1)
                type_text = _type
                whole = f"{name}: {type_text} {attribute}{rest[len(' ' + type_text) :]}"
            arguments.append(to_triton_types(whole))
        function_type = props["function_type"]
        results = function_type[function_type.rindex("->") + 2 :].strip()
        result_text = "" if results == "()" else f" -> {to_triton_types(results)}"
        visibility = props.get("sym_visibility", "").strip('"')
        head = f"tt.func {visibility + ' ' if visibility else ''}@{props['sym_name'].strip(chr(34))}"
        attribute_text = ", ".join(k if v is None else f"{k} = {v}" for k, v in attributes)
        tail = f" attributes {{{attribute_text}}}" if attribute_text else ""
        self.lines.append(f"{pad}{head}({', '.join(arguments)}){result_text}{tail} {{")
        self.write_region(region, indent + 1, skip_entry_header=True)
        self.lines.append(pad + "}" + (f" {op.loc}" if op.loc else ""))


def _array_entries(text: str | None) -> list[str]:
    if not text:
        return []
    inner = text.strip()[1:-1]
    depth, start, out = 0, 0, []
    for index, char in enumerate(inner):
        depth += char in "{[(<"
        depth -= char in "}])>"
        if char == "," and depth == 0:
            out.append(inner[start:index].strip())
            start = index + 1
    if inner.strip():
        out.append(inner[start:].strip())
    return out


def mlir_to_ttgir(asm: str) -> str:
    """TTGIR text for MLIR's printed form of a module (with locations)."""
    asm = triton_names(require_str(asm, "mlir_to_ttgir", "asm", "MLIR text"))
    parsed = parse_file(asm)
    writer = _Writer(asm)
    trailing: list[str] = []
    leading: list[str] = []
    seen_op = False
    for item in parsed.items:
        if isinstance(item, AliasDef):
            (trailing if seen_op else leading).append(f"{item.name} = {to_triton_types(item.text)}")
        else:
            seen_op = True
            writer.write_op(item, 0)
    lines = result_names.rename(writer.lines, writer.groups)
    text = _tensor_memory_aliases(triton_key_order("\n".join(leading + lines + trailing) + "\n"))
    return _mlir_alias_order(add_aliases(text))


# Triton's aliases of its tensor-memory encodings, which sit inside the opaque
# `!ttng.tensor_memdesc<...>` text, so MLIR never sees (nor aliases) them.
_TENSOR_MEMORY_ENCODING = re.compile(r"#ttng\.(tensor_memory_encoding|tensor_memory_scales_encoding)<[^<>]*>")
_TENSOR_MEMORY_ALIAS = {"tensor_memory_encoding": "tmem", "tensor_memory_scales_encoding": "tmem_scales"}


def _tensor_memory_aliases(text: str) -> str:
    """`text` with each tensor-memory encoding replaced by its alias (`#tmem`, `#tmem1`,
    `#tmem_scales`, numbered in the order of first use), the definitions put in front."""
    alias_of: dict[str, str] = {}
    counts: dict[str, int] = {}

    def replace(match: re.Match) -> str:
        if match.group() not in alias_of:
            base = _TENSOR_MEMORY_ALIAS[match.group(1)]
            count = counts.get(base, 0)
            counts[base] = count + 1
            alias_of[match.group()] = f"#{base}{count or ''}"
        return alias_of[match.group()]

    body = _TENSOR_MEMORY_ENCODING.sub(replace, text)
    return "".join(f"{alias} = {definition}\n" for definition, alias in alias_of.items()) + body


_ALIAS_LINE = re.compile(r"#([\w$-]+) = ")
_ALIAS_USE = re.compile(r'"(?:[^"\\]|\\.)*"|#([\w$-]+)(?![\w$.-])')


def _mlir_alias_order(text: str) -> str:
    """The alias definitions at the head of `text` in the order MLIR's printer (Triton's) writes
    them: by depth (an alias whose definition uses other aliases after those), then by name
    without its number (`blocked`, `linear`, `loc`, `mma`, `shared`, `smem`), keeping the order
    of the definitions within a name."""
    lines = text.split("\n")
    count = 0
    while count < len(lines) and _ALIAS_LINE.match(lines[count]):
        count += 1
    names = [_ALIAS_LINE.match(line).group(1) for line in lines[:count]]  # type: ignore[union-attr]
    definitions = dict(zip(names, (line.split(" = ", 1)[1] for line in lines[:count])))
    depth: dict[str, int] = {}

    def depth_of(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name not in depth:
            used = {m.group(1) for m in _ALIAS_USE.finditer(definitions[name]) if m.group(1) in definitions}
            used -= seen | {name}
            depth[name] = 1 + max((depth_of(u, seen | {name}) for u in used), default=-1)
        return depth[name]

    order = sorted(range(count), key=lambda i: (depth_of(names[i]), names[i].rstrip("0123456789")))
    return "\n".join([lines[i] for i in order] + lines[count:])


def print_ttgir(module: ir.Module | ir.Operation) -> str:
    """The module in Triton's TTGIR syntax: Triton compiles it (`triton.compile(path, target=...)`)."""
    if not isinstance(module, (ir.Module, ir.Operation, ir.OpView)):
        raise TypeError(f"print_ttgir: argument 'module' must be an MLIR module or operation, got {type_name(module)}")
    operation = module.operation if isinstance(module, (ir.Module, ir.OpView)) else module
    asm = operation.get_asm(enable_debug_info=True, assume_verified=True, use_name_loc_as_prefix=True)
    return mlir_to_ttgir(asm)
