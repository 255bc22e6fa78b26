"""Triton's attribute syntax for encodings: :func:`parse_encoding` reads what ``str(layout)`` prints.

Grammar (what Triton 3.9 prints, keys in any order since MLIR sorts dictionary keys)::

    encoding   := '#ttg.' NAME '<' [pairs] dict (',' KEY '=' value)* '>'    (pairs: padded_shared only)
    pairs      := '[' INT ':' '+' INT (',' INT ':' '+' INT)* ']'
    dict       := '{' [KEY '=' value (',' KEY '=' value)*] '}'
    value      := INT | 'true' | 'false' | '[' [value (',' value)*] ']' | dict | encoding | ALIAS
    ALIAS      := '#' NAME      (resolved through the ``aliases`` table, e.g. ``parent = #blocked``)

Every error is an :class:`EncodingSyntaxError` (a ``ValueError``) on one line, with the column:
unknown encoding names list the known ones, unknown keys get a "did you mean" suggestion and the
family's keys, aliases must be known and acyclic, brackets nest at most
``core.limits.MAX_NESTING_DEPTH`` levels, the project's one nesting limit (an alias reference counts
as two: resolving it recurses through more Python frames than a bracket).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..core.arguments import short
from ..core.limits import MAX_NESTING_DEPTH, LimitError, int_literal, too_deep_message
from .amd import AMDMFMALayout, AMDWMMALayout
from .base import (
    DistributedLayout,
    EncodingError,
    EncodingSyntaxError,
    Layout,
    SharedLayout,
    basis_list,
    box_sizes,
    check_unit_bases,
    type_name,
)
from .blocked import BlockedLayout, DistributedLinearLayout, SliceLayout
from .dot import DotOperandLayout
from .nvidia import NVMMADistributedLayout
from .shared import (
    AMDRotatingSharedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
    padded_identity_offsets,
)

__all__ = ["ENCODING_NAMES", "collect_aliases", "parse_encoding"]

Fields = dict[str, Any]
#: The nesting levels an alias reference counts for (3 Python frames, where a bracket takes 2).
_ALIAS_LEVELS = 2
Pairs = list[tuple[int, int]]


# ----------------------------------------------------------------------------
# The families: required keys, optional keys, and how to build each from its fields
# ----------------------------------------------------------------------------


def _linear(f: Fields, pairs: Pairs | None) -> Layout:
    """``#ttg.linear``: Triton 3.9 requires a permutation matrix once the zero bases are dropped."""
    layout = _generic_linear(f, pairs)
    check_unit_bases("#ttg.linear", tuple(b for bs in (f["register"], f["lane"], f["warp"], f["block"]) for b in bs))
    return layout


def _generic_linear(f: Fields, _: Pairs | None) -> Layout:
    """``#ttg.generic_linear``: any surjective layout."""
    by_dim = tuple(basis_list(name, f[name]) for name in ("register", "lane", "warp", "block"))  # lists of lists
    sample = next((b for bs in by_dim for b in bs), None)
    if sample is None:
        raise EncodingError("a #ttg.linear layout needs at least one basis to know its rank")
    wrong = next((b for bs in by_dim for b in bs if len(b) != len(sample)), None)
    if wrong is not None:
        raise EncodingError(
            f"#ttg.linear bases must all have the rank of the first one ({len(sample)}), got {list(wrong)}"
        )
    shape = box_sizes([b for bs in by_dim for b in bs], len(sample))
    register, lane, warp, block = by_dim
    return DistributedLinearLayout(register, lane, warp, block, shape)


def _wmma(f: Fields, _: Pairs | None) -> Layout:
    cta = f["ctaLayout"]
    if not isinstance(cta, dict):
        raise EncodingError(f"#ttg.amd_wmma ctaLayout must be a dictionary, got {short(cta)}")
    _check_keys("#ttg.amd_wmma ctaLayout", cta, (), ("register", "warp"))
    reg, warp = basis_list("register", cta.get("register", ())), basis_list("warp", cta.get("warp", ()))
    cga = basis_list("CGALayout", f.get("CGALayout", ()))
    # Triton prints no `rank`; take it from any basis (Triton's own parser assumes 2 and so
    # cannot read back its rank-3 text).
    sample = next(iter(reg + warp + cga), None)
    rank = f.get("rank", 2 if sample is None else len(sample))
    return AMDWMMALayout(
        f["version"], f.get("isTranspose", False), warp, reg, f.get("instrShape", (16, 16, 16)), cga, rank
    )


