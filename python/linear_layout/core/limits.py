"""Input limits: how deep text may nest, how many elements a shape may hold, and how many digits
an integer literal may have.

Pure: no ``mlir`` import. MLIR's parser recurses once per nesting level and overflows the C stack
(SIGSEGV) after a few thousand levels, and so do our own recursive-descent readers (the encoding
syntax, the pass-pipeline syntax: ``RecursionError``); shapes whose element count overflows int64
trip MLIR assertions (SIGABRT); a layout over 2**40 elements cannot be materialised; Python refuses
to convert a decimal literal of more than 4300 digits (``sys.get_int_max_str_digits()``). These limits
turn all of them into a :class:`LimitError` (a ``ValueError``) naming the limit, or into the
reader's own one-line syntax error with :func:`too_deep_message`, before any of that runs.
Real IR nests a few dozen levels and GPU tiles hold far fewer than 2**40 elements.

:data:`MAX_NESTING_DEPTH` is the one nesting limit of the project: brackets ``( [ { <`` in MLIR text
(the driver), in encoding text (``parse_encoding``, where an alias reference counts as two levels)
and in pass pipelines (``func.func(...)`` anchors).

Example::

    >>> check_text_limits("#x = [[1]]") is None
    True
    >>> try:
    ...     check_text_limits("#x = " + "[" * 300)
    ... except LimitError as error:
    ...     print(error)
    1:262: nesting deeper than 256 levels (the limit)
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

__all__ = [
    "MAX_ELEMENTS",
    "MAX_MATERIALISED",
    "MAX_NESTING_DEPTH",
    "MAX_PICTURE",
    "LimitError",
    "TextPosition",
    "check_materialised",
    "check_text_limits",
    "int_literal",
    "too_deep_message",
]

#: The deepest nesting of brackets ``( [ { <`` accepted in any text the project reads (MLIR, encodings,
#: pass pipelines). Our recursive readers use at most 2 Python frames per level: 512 at the limit,
#: well inside Python's default recursion limit of 1000, even for a caller already deep in its stack.
MAX_NESTING_DEPTH = 256
#: The most elements one static shape (tensor, memref, vector, layout) may hold.
MAX_ELEMENTS = 2**40
#: The most points a computation may enumerate one by one (a layout's table, a per-element view):
#: 2**30 int64 rows are already 8 GiB per output dimension.
MAX_MATERIALISED = 2**30
#: The most elements (and hardware points) one picture shows: 2**20 cells take a few seconds and
#: 0.4 GB to draw (a 3 MB SVG); 2**22 took 10 s and 1.1 GB, 2**28 would not finish.
MAX_PICTURE = 2**20

_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS = frozenset(_OPENERS.values())
# A static shape inside a type: `tensor<4x8xf32`, `memref<2147483648x1099511627776xf16`, `vector<8xf32`.
_SHAPE = re.compile(r"<\s*((?:(?:\d+|\?)\s*x\s*)+)")


@dataclass(frozen=True)
class TextPosition:
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


class LimitError(ValueError):
    """Input past one of the limits of this module. From :func:`check_text_limits`, ``position``
    is where in the text (``str()`` starts with it) and ``what`` the message without it."""

    def __init__(self, message: str, position: TextPosition | None = None) -> None:
        super().__init__(f"{position}: {message}" if position else message)
        self.position = position
        self.what = message


def too_deep_message(max_depth: int = MAX_NESTING_DEPTH) -> str:
    """What every reader says about text nested past ``max_depth`` levels.

    >>> too_deep_message()
    'nesting deeper than 256 levels (the limit)'
    """
    return f"nesting deeper than {max_depth} levels (the limit)"


def _position(text: str, offset: int) -> TextPosition:
    line = text.count("\n", 0, offset) + 1
    return TextPosition(line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _skip_string(text: str, start: int) -> int:
    """The offset after the string literal that opens at ``start``."""
    index = start + 1
    while index < len(text) and text[index] not in '"\n':
        index += 2 if text[index] == "\\" else 1
    return index + 1


def _is_bracket(text: str, index: int) -> bool:
    """``<``/``>`` are brackets except in ``->``, ``<=``, ``>=``."""
    char = text[index]
    if char == "<":
        return text[index + 1 : index + 2] != "="
    if char == ">":
        return text[index - 1 : index] != "-" and text[index + 1 : index + 2] != "="
    return True


# The characters `_deepest_offset` acts on; it jumps from one to the next.
_SIGNIFICANT = re.compile(r'["/()\[\]{}<>]')


def _deepest_offset(text: str, limit: int) -> int | None:
    """The offset of the first bracket nested deeper than ``limit``, ignoring strings and comments."""
    depth = 0
    match = _SIGNIFICANT.search(text)
    while match is not None:
        index = match.start()
        char = text[index]
        if char == '"':
            index = _skip_string(text, index)
        elif char == "/":
            newline = text.find("\n", index) if text.startswith("//", index) else index + 1
            index = len(text) if newline < 0 else newline
        else:
            if char in _OPENERS and _is_bracket(text, index):
                depth += 1
                if depth > limit:
                    return index
            elif char in _CLOSERS and _is_bracket(text, index):
                depth = max(depth - 1, 0)
            index += 1
        match = _SIGNIFICANT.search(text, index)
    return None


def _oversized_shape(text: str, limit: int) -> tuple[int, int] | None:
    """(offset, element count) of the first static shape holding more than ``limit`` elements."""
    for match in _SHAPE.finditer(text):
        count = 1
        for dim in re.findall(r"\d+", match.group(1)):
            count *= int(dim)
        if count > limit:
            return match.start(1), count
    return None


def _max_digits() -> int:
    """The most digits ``int(str)`` converts (0: no limit; 4300 unless the process changed it)."""
    return sys.get_int_max_str_digits()


def _long_literal(text: str) -> tuple[int, int] | None:
    """(offset, digits) of the first decimal literal outside a string longer than ``int()`` converts."""
    limit = _max_digits()
    if not limit:
        return None
    for match in re.finditer(rf"\d{{{limit + 1},}}", text):
        if not _in_string_or_comment(text, match.start()):
            return match.start(), len(match.group())
    return None


def _in_string_or_comment(text: str, offset: int) -> bool:
    """Whether ``offset`` lies in a string literal or a ``//`` comment (neither spans lines)."""
    index = text.rfind("\n", 0, offset) + 1
    while index < offset:
        if text[index] == '"':
            index = _skip_string(text, index)
            if index > offset:
                return True
        elif text.startswith("//", index):
            return True
        else:
            index += 1
    return False


