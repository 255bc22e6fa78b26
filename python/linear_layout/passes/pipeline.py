"""Parsing textual pass pipelines (`builtin.module(cse, ll-verify{check-launch=false},
func.func(canonicalize))`) into a tree, so that Python passes can be split out of them: the
upstream `PassManager.parse` only knows C++ passes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.limits import MAX_NESTING_DEPTH, too_deep_message

__all__ = ["PipelineError", "PipelineElement", "parse_pipeline"]


class PipelineError(ValueError):
    """A pipeline that cannot be built: bad syntax, an unknown pass or a bad option."""


@dataclass
class PipelineElement:
    """A pass (`name{options}`) or an op anchor with nested elements (`name(children)`)."""

    name: str
    options: str = ""
    children: list[PipelineElement] | None = None

    def __str__(self) -> str:
        """The element as pipeline text, written without recursion (anchors nest up to the limit)."""
        parts: list[str] = []
        pending: list[PipelineElement | str] = [self]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            parts.append(item.name + (f"{{{item.options}}}" if item.options else ""))
            if item.children is not None:
                pending.append(")")
                for index in range(len(item.children) - 1, -1, -1):
                    pending += [item.children[index], ", "] if index else [item.children[index]]
                pending.append("(")
        return "".join(parts)

    def walk(self) -> list[PipelineElement]:
        """This element and every element nested in it, without recursion."""
        found, pending = [], [self]
        while pending:
            item = pending.pop()
            found.append(item)
            pending += item.children or ()
        return found


_NAME = re.compile(r"\s*([A-Za-z_][\w.\-]*)")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0  # open anchors `name(`, at most MAX_NESTING_DEPTH

    def fail(self, message: str) -> PipelineError:
        text = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        return PipelineError(f"invalid pass pipeline at column {self.pos + 1}: {message} in '{text}'")

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def element_list(self, closing: str) -> list[PipelineElement]:
        elements: list[PipelineElement] = []
        if self.peek() == closing:
            return elements
        while True:
            elements.append(self.element())
            if self.peek() != ",":
                return elements
            self.pos += 1

    def element(self) -> PipelineElement:
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.fail("expected a pass or operation name")
        self.pos = match.end()
        element = PipelineElement(match.group(1))
        if self.peek() == "{":
            element.options = self.braced()
        if self.peek() == "(":
            if self.depth >= MAX_NESTING_DEPTH:
                raise self.fail(too_deep_message())
            self.pos += 1
            self.depth += 1
            element.children = self.element_list(")")
            self.depth -= 1
            if self.peek() != ")":
                raise self.fail("expected ')'" if self.peek() == "" else f"expected ',' or ')', got '{self.peek()}'")
            self.pos += 1
        return element

    def braced(self) -> str:
        start = self.pos + 1
        depth = 0
        quote = None
        for i in range(self.pos, len(self.text)):
            char = self.text[i]
            if quote:
                quote = None if char == quote else quote
            elif char in "\"'":
                quote = char
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[start:i].strip()
        raise self.fail("unbalanced '{'")


def parse_pipeline(text: str) -> list[PipelineElement]:
    """The passes to run on a module. `builtin.module(...)` is optional around the list."""
    parser = _Parser(text)
    elements = parser.element_list("")
    if parser.peek() != "":
        raise parser.fail(f"unexpected '{parser.peek()}'")
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        return elements[0].children
    return elements
