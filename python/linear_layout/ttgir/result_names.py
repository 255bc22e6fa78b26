"""The names Triton gives the results of its multi-result ops, which MLIR 22 cannot give them.

Triton's ops with several declared results name each result after its ODS name through their op
interface, so Triton prints them one by one, `%outLHS, %outRHS = tt.split %0 ...`, and the next
unnamed value takes the number the op did not use (`%1 = arith.addf %outLHS, %outRHS`). The op is
unregistered in our MLIR context, so MLIR prints one numbered group, `%1:2 = tt.split ...`, used
as `%1#0`, and numbers the values after it one higher. `rename` turns the written lines into
Triton's: the group becomes the names and each later number in the op's region (MLIR numbers a
region's values on from its parent's and starts again after it) drops by the group's size less
one.

Only a group MLIR numbered (the op has no name location) whose names the function does not use
yet is renamed; Triton would give a used name a suffix from a counter this text does not show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Group", "rename"]

_NUMBER = re.compile(r"%(\d+)(?![\w$.])")


@dataclass(frozen=True)
class Group:
    """A numbered result group written on `line` of the output (at `indent`): `%number:count`,
    whose results Triton names `names`."""

    line: int
    indent: int
    number: int
    names: tuple[str, ...]


def _region_end(lines: list[str], start: int, indent: int) -> int:
    """The index past the last line of the region holding line `start` (indented `indent` deep)."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) >= indent):
        end += 1
    return end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _function_text(lines: list[str], start: int) -> str:
    """The text of the `tt.func` holding line `start`."""
    first = start
    while first > 0 and not lines[first].lstrip().startswith("tt.func"):
        first -= 1
    return "\n".join(lines[first : _region_end(lines, first + 1, _indent(lines[first]) + 1)])


def _renamed(line: str, group: Group) -> str:
    size = len(group.names)

    def number(match: re.Match) -> str:
        value = int(match.group(1))
        return f"%{value - size + 1}" if value > group.number else match.group()

    line = re.sub(rf"%{group.number}#(\d+)(?![\w$.])", lambda m: "%" + group.names[int(m.group(1))], line)
    return _NUMBER.sub(number, line)


def rename(lines: list[str], groups: list[Group]) -> list[str]:
    """`lines` with each group of `groups` named as Triton names it (see the module docstring)."""
    lines = list(lines)
    for group in sorted(groups, key=lambda g: g.line, reverse=True):
        used = set(re.findall(r"%([\w$.]+)", _function_text(lines, group.line)))
        if used & set(group.names):
            continue
        head = lines[group.line]
        written = f"%{group.number}:{len(group.names)} = "
        lines[group.line] = head.replace(written, ", ".join(f"%{n}" for n in group.names) + " = ", 1)
        end = _region_end(lines, group.line, group.indent)
        lines[group.line + 1 : end] = [_renamed(line, group) for line in lines[group.line + 1 : end]]
    return lines
