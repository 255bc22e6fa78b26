"""The layouts of one line of a TTGIR kernel, and its picture (``linear-layout-draw --ttgir FILE
--line N`` and the pictures of ``linear-layout-report --html``).

A line holding ``ttg.convert_layout`` (two tensor types), ``ttg.local_load`` (a memdesc, then a
tensor) or ``ttg.local_alloc``/``ttg.local_store`` (a tensor, then a memdesc) gives a
:class:`KernelLine`: the op, the tensor's shape and element width, and the encodings, aliases
(``#blocked = #ttg.blocked<...>`` above the module) resolved; :func:`kernel_picture` draws it.
:func:`read_kernel_line` reads the whole file with :func:`linear_layout.ttgir.parse_ttgir` first,
so a malformed kernel is reported as such.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ..draw import Picture, draw_conversion, draw_shared
from ..draw.grids import DEFAULT_LIMITS, Limits
from ..encodings import collect_aliases, parse_encoding
from ..encodings.base import Layout
from ..ttgir import parse_ttgir
from ..ttgir.types import split_parameters

__all__ = [
    "DRAWABLE_OPS",
    "KernelLine",
    "KernelLineError",
    "kernel_lines",
    "kernel_picture",
    "line_at",
    "read_kernel_line",
]

#: The ops a line can be drawn for.
DRAWABLE_OPS = ("ttg.convert_layout", "ttg.local_load", "ttg.local_store", "ttg.local_alloc")

_OP = re.compile(r"\b(ttg\.(?:convert_layout|local_load|local_store|local_alloc))\b")
_TYPE = re.compile(r"(tensor|!ttg\.memdesc)<")
_WIDTH = re.compile(r"^[a-z]+?(\d+)")


class KernelLineError(ValueError):
    """A line that cannot be drawn (the message names the line)."""


@dataclass(frozen=True)
class TypeText:
    """A ``tensor<...>`` or ``!ttg.memdesc<...>`` type: kind, shape, element type, encoding text,
    and a memdesc's allocation shape (when it is a view of a bigger buffer)."""

    kind: str
    shape: tuple[int, ...]
    element: str
    encoding: str
    alloc_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class KernelLine:
    """One drawable op: ``source``/``result`` encodings (for a local op, the tensor's is
    ``distributed`` and the buffer's ``shared``)."""

    number: int
    op: str
    shape: tuple[int, ...]
    bitwidth: int
    distributed: Layout
    other: Layout
    alloc_shape: tuple[int, ...] | None


def _closing(text: str, start: int) -> int:
    """Index of the ``>`` closing the ``<`` before ``start`` (``->`` is not a bracket)."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "<":
            depth += 1
        elif char == ">" and text[index - 1] != "-":
            depth -= 1
            if depth == 0:
                return index
    raise KernelLineError("unbalanced '<' in a type")


def _dims(text: str) -> tuple[tuple[int, ...], str]:
    parts = text.split("x")
    return tuple(int(p) for p in parts[:-1]), parts[-1]


def _types(line: str) -> list[TypeText]:
    found = []
    for match in _TYPE.finditer(line):
        body = line[match.end() : _closing(line, match.end())]
        params = split_parameters(body)
        shape, element = _dims(params[0].strip())
        alloc = None
        if match.group(1) != "tensor" and re.fullmatch(r"\d+(x\d+)*", params[-1].strip()):
            alloc = tuple(int(p) for p in params[-1].strip().split("x"))
        found.append(TypeText(match.group(1), shape, element, params[1].strip() if len(params) > 1 else "", alloc))
    return found


def _bitwidth(element: str) -> int:
    """Bits of an element type: ``f16`` 16, ``i1`` 8 (a byte in memory), a ``!tt.ptr`` 64."""
    if element.startswith("!tt.ptr"):
        return 64
    match = _WIDTH.match(element)
    if not match:
        raise KernelLineError(f"unknown element type {element!r}")
    return max(8, int(match.group(1)))


def line_at(text_lines: list[str], number: int, aliases: dict[str, str]) -> KernelLine:
    """The drawable op on line ``number`` of a kernel already read (its lines and alias table),
    without checking the rest of the kernel."""
    line = text_lines[number - 1]
    op = _OP.search(line)
    types = [t for t in _types(line) if t.encoding]
    if op is None or len(types) != 2:
        raise KernelLineError(f"line {number} holds no {', '.join(DRAWABLE_OPS)} with two typed layouts")
    first, second = types
    tensor, other = (second, first) if op.group(1) == "ttg.local_load" else (first, second)
    if tensor.kind != "tensor" or (op.group(1) != "ttg.convert_layout") != (other.kind != "tensor"):
        raise KernelLineError(f"line {number}: unexpected types for {op.group(1)}")
    return KernelLine(
        number,
        op.group(1),
        tensor.shape,
        _bitwidth(tensor.element),
        parse_encoding(tensor.encoding, aliases),
        parse_encoding(other.encoding, aliases),
        other.alloc_shape,
    )


def read_kernel_line(text: str, number: int) -> KernelLine:
    """The drawable op on line ``number`` (1-based) of the TTGIR ``text``.

    Raises :class:`~linear_layout.ttgir.TtgirError` for a malformed kernel, and
    :class:`KernelLineError` (or an encoding's ValueError) for a line that holds none of
    :data:`DRAWABLE_OPS` or whose layouts cannot be read."""
    lines = text.splitlines()
    if not 1 <= number <= len(lines):
        raise KernelLineError(f"line {number} is outside the file (1-{len(lines)})")
    parse_ttgir(text)
    return line_at(lines, number, collect_aliases(text))


def kernel_lines(text: str) -> tuple[int, ...]:
    """The numbers of the lines of ``text`` that name one of :data:`DRAWABLE_OPS` (no check)."""
    return tuple(n for n, line in enumerate(text.splitlines(), start=1) if _OP.search(line))


def kernel_picture(line: KernelLine, color_by: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Picture:
    """The picture of a kernel line: a conversion, or the shared buffer with the access highlighted
    (a load from a view of a bigger buffer draws the buffer alone, with a note)."""
    if line.op == "ttg.convert_layout":
        return draw_conversion(
            line.distributed, line.other, line.shape, line.bitwidth, color_by=color_by, limits=limits
        )
    kind = "load" if line.op == "ttg.local_load" else "store"
    if line.alloc_shape and line.alloc_shape != line.shape:
        picture = draw_shared(
            line.other, line.alloc_shape, bitwidth=line.bitwidth, color_by=color_by or "chunk", limits=limits
        )
        return dataclasses.replace(
            picture,
            notes=picture.notes
            + (f"the {kind} reads a {'x'.join(map(str, line.shape))} view of this buffer: its access is not drawn",),
        )
    return draw_shared(
        line.other,
        line.shape,
        bitwidth=line.bitwidth,
        access=line.distributed,
        kind=kind,
        color_by=color_by or "chunk",
        limits=limits,
    )
