"""NVPTX targets: the chips LLVM 22's NVPTX back end knows, the PTX ISA version each needs, and
the chip and PTX version each emitted instruction needs.

Pure: no ``mlir`` import. LLVM aborts the process (``LLVM ERROR``) on a chip it does not know, on
a PTX version too old for the chip and on an instruction the chip lacks, so every caller that
hands a chip to LLVM validates it here first.

The table of minimum PTX versions was read from LLVM 22.1.8 itself: ``llc -mtriple=nvptx64
-mcpu=<chip> -mattr=+ptx32`` prints ``Minimum required PTX version is N`` for every chip that
needs more than PTX 3.2 (``tests/test_driver_targets.py`` checks it against ``llc`` again).

Example::

    >>> target = nvptx_target("sm_100a")
    >>> (target.chip, target.sm, target.min_ptx)
    ('sm_100a', 100, 86)
    >>> ptx_features(target, ["gpu.shuffle"])
    '+ptx86'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["INSTRUCTION_REQUIREMENTS", "NVPTX_CHIPS", "PTX_VERSIONS", "TargetError", "nvptx_target", "ptx_features"]

#: chip -> minimum PTX ISA version, as ``major * 10 + minor`` (LLVM 22.1.8's NVPTX processors).
NVPTX_CHIPS: dict[str, int] = {
    "sm_20": 32,
    "sm_21": 32,
    "sm_30": 32,
    "sm_32": 40,
    "sm_35": 32,
    "sm_37": 41,
    "sm_50": 40,
    "sm_52": 41,
    "sm_53": 42,
    "sm_60": 50,
    "sm_61": 50,
    "sm_62": 50,
    "sm_70": 60,
    "sm_72": 61,
    "sm_75": 63,
    "sm_80": 70,
    "sm_86": 71,
    "sm_87": 74,
    "sm_88": 90,
    "sm_89": 78,
    "sm_90": 78,
    "sm_90a": 80,
    "sm_100": 86,
    "sm_100a": 86,
    "sm_100f": 88,
    "sm_101": 86,
    "sm_101a": 86,
    "sm_101f": 88,
    "sm_103": 88,
    "sm_103a": 88,
    "sm_103f": 88,
    "sm_110": 90,
    "sm_110a": 90,
    "sm_110f": 90,
    "sm_120": 87,
    "sm_120a": 87,
    "sm_120f": 88,
    "sm_121": 88,
    "sm_121a": 88,
    "sm_121f": 88,
}

#: The PTX ISA versions LLVM 22.1.8 accepts as ``+ptxNN`` features.
PTX_VERSIONS: tuple[int, ...] = (
    32,
    40,
    41,
    42,
    43,
    50,
    60,
    61,
    62,
    63,
    64,
    65,
    70,
    71,
    72,
    73,
    74,
    75,
    76,
    77,
    78,
    80,
    81,
    82,
    83,
    84,
    85,
    86,
    87,
    88,
    90,
)


@dataclass(frozen=True)
class Requirement:
    """What one MLIR op needs once it is PTX: the instruction, its oldest chip and PTX version."""

    instruction: str
    min_sm: int
    min_ptx: int


#: MLIR op (as the lowering emits it) -> the PTX instruction it becomes and what that needs
#: (PTX ISA: ``shfl.sync`` sm_30 / PTX 6.0, ``ldmatrix`` sm_75 / PTX 6.5, ``stmatrix`` sm_90 / PTX 7.8).
INSTRUCTION_REQUIREMENTS: dict[str, Requirement] = {
    "gpu.shuffle": Requirement("shfl.sync", 30, 60),
    "nvvm.shfl.sync": Requirement("shfl.sync", 30, 60),
    "nvvm.ldmatrix": Requirement("ldmatrix", 75, 65),
    "nvvm.stmatrix": Requirement("stmatrix", 90, 78),
}


class TargetError(ValueError):
    """An unknown chip, a bad PTX feature, or an instruction the chip does not have."""


@dataclass(frozen=True)
class NvptxTarget:
    """A validated chip: its name, its SM number (``sm_100a`` -> 100) and its minimum PTX version."""

    chip: str
    sm: int
    min_ptx: int


def _known_chips() -> str:
    return ", ".join(NVPTX_CHIPS)


def nvptx_target(chip: object) -> NvptxTarget:
    """The target for ``chip``; a :class:`TargetError` listing the known chips otherwise."""
    if not isinstance(chip, str) or chip not in NVPTX_CHIPS:
        raise TargetError(f"unknown NVPTX chip {chip!r}; known chips: {_known_chips()}")
    sm = int(chip[3:].rstrip("af"))
    return NvptxTarget(chip, sm, NVPTX_CHIPS[chip])


def _parse_ptx_feature(features: str) -> int:
    match = re.fullmatch(r"\+ptx(\d+)", features.strip())
    if match is None or int(match.group(1)) not in PTX_VERSIONS:
        known = ", ".join(f"+ptx{version}" for version in PTX_VERSIONS)
        raise TargetError(f"unsupported PTX features '{features}'; give one of {known}")
    return int(match.group(1))


def _check_instructions(target: NvptxTarget, op_names: Iterable[str]) -> int:
    """The PTX version the ops need; a TargetError for an instruction the chip lacks."""
    needed = 0
    for name in sorted(set(op_names) & INSTRUCTION_REQUIREMENTS.keys()):
        requirement = INSTRUCTION_REQUIREMENTS[name]
        if target.sm < requirement.min_sm:
            raise TargetError(
                f"{name} becomes {requirement.instruction}, which needs sm_{requirement.min_sm} "
                f"or newer; the target is {target.chip}"
            )
        needed = max(needed, requirement.min_ptx)
    return needed


def ptx_features(target: NvptxTarget, op_names: Iterable[str] = (), features: str | None = None) -> str:
    """The ``+ptxNN`` feature string for compiling ops named ``op_names`` for ``target``.

    Formula: ``max(target.min_ptx, requirement of every op)``; an explicit ``features`` must be at
    least that. Requires: ``target`` from :func:`nvptx_target`. Postcondition: LLVM accepts the
    chip with the returned features and can select every listed op.
    """
    needed = max(target.min_ptx, _check_instructions(target, op_names))
    if features is None:
        return f"+ptx{needed}"
    given = _parse_ptx_feature(features)
    if given < needed:
        raise TargetError(
            f"PTX features '{features}' are too old: {target.chip} and the ops used need at least +ptx{needed}"
        )
    return f"+ptx{given}"