def _nvmma_shared(f: Fields, _: Pairs | None) -> Layout:
    cga = f.get("CGALayout", ())
    rank = f.get("rank", len(cga[0]) if cga else 2)
    return NVMMASharedLayout(
        f["swizzlingByteWidth"], f["elementBitWidth"], rank, f.get("transposed", False), f.get("fp4Padded", False), cga
    )


def _padded_shared(f: Fields, pairs: Pairs | None) -> Layout:
    if "order" in f or "shape" in f:
        _check_keys("#ttg.padded_shared with order", f, ("order", "shape"), ("order", "shape"))
        offsets = padded_identity_offsets(f["shape"], f["order"])
        return PaddedSharedLayout(tuple(pairs or ()), offsets, (), f["shape"])
    _check_keys("#ttg.padded_shared", f, ("offset",), ("offset", "block"))
    offsets = basis_list("offset", f["offset"])  # lists of integers, before any is measured
    if not offsets or not offsets[0]:
        raise EncodingError("#ttg.padded_shared offset bases must not be empty")
    rank = len(offsets[0])  # every basis has the rank's entries: checked before sizing the box
    offsets, block = basis_list("offset", offsets, rank), basis_list("block", f.get("block", ()), rank)
    shape = box_sizes(offsets + block, rank)
    return PaddedSharedLayout(tuple(pairs or ()), offsets, block, shape)


_Builder = Callable[[Fields, "Pairs | None"], Layout]

# name -> (required keys, all keys, builder)
_FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...], _Builder]] = {
    "blocked": (
        ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"),
        ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "CGALayout"),
        lambda f, _: BlockedLayout(
            f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"], f.get("CGALayout", ())
        ),
    ),
    "slice": (("dim", "parent"), ("dim", "parent"), lambda f, _: SliceLayout(f["dim"], f["parent"])),
    "linear": (("register", "lane", "warp", "block"), ("register", "lane", "warp", "block"), _linear),
    "generic_linear": (("register", "lane", "warp", "block"), ("register", "lane", "warp", "block"), _generic_linear),
    "nvidia_mma": (
        ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape"),
        ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape", "CGALayout"),
        lambda f, _: NVMMADistributedLayout(
            (f["versionMajor"], f["versionMinor"]), f["warpsPerCTA"], f["instrShape"], f.get("CGALayout", ())
        ),
    ),
    "dot_op": (
        ("opIdx", "parent"),
        ("opIdx", "parent", "kWidth"),
        lambda f, _: DotOperandLayout(f["opIdx"], f["parent"], f.get("kWidth", 0)),
    ),
    "amd_mfma": (
        ("version", "warpsPerCTA", "instrShape"),
        ("version", "warpsPerCTA", "instrShape", "isTransposed", "elementBitWidth", "tilesPerWarp", "CGALayout"),
        lambda f, _: AMDMFMALayout(
            f["version"],
            f["instrShape"],
            f.get("isTransposed", False),
            f["warpsPerCTA"],
            f.get("elementBitWidth"),
            f.get("tilesPerWarp"),
            f.get("CGALayout", ()),
        ),
    ),
    "amd_wmma": (
        ("version", "ctaLayout"),
        ("version", "isTranspose", "ctaLayout", "instrShape", "CGALayout", "rank"),
        _wmma,
    ),
    "swizzled_shared": (
        ("vec", "perPhase", "maxPhase", "order"),
        ("vec", "perPhase", "maxPhase", "order", "CGALayout"),
        lambda f, _: SwizzledSharedLayout(f["vec"], f["perPhase"], f["maxPhase"], f["order"], f.get("CGALayout", ())),
    ),
    "amd_rotating_shared": (
        ("vec", "perPhase", "maxPhase", "order"),
        ("vec", "perPhase", "maxPhase", "order", "CGALayout"),
        lambda f, _: AMDRotatingSharedLayout(
            f["vec"], f["perPhase"], f["maxPhase"], f["order"], f.get("CGALayout", ())
        ),
    ),
    "nvmma_shared": (
        ("swizzlingByteWidth", "elementBitWidth"),
        ("swizzlingByteWidth", "elementBitWidth", "transposed", "fp4Padded", "rank", "CGALayout"),
        _nvmma_shared,
    ),
    "shared_linear": (
        ("offset",),
        ("offset", "block", "alignment"),
        lambda f, _: SharedLinearLayout(f["offset"], f.get("block", ()), f.get("alignment", 16)),
    ),
    "padded_shared": ((), ("order", "shape", "offset", "block"), _padded_shared),
}

