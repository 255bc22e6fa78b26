"""`ttg.warp_specialize`: the one Triton op whose custom syntax spans several regions with
keywords between them, so no `formats` entry can spell it (TritonGPUOps.cpp prints it by hand):

    %r = ttg.warp_specialize(%a, %b) attributes {requestedRegisters = array<i32: 24>}
    default {
      ttg.warp_yield %x : i32
    }
    partition0(%arg0: T loc(...), %arg1: U loc(...)) num_warps(4) {
      ttg.warp_return
    } : (T, U) -> i32

It is read into the generic form Triton itself builds: the `default` region, then a region
holding one `ttg.warp_specialize.partitions` op, which takes the captures as operands and whose
regions are the partitions (their arguments the block arguments), and `partitionNumWarps` as an
attribute:

    %r = "ttg.warp_specialize"() ({ ... }, {
      "ttg.warp_specialize.partitions"(%a, %b) ({
      ^bb0(%arg0: T loc(...), %arg1: U loc(...)): ...
      }) : (T, U) -> ()
    }) {partitionNumWarps = array<i32: 4>, requestedRegisters = array<i32: 24>} : () -> i32

Every piece stays on its source line, and `write` prints Triton's syntax back.
"""

from __future__ import annotations

from dataclasses import dataclass

from .formats import mlir_name
from .syntax import Op, Token, TtgirSyntaxError, _block_argument, split_top_level
from .types import to_triton_types

__all__ = [
    "NAME",
    "PARTITIONS",
    "Header",
    "header",
    "partition_number_warps",
    "read",
    "write",
]

NAME = "ttg.warp_specialize"
PARTITIONS = "ttg.warp_specialize.partitions"
NUM_WARPS = "partitionNumWarps"


@dataclass(frozen=True)
class Partition:
    """One `partitionN(args) num_warps(N)`: its line, its arguments' text and its warp count."""

    line: int
    arguments: tuple[tuple[Token, ...], ...]
    num_warps: int


@dataclass(frozen=True)
class Header:
    """The tokens of a `ttg.warp_specialize` in custom syntax, split into its parts."""

    captures: tuple[str, ...]
    attributes: tuple[Token, ...]  # inside `attributes {...}`, or ()
    partitions: tuple[Partition, ...]
    types: tuple[Token, ...]  # after the final `:`


