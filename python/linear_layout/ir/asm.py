"""Printing IR the way Triton does: layout attributes as aliases (`#blocked = #ttg.blocked<...>`).

IRDL attributes cannot declare aliases, so the printer inlines them, which makes real modules
unreadable. We print with MLIR, then hoist every `#ttg`/`#ll` layout into an alias definition
at the top. The result parses back to the same module. MLIR escapes `"` inside string literals
as `\\22`, so `"[^"]*"` skips printed strings exactly and text inside strings is never touched.
"""

from __future__ import annotations

import re

from mlir import ir

__all__ = ["print_module", "add_aliases"]

# Triton's alias names; slice and dot_op stay inline, as in Triton.
_ALIAS_NAMES = {
    "ttg.blocked": "blocked",
    "ttg.linear": "linear",
    "ttg.nvidia_mma": "mma",
    "ttg.amd_mfma": "mma",
    "ttg.amd_wmma": "mma",
    "ttg.swizzled_shared": "shared",
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

    def _alias(self, base: str, text: str) -> str:
        alias = self.alias_of.get(text)
        if alias is None:
            while True:
                n = self.counts.get(base, 0)
                self.counts[base] = n + 1
                alias = base if n == 0 else f"{base}{n}"
                if alias not in self.taken:
                    break
            self.taken.add(alias)
            self.alias_of[text] = alias
            self.definitions.append(f"#{alias} = {text}")
        return "#" + alias

    def rewrite(self, text: str, start: int, end: int) -> str:
        """`text[start:end]` with every layout attribute replaced by its alias (innermost first)."""
        out = []
        pos = start
        while True:
            match = _ATTRIBUTE_OR_STRING.search(text, pos, end)
            if match is None:
                break
            if match.group().startswith('"'):
                out.append(text[pos:match.end()])
                pos = match.end()
                continue
            head = match.group()
            attr_end = match.end()
            body = ""
            if attr_end < end and text[attr_end] == "<":
                close = _matching_angle(text, attr_end, end)
                body = "<" + self.rewrite(text, attr_end + 1, close) + ">"
                attr_end = close + 1
            out.append(text[pos:match.start()])
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
    raise ValueError(f"unbalanced '<' in {text[open_at - 20:open_at + 40]!r}")


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