#: The encoding names ``parse_encoding`` knows, as Triton spells them (``#ttg.<name><...>``).
ENCODING_NAMES: tuple[str, ...] = tuple(f"#ttg.{name}" for name in _FAMILIES)


def _check_keys(what: str, fields: Mapping[str, Any], required: tuple[str, ...], known: tuple[str, ...]) -> None:
    """Unknown keys are errors (with a suggestion for near misses); required keys must be there."""
    for key in fields:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise EncodingSyntaxError(f"{what} has no key '{key}'{hint}; its keys are {', '.join(known)}")
    for key in required:
        if key not in fields:
            raise EncodingSyntaxError(f"{what} is missing the field {key}")


def _build(name: str, fields: Fields, pairs: Pairs | None) -> Layout:
    family = _FAMILIES.get(name)
    if family is None:
        close = difflib.get_close_matches(f"#ttg.{name}", ENCODING_NAMES, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise EncodingSyntaxError(
            f"unknown encoding #ttg.{name}{hint}; the known encodings are {', '.join(ENCODING_NAMES)}"
        )
    required, known, build = family
    _check_keys(f"#ttg.{name}", fields, required, known)
    try:
        return build(fields, pairs)
    except TypeError as error:  # a value of the wrong kind in the text: still a user error in the text
        raise EncodingSyntaxError(f"#ttg.{name}: {error}") from None


# ----------------------------------------------------------------------------
# The reader
# ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(#[A-Za-z_][\w$]*\.[A-Za-z_][\w$]*<|#[A-Za-z_][\w.$-]*|[\[\]{}<>=,:+]|-?\d+"
    r"|[A-Za-z_][A-Za-z0-9_]*)"
)


def _tokenize(text: str) -> list[tuple[str, int]]:
    tokens = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            rest = text[pos:].lstrip()
            if not rest:
                break
            pos = len(text) - len(rest)
            raise EncodingSyntaxError(
                f"cannot parse encoding at column {pos + 1}: unexpected {text[pos : pos + 20]!r} in {text!r:.120}"
            )
        tokens.append((match.group(1), match.start(1)))
        pos = match.end()
    return tokens