def _matching(tokens: tuple[Token, ...], open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        depth += tokens[index].text in "([{<" and len(tokens[index].text) == 1
        depth -= tokens[index].text in ")]}>" and len(tokens[index].text) == 1
        if depth == 0:
            return index
    raise TtgirSyntaxError(
        f"'{NAME}': '{tokens[open_index].text}' is never closed", tokens[open_index].line, tokens[open_index].column
    )


def _expect(tokens: tuple[Token, ...], index: int, text: str) -> int:
    if index >= len(tokens) or tokens[index].text != text:
        where = tokens[min(index, len(tokens) - 1)]
        found = "the end of the op" if index >= len(tokens) else repr(tokens[index].text)
        raise TtgirSyntaxError(f"'{NAME}': expected '{text}', found {found}", where.line, where.column)
    return index + 1


def header(op: Op) -> Header:
    """The parts of `op` (a `ttg.warp_specialize` in custom syntax); a `TtgirSyntaxError` at the
    first token that does not fit."""
    tokens = op.tokens
    close = _matching(tokens, _expect(tokens, 0, "(") - 1)
    captures = tuple(t.text for t in tokens[1:close] if t.kind == "value")
    index = close + 1
    attributes: tuple[Token, ...] = ()
    if index < len(tokens) and tokens[index].text == "attributes":
        end = _matching(tokens, index + 1)
        attributes = tokens[index + 2 : end]
        index = end + 1
    index = _expect(tokens, index, "default")
    partitions = []
    while index < len(tokens) and tokens[index].text.startswith("partition"):
        line = tokens[index].line
        end = _matching(tokens, _expect(tokens, index + 1, "(") - 1)
        arguments = tuple(tuple(group) for group in split_top_level(list(tokens[index + 2 : end]), ",") if group)
        index = _expect(tokens, _expect(tokens, end + 1, "num_warps"), "(")
        count = tokens[index]
        index = _expect(tokens, index + 1, ")")
        partitions.append(Partition(line, arguments, int(count.text)))
    index = _expect(tokens, index, ":")
    if len(partitions) != len(op.regions) - 1:
        raise TtgirSyntaxError(f"'{NAME}' needs a region after 'default' and after each partition", op.line, op.column)
    return Header(captures, attributes, tuple(partitions), tokens[index:])


def partition_number_warps(attribute_text: str) -> list[int]:
    """The warp counts of `array<i32: 4, 4>`."""
    inner = attribute_text[attribute_text.index(":") + 1 :].rstrip(">") if ":" in attribute_text else ""
    return [int(v) for v in inner.split(",") if v.strip()]


def read(converter, op: Op) -> None:
    """Put `op` (custom syntax) into `converter`'s output in generic form, on its source lines.
    `converter` is the reader's `_Converter`."""
    parts = header(op)
    capture_types = ", ".join(converter.type_of(value, op) for value in parts.captures)
    result_types = converter.functional_results(op, list(op.tokens)) if op.result_count else []
    converter.define(op, result_types)
    source = converter.source
    written = source[parts.attributes[0].start : parts.attributes[-1].end] if parts.attributes else ""
    counts = ", ".join(str(p.num_warps) for p in parts.partitions)
    attributes = ", ".join(a for a in (converter.mlir_text(written), f"{NUM_WARPS} = array<i32: {counts}>") if a)
    converter.out.put(op.line, f'{converter.results_text(op)}"{mlir_name(NAME)}"() ({{')
    default, *regions = op.regions
    converter.convert_region(default)
    holder = f'}}, {{ "{mlir_name(PARTITIONS)}"({", ".join(parts.captures)})'
    converter.out.put(default.end_line, holder + (" (" if regions else ""))
    for index, (partition, region) in enumerate(zip(parts.partitions, regions)):
        converter.out.put(partition.line, ", {" if index else "{")
        arguments = [_block_argument(source, list(group)) for group in partition.arguments]
        for name, type_text, _whole in arguments:
            converter.types[name] = converter.mlir_text(type_text)
        entry = "^bb0(" + ", ".join(whole for _n, _t, whole in arguments) + "):"  # converted by convert_region
        converter.convert_region(region, entry_header=entry)
        converter.out.put(region.end_line, "}")
    end = regions[-1].end_line if regions else default.end_line
    shown = result_types[0] if len(result_types) == 1 else f"({', '.join(result_types)})"
    converter.out.put(end, (")" if regions else "") + f" : ({capture_types}) -> () {op.loc}".rstrip())
    converter.out.put(end, f"}}) {{{attributes}}} : () -> {shown} {op.loc}".rstrip())


def write(writer, op: Op, indent: int, parts_of, results: str) -> None:
    """Append Triton's custom syntax of `op` (generic form) to `writer.lines`: `writer` is the
    writer's `_Writer`, `parts_of` its `_generic_parts` of an op (operands, properties,
    attributes, operand types, result types)."""
    _operands, properties, attributes, _operand_types, result_types = parts_of(op)
    default, holder = op.regions
    partitions = holder.blocks[0].ops[0]
    captures, _properties, _attributes, capture_types, _results = parts_of(partitions)
    merged = dict(properties)
    merged.update(attributes)
    counts = partition_number_warps(merged.pop(NUM_WARPS, None) or "")
    rest = ", ".join(key if value is None else f"{key} = {value}" for key, value in merged.items())
    pad = "  " * indent
    keyword = f" attributes {{{to_triton_types(rest)}}}" if rest else ""
    writer.lines.append(f"{pad}{results}{NAME}({', '.join(captures)}){keyword}")
    writer.lines.append(f"{pad}default {{")
    writer.write_region(default, indent + 1)
    writer.lines.append(pad + "}")
    for index, (region, count) in enumerate(zip(partitions.regions, counts)):
        arguments = ", ".join(to_triton_types(whole) for _n, _t, whole in region.blocks[0].arguments)
        writer.lines.append(f"{pad}partition{index}({arguments}) num_warps({count}) {{")
        writer.write_region(region, indent + 1, skip_entry_header=True)
        writer.lines.append(pad + "}")
    shown = result_types[0] if len(result_types) == 1 else f"({', '.join(result_types)})"
    writer.lines[-1] += f" : ({', '.join(capture_types)}) -> {shown}" + (f" {op.loc}" if op.loc else "")
    writer.lines[-1] = to_triton_types(writer.lines[-1])
