"""Figures of a PTX kernel, to compare ours with Triton's: instructions, global access widths,
atomics, barriers, shuffles and static shared bytes.

    >>> ptx_stats("@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];\\nbar.sync 0;\\nret;")
    PtxStats(instructions=3, global_loads=(128,), global_stores=(), atomics=0, barriers=1, shuffles=0, shared_bytes=0)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PtxStats", "ptx_stats"]

_GLOBAL_ACCESS = re.compile(r"\b(ld|st)\.global((?:\.[\w:]+)+)")
_ELEMENT = re.compile(r"^[bfsu](\d+)$")
_VECTOR = re.compile(r"^v(\d)$")
_SHARED = re.compile(r"^\s*\.shared\s+(?:\.align\s+\d+\s+)?\.(?:[bfsu])(\d+)\s+\w+\[(\d+)\]", re.MULTILINE)


@dataclass(frozen=True)
class PtxStats:
    """`global_loads`/`global_stores`: the width in bits of each global access instruction, sorted."""

    instructions: int
    global_loads: tuple[int, ...]
    global_stores: tuple[int, ...]
    atomics: int
    barriers: int
    shuffles: int
    shared_bytes: int


def _width(modifiers: str) -> int:
    parts = modifiers.strip(".").split(".")
    vector = next((int(m.group(1)) for part in parts if (m := _VECTOR.match(part))), 1)
    bits = next((int(m.group(1)) for part in reversed(parts) if (m := _ELEMENT.match(part))), 0)
    return vector * bits


def _instructions(ptx: str) -> list[str]:
    """The instruction statements of every function body (no declarations, labels or directives)."""
    found = []
    for line in ptx.splitlines():
        text = line.split("//", 1)[0].strip()
        if not text.endswith(";") or text.startswith("."):
            continue
        found.append(text)
    return found


def ptx_stats(ptx: str) -> PtxStats:
    instructions = _instructions(ptx)
    loads, stores = [], []
    for text in instructions:
        for kind, modifiers in _GLOBAL_ACCESS.findall(text):
            (loads if kind == "ld" else stores).append(_width(modifiers))
    body = "\n".join(instructions)
    return PtxStats(
        instructions=len(instructions),
        global_loads=tuple(sorted(loads)),
        global_stores=tuple(sorted(stores)),
        atomics=len(re.findall(r"\b(?:atom|red)\.", body)),
        barriers=len(re.findall(r"\b(?:bar|barrier)\.sync\b", body)),
        shuffles=len(re.findall(r"\bshfl\.sync\b", body)),
        shared_bytes=sum(int(bits) // 8 * int(count) for bits, count in _SHARED.findall(ptx)),
    )