class _Parser:
    """Recursive descent over the tokens; ``aliases`` resolves ``#name`` references. ``depth`` counts
    the open brackets (and the alias references being resolved, from ``depth`` on), at most
    ``MAX_NESTING_DEPTH``: the recursion stays within Python's limit."""

    def __init__(self, text: str, aliases: _Aliases, depth: int = 0) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = depth
        self.aliases = aliases

    def error(self, message: str) -> EncodingSyntaxError:
        pos = self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)
        return EncodingSyntaxError(f"cannot parse encoding at column {pos + 1}: {message} in {self.text!r:.120}")

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise self.error(f"expected {expected or 'a value'!r}, got {tok!r}")
        self.i += 1
        return tok

    def open(self, bracket: str) -> None:
        """Take an opening bracket, one nesting level deeper."""
        if self.depth >= MAX_NESTING_DEPTH:
            raise self.error(too_deep_message())
        self.take(bracket)
        self.depth += 1

    def close(self, bracket: str) -> None:
        self.take(bracket)
        self.depth -= 1

    def value(self) -> Any:
        tok = self.peek()
        if tok == "[":
            return self.list()
        if tok == "{":  # a nested dictionary (amd_wmma's ctaLayout)
            return self.dictionary()
        if tok is not None and tok.startswith("#"):
            if tok.endswith("<"):
                return self.attribute()
            if self.depth + _ALIAS_LEVELS > MAX_NESTING_DEPTH:
                raise self.error(too_deep_message())
            return self.aliases.resolve(self.take(), self.depth + _ALIAS_LEVELS)
        self.take()
        if tok in ("true", "false"):
            return tok == "true"
        if tok is not None and re.fullmatch(r"-?\d+", tok):
            return self.literal(tok)
        self.i -= 1
        raise self.error(f"unexpected {short(tok)}")

    def literal(self, tok: str) -> int:
        """The integer of the decimal literal just taken (a syntax error past Python's digit limit)."""
        try:
            return int_literal(tok)
        except LimitError as error:
            self.i -= 1
            raise self.error(error.what) from None

    def list(self) -> tuple[Any, ...]:
        self.open("[")
        items = []
        while self.peek() != "]":
            items.append(self.value())
            if self.peek() != "]":
                self.take(",")
        self.close("]")
        return tuple(items)

    def dictionary(self) -> Fields:
        self.open("{")
        out: Fields = {}
        while self.peek() != "}":
            key = self.key(out)
            out[key] = self.value()  # not inside key(): one Python frame less per nesting level
            if self.peek() != "}":
                self.take(",")
        self.close("}")
        return out

    def key(self, out: Fields) -> str:
        """A new key of ``out`` and its ``=``."""
        key = self.take()
        if not re.fullmatch(r"[A-Za-z_]\w*", key):
            self.i -= 1
            raise self.error(f"expected a key, got {key!r}")
        if key in out:
            self.i -= 1
            raise self.error(f"duplicate key '{key}'")
        self.take("=")
        return key

    def padding_pairs(self) -> Pairs:
        pairs = []
        self.take("[")
        while self.peek() != "]":
            interval = self.integer()
            self.take(":")
            self.take("+")
            pairs.append((interval, self.integer()))
            if self.peek() != "]":
                self.take(",")
        self.take("]")
        return pairs

    def integer(self) -> int:
        tok = self.take()
        if not re.fullmatch(r"-?\d+", tok):
            self.i -= 1
            raise self.error(f"expected an integer, got {short(tok)}")
        return self.literal(tok)

    def attribute(self) -> Layout:
        start = self.i
        if self.depth >= MAX_NESTING_DEPTH:
            raise self.error(too_deep_message())
        head = self.take()
        self.depth += 1
        dialect, name = head[1:-1].split(".", 1)
        if dialect != "ttg" or name not in _FAMILIES:
            self.i = start
            close = difflib.get_close_matches(f"#ttg.{name}", ENCODING_NAMES, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise self.error(
                f"unknown encoding #{dialect}.{name}{hint}; the known encodings are {', '.join(ENCODING_NAMES)}"
            )
        pairs = self.padding_pairs() if name == "padded_shared" else None
        fields = self.dictionary()
        while self.peek() == ",":  # trailing parameters outside the dictionary (alignment)
            self.take(",")
            key = self.key(fields)
            fields[key] = self.value()
        self.close(">")
        return _build(name, fields, pairs)


class _Aliases:
    """An alias table (``#name`` -> encoding text or value), resolved lazily, once per name,
    with cycles detected."""

    def __init__(self, table: Mapping[str, object] | None) -> None:
        if table is not None and not isinstance(table, Mapping):
            raise TypeError(
                f"aliases must be a mapping from '#name' to encoding text or an encoding, got {type_name(table)}"
            )
        for key in table or {}:
            if not isinstance(key, str):
                raise TypeError(
                    f"argument 'aliases' keys must be strings such as '#blocked', got {type_name(key)} {short(key)}"
                )
        self.table = {(k if k.startswith("#") else "#" + k): v for k, v in (table or {}).items()}
        self.resolved: dict[str, Layout] = {}
        self.resolving: list[str] = []

    def resolve(self, name: str, depth: int = 0) -> Layout:
        """The layout alias ``name`` stands for, its text read ``depth`` levels deep."""
        if name in self.resolved:
            return self.resolved[name]
        if name not in self.table and "." in name:  # `#ttg.shared_memory`: an attribute, not an alias
            raise EncodingSyntaxError(
                f"{name} is not a layout encoding; the known encodings are {', '.join(ENCODING_NAMES)}"
            )
        if name not in self.table:
            known = ", ".join(sorted(self.table)) or "none"
            close = difflib.get_close_matches(name, list(self.table), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise EncodingSyntaxError(f"unknown alias {name}{hint}; the known aliases are {known}")
        if name in self.resolving:
            raise EncodingSyntaxError(f"alias {name} refers to itself ({' -> '.join([*self.resolving, name])})")
        value = self.table[name]
        if isinstance(value, (DistributedLayout, SharedLayout)):
            layout: Layout = value
        elif isinstance(value, str):
            self.resolving.append(name)
            try:
                layout = _parse(value, self, depth)
            except EncodingSyntaxError as error:
                raise EncodingSyntaxError(_in_alias(name, str(error))) from None
            finally:
                self.resolving.pop()
        else:
            raise TypeError(f"aliases[{name!r}] must be encoding text or an encoding, got {type_name(value)}")
        self.resolved[name] = layout
        return layout


_IN_ALIAS = re.compile(r"in alias (#\S+?)(?: \(through (\d+) more\))?: (.*)", re.S)


def _in_alias(name: str, message: str) -> str:
    """``message`` from inside alias ``name``; a chain of aliases is named by its ends and a count,
    so that a long chain still gives a short line.

    >>> _in_alias("#a", _in_alias("#b", _in_alias("#c", "bad")))
    'in alias #a (through 2 more): bad'
    """
    inner = _IN_ALIAS.fullmatch(message)
    if inner is None:
        return f"in alias {name}: {message}"
    return f"in alias {name} (through {int(inner.group(2) or 0) + 1} more): {inner.group(3)}"


def _parse(text: str, aliases: _Aliases, depth: int = 0) -> Layout:
    parser = _Parser(text.strip(), aliases, depth)
    if parser.peek() is None:
        raise EncodingSyntaxError("cannot parse encoding: the text is empty")
    layout = parser.value()
    if parser.peek() is not None:
        raise parser.error(f"trailing {parser.peek()!r}")
    if not isinstance(layout, (DistributedLayout, SharedLayout)):
        raise EncodingSyntaxError(f"not an encoding: {text!r:.120}")
    return layout


def parse_encoding(text: str, aliases: Mapping[str, object] | None = None) -> Layout:
    """Read an encoding written in Triton's attribute syntax, e.g.
    ``#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>``.

    Keys may come in any order (MLIR sorts them).  ``aliases`` maps ``#name`` to encoding text or
    an encoding value, so that a module's ``#ttg.slice<{dim = 1, parent = #blocked}>`` resolves
    (:func:`collect_aliases` reads the table from a module's text); the text may itself be an alias.
    Requires: ``text`` a str; ``aliases`` None or a mapping (TypeError otherwise).
    Postcondition: ``parse_encoding(str(layout)) == layout`` for every encoding; errors are
    :class:`EncodingSyntaxError` / :class:`EncodingError` (ValueErrors) on one line.

    >>> parse_encoding("#ttg.slice<{dim = 0, parent = #b}>", {"#b": "#ttg.blocked<{sizePerThread = [1, 1], "
    ...     "threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"}).rank
    1
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_encoding: argument 'text' must be a str, got {type_name(text)}")
    return _parse(text, _Aliases(aliases))


_ALIAS_LINE = re.compile(r"^[ \t]*(#[A-Za-z_][\w.$-]*)[ \t]*=[ \t]*(\S.*?)[ \t]*$", re.M)


def collect_aliases(module_text: str) -> dict[str, str]:
    """The attribute alias table of a module's text: every ``#name = <attribute>`` line (as Triton
    prints ``#blocked = #ttg.blocked<{...}>`` above the module), in order, for :func:`parse_encoding`.

    >>> collect_aliases("#blocked = #ttg.blocked<{...}>\\nmodule {}")
    {'#blocked': '#ttg.blocked<{...}>'}
    """
    if not isinstance(module_text, str):
        raise TypeError(f"collect_aliases: argument 'module_text' must be a str, got {type_name(module_text)}")
    return {name: value for name, value in _ALIAS_LINE.findall(module_text)}