def _too_many_digits(digits: int) -> str:
    return f"an integer literal of {digits} digits is longer than the limit of {_max_digits()} digits"


def int_literal(token: str) -> int:
    """``int(token)`` for a decimal literal, with a :class:`LimitError` naming the digits where
    Python's conversion limit would raise its own ValueError.

    >>> int_literal("-42")
    -42
    """
    digits = len(token.lstrip("+-"))
    if _max_digits() and digits > _max_digits():
        raise LimitError(_too_many_digits(digits))
    return int(token)


def check_text_limits(text: str, *, max_depth: int = MAX_NESTING_DEPTH, max_elements: int = MAX_ELEMENTS) -> None:
    """Raise :class:`LimitError` (message ``line:col: what``) if ``text`` nests deeper than
    ``max_depth`` brackets, a static shape in it holds more than ``max_elements`` elements, or a
    decimal literal in it (outside strings) has more digits than Python converts to an ``int``.

    Requires: ``text`` is MLIR-like text. Postcondition: on return, MLIR's recursive-descent parser
    recurses at most ``max_depth`` levels into brackets, every static shape's element count fits
    in int64 with room for element sizes and strides, and ``int()`` converts every literal.
    """
    offset = _deepest_offset(text, max_depth)
    if offset is not None:
        raise LimitError(too_deep_message(max_depth), _position(text, offset))
    literal = _long_literal(text)
    if literal is not None:
        raise LimitError(_too_many_digits(literal[1]), _position(text, literal[0]))
    oversized = _oversized_shape(text, max_elements)
    if oversized is not None:
        offset, count = oversized
        raise LimitError(
            f"a shape of {count} elements is larger than the limit of 2**{max_elements.bit_length() - 1} elements",
            _position(text, offset),
        )


def check_materialised(count: int, what: str, limit: int = MAX_MATERIALISED) -> None:
    """Raise :class:`LimitError` if enumerating ``count`` points (for ``what``) passes ``limit``
    (:data:`MAX_MATERIALISED`, or :data:`MAX_PICTURE` for a picture).

    Requires: ``count >= 0``. Postcondition: on return, ``count <= limit`` (no MemoryError from the size alone).
    """
    if count > limit:
        raise LimitError(f"{what} would enumerate {count} points, more than the limit of 2**{limit.bit_length() - 1}")
